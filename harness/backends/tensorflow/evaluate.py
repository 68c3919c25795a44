"""The evaluation stage: every implementation x method x mode x dtype x partial, in TensorFlow.

Batching and tracing. Points go in as one batch per combination. In the compiled modes
each implementation has one traced function per (method, mode, dtype), with a static
``input_signature`` (so it is traced exactly once), and every partial comes out of it
(one nested pass per chain, see :mod:`harness.backends.tensorflow.derivatives`). Implementations are not
fused into one graph: Grappler and XLA rewrite a graph as a whole (a value with more
users is rewritten differently), so an implementation's values would depend on which
others the case lists (logistic's exponential form, d/dr, float32, xla: -1.2207e-4
beside the other forms, -1.3638e-4 alone). The ``xla`` mode compiles
the very graph traced for the ``function`` mode with ``jit_compile=True`` rather than
tracing the Python again. (A static batch size is also what a user's ``tf.function``
sees; with an unknown batch dimension TF 2.21 fails to trace three or more nested
``ForwardAccumulator``s, an IndexError.)

Isolation. An implementation whose call raises is retried partial by partial (not the
partial whose chain is that call), so an exception costs only the combinations it really
breaks; those rows are ``error`` with the message. A ``None`` derivative is ``missing``.
"""

from __future__ import annotations

import gc
import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from harness.backends import crashes  # noqa: E402
from harness.backends.interface import NotApplicable  # noqa: E402
from harness.backends.padding import padded  # noqa: E402
from harness.backends.tensorflow.build import build_implementation  # noqa: E402
from harness.backends.tensorflow.derivatives import derivatives, prefix_closure  # noqa: E402
from harness.backends.tensorflow.tfimport import one_order, tf  # noqa: E402
from harness.cases.model import Case, Partial  # noqa: E402

__all__ = [
    "TF_DTYPES",
    "EvaluationStats",
    "Runner",
    "evaluate_case",
]

tf.get_logger().setLevel("ERROR")

TF_DTYPES = {
    "float16": tf.float16,
    "bfloat16": tf.bfloat16,
    "float32": tf.float32,
    "float64": tf.float64,
}


@dataclass
class EvaluationStats:
    traces: int = 0  # compiled functions created (function and xla modes)
    python_traces: int = 0  # times the Python body ran to build a graph (tracing)
    calls: int = 0  # one per implementation and (method, mode, dtype)
    fallbacks: int = 0
    seconds: float = 0.0
    bisect_seconds: float = 0.0  # of ``seconds``: finding exact edges
    width: int = 0  # inputs per call: the largest batch, padded (the ``batch`` setting)


_NESTING = {
    "reverse": lambda n: f"{n} nested GradientTape" + ("s" if n > 1 else ""),
    "forward": lambda n: f"{n} nested ForwardAccumulator" + ("s" if n > 1 else ""),
    "forward_over_reverse": lambda n: (
        "a GradientTape"
        + (f" inside {n - 1} nested ForwardAccumulator" + ("s" if n > 2 else "") if n > 1 else "")
    ),
    "finite_difference": lambda n: "a central-difference stencil",
}


def context(method: str, mode: str, dtype: str, partial: Partial, label: str) -> str:
    """Where a failure happened, as a reader needs it: "forward (3 nested
    ForwardAccumulators), order 3 (d/dx x x), float32, function mode"."""
    n = len(partial)
    how = _NESTING[method](n) if n else "the value itself"
    return f"{method} ({how}), order {n} ({label or 'f'}), {dtype}, {mode} mode"


class _Failure:
    """An exception raised while computing some partials, with where it happened."""

    def __init__(self, exc: BaseException, where: str = ""):
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        text = f"{type(exc).__name__}: {first}"
        self.message = (f"{where}: {text}" if where else text)[:500]


Outcome = "np.ndarray | None | _Failure"


def _to_numpy(value: tf.Tensor | None, n: int) -> np.ndarray | None:
    if value is None:
        return None
    arr = np.asarray(value.numpy()).astype(np.float64)
    if arr.shape != (n,):
        raise ValueError(f"expected {n} values, got shape {arr.shape}")
    return arr


