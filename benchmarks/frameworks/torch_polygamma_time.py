"""How long PyTorch's ``torch.special.polygamma(n, x)`` takes for negative x: the kernel
behind digamma's derivatives of order 2 and up (order 1 is ``polygamma(1, x)``, which has
its own reflection formula). For n >= 2 it is a Hurwitz zeta at q = x, and PyTorch's
``zeta`` (aten/src/ATen/native/Math.h, derived from Cephes) adds the series term by term
from q upwards while the term's base is at most 9: for negative x about |x| + 9 terms,
so one element costs time linear in |x|. The census's bisection of ``census_digamma`` in float32 samples
hundreds of inputs between -1.6e6 and -8e5, and PyTorch's float32 job spent about 40 s
there (benchmarks/README.md). No harness code: PyTorch alone.

Each line: the dtype, n, x, the seconds of one call on a batch of ``BATCH`` copies of x
(the best of three), the seconds per element, and the value. x is a negative integer
plus 0.25 (not a pole; exactly representable in both dtypes at these sizes), and 2.25
for contrast.

    python benchmarks/frameworks/torch_polygamma_time.py
"""

from __future__ import annotations

import time

import torch

BATCH = 16
XS = (2.25, -3.75, -1000.75, -10000.75, -100000.75, -1000000.75)


def best_of_three(n: int, x: torch.Tensor) -> tuple[float, torch.Tensor]:
    best, out = float("inf"), None
    for _ in range(3):
        t0 = time.perf_counter()
        out = torch.special.digamma(x) if n == 0 else torch.special.polygamma(n, x)
        best = min(best, time.perf_counter() - t0)
    return best, out


def main() -> None:
    torch.set_num_threads(1)
    print(f"torch {torch.__version__}, one thread, a batch of {BATCH} copies of x")
    print(f"{'dtype':8s} {'n':>2s} {'x':>12s} {'call s':>10s} {'s/element':>10s}  value")
    for dtype in (torch.float32, torch.float64):
        for n in (0, 1, 2, 3, 4):
            for x0 in XS:
                x = torch.full((BATCH,), x0, dtype=dtype)
                seconds, out = best_of_three(n, x)
                print(
                    f"{str(dtype)[6:]:8s} {n:2d} {x0:12.2f} {seconds:10.6f} "
                    f"{seconds / BATCH:10.2e}  {float(out[0]):.9g}"
                )


if __name__ == "__main__":
    main()
