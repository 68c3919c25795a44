"""The evaluation stage: every implementation x method x mode x dtype x partial, in TensorFlow.

Batching and tracing. Points go in as one batch per combination. In the compiled modes
all implementations of a case share one traced function per (method, mode, dtype),
with a static ``input_signature`` (so each is traced exactly once), and every partial
comes out of one nested pass (see :mod:`harness.derivatives`). The ``xla`` mode compiles
the very graph traced for the ``function`` mode with ``jit_compile=True`` rather than
tracing the Python again. (A static batch size is also what a user's ``tf.function``
sees; with an unknown batch dimension TF 2.21 fails to trace three or more nested
``ForwardAccumulator``s, an IndexError.)

Isolation. If a fused call raises, the implementations are retried one by one, and an
implementation that still raises is retried partial by partial, so an exception costs
only the combinations it really breaks; those rows are ``error`` with the message.
A ``None`` derivative is kept as ``missing``.
"""

from __future__ import annotations

import gc
import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import tensorflow as tf  # noqa: E402

from .cases import Case, Partial  # noqa: E402
from .derivatives import derivatives, prefix_closure  # noqa: E402
from .tf_backend import build_implementation  # noqa: E402

__all__ = ["EvaluationStats", "evaluate_case", "tensorflow_facts"]

tf.get_logger().setLevel("ERROR")

_TF_DTYPES = {
    "float16": tf.float16,
    "bfloat16": tf.bfloat16,
    "float32": tf.float32,
    "float64": tf.float64,
}


@dataclass
class EvaluationStats:
    traces: int = 0  # compiled functions created (function and xla modes)
    python_traces: int = 0  # times the Python body ran to build a graph (tracing)
    fused_calls: int = 0
    fallbacks: int = 0
    seconds: float = 0.0


class _Failure:
    """An exception raised while computing some partials."""

    def __init__(self, exc: BaseException):
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        self.message = f"{type(exc).__name__}: {first}"[:400]


Outcome = "np.ndarray | None | _Failure"


def _to_numpy(value: tf.Tensor | None, n: int) -> np.ndarray | None:
    if value is None:
        return None
    arr = np.asarray(value.numpy()).astype(np.float64)
    if arr.shape != (n,):
        raise ValueError(f"expected {n} values, got shape {arr.shape}")
    return arr


class _Runner:
    """Runs fused groups in one (method, mode, dtype), with fallbacks."""

    def __init__(
        self, method: str, mode: str, dtype: str, xs: dict[str, tf.Tensor], stats: EvaluationStats
    ):
        self.method, self.mode, self.dtype = method, mode, dtype
        self.xs = xs
        self.names = list(xs)
        self.n = int(next(iter(xs.values())).shape[0])
        self.stats = stats
        self._concrete: dict[tuple, Callable] = {}

    def _compiled(self, key: tuple, body: Callable) -> Callable:
        signature = [tf.TensorSpec([self.n], _TF_DTYPES[self.dtype])] * len(self.names)
        wrapped = lambda *args: body(dict(zip(self.names, args)))  # noqa: E731
        self.stats.traces += 1
        if self.mode == "function":
            fn = tf.function(wrapped, input_signature=signature, autograph=False)
            concrete = fn.get_concrete_function()
            _GRAPHS[(self.method, self.dtype, self.n, key)] = concrete
            return concrete
        traced = _GRAPHS.get((self.method, self.dtype, self.n, key))
        if traced is not None:
            # The same graph the function mode traced, compiled by XLA.
            wrapped = lambda *args: traced(*args)  # noqa: E731
        return tf.function(wrapped, input_signature=signature, autograph=False, jit_compile=True)

    def call(self, key: tuple, body: Callable) -> list:
        if self.mode == "eager":
            return body(self.xs)
        return self._compiled(key, body)(*self.xs.values())

    def run(self, fns: dict[str, Callable], partials: Sequence[Partial]) -> dict[str, dict]:
        """``{implementation: {partial: array | None | _Failure}}`` for every partial."""
        impls = list(fns)
        method = self.method

        stats = self.stats

        def group_body(names: list[str], ps: Sequence[Partial]) -> Callable:
            def body(xs):
                if not tf.executing_eagerly():
                    stats.python_traces += 1
                return [[derivatives(method, fns[i], xs, ps).get(p) for p in ps] for i in names]

            return body

        out: dict[str, dict] = {}
        try:
            self.stats.fused_calls += 1
            values = self.call(("all", tuple(impls)), group_body(impls, partials))
            for name, row in zip(impls, values):
                out[name] = {p: _to_numpy(v, self.n) for p, v in zip(partials, row)}
            return out
        except Exception:  # noqa: BLE001 - isolate below, one implementation at a time
            self.stats.fallbacks += 1
        for name in impls:
            try:
                values = self.call(("one", name), group_body([name], partials))
                out[name] = {p: _to_numpy(v, self.n) for p, v in zip(partials, values[0])}
                continue
            except Exception:  # noqa: BLE001 - isolate below, one partial at a time
                self.stats.fallbacks += 1
            out[name] = {}
            for p in partials:
                try:
                    chain = prefix_closure([p])
                    values = self.call(("partial", name, p), group_body([name], chain))
                    out[name][p] = _to_numpy(values[0][chain.index(p)], self.n)
                except Exception as exc:  # noqa: BLE001 - recorded as an `error` outcome
                    out[name][p] = _Failure(exc)
        return out


