"""JAX's tracer (issue 58, first step): a user's function of scalar inputs, as JAX traces
it (``jax.make_jaxpr`` in float64), turned into the harness's own expression, so that
the reference can be computed from the user's code itself.

Each equation of the jaxpr becomes a node of :mod:`harness.cases.expressions`: JAX's
primitives map to the operator table's functions (:data:`FUNCTIONS`), arithmetic and
comparisons to their nodes, ``select_n`` on a comparison to ``where``; nested calls
(``jit``/``pjit``, ``closed_call``) are inlined, and so is a custom rule's primal
(``custom_jvp_call``, ``custom_vjp_call``: the function the rule is a derivative of).
Literals and closed-over constants keep their exact float64 value (the shortest text
that reads back to it). A value used twice is one node used twice (nodes are immutable).

What cannot be mapped stops with :class:`TraceError` naming JAX's primitive and the
user's source line; Python control flow on a traced value gets JAX's own error,
explained. This module imports JAX.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from harness.backends.interface import TraceError
from harness.backends.tracing import Refusal, input_names, mapped, number
from harness.cases import expressions as ex

__all__ = ["FUNCTIONS", "RULES", "TraceError", "derivative", "nested", "ruled", "trace", "values"]

#: JAX's primitive -> the operator table's function (one argument unless the table's
#: arity says otherwise).
#: Those whose name is the table's own.
_SAME = """
exp exp2 log log1p expm1 tanh sin cos tan sinh cosh asinh acosh atanh atan
atan2 sqrt rsqrt square erf erfc lgamma digamma abs
""".split()
FUNCTIONS = {name: name for name in _SAME}
FUNCTIONS |= {"logistic": "sigmoid", "erf_inv": "erfinv", "max": "maximum", "min": "minimum"}
_BINARY = {"add": "add", "sub": "sub", "mul": "mul", "div": "div", "pow": "pow"}
_COMPARE = {c: c for c in ("lt", "le", "gt", "ge", "eq", "ne")}
#: Calls whose body is inlined: the parameter holding it, in the order looked for.
_BODIES = ("jaxpr", "call_jaxpr", "fun_jaxpr")
#: Primitives that give their argument back.
#: A dtype cast rounds, and the reference is the exact function: it passes through.
_IDENTITY = ("copy", "copy_p", "convert_element_type", "optimization_barrier")
#: A custom rule's primitives (``jax.custom_jvp``, ``jax.custom_vjp``).
_CUSTOM = ("custom_jvp_call", "custom_vjp_call", "custom_vjp_call_jaxpr")
#: The rules a custom rule is traced as, the first JAX can compute: a ``custom_jvp``'s
#: forward rule (reverse mode transposes it), else a ``custom_vjp``'s reverse rule.
RULES = ("tangent", "gradient")
ONE_RULE = True


def _where(eqn) -> str:
    """The user's source line of an equation, as JAX records it ("" if it does not)."""
    try:
        from jax._src import source_info_util

        return source_info_util.summarize(eqn.source_info)
    except Exception:  # noqa: BLE001 - a JAX without this helper: no line to name
        return ""


class _Tracer:
    def run(self, jaxpr, consts: Sequence, args: Sequence[ex.Node]) -> list[ex.Node]:
        env: dict = {}
        for var, value in zip(jaxpr.constvars, consts):
            env[var] = self._constant(value, "a closed-over constant")
        for var, node in zip(jaxpr.invars, args):
            env[var] = node

        def read(atom):
            if hasattr(atom, "val"):  # a Literal
                return self._constant(atom.val, "a literal")
            return env[atom]

        for eqn in _live(jaxpr):
            ins = [read(a) for a in eqn.invars]
            outs = self._equation(eqn, ins)
            for var, node in zip(eqn.outvars, outs):
                env[var] = node
        return [read(a) for a in jaxpr.outvars]

    def _constant(self, value, what: str) -> ex.Num:
        array = np.asarray(value)
        if array.shape != ():
            raise TraceError(f"{what} of shape {array.shape}: only scalars can be traced")
        return number(int(array) if array.dtype.kind in "iu" else float(array))

    def _equation(self, eqn, ins: list[ex.Node]) -> list[ex.Node]:
        name = eqn.primitive.name
        for key in _BODIES:
            body = eqn.params.get(key)
            if body is not None:
                inner = getattr(body, "jaxpr", body)
                consts = getattr(body, "consts", ())
                return self.run(inner, consts, ins)
        if name == "integer_pow" and not isinstance(ins[0], ex.Compare):
            return [ex.Binary("pow", ins[0], number(int(eqn.params["y"])))]
        if name == "select_n":
            cond, *cases = ins
            if len(cases) != 2 or not isinstance(cond, ex.Compare):
                raise self._refuse(eqn, "a select on anything but one comparison")
            return [ex.Where(cond, cases[1], cases[0])]
        if name in _IDENTITY:
            return ins
        try:
            return [mapped(name, ins, FUNCTIONS, _BINARY, _COMPARE, "neg")]
        except Refusal as why:
            raise self._refuse(eqn, str(why)) from None

    @staticmethod
    def _refuse(eqn, why: str) -> TraceError:
        where = _where(eqn)
        at = f" at {where}" if where else ""
        return TraceError(f"JAX's primitive '{eqn.primitive.name}'{at}: {why}")


