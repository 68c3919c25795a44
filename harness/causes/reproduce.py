"""A reproducer for every root cause in each framework it affects, and what it prints.

Per root cause and framework: a minimal standalone script (:mod:`harness.backends.snippet`)
of the smallest thing that shows the mechanism (a ``kernel``'s primitive alone at the
argument it received; a ``mode`` localised to a primitive, that primitive alone in the
compiled mode; otherwise the worst member finding's implementation at its worst
point, by its method and mode), and the ``harness probe`` command of that finding. The
reproduce stage runs the scripts in a process of their own, which imports the framework
(again after a script that kills it: :mod:`harness.causes.script_worker`; the script's text,
executed as it is written, its ``print`` captured) and records the value it prints, so
the value a root cause states is the script's, bit for bit; ``harness repro --check``
runs every script again as its own process and compares (:func:`check`).

The scripts are generated from expression trees the case language admits (names its
parser validated, numbers as ``float.fromhex``, kernels from the back ends' tables):
nothing of a case file's text is executed. A framework is imported only by the scripts.
"""

from __future__ import annotations

import importlib
import json
import math
import shlex
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

from harness.backends.snippet import script, series_order
from harness.cases import expressions as ex
from harness.cases.model import label_partial
from harness.causes.roots import worst_first
from harness.causes.script_worker import ScriptFailed, ScriptWorker
from harness.causes.sites import VARIABLES
from harness.numerics.floats import round_decimal

__all__ = ["REPRODUCER_COLUMNS", "check", "probe_command", "reproducers", "shows_failure"]

REPRODUCER_COLUMNS = [
    "root_cause",
    "backend",
    "target",  # "primitive softplus(u)" or "case.implementation"
    "script",
    "probe",
    "inputs",  # JSON: the script's input
    "derivative",
    "method",
    "mode",
    "dtype",
    "got",
    "got_hex",
    "truth",
    "truth_rounded",
    "reproduces",  # the script's value is off the rounded truth beyond the study's budget
    "seconds",
    "note",
]


def probe_command(finding: dict, backend: str, cases: str | Path = "cases") -> str:
    """``harness probe`` of a finding at its worst point, in ``backend`` (its case file in
    the folder ``cases``: the census's are in ``census/cases``)."""
    point = json.loads(finding["worst_inputs"] or "{}")
    at = " ".join(f"{k}={v!r}" for k, v in point.items())
    path = shlex.quote(str(Path(cases) / f"{finding['case']}.yaml"))
    return (
        f"harness probe {path} {shlex.quote(finding['implementation'])} "
        f"--at {at} --partial {finding['partial'] or 'f'} --method {finding['worst_method']} "
        f"--mode {finding['worst_mode']} --dtype {finding['dtype']} --backend {backend}"
    )


def _target(root: dict, finding: dict, backend: str, cases: Path):
    """``(target, writer args, names, point, partial, method, mode, dtype, truth)``: a
    primitive's culprit is shown at its own input, method, mode and dtype."""
    culprit = json.loads(root["culprit"] or "{}").get(backend)
    if root["kind"] in ("kernel", "mode") and culprit:
        names = list(culprit["inputs"])
        node = ex.parse(culprit["primitive"], set(VARIABLES))
        partial = tuple(culprit["partial"])
        return (
            f"primitive {culprit['primitive']}",
            (None, None, names, node),
            names,
            culprit["inputs"],
            partial,
            culprit["method"],
            culprit.get("mode", "eager"),
            culprit.get("dtype", finding["dtype"]),
            culprit["truth"],
        )
    from harness.cases.load import load_case

    case = load_case(Path(cases) / f"{finding['case']}.yaml")
    names = list(case.input_names)
    point = json.loads(finding["worst_inputs"])
    partial = label_partial(finding["partial"], names)
    return (
        f"{finding['case']}.{finding['implementation']}",
        (case, finding["implementation"], names, None),
        names,
        point,
        partial,
        finding["worst_method"],
        finding["worst_mode"],
        finding["dtype"],
        finding["worst_truth"],
    )


def _parse(line: str) -> tuple[float, str]:
    parts = line.split()
    if len(parts) < 3 or parts[1] == "None":
        return math.nan, "None"
    return float(parts[1]), parts[2]


def shows_failure(got: float, rounded: float, dtype: str, budget: float) -> bool:
    """Whether a script's ``got`` fails as the outcome vocabulary judges it against the
    rounded truth (:func:`harness.judge.compare.judge`): not a number where the truth is
    one, a spurious 0 or infinity (they outrank the ulps budget: -0.0 for a truth of
    -1.4e-45 is one ulp off and still the 0 the finding names), or off by more than the
    study's ``budget`` of ulps for the dtype and order."""
    from harness.numerics.floats import ulps_between

    if math.isnan(rounded):
        return False
    if math.isnan(got):
        return True
    if (got == 0 and rounded != 0) or (math.isinf(got) and not math.isinf(rounded)):
        return True
    ulps = ulps_between(np.array([got]), np.array([rounded]), dtype)[0]
    return bool(ulps > budget)


