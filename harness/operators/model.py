"""What an operator is: its name, how many arguments it takes, where it has a value, the
reference's two rules for it (exact in mpmath, certified in Arb) and each framework's
kernel for it, by the name user code calls it.

A framework kernel is text (``"tf.math.softplus"``, ``"jax.nn.gelu"`` with
``approximate=False`` bound): the back end resolves it to the callable in its own
modules (:func:`harness.backends.walker.resolve_kernel`), and the reproducers write the same
text, so the harness runs and the scripts print the same kernel. Where a framework has
no kernel for an operator, :class:`NoKernel` says why, and the back end reports the
combination as not applicable with that reason.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

__all__ = ["EVERYWHERE", "ArbRule", "Kernel", "NoKernel", "Operator", "Sampling"]


@dataclass(frozen=True)
class Kernel:
    """A framework's own kernel for an operator."""

    path: str  # the dotted name user code calls: "tf.math.softplus", "torch.special.erf"
    keywords: str = ""  # bound keyword arguments as source: 'approximate="tanh"'
    stacked: bool = False  # a reduction over the arguments stacked along a new first axis
    first: bool = False  # component 0 of the result (log_softmax)

    def source(self, stack: str) -> str:
        """The kernel as a callable's source text; ``stack`` writes the arguments ``a``
        stacked along a new first axis (each framework has its own)."""
        keywords = f", {self.keywords}" if self.keywords else ""
        if self.stacked:
            return f"(lambda *a: {self.path}({stack}{keywords}){'[0]' if self.first else ''})"
        if keywords:
            return f"(lambda x: {self.path}(x{keywords}))"
        return self.path


@dataclass(frozen=True)
class NoKernel:
    """A framework without a kernel for the operator, and why."""

    reason: str


@dataclass(frozen=True)
class ArbRule:
    """The certified (Arb ball) rule: :mod:`harness.operators.arb`.

    A pointwise operator gives ``series(s, x0)``, the series of ``f(x0 + t)`` from
    ``s = x0 + t``; ``value(x0)`` where the series' constant term would lose digits;
    ``exact(x0, n)``, exact coefficients at a point the series form cannot decide (tanh
    at 0), else None. Any other gives ``jet(*ball_jets)`` and ``line(*series)`` (the
    one-variable fast path).
    """

    series: Callable | None = None
    value: Callable | None = None
    exact: Callable | None = None
    jet: Callable | None = None
    line: Callable | None = None


@dataclass(frozen=True)
class Sampling:
    """Where one argument of an operator is worth sampling (the kernel census,
    :mod:`harness.census`): the open interval its sweep covers, and its special points
    (where the function, or a framework's formula for it, changes: 0, poles, kinks,
    branch points, zeros of a derivative), each checked with its neighbouring floats."""

    lower: float = float("-inf")
    upper: float = float("inf")
    special: tuple[float, ...] = (0.0,)


#: An argument of a function defined on every real number (0 is special for most).
EVERYWHERE = Sampling()


@dataclass(frozen=True)
class Operator:
    """One operator of the expression language (a named function)."""

    name: str
    arity: tuple[int, int]  # the fewest and the most arguments
    domain: str  # where it has a real value, in words
    # Pointwise: ``mpmath(x, n)`` gives the Taylor coefficients f^(k)(x)/k!, k = 0..n.
    # Otherwise ``mpmath(*jets)`` is a rule on jets (:mod:`harness.operators.mp_jets`).
    mpmath: Callable
    pointwise: bool
    arb: ArbRule | None  # None: no certified rule; the reference says so and uses mpmath
    kernels: Mapping[str, Kernel | NoKernel] = field(default_factory=dict)  # by back end
    #: Where each argument is sampled by the census (the last repeats for more).
    sampling: tuple[Sampling, ...] = (EVERYWHERE,)

    @property
    def variadic(self) -> bool:
        return self.arity[0] != self.arity[1]