#: Graphs traced in the function mode, reused by the xla mode (per process).
_GRAPHS: dict[tuple, Callable] = {}


def evaluate_case(
    case: Case,
    points: dict[str, pd.DataFrame],
    dtypes: Sequence[str],
    methods: Sequence[str],
    modes: Sequence[str],
    progress: Callable[[int, int], None] | None = None,
    max_order: Mapping[str, int] | None = None,
) -> tuple[pd.DataFrame, EvaluationStats]:
    """Evaluate every combination; one row per (implementation, method, mode, dtype, partial, point).

    ``points[dtype]`` holds the points as represented in that dtype (see
    :func:`harness.points.represent`). Columns: ``implementation method mode dtype
    partial order point value status message seconds``; ``status`` is ``value``,
    ``missing`` or ``error``. ``max_order`` caps the order per method (the ``quick``
    setting); a method's partials above its cap get no rows.
    """
    stats = EvaluationStats()
    started = time.perf_counter()
    names = case.input_names
    limit = max_order or {}
    by_method = {m: [p for p in case.partials if len(p) <= limit.get(m, len(p))] for m in methods}
    # Compiled modes first: the xla mode reuses the graphs traced for the function mode.
    order = {"function": 0, "xla": 1, "eager": 2}
    mode_list = sorted(modes, key=order.get)
    total = len(dtypes) * len(methods) * len(mode_list)
    done = 0
    frames = []
    for dtype in dtypes:
        pts = points[dtype]
        if pts.empty:
            done += len(methods) * len(mode_list)
            continue
        tf_dtype = _TF_DTYPES[dtype]
        xs = {n: tf.constant(pts[n].to_numpy(np.float64), dtype=tf_dtype) for n in names}
        fns = {
            i.name: build_implementation(i, names, tf_dtype, case.functions)
            for i in case.implementations
        }
        for method in methods:
            partials = by_method[method]
            if not partials:
                done += len(mode_list)
                continue
            for mode in mode_list:
                t0 = time.perf_counter()
                results = _Runner(method, mode, dtype, xs, stats).run(fns, partials)
                seconds = time.perf_counter() - t0
                for impl, by_partial in results.items():
                    for p in partials:
                        frames.append(
                            _rows(
                                case,
                                impl,
                                method,
                                mode,
                                dtype,
                                p,
                                by_partial.get(p),
                                pts["point"],
                                seconds,
                            )
                        )
                done += 1
                if progress:
                    progress(done, total)
            # The xla mode has reused this method's graphs; nothing else will.
            _GRAPHS.clear()
            _release_forward_mode_cache()
    stats.seconds = time.perf_counter() - started
    return pd.concat(frames, ignore_index=True), stats


