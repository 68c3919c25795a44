"""The statement checker (:mod:`harness.causes.audit`): each defect a maintainer found in
the study's sentences, planted, is caught; the statements the harness writes for the same
evidence pass. No framework here."""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pandas as pd

from harness.causes.audit import audit, printed_inputs
from harness.causes.roots import root_causes

from .test_causes import _classified, _finding, _kernel


def _rules(roots: pd.DataFrame, findings: pd.DataFrame) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for p in audit(roots, findings):
        out.setdefault(p.id, set()).add(p.rule)
    return out


def test_the_harness_s_own_statements_pass():
    found = _classified(
        _kernel(value_ok=1.0),
        _kernel(id="f2", backend="jax", value_ok=0.25),
        _finding(id="f3", case="other", outcome="nan", worst_got=float("nan")),
        _finding(id="f4", case="other", backend="torch", value_wrong="expm1"),
    )
    assert audit(root_causes(found), found) == []


def test_an_exception_message_in_an_id_and_a_value_shown_for_a_crash_are_caught():
    crash = _finding(
        outcome="error",
        methods="forward_over_reverse",
        error_text="TypeError: select cases must have the same shapes, got [(), (4,)].",
    )
    found = _classified(crash)
    roots = root_causes(found)
    assert len(roots) == 1 and audit(roots, found) == []
    # The id the harness used to write, and a statement that shows the crash as a value.
    old = (
        "method:tensorflow:forward_over_reverse:TypeError: select cases must have the same "
        "shapes, got [...].:error"
    )
    planted = roots.assign(id=old, text=roots["text"] + " got nan, truth 1.0")
    assert _rules(planted, found.assign(root_cause=old)) == {old: {"id", "crash"}}


def test_an_empty_clause_and_a_value_claimed_right_without_evidence_are_caught():
    found = _classified(_finding(case="census_expm1", value_wrong="expm1", value_ok=0.0))
    roots = root_causes(found)
    rid = roots["id"].iat[0]
    old = (
        "TensorFlow: the derivative rule of expm1 fails where its value is right, and the "
        "derivatives through it are wrong in float32. Judged alone at the input it "
        "receives: . 1 findings (c: x in [16.0, 80.0]); worst: at x = 20.0"
    )
    assert _rules(roots.assign(text=old), found) == {rid: {"empty clause", "value right"}}


def test_two_frameworks_each_claiming_the_other_right_are_caught():
    tf = _finding(outcome="nan", worst_got=float("nan"))
    tf["backends_ok"] = json.dumps({"jax": 1.0, "torch": 0.0})
    torch = _finding(id="f2", backend="torch", outcome="nan", worst_got=float("nan"))
    torch["backends_ok"] = json.dumps({"jax": 1.0, "tensorflow": 0.0})
    found = _classified(tf, torch)
    roots = root_causes(found)
    assert list(roots["kind"]) == ["framework", "framework"]
    assert audit(roots, found) == []
    # What the harness wrote before: "only in X ... the other frameworks get these right".
    old = roots.assign(
        text=[
            f"only in {b}: c.impl is NaN or infinite at order 2 in float32; the other "
            "frameworks get these points right. 1 findings (c: x in [16.0, 80.0])"
            for b in roots["frameworks"]
        ]
    )
    problems = audit(old, found)
    assert {p.rule for p in problems} == {"framework"}
    assert any("contradicts" in p.detail for p in problems)
    assert {p.id for p in problems} == set(roots["id"])


def test_an_input_printed_rounded_is_caught_and_its_shortest_repr_passes():
    below = float(np.nextafter(0.5, 0.0))  # 0.49999999999999994, not the published 0.5
    f = {
        **_kernel(dtype="float64", lo=below, hi=below, value_ok=1.0),
        "worst_inputs": json.dumps({"x": below}),
        "culprit_inputs": json.dumps({"u": below}),
    }
    found = _classified(f)
    roots = root_causes(found)
    text = roots["text"].iat[0]
    assert "x = 0.49999999999999994" in text and audit(roots, found) == []
    rounded = roots.assign(text=text.replace("0.49999999999999994", "0.5"))
    assert _rules(rounded, found) == {roots["id"].iat[0]: {"inputs"}}


def test_printed_inputs_reads_spans_mirrors_and_points():
    text = "ratio: |t| in [1e-19, 2.5e-19], x = -0.0; at u = 1e+24 with dy = 2"
    assert printed_inputs(text) == [
        ("t", "1e-19", True),
        ("t", "2.5e-19", True),
        ("x", "-0.0", False),
        ("u", "1e+24", False),
        ("dy", "2", False),
    ]


