"""JAX as a :class:`harness.backends.interface.Backend` (imports JAX, 64-bit floats on)."""

from __future__ import annotations

import os
from pathlib import Path

os.environ.setdefault("JAX_PLATFORMS", "cpu")
# One thread for XLA's CPU kernels, so a rerun sums in the same order (bitwise the same
# values), as TensorFlow's and PyTorch's evaluations run.
os.environ.setdefault(
    "XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"
)

import jax  # noqa: E402

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

from harness.backends import sweep  # noqa: E402
from harness.backends.catalogue import SPECS  # noqa: E402
from harness.backends.jax.build import DTYPES, build_implementation  # noqa: E402
from harness.backends.jax.cache import use_cache  # noqa: E402
from harness.backends.jax.derivatives import NESTING, Compiled, taylor_reason  # noqa: E402

__all__ = ["BACKEND"]


class _Framework:
    name = "jax"

    def __init__(self, names) -> None:
        self.compiled = Compiled()
        self.names = list(names)  # the case's inputs, in order

    def compile(self, impl, case, dtype):
        names = self.names
        fn = build_implementation(impl, names, DTYPES[dtype], case.functions)
        return lambda *xs: fn(**dict(zip(names, xs)))

    def applicable(self, method, mode, dtype, impl, partial) -> str:
        return taylor_reason(partial) if method == "taylor" else ""

    def derivatives(self, method, mode, dtype, key, fn, partials, inputs):
        return self.compiled.run(
            method, mode, dtype, key, fn, self.names, partials, inputs, DTYPES[dtype]
        )

    def nesting(self, method: str, order: int) -> str:
        return NESTING[method](order)


class JaxBackend:
    spec = SPECS["jax"]
    framework = jax

    _started = False

    @classmethod
    def start(cls, threads: int | None = None, cache: Path | None = None) -> None:
        """JAX on the CPU; with ``cache``, its compiled programs kept there across
        processes (:mod:`harness.backends.jax.cache`), set before anything compiles."""
        if not cls._started and cache is not None:
            use_cache(cache)
        cls._started = True
        jnp.zeros(1).block_until_ready()

    @staticmethod
    def facts() -> dict:
        import jaxlib

        return {
            "jax": jax.__version__,
            "jaxlib": jaxlib.__version__,
            "devices": [str(d) for d in jax.devices()],
            "x64": bool(jax.config.jax_enable_x64),
        }

    @staticmethod
    def probe_flush(dtypes, modes) -> dict:
        """As TensorFlow's probe: a subnormal times 2**10, the smallest normal times 1/4."""
        from harness.numerics.floats import FORMATS

        out: dict = {}
        for dtype in dtypes:
            fmt, dt = FORMATS[dtype], DTYPES[dtype]
            x = jnp.asarray([fmt.smallest_normal / 4, fmt.smallest_normal], dt)
            y = jnp.asarray([2.0**10, 0.25], dt)
            out[dtype] = {}
            for mode in modes:
                fn = jax.jit(jnp.multiply) if mode == "jit" else jnp.multiply
                got = np.asarray(fn(x, y)).astype(np.float64)
                out[dtype][mode] = {"inputs": bool(got[0] == 0), "results": bool(got[1] == 0)}
        return out

    def evaluate_case(self, case, points, *args, **kwargs):
        """:meth:`harness.backends.interface.Backend.evaluate_case` by the shared loop."""
        fw = _Framework(case.input_names)
        table, stats = sweep.evaluate_case(fw, case, points, *args, **kwargs)
        stats.traces = fw.compiled.traces
        return table, stats


BACKEND = JaxBackend()
