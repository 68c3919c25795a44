"""The finite-difference rule: steps, stencils and the error a correct one should have.

One rule, shared by the TensorFlow method (:mod:`harness.backends.tensorflow.derivatives`) and the error
model of the compare stage, so the model describes exactly the stencil that ran.

Rule. A partial of total order ``n`` with ``n_v`` derivatives in input ``v`` is the
tensor product of one-dimensional central differences,
``sum_k (-1)^k C(n_v, k) f(x_v + (n_v/2 - k) h_v)``, divided by ``h_v`` ``n_v`` times,
with ``h_v = base(n) * |x_v|`` (``base(n)`` at ``x_v = 0``) and
``base(n) = eps**(1/(n+2))`` rounded to the dtype: the step that balances truncation
``O(h**2)`` against rounding ``O(eps/h**n)`` for a function that varies on the scale of
``|x|``. Every step, offset and stencil point is computed in the working dtype; this
module reproduces that arithmetic in NumPy (``ml_dtypes`` for bfloat16, computed through
float32 and rounded to nearest even, as TensorFlow's CPU kernels do), bit for bit.

Error model (computed by :mod:`harness.numerics.fd_model` in the reference stage, applied by
:mod:`harness.judge.compare`). A correct central difference at step ``h`` is off by its
truncation, ``sum_v (n_v/24) h_v**2 |d_v**2 D f|`` to leading order, from the true higher
derivatives at the point, plus what rounding adds: each function value and stencil
point rounded to the dtype, the weighted sum accumulated, the divisions. A finite
difference is ``ok`` when it lies within :data:`MODEL_FACTOR` times the sum of the two:
the factor absorbs function kernels a few ulps from correctly rounded and the next
terms of the truncation. A function that is not smooth across its stencil (a kink
inside it) or a stencil far from this rule is beyond it and keeps the usual vocabulary.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence

import numpy as np

from harness.numerics.floats import FORMATS, to_format

__all__ = [
    "MODEL_FACTOR",
    "base_step",
    "stencil_points",
    "stencil_terms",
]

#: How far beyond the predicted error (ideal + rounding) a finite difference may be and
#: still be ``ok``: kernels a few ulps from correctly rounded, and summation orders
#: other than the worst case the rounding bound assumes.
MODEL_FACTOR = 4.0


def base_step(dtype: str, order: int) -> float:
    """``eps**(1/(order+2))`` rounded to ``dtype`` (exactly a ``dtype`` value)."""
    eps = FORMATS[dtype].eps
    return float(to_format(np.array([eps ** (1.0 / (order + 2))]), dtype)[0])


def stencil_terms(counts: Mapping[str, int]) -> list[tuple[float, dict[str, float]]]:
    """``[(weight, {input: offset in steps}), ...]`` of the product stencil for ``counts``
    (derivatives per input): weight ``prod_v (-1)^k C(n_v, k)``, offset ``n_v/2 - k``."""
    names = list(counts)
    out = []
    for combo in itertools.product(*[range(counts[v] + 1) for v in names]):
        w = 1.0
        offsets = {}
        for v, k in zip(names, combo):
            w *= (-1) ** k * math.comb(counts[v], k)
            offsets[v] = counts[v] / 2 - k
        out.append((w, offsets))
    return out


def _numpy_type(dtype: str):
    if dtype == "bfloat16":
        import ml_dtypes

        return ml_dtypes.bfloat16
    return {"float16": np.float16, "float32": np.float32, "float64": np.float64}[dtype]


def stencil_points(
    xs: Mapping[str, np.ndarray], partial: Sequence[str], dtype: str
) -> tuple[dict[str, np.ndarray], list[tuple[float, dict[str, np.ndarray]]]]:
    """The steps and the stencil points of ``partial`` at the points ``xs`` (float64
    arrays holding ``dtype`` values), computed as the TensorFlow method computes them.

    Returns ``({input: h}, [(weight, {input: x_k}), ...])``; inputs the partial does not
    differentiate keep their values. Everything is float64 holding ``dtype`` values.
    """
    t = _numpy_type(dtype)
    counts = {v: partial.count(v) for v in xs if v in partial}
    base = t(base_step(dtype, len(partial)))
    with np.errstate(over="ignore", invalid="ignore"):
        steps = {}
        for v in counts:
            x = np.asarray(xs[v], dtype=np.float64).astype(t)
            steps[v] = np.where(x == 0, base, base * np.abs(x))
        points = []
        for w, offsets in stencil_terms(counts):
            point = {}
            for v in xs:
                x = np.asarray(xs[v], dtype=np.float64)
                if v in offsets:
                    c = t(offsets[v])
                    point[v] = (x.astype(t) + c * steps[v]).astype(np.float64)
                else:
                    point[v] = x
            points.append((w, point))
    return {v: h.astype(np.float64) for v, h in steps.items()}, points
