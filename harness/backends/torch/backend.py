"""PyTorch as a :class:`harness.backends.interface.Backend` (imports PyTorch)."""

from __future__ import annotations

import torch

from harness.backends import sweep
from harness.backends.catalogue import SPECS
from harness.backends.torch.build import DTYPES, build_implementation
from harness.backends.torch.derivatives import NESTING, Compiled

__all__ = ["BACKEND"]


class _Framework:
    name = "torch"

    def __init__(self, names) -> None:
        self.compiled = Compiled()
        self.names = list(names)

    def compile(self, impl, case, dtype):
        fn = build_implementation(impl, self.names, DTYPES[dtype], case.functions)
        names = self.names
        return lambda *xs: fn(**dict(zip(names, xs)))

    def applicable(self, method, mode, dtype, impl, partial) -> str:
        return ""

    def derivatives(self, method, mode, dtype, key, fn, partials, inputs):
        return self.compiled.run(
            method, mode, dtype, key, fn, self.names, partials, inputs, DTYPES[dtype]
        )

    def nesting(self, method: str, order: int) -> str:
        return NESTING[method](order)


class TorchBackend:
    spec = SPECS["torch"]
    framework = torch

    @staticmethod
    def start(threads: int | None = None, cache=None) -> None:
        """Threads (one unless given) and deterministic kernels: a rerun gives bitwise
        the same values. (``torch.compile`` keeps its own cache; ``cache`` is unused.)
        ``set_deterministic_debug_mode("warn")`` is ``use_deterministic_algorithms(True,
        warn_only=True)`` without importing Inductor and Dynamo for Inductor's flag
        (with the import 2.8 s -> 1.37 s; 0.23 s of a process whose ``torch.func``
        imports Dynamo anyway): the compile mode sets that flag when it first compiles
        (:class:`harness.backends.torch.derivatives.Compiled`)."""
        torch.set_num_threads(threads or 1)
        torch.set_deterministic_debug_mode("warn")

    @staticmethod
    def facts() -> dict:
        return {
            "torch": torch.__version__,
            "threads": torch.get_num_threads(),
            "devices": ["cpu"],
        }

    @staticmethod
    def probe_flush(dtypes, modes) -> dict:
        """As TensorFlow's probe, in eager mode (a compiled multiply runs the same CPU
        arithmetic; compiling one here would cost seconds per dtype)."""
        from harness.numerics.floats import FORMATS

        out: dict = {}
        for dtype in dtypes:
            fmt, dt = FORMATS[dtype], DTYPES[dtype]
            x = torch.tensor([fmt.smallest_normal / 4, fmt.smallest_normal], dtype=torch.float64)
            y = torch.tensor([2.0**10, 0.25], dtype=torch.float64)
            got = (x.to(dt) * y.to(dt)).to(torch.float64).numpy()
            flag = {"inputs": bool(got[0] == 0), "results": bool(got[1] == 0)}
            out[dtype] = {mode: dict(flag) for mode in modes}
        return out

    def evaluate_case(self, case, points, *args, **kwargs):
        """:meth:`harness.backends.interface.Backend.evaluate_case` by the shared loop."""
        fw = _Framework(case.input_names)
        table, stats = sweep.evaluate_case(fw, case, points, *args, **kwargs)
        stats.traces = fw.compiled.traces
        return table, stats


BACKEND = TorchBackend()
