"""The data of experiment ``matrix_mixed_partials`` that every framework's evaluation
shares: the seeded matrices, the entries of each quantity and the rows of one way
(:mod:`harness.experiments.matrix_partials` for TensorFlow and the reference,
:mod:`harness.experiments.matrix_ports` for JAX and PyTorch)."""

from __future__ import annotations

import itertools

import numpy as np

from harness.cases.experiment_kinds import MATRIX_PARTIALS_QUANTITIES
from harness.experiments.base import exact_grid

__all__ = ["QUANTITIES", "collect_rows", "entries", "flat_index", "matrices"]

QUANTITIES = MATRIX_PARTIALS_QUANTITIES


def matrices(seed: int, n: int, sample: int) -> tuple[np.ndarray, np.ndarray]:
    """Symmetric X, Y with entries on a 1/128 grid (exact in every dtype)."""
    rng = np.random.default_rng([seed, n, sample])
    a, b = exact_grid(rng, (n, n), 1.0), exact_grid(rng, (n, n), 1.0)
    return (a + a.T) / 2, (b + b.T) / 2


def entries(n: int, quantity: str):
    if quantity in ("YY", "XY"):
        return list(itertools.product(range(n), repeat=4))
    return list(itertools.product(range(n), repeat=2))


def flat_index(index: tuple[int, ...], n: int) -> int:
    out = 0
    for i in index:
        out = out * n + i
    return out


def collect_rows(ways: dict, params: dict, call) -> list[dict]:
    """The rows of every way ``{name: (method, fn)}`` at each (n, sample): ``call(fn, X,
    Y)`` returns ``{quantity: array or None}`` (None: ``missing``); an exception makes
    the rows of that call ``error`` rows."""
    rows = []
    for name, (method, fn) in ways.items():
        quantities = QUANTITIES if name != "trace_trick" else QUANTITIES[2:]
        for n in params["sizes"]:
            for sample in range(params["samples"]):
                X, Y = matrices(params["seed"], n, sample)
                status, message, got = "value", "", {}
                try:
                    got = call(fn, X, Y)
                except Exception as exc:  # noqa: BLE001 - recorded per row, as `error`
                    status, message = "error", f"{type(exc).__name__}: {exc}"[:500]
                for q in quantities:
                    for index in entries(n, q):
                        value, row_status = np.nan, status
                        if status == "value":
                            if got.get(q) is None:
                                row_status = "missing"
                            else:
                                value = float(got[q][index])
                        rows.append(
                            {
                                "implementation": name,
                                "method": method,
                                "partial": q,
                                "order": 2,
                                "n": n,
                                "sample": sample,
                                "entry": flat_index(index, n),
                                "value": value,
                                "status": row_status,
                                "message": message,
                            }
                        )
    return rows