def trace(fn: Callable, names: Sequence[str] | None = None) -> ex.Node:
    """``fn`` of scalar inputs ``names`` (its parameters' names by default) as an
    expression of :class:`harness.cases.expressions.Var` nodes of those names."""
    import jax

    names = input_names(fn, names)
    try:
        with jax.enable_x64(True):  # float64 for the trace; the caller's setting kept
            closed = jax.make_jaxpr(fn)(*[np.float64(0.5)] * len(names))
    except jax.errors.ConcretizationTypeError as e:  # before TypeError: a subclass
        raise TraceError(
            "the function branches in Python on a traced value (an `if` on an input): "
            "write it with jnp.where, which the trace maps to where(...); JAX said: "
            + str(e).splitlines()[0]
        ) from e
    except TypeError as e:
        raise TraceError(f"calling the function with {len(names)} inputs {names}: {e}") from e
    outs = closed.jaxpr.outvars
    if len(outs) != 1 or getattr(outs[0].aval, "shape", ()) != ():
        shapes = [getattr(o.aval, "shape", None) for o in outs]
        raise TraceError(f"the function returns {shapes}: one scalar is what can be traced")
    (node,) = _Tracer().run(closed.jaxpr, closed.consts, [ex.Var(n) for n in names])
    return node


def _live(jaxpr) -> list:
    """The equations of ``jaxpr`` its outputs are computed from, in order (a derivative's
    jaxpr holds the function's own value too, which it may not use)."""
    needed = {v for v in jaxpr.outvars if not hasattr(v, "val")}
    live = []
    for eqn in reversed(jaxpr.eqns):
        if needed & set(eqn.outvars):
            live.append(eqn)
            needed |= {v for v in eqn.invars if not hasattr(v, "val")}
    return live[::-1]


def _equations(jaxpr):
    """Every equation of ``jaxpr`` its outputs need, and of the jaxprs they hold."""
    for eqn in _live(jaxpr):
        yield eqn
        for value in eqn.params.values():
            inner = getattr(value, "jaxpr", value)
            if hasattr(inner, "eqns"):
                yield from _equations(inner)


def ruled(fn: Callable, names: Sequence[str]) -> bool:
    """Whether ``fn`` goes through a custom rule (``custom_jvp``, ``custom_vjp``)."""
    import jax

    with jax.enable_x64(True):
        closed = jax.make_jaxpr(fn)(*[np.float64(0.5)] * len(names))
    return any(e.primitive.name in _CUSTOM for e in _equations(closed.jaxpr))


def _custom_names(fn: Callable, n: int) -> set[str]:
    import jax

    with jax.enable_x64(True):
        closed = jax.make_jaxpr(fn)(*[np.float64(0.5)] * n)
    return {
        str(e.params.get("name", e.params.get("call_jaxpr", "")))
        for e in _equations(closed.jaxpr)
        if e.primitive.name in _CUSTOM
    }


def nested(fn: Callable, kind: str, p: str, names: Sequence[str]) -> bool:
    """Whether ``fn``'s derivative in ``p`` goes through a custom rule of a function
    ``fn`` does not call itself (a rule whose own derivative is a rule)."""
    d = derivative(fn, kind, p, names)
    return bool(_custom_names(d, len(names) + 1) - _custom_names(fn, len(names)))


def derivative(fn: Callable, kind: str, p: str, names: Sequence[str]) -> Callable:
    """``fn``'s derivative in ``p`` as JAX computes it, a function of the inputs and a
    seed: ``kind`` ``tangent`` (``jax.jvp``, the seed is ``p``'s tangent ``dx``, the
    other inputs held) or ``gradient`` (``jax.vjp``, the seed is the upstream ``dy``)."""
    import jax

    i = list(names).index(p)
    if kind == "tangent":

        def tangent(*args):
            *xs, dx = args
            return jax.jvp(lambda v: fn(*xs[:i], v, *xs[i + 1 :]), (xs[i],), (dx,))[1]

        return tangent

    def gradient(*args):
        *xs, dy = args
        return jax.vjp(fn, *xs)[1](dy)[i]

    return gradient


def values(fn: Callable, node: ex.Node, names: Sequence[str], columns) -> tuple:
    """``(the function's, the expression's)`` float64 values at the points ``columns``
    (one array per name): the function mapped over them by ``jax.vmap``, the expression
    computed by the harness's JAX kernels (:mod:`harness.backends.jax.build`)."""
    import jax
    import jax.numpy as jnp

    from harness.backends.jax.build import compile_expression

    with jax.enable_x64(True):
        arrays = [jnp.asarray(np.asarray(c, dtype=np.float64)) for c in columns]
        user = np.asarray(jax.vmap(fn)(*arrays), dtype=np.float64)
        env = dict(zip(names, arrays))
        ours = compile_expression(node, env, jnp.float64)
        ours = np.asarray(jnp.broadcast_to(ours, arrays[0].shape), dtype=np.float64)
    return user, ours
