"""A finding's evidence (harness.causes.evidence.attach), checked against the errors table
filtered by pandas: at the points where the finding fails, the share right of its other
modes, other exact methods, other back ends and the case's other implementations."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pandas as pd
import pytest

from harness.causes.evidence import attach

BACKENDS = ("torch", "jax")
IMPLEMENTATIONS = ("naive", "stable", "log1p")
METHODS = ("reverse", "forward", "taylor", "finite_difference")
MODES = ("eager", "jit", "compile")
OUTCOMES = (
    "ok",
    "ok",
    "ok",
    "wrong",
    "nan",
    "error",
    "ref_unreliable",
    "flushed",
    "not_applicable",
)


def _errors(seed: int) -> pd.DataFrame:
    """Every back end, implementation, method and mode at 12 points of x, both orders,
    two dtypes, each row's outcome drawn (a fixed seed: the same table every run), but
    ``stable``'s, always right."""
    rng = np.random.default_rng(seed)
    rows = []
    for backend, impl, method, mode, dtype, order in itertools.product(
        BACKENDS, IMPLEMENTATIONS, METHODS, MODES, ("float32", "float64"), (0, 1)
    ):
        for point in range(12):
            rows.append(
                {
                    "backend": backend,
                    "implementation": impl,
                    "method": method,
                    "mode": mode,
                    "dtype": dtype,
                    "partial": "" if order == 0 else "x",
                    "order": order,
                    "point": point + 40,  # ids need not start at 0
                    "x": 2.0**point,
                    # The stable implementation is right everywhere: a fix.
                    "outcome": "ok" if impl == "stable" else OUTCOMES[rng.integers(len(OUTCOMES))],
                    "reference_rounded": float(rng.normal()) * 10.0 ** (order + 1),
                    "message": f"{backend} {method}, {mode} mode: ValueError: {point % 3}",
                }
            )
    return pd.DataFrame(rows).astype({c: "str" for c in ("backend", "implementation", "method")})


def _finding(backend, impl, dtype, methods, modes, outcome, lo, hi) -> dict:
    return {
        "backend": backend,
        "implementation": impl,
        "partial": "x",
        "order": 1,
        "dtype": dtype,
        "outcome": outcome,
        "counts": json.dumps({outcome: 1}),
        "input": "x",
        "lo": lo,
        "hi": hi,
        "lo_span": json.dumps([lo, lo]),
        "hi_span": json.dumps([hi, hi]),
        "methods": ", ".join(methods),
        "modes": ", ".join(modes),
        "worst_inputs": json.dumps({"x": lo}),
        "worst_method": methods[0],
    }


def _shares(rows: pd.DataFrame, by: str) -> dict:
    judged = rows[~rows["outcome"].isin(["ref_unreliable", "flushed", "not_applicable"])]
    return {
        str(k): round(float((g["outcome"] == "ok").mean()), 4)
        for k, g in judged.groupby(by, observed=True)
    }


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_evidence_is_the_share_right_elsewhere_at_the_failing_points(seed):
    errors = _errors(seed)
    picks = [
        ("torch", "naive", "float64", ("reverse",), ("eager",), "wrong", 2.0, 64.0),
        ("torch", "naive", "float64", ("reverse", "forward"), ("eager", "jit"), "nan", 1.0, 2048.0),
        ("jax", "log1p", "float32", ("taylor",), ("compile",), "wrong", 8.0, 8.0),
        ("jax", "log1p", "float64", ("forward", "taylor"), ("jit", "eager"), "error", 1.0, 512.0),
        ("jax", "missing", "float64", ("forward",), ("jit",), "nan", 1.0, 4.0),  # no rows
    ]
    findings = pd.DataFrame([_finding(*p) for p in picks])
    out = attach(findings, errors, None, None, ["x"])
    assert list(out.index) == list(findings.index)
    for (backend, impl, dtype, methods, modes, outcome, lo, hi), f in zip(
        picks, out.itertuples(), strict=True
    ):
        mine = errors[
            (errors.backend == backend)
            & (errors.implementation == impl)
            & (errors.partial == "x")
            & (errors.dtype == dtype)
        ]
        failing = mine[
            mine.method.isin(methods)
            & mine["mode"].isin(modes)
            & (mine.outcome == outcome)
            & mine.x.between(lo, hi)
        ]
        there = set(failing.point)
        at = mine[mine.point.isin(there)]
        ways = at.method.isin(methods)
        want_modes = _shares(at[ways & ~at["mode"].isin(modes)], "mode")
        exact = at.method.isin(["reverse", "forward", "forward_over_reverse", "taylor"])
        want_methods = _shares(at[~ways & exact & at["mode"].isin(modes)], "method")
        near = errors[
            (errors.backend != backend)
            & (errors.implementation == impl)
            & (errors.partial == "x")
            & (errors.dtype == dtype)
            & errors.method.isin(methods)
            & errors.point.isin(there)
        ]
        alike = errors[
            (errors.backend == backend)
            & (errors.implementation != impl)
            & (errors.partial == "x")
            & (errors.dtype == dtype)
            & errors.method.isin(methods)
            & errors["mode"].isin(modes)
            & errors.point.isin(there)
        ]
        fixes = sorted(k for k, v in _shares(alike, "implementation").items() if v >= 0.9)
        assert json.loads(f.modes_ok) == want_modes
        assert json.loads(f.methods_ok) == want_methods
        assert json.loads(f.backends_ok) == _shares(near, "backend")
        assert json.loads(f.fixes) == fixes
        if there:
            # Some shares to compare: the pandas side is not empty by construction.
            assert want_modes or want_methods
        # The worst point's lower orders (the value, order 0) give the scale.
        value = mine.x == lo
        lower = errors[
            (errors.backend == backend)
            & (errors.implementation == impl)
            & (errors.dtype == dtype)
            & (errors.order == 0)
            & (errors.x == lo)
        ]["reference_rounded"].abs()
        want_scale = lower.max() if value.any() else np.nan
        assert f.scale == want_scale or (np.isnan(f.scale) and np.isnan(want_scale))
        # An error finding's texts: each distinct exception of its rows, in their order.
        texts = [m.split(" mode: ", 1)[1] for m in failing.message]
        assert f.error_text == ("\n".join(dict.fromkeys(texts)) if outcome == "error" else "")
    assert len(out.iloc[3]["error_text"].splitlines()) >= 2  # some texts to compare
    assert "stable" in out.iloc[0]["fixes"]
    missing = out.iloc[4]
    assert (missing.modes_ok, missing.backends_ok, missing.fixes) == ("{}", "{}", "[]")
    assert np.isnan(missing.scale)
