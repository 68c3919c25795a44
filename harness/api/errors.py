"""``harness.assert_derivatives(...)``: :func:`harness.api.check.check`, then a
:class:`DerivativeError` (an ``AssertionError``) listing every failing check, or a
:class:`ReferenceUndecided` where the reference could not decide some values and nothing
failed: those values are neither a pass nor a fail."""

from __future__ import annotations

import pandas as pd

from harness.api.check import CheckResult, check

__all__ = ["DerivativeError", "ReferenceUndecided", "assert_derivatives", "failure_lines"]

#: Lines of a failure message before "... and N more".
SHOWN = 40


class DerivativeError(AssertionError):
    """Derivatives of a checked function that are wrong; ``result`` is the check's."""

    def __init__(self, message: str, result: CheckResult):
        super().__init__(message)
        self.result = result


class ReferenceUndecided(Exception):
    """Values the certified reference could not decide (``ref_unreliable``); nothing
    else failed. Not an ``AssertionError``: neither a pass nor a fail."""

    def __init__(self, message: str, result: CheckResult):
        super().__init__(message)
        self.result = result


def _derivative(order: int, partial: str) -> str:
    if order == 0:
        return "value"
    return f"d^{order}/d{partial}" if len(set(partial)) == 1 else f"d/d{partial}"


def _cause(result: CheckResult, row) -> str:
    """The root cause of a failing row: the one of the finding that holds it."""
    f = result.findings
    if f.empty:
        return ""
    hit = f[
        (f["dtype"] == row["dtype"])
        & (f["partial"] == row["partial"])
        & (f["outcome"] == row["outcome"])
        & f["methods"].str.split(", ").apply(lambda m: row["method"] in m)
        & f["modes"].str.split(", ").apply(lambda m: row["mode"] in m)
    ]
    for _, g in hit.iterrows():
        name = g["input"] if isinstance(g["input"], str) and g["input"] else ""
        if name and name in row and not (g["lo"] <= row[name] <= g["hi"]):
            continue
        return str(g["root_cause"])
    return ""


def cause_lines(result: CheckResult, lines: list[str]) -> list[str]:
    """Each root cause ``lines`` name (``; root cause ID``), once, with its statement."""
    named = {s.rsplit("; root cause ", 1)[1] for s in lines if "; root cause " in s}
    roots = result.root_causes
    if not named or roots.empty:
        return []
    shown = roots[roots["id"].isin(named)]
    return ["root causes:", *(f"  {r['id']}: {r['text']}" for _, r in shown.iterrows())]


def failure_lines(result: CheckResult, rows: pd.DataFrame) -> list[str]:
    """One line per failing check (back end, method, mode, dtype, derivative, outcome):
    its worst value (the most ulps off) with the input as an exact float, what the
    framework gave, the truth and the root cause."""
    names = result.case.input_names
    keys = ["backend", "method", "mode", "dtype", "order", "partial", "outcome"]
    lines = []
    for key, group in rows.groupby(keys, sort=True):
        backend, method, mode, dtype, order, partial, outcome = key
        # The most ulps off; a value without ulps (NaN, an error) counts as the farthest.
        ulps = group["ulps"].astype("Float64").to_numpy(dtype=float, na_value=float("inf"))
        worst = group.iloc[int(ulps.argmax())]
        at = ", ".join(f"{n} = {float(worst[n])!r}" for n in names)
        expected = (
            f" (expected {worst['expected_outcome']}: {worst['expectation_reason']})"
            if worst["expected"] == "broken"
            else ""
        )
        cause = _cause(result, worst)
        far = f"{worst['ulps']} ulps" if not pd.isna(worst["ulps"]) else "no ulps (not finite)"
        got = (
            f"raised {worst['message']}" if outcome == "error" else f"got {float(worst['value'])!r}"
        )
        truth = (
            f"the truth (Arb-certified) {worst['reference']}, {far}"
            if worst["reference"]
            else f"no reference: {worst['message'] or 'the reference did not verify here'}"
        )
        lines.append(
            f"{backend} {method} {mode} {dtype} {_derivative(int(order), partial)}: "
            f"{outcome}{expected} at {len(group)} of the points; worst at {at}: {got}, {truth}"
            + (f"; root cause {cause}" if cause else "")
        )
    return lines


def _message(result: CheckResult, lines: list[str], what: str) -> str:
    head = f"{result.case.id} ({result.traced.framework}, traced as {result.traced.text}): {what}"
    shown = lines[:SHOWN]
    more = [f"... and {len(lines) - SHOWN} more"] if len(lines) > SHOWN else []
    causes = cause_lines(result, shown)
    return "\n".join([head, *("  " + s for s in shown), *more, *causes])


def assert_derivatives(fn, framework: str, **arguments) -> CheckResult:
    """:func:`harness.api.check.check` with the same arguments; returns the result where
    every derivative is right, else raises :class:`DerivativeError` (or
    :class:`ReferenceUndecided`)."""
    result = check(fn, framework, **arguments)
    failures = result.failures
    if not failures.empty:
        lines = failure_lines(result, failures)
        undecided = len(result.undecided)
        tail = f"; {undecided} values the reference could not decide" if undecided else ""
        raise DerivativeError(
            _message(result, lines, f"{len(failures)} values fail in {len(lines)} checks{tail}"),
            result,
        )
    if not result.undecided.empty:
        lines = failure_lines(result, result.undecided)
        raise ReferenceUndecided(
            _message(
                result,
                lines,
                f"the reference could not decide {len(result.undecided)} values (neither a "
                "pass nor a fail); every other value is right",
            ),
            result,
        )
    return result
