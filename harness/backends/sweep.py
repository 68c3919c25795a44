"""The evaluation loop of a back end that computes on NumPy batches (JAX, PyTorch).

A back end gives a :class:`Framework`: how to compile an implementation for a dtype (or
why it cannot: ``not_applicable``), how to compute a set of partials by a method in a
mode on one batch, and how to describe a method's nesting for messages. This module does
the rest, as TensorFlow's :mod:`harness.backends.tensorflow.evaluate` does for it: one
call per implementation and (method, mode, dtype) with every partial of the method, the
partials one by one where that call raises (so an exception costs only what it breaks:
``error`` rows with the message and where it happened), ``None`` kept as ``missing``,
and the working routes kept so the bisection of edges evaluates new inputs by them.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import pandas as pd

from harness.backends import crashes
from harness.backends.interface import NotApplicable
from harness.backends.padding import padded
from harness.registered import catalogue as registry

__all__ = ["EvaluationStats", "Framework", "NotApplicable", "evaluate_case"]

Partial = tuple[str, ...]


class Framework(Protocol):
    name: str

    def compile(self, impl, case, dtype: str) -> Callable:
        """The implementation as a function of keyword batches (raises
        :class:`NotApplicable` where the framework has no place for it)."""

    def applicable(self, method: str, mode: str, dtype: str, impl, partial: Partial) -> str:
        """Why (method, mode, dtype) cannot compute ``partial`` of ``impl`` ("" if it can)."""

    def derivatives(
        self,
        method: str,
        mode: str,
        dtype: str,
        key: tuple,
        fn: Callable,
        partials: Sequence[Partial],
        inputs: Mapping[str, np.ndarray],
    ) -> dict[Partial, np.ndarray | None]:
        """``partials`` of ``fn`` at the batch ``inputs`` (float64 arrays holding values of
        ``dtype``), as float64 arrays (``None``: the framework gave no derivative). ``key``
        names the computation, for the framework's caches of compiled functions."""

    def nesting(self, method: str, order: int) -> str:
        """How the method computes an order, for messages ("3 nested jax.grad")."""


@dataclass
class EvaluationStats:
    calls: int = 0  # one per implementation and (method, mode, dtype)
    fallbacks: int = 0
    not_applicable: int = 0  # implementations x (method, mode, dtype) that cannot be written
    seconds: float = 0.0
    bisect_seconds: float = 0.0  # of ``seconds``: finding exact edges
    traces: int = 0  # compiled functions made (the framework counts them)
    width: int = 0  # inputs per call: the largest batch, padded (the ``batch`` setting)


class _Failure:
    def __init__(self, exc: BaseException, where: str = ""):
        lines = str(exc).strip().splitlines()
        text = f"{type(exc).__name__}: {lines[0] if lines else ''}"
        self.message = (f"{where}: {text}" if where else text)[:500]