class Runner:
    """Runs each implementation's partials in one (method, mode, dtype) in one call
    (partial by partial where that call raises).

    The compiled functions it makes (one per implementation, static batch shape) are
    kept, and :meth:`evaluate_at` runs the calls that worked again on new inputs of the
    same shape: the bisection of edges traces nothing.
    """

    def __init__(
        self,
        method: str,
        mode: str,
        dtype: str,
        xs: dict[str, tf.Tensor],
        stats: EvaluationStats,
        label: Callable[[Partial], str] = "".join,
    ):
        self.method, self.mode, self.dtype = method, mode, dtype
        self.xs = xs
        self.names = list(xs)
        self.n = int(next(iter(xs.values())).shape[0])
        self.stats = stats
        self.label = label
        self._compiled_fns: dict[tuple, Callable] = {}
        self._bodies: dict[tuple, Callable] = {}
        # How each implementation's partials were computed: (key, partials, names).
        self.routes: list[tuple[tuple, Sequence[Partial], list[str]]] = []
        self.failures: dict[str, dict[Partial, str]] = {}

    def _compiled(self, key: tuple, body: Callable) -> Callable:
        if key in self._compiled_fns:
            return self._compiled_fns[key]
        signature = [tf.TensorSpec([self.n], TF_DTYPES[self.dtype])] * len(self.names)
        wrapped = lambda *args: body(dict(zip(self.names, args)))  # noqa: E731
        self.stats.traces += 1
        if self.mode == "function":
            fn = tf.function(wrapped, input_signature=signature, autograph=False)
            concrete = fn.get_concrete_function()
            _GRAPHS[(self.method, self.dtype, self.n, key)] = concrete
            self._compiled_fns[key] = concrete
            return concrete
        traced = _GRAPHS.get((self.method, self.dtype, self.n, key))
        if traced is not None:
            # The same graph the function mode traced, compiled by XLA.
            wrapped = lambda *args: traced(*args)  # noqa: E731
        fn = tf.function(wrapped, input_signature=signature, autograph=False, jit_compile=True)
        self._compiled_fns[key] = fn
        return fn

    def call(self, key: tuple, body: Callable, xs: Mapping[str, tf.Tensor] | None = None) -> list:
        xs = self.xs if xs is None else xs
        self._bodies[key] = body
        if self.mode == "eager":
            return body(xs)
        if self.mode == "function":
            with one_order():  # the same order of additions in every process
                return self._compiled(key, body)(*(xs[n] for n in self.names))
        return self._compiled(key, body)(*(xs[n] for n in self.names))

    def run(self, fns: dict[str, Callable], partials: Sequence[Partial]) -> dict[str, dict]:
        """``{implementation: {partial: array | None | _Failure | NotApplicable}}`` for
        every partial."""
        impls = list(fns)
        method = self.method

        stats = self.stats

        def group_body(names: list[str], ps: Sequence[Partial]) -> Callable:
            def body(xs):
                if not tf.executing_eagerly():
                    stats.python_traces += 1
                out = []
                for i in names:
                    found = derivatives(method, fns[i], xs, ps)
                    out.append([found.get(p) for p in ps])
                return out

            return body

        out: dict[str, dict] = {}
        for name in impls:
            try:
                self.stats.calls += 1
                key = ("one", name)
                values = self.call(key, group_body([name], partials))
                out[name] = {p: _to_numpy(v, self.n) for p, v in zip(partials, values[0])}
                self.routes.append((key, partials, [name]))
                continue
            except NotApplicable as exc:  # an operator without a TensorFlow kernel
                out[name] = dict.fromkeys(partials, exc)
                continue
            except Exception as exc:  # noqa: BLE001 - isolate below, one partial at a time
                self.stats.fallbacks += 1
                whole = exc
            out[name] = {}
            for p in partials:
                chain = prefix_closure([p])
                key = ("partial", name, p)
                try:
                    if set(chain) == set(partials):  # the call that raised, again
                        raise whole
                    values = self.call(key, group_body([name], chain))
                    out[name][p] = _to_numpy(values[0][chain.index(p)], self.n)
                    self.routes.append((key, [p], [name], chain))
                except Exception as exc:  # noqa: BLE001 - recorded as an `error` outcome
                    where = context(self.method, self.mode, self.dtype, p, self.label(p))
                    out[name][p] = _Failure(exc, where)
                    self.failures.setdefault(name, {})[p] = out[name][p].message
        return out

    def evaluate_at(self, inputs: Mapping[str, np.ndarray]) -> dict[str, dict]:
        """Every implementation's partials at new inputs (arrays of the batch's shape; in
        the eager mode any length), by the routes that worked in :meth:`run`: ``{impl:
        {label: array | None | message}}`` (a partial that raised there keeps its
        message)."""
        xs = {n: tf.constant(inputs[n], dtype=TF_DTYPES[self.dtype]) for n in self.names}
        size = len(next(iter(inputs.values())))
        out: dict[str, dict] = {}
        for route in self.routes:
            key, partials, impls = route[:3]
            chain = route[3] if len(route) > 3 else partials
            try:
                values = self.call(key, self._bodies[key], xs)
            except Exception as exc:  # noqa: BLE001 - a new input broke a working route
                for name in impls:
                    for p in partials:
                        where = context(self.method, self.mode, self.dtype, p, self.label(p))
                        out.setdefault(name, {})[self.label(p)] = _Failure(exc, where).message
                continue
            for name, row in zip(impls, values):
                got = dict(zip(chain, row))
                for p in partials:
                    out.setdefault(name, {})[self.label(p)] = _to_numpy(got[p], size)
        for name, failed in self.failures.items():
            for p, message in failed.items():
                out.setdefault(name, {})[self.label(p)] = message
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
    edges=None,
    batch: int | None = None,
) -> tuple[pd.DataFrame, EvaluationStats]:
    """Evaluate every combination; one row per (implementation, method, mode, dtype, partial, point).

    ``points[dtype]`` holds the points as represented in that dtype (see
    :func:`harness.cases.points.represent`). Columns: ``implementation method mode dtype
    partial order point value status message seconds``; ``status`` is ``value``,
    ``missing`` or ``error``. ``max_order`` caps the order per method (the ``quick``
    setting); a method's partials above its cap get no rows. ``edges`` (a
    :class:`harness.edges.finder.EdgeFinder`) is handed each (dtype, method) as soon as it
    is evaluated, with its compiled functions still alive, to bisect its edges. Each batch
    has ``batch`` points at least (:func:`harness.backends.padding.padded`).
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
        tf_dtype = TF_DTYPES[dtype]
        columns = padded({n: pts[n].to_numpy(np.float64) for n in names}, batch)
        xs = {n: tf.constant(v, dtype=tf_dtype) for n, v in columns.items()}
        width = len(next(iter(columns.values())))
        stats.width = max(stats.width, width)
        fns = {
            i.name: build_implementation(i, names, tf_dtype, case.functions)
            for i in case.implementations
        }
        for method in methods:
            partials = by_method[method]
            if not partials:
                done += len(mode_list)
                continue
            # The compiled modes (the xla mode compiles the function mode's graphs), then
            # the eager mode, each group evaluated, bisected and released before the next:
            # a job holds one group's traced graphs and forward-mode helpers, not both.
            for group in _mode_groups(mode_list):
                runners = {}
                group_frames = []
                for mode in group:
                    t0 = time.perf_counter()
                    runner = Runner(method, mode, dtype, xs, stats, case.label)
                    crash = crashes.crashed(case.id, "tensorflow", dtype, method, mode)
                    if crash is None:
                        crashes.begin(case.id, "tensorflow", dtype, method, mode)
                        results = runner.run(fns, partials)
                    else:  # it killed an earlier process: its rows say so
                        died = _Failure(crashes.ProcessDied(crash))
                        results = {i: dict.fromkeys(partials, died) for i in fns}
                        runner.failures = {i: dict.fromkeys(partials, died.message) for i in fns}
                    runners[mode] = runner
                    seconds = time.perf_counter() - t0
                    group_frames += [
                        _rows(case, impl, method, mode, dtype, p, got.get(p), pts.point, seconds)
                        for impl, got in results.items()
                        for p in partials
                    ]
                    done += 1
                    if progress:
                        progress(done, total)
                frames += group_frames
                if edges is not None:
                    t0 = time.perf_counter()
                    edges.after_method(
                        method,
                        dtype,
                        pd.concat(group_frames, ignore_index=True),
                        crashes.bisected(case.id, "tensorflow", dtype, method, group),
                        crashes.naming(
                            case.id,
                            "tensorflow",
                            dtype,
                            method,
                            lambda mode, inputs, runners=runners: runners[mode].evaluate_at(inputs),
                        ),
                        width,
                    )
                    stats.bisect_seconds += time.perf_counter() - t0
                runners.clear()
                _GRAPHS.clear()
                _release_forward_mode_cache(keep=batch is not None)
    crashes.begin(None)
    stats.seconds = time.perf_counter() - started
    return pd.concat(frames, ignore_index=True), stats


def _mode_groups(modes: Sequence[str]) -> list[list[str]]:
    """The modes in the groups evaluated one after the other: the compiled ones
    together (``xla`` compiles the graphs ``function`` traced), ``eager`` alone."""
    compiled = [m for m in modes if m != "eager"]
    return [g for g in (compiled, [m for m in modes if m == "eager"]) if g]


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
    if isinstance(value, NotApplicable):
        values, status, message = np.full(n, np.nan), "not_applicable", str(value)
    elif isinstance(value, _Failure):
        values, status, message = np.full(n, np.nan), "error", value.message
    elif value is None:
        values, status, message = np.full(n, np.nan), "missing", "the framework returned None"
    else:
        values, status, message = value[:n], "value", ""
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


#: A process keeping TensorFlow's forward-mode helpers for the cases after this one (the
#: ``batch`` setting) drops them all the same once it holds this much memory. (Dropping
#: them frees little: 3.11 to 2.75 GB after five census kernels; what grows is held
#: elsewhere in TensorFlow. The quick census's largest batch peaks at about 6.7 GB.)
KEEP_LIMIT_BYTES = 12 * 2**30


def _release_forward_mode_cache(keep: bool = False) -> None:
    """Drop the forward-mode helpers TensorFlow traced for the method just finished
    (unless ``keep``, while the process holds less than :data:`KEEP_LIMIT_BYTES`).

    TensorFlow computes each op's JVP with a small traced function, cached per op, dtype
    and shape for the life of the process (``tensorflow/python/eager/forwardprop.py``);
    under nested accumulators these run into gigabytes (3.1 GB for ``-a/b`` at order 4
    in float32) and are never used by another dtype. Releasing them bounds the memory of
    a case to its largest method and dtype. Kept, they serve the next cases of one batch
    shape (:mod:`harness.backends.padding`): a helper is a function of its op, attributes,
    dtypes and shapes only. TensorFlow's per-op trace counter (past 32 traces of an op it
    traces for any shape) is reset either way, so each dtype is traced as in a fresh
    process whatever ran before it. Only caches are touched: no value changes.
    """
    try:
        from tensorflow.python.eager import forwardprop
    except ImportError:  # pragma: no cover - a TensorFlow without the module
        return
    counts = getattr(forwardprop, "_TRACE_COUNT", None)
    if isinstance(counts, dict):
        counts.clear()
    if keep and _resident_bytes() < KEEP_LIMIT_BYTES:
        return
    cache = getattr(forwardprop, "_jvp_function_cache", None)
    if cache is not None and hasattr(cache, "clear"):
        cache.clear()
    gc.collect()


def _resident_bytes() -> int:
    """This process's resident memory (Linux; 0 where ``/proc`` does not say)."""
    try:
        pages = int(Path("/proc/self/statm").read_text().split()[1])
    except (OSError, ValueError, IndexError):
        return 0
    return pages * os.sysconf("SC_PAGE_SIZE")