def reproducers(
    roots: pd.DataFrame,
    findings: pd.DataFrame,
    backend: str,
    cases: str | Path,
    tolerances: dict,
) -> pd.DataFrame:
    """Every root cause's reproducer in ``backend`` (see the module's docstring); the
    scripts run one after another in one child process, which imports the framework
    (:class:`harness.causes.script_worker.ScriptWorker`: a script that kills it is its
    own result, not the stage's end). ``tolerances``: the study's
    ulps per dtype and order (``StudyConfig.tolerances``), which ``reproduces`` uses."""
    from harness.backends.catalogue import SPECS

    module = importlib.import_module(SPECS[backend].snippet)
    worker = ScriptWorker()  # one process for the scripts, again after one kills it
    try:
        return _reproducers(roots, findings, backend, cases, tolerances, module, worker)
    finally:
        worker.close()


def _reproducers(roots, findings, backend, cases, tolerances, module, worker) -> pd.DataFrame:
    from harness.backends.catalogue import SPECS

    rows = []
    for root in roots.to_dict("records"):
        if backend not in root["frameworks"].split(", "):
            continue
        members = findings[
            (findings["root_cause"] == root["id"]) & (findings["backend"] == backend)
        ]
        if members.empty:
            continue
        # The member the statement names: one whose worst point a script computes (an
        # autodiff method's) wherever one is (:func:`harness.causes.roots.worst_first`).
        finding = worst_first(members).iloc[0].to_dict()
        base = dict.fromkeys(REPRODUCER_COLUMNS, "")
        base.update(
            root_cause=root["id"], backend=backend, probe=probe_command(finding, backend, cases)
        )
        base.update(got=math.nan, truth_rounded=math.nan, reproduces=False, seconds=0.0)
        target, args, names, point, partial, method, mode, dtype, truth = _target(
            root, finding, backend, cases
        )
        base.update(target=target, inputs=json.dumps(point), method=method, mode=mode, dtype=dtype)
        base.update(derivative="".join(partial) or "f", truth=str(truth))
        case = args[0]
        experiment = case is not None and getattr(case, "experiment", None)
        if method == "finite_difference":
            base["note"] = "finite differences: the probe command reproduces the value"
            rows.append(base)
            continue
        written = None if experiment or not finding["worst_inputs"] else module.write(*args)
        if written is None or mode not in SPECS[backend].modes:
            base["note"] = (
                "no standalone script: an experiment, a registered implementation "
                "without a port to this framework or TensorFlow's decorated gradient "
                "function outside TensorFlow (the case page and the probe reproduce it)"
            )
            rows.append(base)
            continue
        blocks, _ = written
        title = f"{root['id']}: {target}, d/d{''.join(partial) or 'f'}"
        # Taylor mode computes a variable's whole series at once: to the case's highest
        # order in it (a primitive alone: to the culprit's order, as localisation did).
        top = series_order(case.partials, partial) if case else 0
        text = script(
            module.STYLE,
            blocks,
            names,
            point,
            partial,
            method,
            mode,
            dtype,
            title,
            str(truth),
            top,
        )
        base["script"] = text
        t0 = time.perf_counter()
        try:
            got, got_hex = _parse(worker.run(text, root["id"]))
        except ScriptFailed as exc:  # the script's own failure (or crash) is its result
            got, got_hex = math.nan, "error"
            base["note"] = str(exc)
        base["seconds"] = round(time.perf_counter() - t0, 3)
        rounded = round_decimal(truth, dtype)
        base.update(got=got, got_hex=got_hex, truth_rounded=rounded)
        budget = float(tolerances[dtype][len(partial)])
        base["reproduces"] = got_hex == "error" or shows_failure(got, rounded, dtype, budget)
        rows.append(base)
    return pd.DataFrame(rows, columns=REPRODUCER_COLUMNS)


def check(table: pd.DataFrame, timeout: float = 600.0) -> list[str]:
    """Run every script of ``table`` as its own process; the disagreements with the
    values recorded (``[]``: every script printed its value bit for bit)."""
    problems = []
    for r in table.itertuples(index=False):
        if not r.script:
            continue
        out = subprocess.run(
            [sys.executable, "-c", r.script], capture_output=True, text=True, timeout=timeout
        )
        line = next((x for x in out.stdout.splitlines() if x.startswith("got")), "")
        if out.returncode != 0:
            tail = (out.stderr.strip().splitlines() or [""])[-1]
            if r.got_hex != "error":
                problems.append(f"{r.root_cause} ({r.backend}): the script failed: {tail}")
            continue
        _, got_hex = _parse(line)
        if got_hex != r.got_hex:
            problems.append(
                f"{r.root_cause} ({r.backend}): the script prints {got_hex}, the table says {r.got_hex}"
            )
    return problems