class _Runner:
    """One (method, mode, dtype): every implementation's partials, and the routes that
    worked, to run again at new inputs (:meth:`evaluate_at`)."""

    def __init__(self, fw: Framework, method, mode, dtype, label: Callable[[Partial], str]):
        self.fw, self.method, self.mode, self.dtype = fw, method, mode, dtype
        self.label = label
        self.routes: list[tuple[str, tuple, Callable, list[Partial], list[Partial]]] = []
        self.fixed: dict[str, dict[Partial, str | None]] = {}  # messages, or None: n/a

    def _where(self, p: Partial) -> str:
        n = len(p)
        how = self.fw.nesting(self.method, n) if n else "the value itself"
        return (
            f"{self.fw.name} {self.method} ({how}), order {n} ({self.label(p) or 'f'}), "
            f"{self.dtype}, {self.mode} mode"
        )

    def _call(self, key, fn, partials, inputs):
        return self.fw.derivatives(self.method, self.mode, self.dtype, key, fn, partials, inputs)

    def run(self, impl, fn, partials: Sequence[Partial], inputs, stats: EvaluationStats) -> dict:
        """``{partial: array | None | _Failure | NotApplicable}`` for one implementation."""
        out: dict = {}
        todo = []
        left_out = impl.registered and registry.mode_left_out(
            impl.registered, self.fw.name, self.mode
        )
        for p in partials:
            reason = left_out or self.fw.applicable(self.method, self.mode, self.dtype, impl, p)
            if reason:
                out[p] = NotApplicable(reason)
                self.fixed.setdefault(impl.name, {})[p] = None
            else:
                todo.append(p)
        if not todo:
            stats.not_applicable += 1
            return out
        stats.calls += 1
        key = (impl.name, self.method, self.mode, self.dtype, tuple(todo))
        try:
            got = self._call(key, fn, todo, inputs)
            self.routes.append((impl.name, key, fn, todo, todo))
            out.update({p: got.get(p) for p in todo})
            return out
        except NotApplicable as exc:
            for p in todo:
                out[p] = exc
                self.fixed.setdefault(impl.name, {})[p] = None
            return out
        except Exception:  # noqa: BLE001 - isolate below, one partial at a time
            stats.fallbacks += 1
        for p in todo:
            chain = [p[:k] for k in range(len(p) + 1)]
            key = (impl.name, self.method, self.mode, self.dtype, ("one", p))
            try:
                got = self._call(key, fn, chain, inputs)
                out[p] = got.get(p)
                self.routes.append((impl.name, key, fn, chain, [p]))
            except NotApplicable as exc:
                out[p] = exc
                self.fixed.setdefault(impl.name, {})[p] = None
            except Exception as exc:  # noqa: BLE001 - recorded as an `error` outcome
                out[p] = _Failure(exc, self._where(p))
                self.fixed.setdefault(impl.name, {})[p] = out[p].message
        return out

    def evaluate_at(self, inputs: Mapping[str, np.ndarray]) -> dict[str, dict]:
        """``{impl: {label: array | None | message}}`` at new inputs, by the routes that
        worked (a partial that raised keeps its message)."""
        out: dict[str, dict] = {}
        for name, key, fn, chain, wanted in self.routes:
            try:
                got = self._call(key, fn, chain, inputs)
            except Exception as exc:  # noqa: BLE001 - a new input broke a working route
                for p in wanted:
                    out.setdefault(name, {})[self.label(p)] = _Failure(exc, self._where(p)).message
                continue
            for p in wanted:
                value = got.get(p)
                out.setdefault(name, {})[self.label(p)] = (
                    None if value is None else np.asarray(value, dtype=np.float64)
                )
        for name, fixed in self.fixed.items():
            for p, message in fixed.items():
                out.setdefault(name, {})[self.label(p)] = message or "not applicable"
        return out


