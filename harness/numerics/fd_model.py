"""The error a correct central difference should have, per (dtype, point, derivative).

See :mod:`harness.numerics.stencils` for the rule and the model. For every derivative ``D`` of
order ``n >= 1``, at every point as each dtype holds it, the reference stage reproduces
the step ``h_v`` and the stencil points ``x_k`` the finite-difference method uses, and
computes from the reference's values (Arb balls, else verified mpmath values):

- ``fd_truncation_error``: ``sum_v (n_v / 24) h_v**2 |d_v**2 D f(x)|``, the leading term
  of a central difference's truncation error (``delta**n / h**n = D**n (1 + n h**2 D**2 /
  24 + ...)``), from the true higher derivatives at the point. A function that is not
  smooth across the stencil (a kink inside it) is not described by them: such a finite
  difference is flagged, as it should be;
- ``fd_rounding_error``: what computing it in the dtype may add,
  ``(u (m + 1) sum_k |w_k f(x_k)| + u sum_k |w_k| sum_v |x_kv d_v f(x)| + t sum_k |w_k|)
  / prod_v h_v**n_v + n u |D f(x)|``: each of the ``m`` function values rounded and the
  weighted sum accumulated, each stencil point rounded to the dtype (moving ``f`` by
  its slope), a value that underflows (``t``: the smallest subnormal), ``n`` divisions;
  ``u`` is the unit roundoff;
- ``fd_tolerance``: :data:`harness.numerics.stencils.MODEL_FACTOR` times their sum, the largest
  absolute error at which a finite difference is judged ``ok``;
- ``fd_step``: the step of the first differentiated input, for people.

Where a value the model needs did not verify (or a stencil point left the dtype's
range), the model is undefined: ``fd_tolerance`` is NaN and ``fd_note`` says why.
No TensorFlow here.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import mpmath
import numpy as np
import pandas as pd

from harness.numerics.floats import FORMATS
from harness.numerics.stencils import MODEL_FACTOR, stencil_points

__all__ = ["FD_COLUMNS", "finite_difference_model", "model_partials"]

FD_COLUMNS = (
    "fd_tolerance",
    "fd_truncation_error",
    "fd_rounding_error",
    "fd_step",
    "fd_note",
)


def model_partials(partial: tuple[str, ...]) -> list[tuple[str, ...]]:
    """The derivatives the model of ``partial`` needs at the point: ``d_v**2 D`` and
    ``d_v`` for every input ``v`` it differentiates."""
    inputs = list(dict.fromkeys(partial))
    return [(*partial, v, v) for v in inputs] + [(v,) for v in inputs]


def finite_difference_model(case, points: Mapping[str, pd.DataFrame], store) -> pd.DataFrame:
    """One row per (dtype, point, partial of order >= 1): the columns of :data:`FD_COLUMNS`.

    ``store`` is the case's :class:`harness.reference.table.ReferenceStore`; the case's own
    partials must already be verified in it at ``points``. Models are memoised in the
    store per (dtype, inputs, partial).
    """
    names = list(case.input_names)
    partials = [p for p in case.partials if p]
    plans = []
    at_points: dict[tuple[float, ...], None] = {}
    at_stencils: dict[tuple[float, ...], None] = {}
    needed: set = set()
    done: dict[tuple, dict] = {}
    for dtype, frame in points.items():
        if frame.empty:
            continue
        xs = {n: frame[n].to_numpy(np.float64) for n in names}
        here = list(zip(*(xs[n].tolist() for n in names)))
        for p in partials:
            todo = [i for i, k in enumerate(here) if ("fd", dtype, k, p) not in store.memo]
            for i, k in enumerate(here):
                if ("fd", dtype, k, p) in store.memo:
                    done[(dtype, i, p)] = store.memo[("fd", dtype, k, p)]
            if not todo:
                continue
            sub = {n: xs[n][todo] for n in names}
            steps, terms = stencil_points(sub, p, dtype)
            keys = [
                [tuple(float(pt[n][j]) for n in names) for _, pt in terms] for j in range(len(todo))
            ]
            for row in keys:
                at_stencils.update(dict.fromkeys(k for k in row if _finite(k)))
            at_points.update(dict.fromkeys(here[i] for i in todo))
            needed.update(model_partials(p))
            plans.append(
                (dtype, p, steps, [w for w, _ in terms], keys, [here[i] for i in todo], todo)
            )
    if plans:
        # Arb balls first (they decide what two precisions cannot: an exact 0 whose
        # mpmath jet cancels takes the jet's other partials down with it; a ball keeps them).
        store.ensure(list(at_points), list(needed))
        store.ensure(list(at_stencils), [()])
    for dtype, p, steps, weights, keys, here, todo in plans:
        fmt = FORMATS[dtype]
        units = (fmt.eps / 2, fmt.smallest_subnormal)
        counts = {v: p.count(v) for v in names if v in p}
        first = next(iter(counts))
        for j, (i, stencil) in enumerate(zip(todo, keys)):
            h = {v: float(steps[v][j]) for v in counts}
            model = {"fd_step": h[first]}
            model.update(_model(store, names, here[j], p, stencil, weights, counts, h, units))
            store.memo[("fd", dtype, here[j], p)] = model
            done[(dtype, i, p)] = model
    rows = []
    for dtype, frame in points.items():
        for i, point_id in enumerate(frame["point"]):
            for p in partials:
                model = done[(dtype, i, p)]
                rows.append(
                    {"dtype": dtype, "point": int(point_id), "partial": case.label(p), **model}
                )
    return pd.DataFrame(rows, columns=["dtype", "point", "partial", *FD_COLUMNS])


def _finite(key: tuple[float, ...]) -> bool:
    return all(math.isfinite(v) for v in key)


_UNDEFINED = dict.fromkeys(("fd_tolerance", "fd_truncation_error", "fd_rounding_error"), math.nan)


def _model(store, names, here, p, stencil, weights, counts, h, units) -> dict:
    u, tiny = units
    if not all(math.isfinite(v) and v != 0 for v in h.values()):
        return {**_UNDEFINED, "fd_note": "the step is not a finite nonzero number"}
    if not all(_finite(k) for k in stencil):
        return {**_UNDEFINED, "fd_note": "a stencil point is beyond the dtype's range"}
    truth = store.value(here, p)
    curvature = {v: store.value(here, (*p, v, v)) for v in counts}
    slope = {v: store.value(here, (v,)) for v in counts}
    values = [store.value(k, ()) for k in stencil]
    if truth is None or None in curvature.values() or None in slope.values():
        return {**_UNDEFINED, "fd_note": "a derivative the model needs did not verify"}
    if any(v is None for v in values):
        return {**_UNDEFINED, "fd_note": "the function did not verify at a stencil point"}
    with mpmath.workdps(40):
        scale = mpmath.mpf(1)
        for v, n in counts.items():
            scale *= mpmath.mpf(h[v]) ** n
        truncation = mpmath.fsum(
            mpmath.mpf(n) / 24 * mpmath.mpf(h[v]) ** 2 * abs(curvature[v])
            for v, n in counts.items()
        )
        magnitude = mpmath.fsum(abs(w * f) for w, f in zip(weights, values))
        moved = mpmath.fsum(
            abs(w) * mpmath.fsum(abs(mpmath.mpf(k[names.index(v)]) * slope[v]) for v in counts)
            for w, k in zip(weights, stencil)
        )
        floor = tiny * sum(abs(w) for w in weights)
        rounding = (u * (len(values) + 1) * magnitude + u * moved + floor) / scale
        rounding += len(p) * u * abs(truth)
        truncation_f, rounding_f = float(truncation), float(rounding)
    return {
        "fd_tolerance": MODEL_FACTOR * (truncation_f + rounding_f),
        "fd_truncation_error": truncation_f,
        "fd_rounding_error": rounding_f,
        "fd_note": "",
    }