def test_an_id_names_a_crash_by_its_type_and_a_digest_of_its_text():
    text = "IndexError: list index out of range"
    found = _classified(_finding(outcome="error", error_text=text, methods="forward, reverse"))
    digest = hashlib.sha1(text.encode()).hexdigest()[:6]
    assert list(found["root_cause"]) == [
        f"method:tensorflow:forward+reverse:IndexError-{digest}:error"
    ]


def test_a_worst_nan_under_words_that_name_none_and_an_overclaimed_beyond_are_caught():
    """The census's formula:finite_difference:wrong said "is wrong (the wrong sign at
    ordinary inputs)" with a worst of "got nan"; kernel:sqrt:nonfinite said "the truth
    lies beyond the dtype there" beside a member infinite for a float32 truth."""
    mixed = _finding(
        outcome="wrong",
        severity=4,
        counts=json.dumps({"nan": 18, "wrong": 2}),
        worst_got=float("nan"),
        worst_truth="-1.6759569e-77",
    )
    found = _classified(mixed)
    roots = root_causes(found)
    assert audit(roots, found) == []
    text = roots["text"].iat[0]
    worst = text[text.index("worst: ") :]
    said = "tensorflow: c.impl is wrong (the wrong sign at ordinary inputs) at order 2. "
    assert _rules(roots.assign(text=said + worst), found)[roots["id"].iat[0]] == {"worst shown"}

    nan = _kernel(outcome="nan", severity=4, worst_got=float("nan"), worst_truth="3.8e93")
    inf = _kernel(id="f2", outcome="inf", severity=4, worst_got=float("inf"))
    inf["worst_truth"] = "3.40282185580048833062561456577e+38"
    found = _classified(nan, inf)
    roots = root_causes(found)
    assert audit(roots, found) == []
    there = "NaN or infinite (the truth lies beyond the dtype there: its right value is ±inf)"
    planted = roots.assign(
        text=roots["text"].str.replace(
            "NaN or infinite (where it is NaN, the truth lies beyond the dtype: its right value is ±inf)",
            there,
            regex=False,
        )
    )
    assert there in planted["text"].iat[0]
    assert _rules(planted, found)[roots["id"].iat[0]] == {"beyond"}
    # A NaN whose truth is a float32 (3.0e38 < 3.4028235e38): not beyond it either.
    inside = _classified({**nan, "worst_truth": "3.0e38"})
    roots = root_causes(inside)
    planted = roots.assign(text=roots["text"] + f" ({there})")
    assert "beyond" in _rules(planted, inside)[roots["id"].iat[0]]


def test_a_primitive_called_the_whole_function_inside_an_expression_is_caught():
    """An early wording of this session's said softplus.naive's flushed exp at
    x = -706.7181273927491 was "the whole function" (log(1 + exp(x)) and exp(x) share
    their truth there to 300 digits): the localisation records whether the flushed
    primitive is the whole expression, and the checker holds the words to it."""

    def flush(whole: bool) -> dict:
        flushed = {
            "name": "exp",
            "primitive": "exp(u)",
            "partial": "uuu",
            "inputs": {"u": -706.7181273927491},
            "got": 0.0,
            "truth": "1.19e-307",
            "method": "taylor",
            "mode": "eager",
            "threshold": True,
            "whole": whole,
        }
        return _finding(
            backend="jax",
            methods="taylor",
            dtype="float64",
            lo=-706.7181273927491,
            hi=-706.7181273927491,
            worst_inputs=json.dumps({"x": -706.7181273927491}),
            worst_truth="1.19e-307",
            worst_method="taylor",
            flushed=json.dumps(flushed),
        )

    inside = _classified(flush(False))
    roots = root_causes(inside)
    assert roots["kind"].iat[0] == "platform"
    assert "the rest of the chain rule makes" in roots["text"].iat[0]
    assert audit(roots, inside) == []
    rid = roots["id"].iat[0]
    said = roots["text"].str.replace(
        "the rest of the chain rule makes", "this, the primitive being the whole function, makes"
    )
    assert _rules(roots.assign(text=said), inside) == {rid: {"whole"}}
    whole = _classified(flush(True))
    assert "the primitive being the whole function" in root_causes(whole)["text"].iat[0]
    assert audit(root_causes(whole), whole) == []
