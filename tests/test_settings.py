"""The quick and full settings: what each case runs (no TensorFlow)."""

from __future__ import annotations

import textwrap

import pytest

from harness.config import ConfigError, load_config
from harness.stages.prepared import Selection, prepare

CASE = """\
title: settings
source: test
inputs:
  x: {log: {from: 1e-3, to: 1e3, count: 100}}
function: exp(x)
derivatives: {wrt: x, orders: [1, 2, 3, 4]}
implementations:
  plain: {expression: exp(x)}
methods: [forward, forward_over_reverse, finite_difference]
"""


def _prep(tmp_path, quick: str = "", overrides=None, **selection):
    path = tmp_path / "settings.yaml"
    path.write_text(CASE + textwrap.dedent(quick))
    return prepare(path, load_config(overrides=overrides), Selection(**selection))


def test_quick_applies_the_study_block_then_the_case_block(tmp_path):
    prep = _prep(
        tmp_path,
        """\
        quick:
          dtypes: [float64]
          modes: [eager, xla]
          max_points: 10
          max_order: {forward: 1, finite_difference: 2}
        """,
    )
    s = prep.settings
    assert s.setting == "quick"
    assert s.dtypes == ("float64",)  # study quick: float32, float64; case: float64
    assert s.modes == ("eager", "xla")
    assert s.max_points == 10 and len(prep.points["float64"]) == 10
    # min over the study's caps (forward 3, forward_over_reverse 3) and the case's
    assert s.max_order == {"forward": 1, "forward_over_reverse": 3, "finite_difference": 2}
    assert s.highest_order == 3
    # the reference is computed only to the highest order any selected method runs
    assert max(len(p) for p in prep.case.partials) == 3
    record = prep.selection_record()
    assert record["setting"] == "quick" and record["max_order"]["forward"] == 1


def test_full_ignores_every_quick_block(tmp_path):
    prep = _prep(tmp_path, "quick: {dtypes: [float64], max_order: 1}\n", {"setting": "full"})
    s = prep.settings
    assert s.dtypes == ("float16", "bfloat16", "float32", "float64")
    assert s.max_order == {} and s.highest_order == 4 and s.max_points is None
    assert max(len(p) for p in prep.case.partials) == 4


def test_one_number_caps_every_method_and_the_command_line_narrows_further(tmp_path):
    prep = _prep(tmp_path, "quick: {max_order: 2}\n", max_points=5, methods=["forward"])
    assert prep.settings.methods == ("forward",)
    assert prep.settings.max_order == {"forward": 2}
    assert prep.settings.max_points == 5
    assert max(len(p) for p in prep.case.partials) == 2


def test_the_compilation_cache_is_on_unless_the_study_turns_it_off(tmp_path):
    from pathlib import Path

    from harness.stages.evaluate import compilation_cache

    on = compilation_cache(_prep(tmp_path), "out")
    assert on == Path("out") / ".cache" / "compiled"
    off = _prep(tmp_path, overrides={"compilation_cache": False})
    assert off.settings.compilation_cache is False and compilation_cache(off, "out") is None


@pytest.mark.parametrize(
    "overrides, text",
    [
        ({"setting": "fast"}, "setting: 'fast' is not one of"),
        ({"compilation_cache": "yes"}, "compilation_cache: 'yes' is not of type 'boolean'"),
        ({"quick": {"max_order": {"forwards": 2}}}, "quick.max_order"),
        ({"quick": {"dtypes": []}}, "quick.dtypes"),
    ],
)
def test_bad_settings_are_refused(overrides, text):
    with pytest.raises(ConfigError, match=text.replace("(", r"\(")):
        load_config(overrides=overrides)


def test_what_is_asked_runs_past_the_quick_setting_and_what_is_left_out_is_said(tmp_path, capsys):
    """``harness run CASE --dtypes float16`` under the quick setting (float32 and float64)
    ran nothing of float16 and then called every judged value ok: what is asked runs."""
    prep = _prep(tmp_path, dtypes=["float16"], orders=[4], methods=["forward"])
    s = prep.settings
    assert s.dtypes == ("float16",) and set(prep.points) == {"float16"}
    # Order 4 asked of forward mode: the quick cap (3) is lifted for it.
    assert s.methods == ("forward",) and s.highest_order == 4
    assert [len(p) for p in prep.case.partials] == [4]
    # The case's own list still bounds what runs, and says so.
    bounded = _prep(tmp_path, methods=["reverse", "forward"])
    assert bounded.settings.methods == ("forward",)
    assert any(
        n.startswith("methods reverse: the case runs only") for n in bounded.settings.left_out
    )
    # Unasked, the quick setting's cuts are told: the dtypes, modes and orders it drops.
    plain = _prep(tmp_path).settings.left_out
    assert any(n.startswith("dtypes float16, bfloat16: the quick setting") for n in plain)
    assert any(n.startswith("forward above order 3: the quick setting") for n in plain)
    # The command line prints them before it runs anything.
    import argparse

    from harness.cli.selection import prepare_case

    path = tmp_path / "settings.yaml"
    args = argparse.Namespace(
        command="run",
        case=str(path),
        backends=None,
        config=None,
        results=str(tmp_path),
        dtypes=None,
        methods=None,
        modes=None,
        orders=None,
        points=None,
        setting=None,
        study=None,
    )
    assert prepare_case(args) is not None
    err = capsys.readouterr().err
    assert f"harness run: {path}: left out: dtypes float16, bfloat16: the quick setting" in err


def test_a_case_without_findings_calls_only_its_judged_values_ok():
    import pandas as pd

    from harness.cli.output import no_findings

    summary = pd.DataFrame(
        {"points": [10, 6], "ok": [7, 2], "ref_unreliable": [3, 0], "not_applicable": [0, 4]}
    )
    line = no_findings("c", summary)
    assert (
        line
        == "c: no findings: the 9 judged values are ok; 3 ref_unreliable, 4 not_applicable not judged."
    )
    assert no_findings("c", summary.assign(ref_unreliable=0, not_applicable=0, ok=[10, 6])) == (
        "c: no findings: the 16 judged values are ok."
    )