def evaluate_case(
    fw: Framework,
    case,
    points: Mapping[str, pd.DataFrame],
    dtypes: Sequence[str],
    methods: Sequence[str],
    modes: Sequence[str],
    progress: Callable[[int, int], None] | None = None,
    max_order: Mapping[str, int] | None = None,
    edges=None,
    batch: int | None = None,
) -> tuple[pd.DataFrame, EvaluationStats]:
    """Every implementation x method x mode x dtype x partial at every point: the rows of
    :data:`harness.backends.interface.EVALUATION_COLUMNS`; each batch at ``batch`` points
    at least (:func:`harness.backends.padding.padded`)."""
    stats = EvaluationStats()
    started = time.perf_counter()
    names = list(case.input_names)
    limit = max_order or {}
    by_method = {m: [p for p in case.partials if len(p) <= limit.get(m, len(p))] for m in methods}
    total = len(dtypes) * len(methods) * len(modes)
    done = 0
    frames = []
    for dtype in dtypes:
        pts = points[dtype]
        if pts.empty:
            done += len(methods) * len(modes)
            continue
        inputs = padded({n: pts[n].to_numpy(np.float64) for n in names}, batch)
        width = len(next(iter(inputs.values())))
        stats.width = max(stats.width, width)
        fns: dict[str, Callable | NotApplicable | _Failure] = {}
        for impl in case.implementations:
            try:
                fns[impl.name] = fw.compile(impl, case, dtype)
            except NotApplicable as exc:
                fns[impl.name] = exc
            except Exception as exc:  # noqa: BLE001 - every row of it is an `error`
                fns[impl.name] = _Failure(exc, f"{fw.name}: building {impl.name} in {dtype}")
        for method in methods:
            partials = by_method[method]
            if not partials:
                done += len(modes)
                continue
            runners = {}
            method_frames = []
            for mode in modes:
                t0 = time.perf_counter()
                runner = _Runner(fw, method, mode, dtype, case.label)
                results = {}
                crash = crashes.crashed(case.id, fw.name, dtype, method, mode)
                for impl in case.implementations:
                    fn = fns[impl.name]
                    if crash is not None and not isinstance(fn, NotApplicable):
                        fn = _Failure(crashes.ProcessDied(crash))  # it killed an earlier process
                    if isinstance(fn, (NotApplicable, _Failure)):
                        results[impl.name] = dict.fromkeys(partials, fn)
                        fixed = None if isinstance(fn, NotApplicable) else fn.message
                        runner.fixed[impl.name] = dict.fromkeys(partials, fixed)
                        stats.not_applicable += isinstance(fn, NotApplicable)
                        continue
                    crashes.begin(case.id, fw.name, dtype, method, mode)
                    results[impl.name] = runner.run(impl, fn, partials, inputs, stats)
                runners[mode] = runner
                seconds = time.perf_counter() - t0
                for impl_name, by_partial in results.items():
                    for p in partials:
                        method_frames.append(
                            _rows(
                                case,
                                impl_name,
                                method,
                                mode,
                                dtype,
                                p,
                                by_partial.get(p),
                                pts,
                                seconds,
                                width,
                            )
                        )
                done += 1
                if progress:
                    progress(done, total)
            frames += method_frames
            if edges is not None and method_frames:
                t0 = time.perf_counter()
                applicable = pd.concat(method_frames, ignore_index=True)
                applicable = applicable[applicable["status"] != "not_applicable"]
                edges.after_method(
                    method,
                    dtype,
                    applicable,
                    crashes.bisected(case.id, fw.name, dtype, method, modes),
                    crashes.naming(
                        case.id,
                        fw.name,
                        dtype,
                        method,
                        lambda mode, new, runners=runners: runners[mode].evaluate_at(new),
                    ),
                    width,
                )
                stats.bisect_seconds += time.perf_counter() - t0
    crashes.begin(None)
    stats.seconds = time.perf_counter() - started
    if not frames:
        from harness.backends.interface import EVALUATION_COLUMNS

        return pd.DataFrame(columns=list(EVALUATION_COLUMNS)), stats
    return pd.concat(frames, ignore_index=True), stats


def _rows(
    case, impl, method, mode, dtype, p, value, pts: pd.DataFrame, seconds, width: int
) -> pd.DataFrame:
    """One partial's rows at the case's points (the first ``len(pts)`` of a batch of
    ``width``)."""
    n = len(pts)
    if isinstance(value, NotApplicable):
        values, status, message = np.full(n, np.nan), "not_applicable", str(value)
    elif isinstance(value, _Failure):
        values, status, message = np.full(n, np.nan), "error", value.message
    elif value is None:
        values, status, message = np.full(n, np.nan), "missing", "the framework returned None"
    else:
        values = np.asarray(value, dtype=np.float64)
        if values.shape != (width,):
            values, status = np.full(n, np.nan), "error"
            message = f"expected {width} values, got shape {np.shape(value)}"
        else:
            values, status, message = values[:n], "value", ""
    return pd.DataFrame(
        {
            "implementation": impl,
            "method": method,
            "mode": mode,
            "dtype": dtype,
            "partial": case.label(p),
            "order": len(p),
            "point": pts["point"].to_numpy(),
            "value": values,
            "status": status,
            "message": message,
            "seconds": seconds,
        }
    )
