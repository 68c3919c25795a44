"""Compile case expressions and implementations to PyTorch.

Every named function maps to PyTorch's own kernel, the operator table's (``softplus`` is
``torch.nn.functional.softplus``, whose default ``threshold=20`` returns ``x`` itself
above 20; ``lgamma`` is ``torch.lgamma``) and every operator to the Python operator on
tensors. Numbers become tensors of the working dtype.

A case's custom gradient becomes a ``torch.autograd.Function`` (the ``setup_context``
form, which ``torch.func`` transforms accept) whose ``backward`` computes the rule with
PyTorch operations (so it is differentiable again under ``create_graph=True``), the
pattern PyTorch documents for a custom gradient; a nested rule is a second Function
called in ``backward``. The rule is a vector-Jacobian product: the Function has no
``jvp``, so forward mode raises, as PyTorch says. A rule left out for an input returns
``None`` there, PyTorch's "no gradient". A case's forward rule (``tangent``) is the
Function's ``jvp`` (inputs saved with ``ctx.save_for_forward``), the output's tangent the
sum of the inputs' shares; with no ``gradient`` the Function has no ``backward`` and
reverse mode raises, as PyTorch says. TensorFlow issue #34503's decorated gradient
function and registered implementations without a PyTorch port
(:func:`harness.registered.register.port`) have no place in PyTorch
(:class:`harness.backends.sweep.NotApplicable`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import torch

from harness.backends.sweep import NotApplicable
from harness.backends.walker import (
    Kernels,
    operator_functions,
    registered_port,
    tangent_sum,
    walk,
)
from harness.backends.walker import build_implementation as shared_build
from harness.cases import expressions as ex
from harness.cases.model import CaseFunction, Implementation, NestedRule, Rule

__all__ = ["DTYPES", "build_implementation", "compile_expression"]

DTYPES = {
    "float16": torch.float16,
    "bfloat16": torch.bfloat16,
    "float32": torch.float32,
    "float64": torch.float64,
}


def _stack(*args):
    shape = torch.broadcast_shapes(*(a.shape for a in args))
    return torch.stack([a.expand(shape) for a in args])


_COMPARE = {
    "lt": torch.lt,
    "le": torch.le,
    "gt": torch.gt,
    "ge": torch.ge,
    "eq": torch.eq,
    "ne": torch.ne,
}


#: The kernels for the expression language (integer exponents as Python ints).
KERNELS = Kernels(
    constant=lambda value, dtype: torch.tensor(value, dtype=dtype),
    operators=operator_functions("torch", {"torch": torch}, _stack),
    compare=_COMPARE,
    where=torch.where,
    integer_pow=True,
    # Tensor.__rtruediv__: what ``1 / t`` is in the user's PyTorch code.
    number_over=lambda value, t: value / t,
)


def compile_expression(node: ex.Node, env: Mapping, dtype, functions: Mapping | None = None):
    """The value of ``node`` over the arrays in ``env``."""
    return walk(node, env, dtype, KERNELS, functions)


def _check_rules(gradient: Mapping[str, Rule], label: str) -> None:
    for rule in gradient.values():
        if isinstance(rule, NestedRule) and rule.pattern == "decorated_grad_fn":
            raise NotApplicable(
                f"{label}'s second-order rule is TensorFlow's decorated gradient function "
                "(issue #34503); PyTorch has no place for it"
            )
        if isinstance(rule, NestedRule):
            _check_rules(rule.gradient, f"{label}'")


def _custom(expression, gradient, names, dtype, functions, label, tangent=None) -> Callable:
    """``apply`` of a ``torch.autograd.Function`` with the case's rules (``backward`` from
    ``gradient``, ``jvp`` from ``tangent``, each only where the case gives it)."""
    _check_rules(gradient or {}, label)
    names = list(names)

    def forward(*xs):
        return compile_expression(expression, dict(zip(names, xs)), dtype, functions)

    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(*inputs)
        if tangent:
            ctx.save_for_forward(*inputs)

    def jvp(ctx, *dxs):
        xs = ctx.saved_tensors
        dy = tangent_sum(
            tangent,
            names,
            xs,
            dxs,
            lambda rule, env: compile_expression(rule, env, dtype, functions),
        )
        return dy.expand(xs[0].shape).to(dtype)

    def backward(ctx, dy):
        xs = ctx.saved_tensors
        env = dict(zip(names, xs))
        out = []
        for name in names:
            rule = gradient.get(name)
            if rule is None:
                out.append(None)
            elif isinstance(rule, NestedRule):
                inner = _custom(rule.expression, rule.gradient, names, dtype, functions, label)
                out.append(dy * inner(*xs))
            else:
                value = compile_expression(rule, {**env, "dy": dy}, dtype, functions)
                out.append(value.expand(env[name].shape).to(dtype))
        return tuple(out)

    methods = {"forward": staticmethod(forward), "setup_context": staticmethod(setup_context)}
    if gradient:
        methods["backward"] = staticmethod(backward)
    if tangent:
        methods["jvp"] = staticmethod(jvp)
    cls = type(f"Custom_{label}", (torch.autograd.Function,), methods)
    return cls.apply


def build_implementation(
    impl: Implementation, names: Sequence[str], dtype, case_functions: Sequence[CaseFunction] = ()
) -> Callable:
    """The implementation as a function of keyword tensors, its result of the inputs'
    shape (a constant is broadcast)."""
    if impl.registered:
        fn = registered_port(impl.registered, "torch", "PyTorch", torch, dtype)
    else:
        fn = shared_build(impl, names, dtype, case_functions, KERNELS, _custom)

    def call(**xs):
        y = fn(**xs)
        first = next(iter(xs.values()))
        return y.expand(first.shape) if y.shape != first.shape else y

    return call