def _rows(
    case: Case,
    impl: str,
    method: str,
    mode: str,
    dtype: str,
    p: Partial,
    value,
    point: pd.Series,
    seconds: float,
) -> pd.DataFrame:
    n = len(point)
    if isinstance(value, _Failure):
        values, status, message = np.full(n, np.nan), "error", value.message
    elif value is None:
        values, status, message = np.full(n, np.nan), "missing", "the framework returned None"
    else:
        values, status, message = value, "value", ""
    return pd.DataFrame(
        {
            "implementation": impl,
            "method": method,
            "mode": mode,
            "dtype": dtype,
            "partial": case.label(p),
            "order": len(p),
            "point": point.to_numpy(),
            "value": values,
            "status": status,
            "message": message,
            "seconds": seconds,
        }
    )


def _release_forward_mode_cache() -> None:
    """Drop the forward-mode helpers TensorFlow traced for the method just finished.

    TensorFlow computes each op's JVP with a small traced function, cached per op, dtype
    and shape for the life of the process (``tensorflow/python/eager/forwardprop.py``);
    under nested accumulators these run into gigabytes (3.1 GB for ``-a/b`` at order 4
    in float32) and are never used by another dtype. Releasing them bounds the memory of
    a case to its largest method and dtype, and resets TensorFlow's per-op trace counter, so each
    dtype is evaluated as in a fresh process whatever ran before it. Only caches are
    touched: no value changes.
    """
    try:
        from tensorflow.python.eager import forwardprop
    except ImportError:  # pragma: no cover - a TensorFlow without the module
        return
    cache = getattr(forwardprop, "_jvp_function_cache", None)
    if cache is not None and hasattr(cache, "clear"):
        cache.clear()
    counts = getattr(forwardprop, "_TRACE_COUNT", None)
    if isinstance(counts, dict):
        counts.clear()
    gc.collect()


def tensorflow_facts() -> dict[str, object]:
    """What about this TensorFlow shapes the numbers (for provenance)."""
    return {
        "tensorflow": tf.__version__,
        "devices": [d.name for d in tf.config.list_logical_devices()],
        "grappler_options": {
            k: str(v) for k, v in tf.config.optimizer.get_experimental_options().items()
        }
        or "default",
        "jit_autoclustering": bool(tf.config.optimizer.get_jit()),
    }


def probe_flush(dtypes: Sequence[str], modes: Sequence[str]) -> dict[str, dict[str, dict]]:
    """Whether this platform flushes subnormal inputs and results, per dtype and mode:
    ``{dtype: {mode: {"inputs": bool, "results": bool}}}``.

    Both probes multiply two tensors passed in as arguments (nothing to fold): a
    subnormal times 2**10 is a normal number unless the subnormal was read as 0
    (``inputs``), and the smallest normal times 1/4 is subnormal unless the result was
    written as 0 (``results``).
    """
    from .floats import FORMATS

    out: dict[str, dict[str, dict]] = {}
    for dtype in dtypes:
        fmt, tf_dtype = FORMATS[dtype], _TF_DTYPES[dtype]
        sub = fmt.smallest_normal / 4
        x = tf.constant([sub, fmt.smallest_normal], dtype=tf_dtype)
        y = tf.constant([2.0**10, 0.25], dtype=tf_dtype)
        out[dtype] = {}
        for mode in modes:
            if mode == "eager":
                fn = tf.multiply
            else:
                spec = [tf.TensorSpec([2], tf_dtype)] * 2
                fn = tf.function(
                    lambda a, b: a * b, input_signature=spec, jit_compile=(mode == "xla")
                )
            got = np.asarray(fn(x, y).numpy(), dtype=np.float64)
            out[dtype][mode] = {"inputs": bool(got[0] == 0), "results": bool(got[1] == 0)}
    return out
