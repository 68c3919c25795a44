"""Compile case expressions and implementations to JAX.

Every named function maps to JAX's own kernel (``softplus`` is ``jax.nn.softplus``, with
its ``custom_jvp`` rule; ``lgamma`` is ``jax.scipy.special.gammaln``) and every operator
to the Python operator on arrays (``b**2`` is ``jnp.power``, as in user code). Numbers
become arrays of the working dtype.

A case's custom gradient (a rule for each input in terms of the inputs and the upstream
gradient ``dy``) is a vector-Jacobian product: it becomes a ``jax.custom_vjp`` function,
the form a user porting a ``tf.custom_gradient`` writes. JAX has no forward-mode rule
for it (``jvp`` of a ``custom_vjp`` function raises), and ``jax.experimental.jet`` does not
use custom rules; both show in the results as JAX reports them. What has no place in
JAX is :class:`harness.backends.sweep.NotApplicable`: a rule that leaves an input without
a gradient (a ``custom_vjp`` must give every input a cotangent), TensorFlow issue
#34503's decorated gradient function, a TensorFlow-registered implementation.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence

import jax
import jax.numpy as jnp
import jax.scipy.special as jss

from harness.backends.sweep import NotApplicable
from harness.cases import expressions as ex
from harness.cases.model import CaseFunction, Implementation, NestedRule, Rule

__all__ = ["DTYPES", "build_implementation", "compile_expression"]

DTYPES = {
    "float16": jnp.float16,
    "bfloat16": jnp.bfloat16,
    "float32": jnp.float32,
    "float64": jnp.float64,
}

_UNARY: dict[str, Callable] = {
    "exp": jnp.exp,
    "expm1": jnp.expm1,
    "log": jnp.log,
    "log1p": jnp.log1p,
    "sqrt": jnp.sqrt,
    "sin": jnp.sin,
    "cos": jnp.cos,
    "tan": jnp.tan,
    "sinh": jnp.sinh,
    "cosh": jnp.cosh,
    "tanh": jnp.tanh,
    "sigmoid": jax.nn.sigmoid,
    "softplus": jax.nn.softplus,
    "log_sigmoid": jax.nn.log_sigmoid,
    "elu": jax.nn.elu,
    "selu": jax.nn.selu,
    "gelu": lambda x: jax.nn.gelu(x, approximate=False),
    "gelu_tanh": lambda x: jax.nn.gelu(x, approximate=True),
    "erf": jss.erf,
    "erfc": jss.erfc,
    "lgamma": jss.gammaln,
    "digamma": jss.digamma,
    "atan": jnp.arctan,
    "asinh": jnp.arcsinh,
    "acosh": jnp.arccosh,
    "atanh": jnp.arctanh,
    "abs": jnp.abs,
}
_BINARY = {
    "maximum": jnp.maximum,
    "minimum": jnp.minimum,
    "atan2": jnp.arctan2,
    "xlogy": jss.xlogy,
    "xlog1py": jss.xlog1py,
    "pow": jnp.power,
}


def _stack(*args):
    shape = jnp.broadcast_shapes(*(jnp.shape(a) for a in args))
    return jnp.stack([jnp.broadcast_to(a, shape) for a in args])


_VARIADIC = {
    "logsumexp": lambda *a: jss.logsumexp(_stack(*a), axis=0),
    "log_softmax": lambda *a: jax.nn.log_softmax(_stack(*a), axis=0)[0],
}
_COMPARE = {
    "lt": jnp.less,
    "le": jnp.less_equal,
    "gt": jnp.greater,
    "ge": jnp.greater_equal,
    "eq": jnp.equal,
    "ne": jnp.not_equal,
}


def compile_expression(node: ex.Node, env: Mapping, dtype, functions: Mapping | None = None):
    """The JAX value of ``node`` over the arrays in ``env``."""
    functions = functions or {}

    def go(n: ex.Node):
        if isinstance(n, ex.Var):
            return env[n.name]
        if isinstance(n, ex.Num):
            return jnp.asarray(n.value, dtype)
        if isinstance(n, ex.Const):
            return jnp.asarray(math.pi, dtype)
        if isinstance(n, ex.Unary):
            return -go(n.arg)
        if isinstance(n, ex.Binary):
            if n.op == "pow" and isinstance(n.right, ex.Num) and float(n.right.value).is_integer():
                # ``x**3`` as user code writes it: a Python integer exponent (JAX's
                # integer_pow; jet's rule for a float exponent takes log x, NaN for x < 0).
                return go(n.left) ** int(n.right.value)
            left, right = go(n.left), go(n.right)
            return {
                "add": lambda: left + right,
                "sub": lambda: left - right,
                "mul": lambda: left * right,
                "div": lambda: left / right,
            }.get(n.op, lambda: left**right)()
        if isinstance(n, ex.Call):
            args = [go(a) for a in n.args]
            if n.func in functions:
                return functions[n.func](*args)
            if n.func in _UNARY:
                return _UNARY[n.func](args[0])
            if n.func in _VARIADIC:
                return _VARIADIC[n.func](*args)
            return _BINARY[n.func](*args)
        if isinstance(n, ex.Where):
            cond = _COMPARE[n.cond.op](go(n.cond.left), go(n.cond.right))
            return jnp.where(cond, go(n.then), go(n.otherwise))
        raise TypeError(f"cannot compile {n!r}")

    return go(node)


def _check_rules(gradient: Mapping[str, Rule], names: Sequence[str], label: str) -> None:
    missing = [n for n in names if n not in gradient]
    if missing:
        raise NotApplicable(
            f"{label}'s custom gradient gives no rule for {', '.join(missing)}; a "
            "jax.custom_vjp rule must return a cotangent for every input"
        )
    for rule in gradient.values():
        if isinstance(rule, NestedRule) and rule.pattern == "decorated_grad_fn":
            raise NotApplicable(
                f"{label}'s second-order rule is TensorFlow's decorated gradient function "
                "(issue #34503); JAX has no place for it"
            )
        if isinstance(rule, NestedRule):
            _check_rules(rule.gradient, names, f"{label}'")


def _custom(expression, gradient, names, dtype, functions, label):
    """A ``jax.custom_vjp`` function of ``names`` with the case's rules."""
    _check_rules(gradient, names, label)

    @jax.custom_vjp
    def f(*xs):
        return compile_expression(expression, dict(zip(names, xs)), dtype, functions)

    def fwd(*xs):
        return f(*xs), xs

    def bwd(xs, dy):
        env = dict(zip(names, xs))
        out = []
        for name in names:
            rule = gradient[name]
            if isinstance(rule, NestedRule):
                inner = _custom(rule.expression, rule.gradient, names, dtype, functions, label)
                value = dy * inner(*xs)
            else:
                value = compile_expression(rule, {**env, "dy": dy}, dtype, functions)
            # A cotangent has its input's shape (a rule may be a constant).
            out.append(jnp.broadcast_to(value, jnp.shape(env[name])).astype(dtype))
        return tuple(out)

    f.defvjp(fwd, bwd)
    return f


