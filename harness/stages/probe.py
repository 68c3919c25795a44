"""``harness probe``: one value, by any method, mode, dtype and order, evaluated the way
the study evaluates it and judged the way the study judges it.

The value comes from the harness's own path (the implementation compiled from the case,
the method's nested pass, the mode's compilation), at one input placed in a batch of a
given size at a given index, ones elsewhere (TensorFlow's kernels round a batch's
vectorised part and its tail differently, see :mod:`harness.backends.tensorflow.repro`,
and XLA a batch of copies differently from a mixed one,
:func:`harness.backends.padding.probe_batch`); the reference is verified in mpmath at
that input; the verdict uses the study's tolerance, the finite-difference error model
and the platform's flush. In any back end (``backend``): TensorFlow through its own
runner (bit for bit the study's value, with the run's batch and index), JAX and PyTorch
through their evaluation of the same batch. This module imports the back end's framework.
"""

from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from harness.backends.catalogue import SPECS
from harness.cases.schema import DEFAULT_BACKEND

__all__ = ["Probe", "probe"]


@dataclasses.dataclass(frozen=True)
class Probe:
    value: float
    status: str  # value, missing or error
    message: str
    reference: str  # decimal, "" where it did not verify
    reference_rounded: float
    outcome: str
    tolerance_reason: str


def probe(
    case,
    implementation: str,
    point: Mapping[str, float],
    partial: tuple[str, ...],
    method: str,
    mode: str,
    dtype: str,
    settings,
    batch: int = 1,
    index: int = 0,
    beside: Sequence[tuple[str, ...]] = (),
    backend: str = DEFAULT_BACKEND,
) -> Probe:
    """Evaluate and judge one value (``settings``: :class:`harness.config.Settings`),
    computed in one pass with the partials ``beside`` it (as the run computed them), in
    ``backend`` (through its own runner where it registers one,
    :attr:`harness.backends.catalogue.BackendSpec.probe`: TensorFlow's; the others
    through their evaluation of the same batch: the point at ``index``, ones elsewhere,
    mixed as a run's batch is, :func:`harness.backends.padding.probe_batch`).

    Raises
    ------
    KeyError
        An unknown implementation.
    """
    names = list(case.input_names)
    partials = sorted({*beside, partial}, key=lambda p: (len(p), p))
    own = SPECS[backend].probe if backend in SPECS else ""
    if own:  # the back end's own runner (TensorFlow's: the study's value bit for bit)
        value, status, message = importlib.import_module(own).value(
            case, implementation, point, partial, method, mode, dtype, batch, index, partials
        )
    else:
        value, status, message = _engine_value(
            backend,
            case,
            implementation,
            point,
            partial,
            method,
            mode,
            dtype,
            batch,
            index,
            partials,
        )
    return _judged(case, implementation, point, partial, method, mode, dtype, settings, names,
                   value, status, message, backend)  # fmt: skip


def _engine_value(
    backend, case, implementation, point, partial, method, mode, dtype, batch, index, partials
):
    """The value by ``backend``'s own evaluation of a batch of ``batch`` inputs, the
    point at ``index`` (:func:`harness.backends.padding.probe_batch`)."""
    from harness.backends.catalogue import load
    from harness.backends.padding import probe_batch

    engine = load(backend)
    engine.start()
    impl = case.implementation(implementation)
    narrowed = dataclasses.replace(case, implementations=(impl,), partials=tuple(partials))
    names = list(case.input_names)
    pts = pd.DataFrame(
        {
            "point": np.arange(batch),
            **{n: probe_batch(float(point[n]), batch, index) for n in names},
        }
    )
    pts["subnormal"] = False
    top = max(len(p) for p in partials)
    table, _ = engine.evaluate_case(
        narrowed, {dtype: pts}, [dtype], [method], [mode], None, {method: top}, None
    )
    row = table[(table["partial"] == case.label(partial)) & (table["point"] == index)].iloc[0]
    status = str(row["status"])
    return float(row["value"]), ("value" if status == "value" else status), str(row["message"])


def _judged(case, implementation, point, partial, method, mode, dtype, settings, names,
            value, status, message, backend) -> Probe:  # fmt: skip
    from harness.backends.catalogue import load
    from harness.judge.compare import join_reference, judge_frame
    from harness.numerics.floats import FORMATS, is_subnormal
    from harness.reference.table import ReferenceStore, reference_rows
    from harness.reference.verify import ReferenceSettings

    ref_settings = ReferenceSettings.of(settings)
    store = ReferenceStore(case, ref_settings, None)
    chain = tuple(partial[:k] for k in range(len(partial) + 1))
    narrowed = dataclasses.replace(case, partials=chain)
    key = tuple(float(point[n]) for n in names)
    store.ensure([key], list(chain), cross_check=True)
    pts = pd.DataFrame({"point": [0], **{n: [key[i]] for i, n in enumerate(names)}})
    pts["subnormal"] = [bool(any(is_subnormal(np.array(key), FORMATS[dtype])))]
    reference = reference_rows(narrowed, {dtype: pts}, store)
    row = pd.DataFrame(
        {
            "implementation": [implementation],
            "method": [method],
            "mode": [mode],
            "dtype": [dtype],
            "partial": [case.label(partial)],
            "order": [len(partial)],
            "point": [0],
            "value": [value],
            "status": [status],
            "message": [message],
        }
    )
    flags = load(backend).probe_flush([dtype], [mode])
    judged = judge_frame(join_reference(narrowed, row, reference, flags), settings.tolerance)
    r = judged.iloc[0]
    return Probe(
        value=value,
        status=status,
        message=str(r["message"]),
        reference=str(r["reference"]),
        reference_rounded=float(r["reference_rounded"]),
        outcome=str(r["outcome"]),
        tolerance_reason=str(r["tolerance_reason"]),
    )
