"""Compile a case expression in any framework, given its table of kernels.

Every back end walks the expression tree the same way: a variable is its array, a number
a constant of the working dtype, an operator the Python operator on arrays (``b**2`` is
the framework's power, as in user code), a named function the framework's own kernel
from its :class:`Kernels` table, a call of the case's own function its compiled callable.
What differs between frameworks is only the table (and how a custom gradient is built,
which each back end's ``build`` module supplies to :func:`compile_functions` and
:func:`build_implementation`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from harness.backends.interface import NotApplicable
from harness.cases import expressions as ex
from harness.cases.model import CaseFunction, Implementation
from harness.registered import catalogue as registry

__all__ = ["Kernels", "build_implementation", "compile_functions", "walk"]


@dataclass(frozen=True)
class Kernels:
    """A framework's kernels for the expression language."""

    constant: Callable[[float, Any], Any]  # (value, dtype) -> a constant array
    unary: Mapping[str, Callable]
    binary: Mapping[str, Callable]
    variadic: Mapping[str, Callable]
    compare: Mapping[str, Callable]
    where: Callable
    # ``x**3`` with a Python int exponent, as user code writes it (JAX's integer_pow;
    # jet's rule for a float exponent takes log x, NaN for x < 0). TensorFlow's Pow
    # takes a tensor exponent either way.
    integer_pow: bool = False


def walk(node: ex.Node, env: Mapping, dtype, kernels: Kernels, functions: Mapping | None = None):
    """The value of ``node`` over the arrays in ``env``."""
    functions = functions or {}

    def go(n: ex.Node):
        if isinstance(n, ex.Var):
            return env[n.name]
        if isinstance(n, ex.Num):
            return kernels.constant(n.value, dtype)
        if isinstance(n, ex.Const):
            return kernels.constant(math.pi, dtype)
        if isinstance(n, ex.Unary):
            return -go(n.arg)
        if isinstance(n, ex.Binary):
            if (
                n.op == "pow"
                and kernels.integer_pow
                and isinstance(n.right, ex.Num)
                and float(n.right.value).is_integer()
            ):
                return go(n.left) ** int(n.right.value)
            left, right = go(n.left), go(n.right)
            if n.op == "add":
                return left + right
            if n.op == "sub":
                return left - right
            if n.op == "mul":
                return left * right
            if n.op == "div":
                return left / right
            return left**right
        if isinstance(n, ex.Call):
            args = [go(a) for a in n.args]
            if n.func in functions:
                return functions[n.func](*args)
            if n.func in kernels.unary:
                return kernels.unary[n.func](args[0])
            if n.func in kernels.variadic:
                return kernels.variadic[n.func](*args)
            return kernels.binary[n.func](*args)
        if isinstance(n, ex.Where):
            cond = kernels.compare[n.cond.op](go(n.cond.left), go(n.cond.right))
            return kernels.where(cond, go(n.then), go(n.otherwise))
        raise TypeError(f"cannot compile {n!r}")

    return go(node)


#: ``custom(expression, gradient, names, dtype, functions, label)``: a callable of the
#: ``names`` with the case's gradient rules, in the framework's own mechanism.
Custom = Callable[..., Callable]


def compile_functions(
    case_functions: Sequence[CaseFunction], dtype, kernels: Kernels, custom: Custom
) -> dict[str, Callable]:
    """The case's own functions as callables (each may call earlier ones)."""
    compiled: dict[str, Callable] = {}
    for cf in case_functions:
        known = dict(compiled)
        if cf.gradient:
            compiled[cf.name] = custom(cf.expression, cf.gradient, cf.params, dtype, known, cf.name)
        else:
            compiled[cf.name] = lambda *xs, cf=cf, known=known: walk(
                cf.expression, dict(zip(cf.params, xs)), dtype, kernels, known
            )
    return compiled


def build_implementation(
    impl: Implementation,
    names: Sequence[str],
    dtype,
    case_functions: Sequence[CaseFunction],
    kernels: Kernels,
    custom: Custom,
) -> Callable:
    """An expression implementation (with its custom gradient, if any) as a function of
    keyword arrays (not yet broadcast to the batch: the back end does that)."""
    functions = compile_functions(case_functions, dtype, kernels, custom)
    if impl.gradient:
        rule = custom(impl.expression, impl.gradient, names, dtype, functions, impl.name)
        return lambda **xs: rule(*(xs[n] for n in names))
    expression = impl.expression
    return lambda **xs: walk(expression, xs, dtype, kernels, functions)


def registered_port(name: str, backend: str, title: str, framework, dtype) -> Callable:
    """Registered implementation ``name`` in ``backend`` (its port, built with the
    ``framework`` module), or :class:`NotApplicable` where it has none."""
    factory = registry.get_port(name, backend)
    if factory is None:
        raise NotApplicable(
            f"{name} is a registered TensorFlow implementation (Python code written against "
            f"TensorFlow) with no {title} port"
        )
    return factory(framework, dtype)
