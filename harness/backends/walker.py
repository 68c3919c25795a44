"""Compile a case expression in any framework, given its table of kernels.

Every back end walks the expression tree the same way: a variable is its array, a number
a constant of the working dtype, an operator the Python operator on arrays (``b**2`` is
the framework's power, as in user code), a named function the framework's own kernel
from its :class:`Kernels` table, a call of the case's own function its compiled callable.
What differs between frameworks is only the table (and how a custom rule is built,
which each back end's ``build`` module supplies to :func:`compile_functions` and
:func:`build_implementation`).
"""

from __future__ import annotations

import ast
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from harness.backends.interface import NotApplicable
from harness.cases import expressions as ex
from harness.cases import lets
from harness.cases.model import CaseFunction, Implementation
from harness.operators import OPERATORS, Kernel, NoKernel
from harness.registered import catalogue as registry

__all__ = [
    "Kernels",
    "build_implementation",
    "compile_functions",
    "operator_functions",
    "registered_port",
    "resolve_kernel",
    "tangent_sum",
    "walk",
]


@dataclass(frozen=True)
class Kernels:
    """A framework's kernels for the expression language."""

    constant: Callable[[float, Any], Any]  # (value, dtype) -> a constant array
    operators: Mapping[str, Callable]  # each named function: :func:`operator_functions`
    compare: Mapping[str, Callable]
    where: Callable
    # ``x**3`` with a Python int exponent, as user code writes it (JAX's integer_pow;
    # jet's rule for a float exponent takes log x, NaN for x < 0). TensorFlow's Pow
    # takes a tensor exponent either way.
    integer_pow: bool = False
    # ``1 / t``, a Python number over an array, as the framework computes it where user
    # code writes it so (PyTorch: ``t.reciprocal() * 1``, whose derivatives from order 2
    # on round apart from a division's); ``None``: a division of two arrays.
    number_over: Callable[[float, Any], Any] | None = None


def operator_functions(
    backend: str, modules: Mapping[str, Any], stack: Callable
) -> dict[str, Callable]:
    """Every operator's kernel in ``backend`` (the operator table's text, resolved in the
    framework's ``modules``: ``{"tf": tf}``) as a callable; ``stack(*a)`` stacks arrays
    along a new first axis, for the reductions. An operator the framework has no kernel
    for raises :class:`NotApplicable` with the table's reason where a case calls it."""
    out = {}
    for name, op in OPERATORS.items():
        kernel = op.kernels.get(backend) or NoKernel(
            f"the operator table names no {backend} kernel"
        )
        out[name] = resolve_kernel(name, kernel, modules, stack)
    return out


def resolve_kernel(
    name: str, kernel: Kernel | NoKernel, modules: Mapping[str, Any], stack: Callable | None
) -> Callable:
    """One kernel as a callable: its dotted name looked up in ``modules`` (no ``eval``), its
    keywords bound (literals only), the reductions called on ``stack(*a)``; a missing name
    or a :class:`NoKernel` raises :class:`NotApplicable` with the reason when called."""
    if isinstance(kernel, Kernel):
        root, *parts = kernel.path.split(".")
        fn = modules[root]
        try:
            for part in parts:
                fn = getattr(fn, part)
        except AttributeError:
            kernel = NoKernel(f"{kernel.path} is not in the installed version")
    if isinstance(kernel, NoKernel):
        reason = kernel.reason

        def absent(*args):
            raise NotApplicable(f"{name}() has no kernel here: {reason}")

        return absent
    call = ast.parse(f"f({kernel.keywords})", mode="eval").body
    keywords = {k.arg: ast.literal_eval(k.value) for k in call.keywords}
    if kernel.stacked and kernel.first:
        return lambda *a: fn(stack(*a), **keywords)[0]
    if kernel.stacked:
        return lambda *a: fn(stack(*a), **keywords)
    if keywords:
        return lambda *a: fn(*a, **keywords)
    return fn


def walk(node: ex.Node, env: Mapping, dtype, kernels: Kernels, functions: Mapping | None = None):
    """The value of ``node`` over the arrays in ``env``; a node shared by several uses (a
    ``let:`` name, one variable of a traced function: :mod:`harness.cases.lets`) is
    computed once, as the user's code computes it."""
    functions = functions or {}
    once = {id(n) for n in lets.shared(node)}
    done: dict[int, Any] = {}

    def go(n: ex.Node):
        if id(n) in once:
            if id(n) not in done:
                done[id(n)] = apply(n)
            return done[id(n)]
        return apply(n)

    def apply(n: ex.Node):
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
            if n.op == "div" and kernels.number_over and isinstance(n.left, ex.Num):
                return kernels.number_over(float(n.left.value), go(n.right))
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
            return kernels.operators[n.func](*args)
        if isinstance(n, ex.Where):
            cond = kernels.compare[n.cond.op](go(n.cond.left), go(n.cond.right))
            return kernels.where(cond, go(n.then), go(n.otherwise))
        raise TypeError(f"cannot compile {n!r}")

    return go(node)


#: ``custom(expression, gradient, names, dtype, functions, label, tangent=...)``: a callable
#: of the ``names`` with the case's rules (reverse ``gradient``, forward ``tangent``, either
#: may be ``None``), in the framework's own mechanism.
Custom = Callable[..., Callable]


def tangent_sum(tangent: Mapping, names: Sequence[str], xs, dxs, compile_rule: Callable):
    """The output's tangent of a forward rule: each input's share (its rule compiled by
    ``compile_rule(rule, env)`` with ``dx`` that input's tangent), summed in input order."""
    env = dict(zip(names, xs))
    shares = [
        compile_rule(tangent[n], {**env, "dx": t}) for n, t in zip(names, dxs) if n in tangent
    ]
    total = shares[0]
    for share in shares[1:]:
        total = total + share
    return total


def compile_functions(
    case_functions: Sequence[CaseFunction], dtype, kernels: Kernels, custom: Custom
) -> dict[str, Callable]:
    """The case's own functions as callables (each may call earlier ones)."""
    compiled: dict[str, Callable] = {}
    for cf in case_functions:
        known = dict(compiled)
        if cf.ruled:
            compiled[cf.name] = custom(
                cf.expression, cf.gradient, cf.params, dtype, known, cf.name, tangent=cf.tangent
            )
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
    """An expression implementation (with its custom rules, if any) as a function of
    keyword arrays (not yet broadcast to the batch: the back end does that)."""
    functions = compile_functions(case_functions, dtype, kernels, custom)
    if impl.ruled:
        rule = custom(
            impl.expression, impl.gradient, names, dtype, functions, impl.name, tangent=impl.tangent
        )
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