def compile_functions(case_functions: Sequence[CaseFunction], dtype) -> dict:
    compiled: dict[str, Callable] = {}
    for cf in case_functions:
        known = dict(compiled)
        if cf.gradient:
            compiled[cf.name] = _custom(
                cf.expression, cf.gradient, cf.params, dtype, known, cf.name
            )
        else:
            compiled[cf.name] = lambda *xs, cf=cf, known=known: compile_expression(
                cf.expression, dict(zip(cf.params, xs)), dtype, known
            )
    return compiled


def build_implementation(
    impl: Implementation, names: Sequence[str], dtype, case_functions: Sequence[CaseFunction] = ()
) -> Callable:
    """The implementation as a function of keyword arrays, its result of the inputs'
    shape (a constant is broadcast)."""
    if impl.registered:
        raise NotApplicable(
            f"{impl.registered} is a registered TensorFlow implementation (Python code "
            "written against TensorFlow)"
        )
    functions = compile_functions(case_functions, dtype)
    if impl.gradient:
        custom = _custom(impl.expression, impl.gradient, names, dtype, functions, impl.name)
        fn = lambda **xs: custom(*(xs[n] for n in names))  # noqa: E731
    else:
        expression = impl.expression
        fn = lambda **xs: compile_expression(expression, xs, dtype, functions)  # noqa: E731

    def call(**xs):
        y = fn(**xs)
        first = next(iter(xs.values()))
        return jnp.broadcast_to(y, jnp.shape(first)).astype(dtype)

    return call
