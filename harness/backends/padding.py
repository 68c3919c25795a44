"""One batch shape for many cases (the study's ``batch`` setting).

A framework traces or compiles per input shape: TensorFlow each op's forward-mode helper
(per op, dtype, shape and nesting depth), JAX each primitive it runs eagerly and each
jitted function. A process evaluating many cases, each with its own number of points,
pays that again for every case; padded to one size, a case reuses what the ones before
it traced. The added points are copies of the batch's first point, so they ask the
framework nothing a case does not already ask, and the rows keep the case's own points.

A point's value can depend on where it sits in a batch: a CPU kernel computes most of a
batch in vector lanes and the last few elements one by one, and the two paths can round
differently. Padding moves a batch's last elements into the lanes, as a user's larger
batch would; no point's value is taken from a padded element.

A batch of one point alone (``harness probe``, the reproducers) is mixed too: the
point at its position among ones (:func:`probe_batch`). A batch whose elements are all the
same can round differently: TensorFlow's XLA gives d2/du2 of ``u ** 2.5`` at the float32
subnormal u = 5.9e-42 by nested forward mode as 0.0 for copies of the point and 9.93e-23
beside any other value, as in the study's batch of the case's points.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

__all__ = ["padded", "probe_batch"]


def padded(inputs: Mapping[str, np.ndarray], size: int | None) -> dict[str, np.ndarray]:
    """``inputs`` (equal-length arrays) at ``size`` elements at least, each array's
    added elements copies of its first; unchanged where ``size`` is ``None`` or no
    larger than the batch."""
    arrays = {n: np.asarray(v) for n, v in inputs.items()}
    n = len(next(iter(arrays.values()))) if arrays else 0
    if not size or size <= n or n == 0:
        return dict(arrays)
    return {
        k: np.concatenate([v, np.full(size - n, v[0], dtype=v.dtype)]) for k, v in arrays.items()
    }


def probe_batch(value: float, size: int, index: int) -> np.ndarray:
    """A batch of ``size`` inputs (float64, cast by the caller): ``value`` at ``index``,
    ones elsewhere (a mixed batch, as a run's is)."""
    batch = np.ones(size)
    batch[index] = value
    return batch
