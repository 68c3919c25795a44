"""TensorFlow's tracer (issue 58): a user's function of scalar inputs, as TensorFlow
builds it in a graph (float64 placeholders; every op keeps the user's traceback), turned
into the harness's own expression, so that the reference can be computed from the code.

Each op becomes a node of :mod:`harness.cases.expressions`: TensorFlow's op types map to
the operator table's functions (:data:`FUNCTIONS`), arithmetic and comparisons to their
nodes, ``Select``/``SelectV2`` on a comparison to ``where``; a nested ``tf.function``
(``PartitionedCall``) is inlined; a ``tf.custom_gradient`` function is its forward ops
(``IdentityN`` hands its outputs on). Constants keep their exact float64 value; a cast
passes through (:mod:`harness.api.trace` refuses a trace whose float64 values differ
from the function's). What cannot be mapped stops with a
:class:`harness.backends.interface.TraceError` naming the op type and the user's line.
This module imports TensorFlow.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from harness.backends.interface import TraceError
from harness.backends.tracing import Refusal, input_names, mapped, number
from harness.cases import expressions as ex

__all__ = ["FUNCTIONS", "RULES", "TraceError", "derivative", "nested", "ruled", "trace", "values"]

#: TensorFlow's op type -> the operator table's function.
FUNCTIONS = {
    "Exp": "exp",
    "Log": "log",
    "Log1p": "log1p",
    "Expm1": "expm1",
    "Tanh": "tanh",
    "Sigmoid": "sigmoid",
    "Softplus": "softplus",
    "Softsign": "softsign",
    "Sin": "sin",
    "Cos": "cos",
    "Tan": "tan",
    "Sinh": "sinh",
    "Cosh": "cosh",
    "Asinh": "asinh",
    "Acosh": "acosh",
    "Atanh": "atanh",
    "Atan": "atan",
    "Atan2": "atan2",
    "Sqrt": "sqrt",
    "Rsqrt": "rsqrt",
    "Square": "square",
    "Reciprocal": "reciprocal",
    "Erf": "erf",
    "Erfc": "erfc",
    "Erfinv": "erfinv",
    "Lgamma": "lgamma",
    "Digamma": "digamma",
    "Xlogy": "xlogy",
    "Xlog1py": "xlog1py",
    "Maximum": "maximum",
    "Minimum": "minimum",
    "Abs": "abs",
}
_BINARY = {
    "AddV2": "add",
    "Add": "add",
    "Sub": "sub",
    "Mul": "mul",
    "RealDiv": "div",
    "Div": "div",
    "Pow": "pow",
}
_COMPARE = {
    "Less": "lt",
    "LessEqual": "le",
    "Greater": "gt",
    "GreaterEqual": "ge",
    "Equal": "eq",
    "NotEqual": "ne",
}
_IDENTITY = ("Identity", "Cast", "Snapshot")
_CALLS = ("PartitionedCall", "StatefulPartitionedCall")
#: The rule a ``tf.custom_gradient`` function is traced as: its gradient function.
RULES = ("gradient",)
ONE_RULE = True


def _line(op) -> str:
    """The user's source line of an op: the innermost frame outside TensorFlow."""
    frames = [f for f in (op.traceback or ()) if "/tensorflow/" not in f[0]]
    frames = [f for f in frames if not f[0].endswith(("harness/backends/tensorflow/trace.py",))]
    return f"{frames[-1][0]}:{frames[-1][1]}" if frames else ""


def _refuse(op, why: str) -> TraceError:
    where = _line(op)
    return TraceError(f"TensorFlow's op '{op.type}'{f' at {where}' if where else ''}: {why}")


class _Graph:
    def __init__(self, graph):
        self.graph = graph
        self.env: dict = {}  # tensor name -> node

    def tensor(self, t, args: dict) -> ex.Node:
        if t.name in args:
            return args[t.name]
        if t.name not in self.env:
            self.op(t.op, args)
        return self.env[t.name]

    def op(self, op, args: dict) -> None:
        kind = op.type
        if kind == "Const":
            import tensorflow as tf

            value = tf.make_ndarray(op.get_attr("value"))
            if value.shape != ():
                raise _refuse(op, f"a constant of shape {value.shape}: only scalars")
            v = int(value) if value.dtype.kind in "iu" else float(value)
            self.env[op.outputs[0].name] = number(v)
            return
        if kind == "Placeholder":
            raise _refuse(op, "an input the function was not given")
        ins = [self.tensor(t, args) for t in op.inputs]
        if kind == "IdentityN":  # tf.custom_gradient's forward: output i is input i
            for out, node in zip(op.outputs, ins):
                self.env[out.name] = node
            return
        if kind in _CALLS:
            self._inline(op, ins)
            return
        self.env[op.outputs[0].name] = self._node(op, kind, ins)

    def _node(self, op, kind: str, ins: list[ex.Node]) -> ex.Node:
        if kind in _IDENTITY:
            return ins[0]
        if kind in ("Select", "SelectV2") and isinstance(ins[0], ex.Compare):
            return ex.Where(ins[0], ins[1], ins[2])
        try:
            return mapped(kind, ins, FUNCTIONS, _BINARY, _COMPARE, "Neg")
        except Refusal as why:
            raise _refuse(op, str(why)) from None

    def _inline(self, op, ins: list[ex.Node]) -> None:
        name = op.get_attr("f").name
        try:
            body = self.graph._get_function(name).graph  # noqa: SLF001 - TensorFlow's own
        except Exception as e:  # noqa: BLE001 - a TensorFlow without it: say so
            raise _refuse(op, f"the nested function {name} could not be read ({e})") from e
        inner = _Graph(body)
        args = {t.name: node for t, node in zip(body.inputs, ins)}
        for out, t in zip(op.outputs, body.outputs):
            self.env[out.name] = inner.tensor(t, args)


def trace(fn: Callable, names: Sequence[str] | None = None) -> ex.Node:
    """``fn`` of float64 scalar tensors ``names`` (its parameters' names by default) as
    an expression of :class:`harness.cases.expressions.Var` nodes of those names."""
    from harness.backends.tensorflow.tfimport import tf

    names = input_names(fn, names)
    graph = tf.Graph()
    with graph.as_default():
        xs = [tf.compat.v1.placeholder(tf.float64, [], name=n) for n in names]
        try:
            out = fn(*xs)
        except TypeError as e:
            if "not allowed" in str(e) and "bool" in str(e):
                raise TraceError(
                    "the function branches in Python on a tensor's value (an `if` on an "
                    "input): write it with tf.where, which the trace maps to where(...); "
                    "TensorFlow said: " + str(e).splitlines()[0]
                ) from e
            raise TraceError(
                f"calling the function with {len(names)} inputs {list(names)}: {e}"
            ) from e
        if isinstance(out, (tuple, list)):
            raise TraceError(f"the function returns {len(out)} values: one scalar")
        out = tf.convert_to_tensor(out)
        if out.shape.rank != 0:
            raise TraceError(f"the function returns a tensor of shape {out.shape}: one scalar")
    args = {x.name: ex.Var(n) for x, n in zip(xs, names)}
    return _Graph(graph).tensor(out, args)


def ruled(fn: Callable, names: Sequence[str]) -> bool:
    """Whether ``fn``'s graph (or a function it calls) holds a ``tf.custom_gradient``: an
    op whose gradient TensorFlow looks up under the op's own ``_gradient_op_type``."""
    from harness.backends.tensorflow.tfimport import tf

    graph = tf.Graph()
    with graph.as_default():
        out = fn(*[tf.compat.v1.placeholder(tf.float64, [], name=n) for n in names])
    return bool(_custom(graph, _live(out)))


def _live(out) -> dict:
    """The ops ``out`` is computed from, by name."""
    from harness.backends.tensorflow.tfimport import tf

    todo, live = [tf.convert_to_tensor(out).op], {}
    while todo:
        op = todo.pop()
        if op.name not in live:
            live[op.name] = op
            todo += [t.op for t in op.inputs]
    return live


def _custom(graph, ops: dict) -> list[str]:
    """The ops of ``ops`` (and of the nested functions they call) whose gradient is a
    ``tf.custom_gradient``'s: TensorFlow looks it up under the op's ``_gradient_op_type``."""
    nodes = [op.node_def for op in ops.values()]
    called = {op.get_attr("f").name for op in ops.values() if op.type in _CALLS}
    for function in graph.as_graph_def().library.function:
        if function.signature.name in called:
            nodes += function.node_def
    return [n.name for n in nodes if "_gradient_op_type" in n.attr]


def nested(fn: Callable, kind: str, p: str, names: Sequence[str]) -> bool:
    """Whether ``fn``'s gradient in ``p`` goes through a custom gradient that computing
    the gradient made (a rule whose own derivative is a rule), not one of ``fn``'s own."""
    from harness.backends.tensorflow.tfimport import tf

    graph = tf.Graph()
    with graph.as_default():
        xs = [tf.compat.v1.placeholder(tf.float64, [], name=n) for n in names]
        with tf.GradientTape() as tape:
            tape.watch(xs[list(names).index(p)])
            out = fn(*xs)
        forward = {op.name for op in graph.get_operations()}
        grad = tape.gradient(out, xs[list(names).index(p)])
        if grad is None:
            return False
        made = {k: op for k, op in _live(grad).items() if k not in forward}
    return bool(_custom(graph, made))


def derivative(fn: Callable, kind: str, p: str, names: Sequence[str]) -> Callable:
    """``fn``'s gradient in ``p`` as ``tf.GradientTape`` computes it, a function of the
    inputs and the upstream gradient ``dy`` (``kind`` ``gradient``: TensorFlow's only
    hand-written rule)."""
    from harness.backends.tensorflow.tfimport import tf

    if kind != "gradient":
        raise TraceError(f"TensorFlow has no {kind} rule to trace")
    i = list(names).index(p)

    def gradient(*args):
        *xs, dy = args
        with tf.GradientTape() as tape:
            tape.watch(xs[i])
            out = fn(*xs)
        grad = tape.gradient(out, xs[i], output_gradients=dy)
        if grad is None:
            raise TraceError(f"the function's gradient in {p} is not computed")
        return grad

    return gradient


def values(fn: Callable, node: ex.Node, names: Sequence[str], columns) -> tuple:
    """``(the function's, the expression's)`` float64 values at the points ``columns``:
    the function called eagerly on them as 1-dimensional tensors, the expression built
    from the harness's TensorFlow kernels (:mod:`harness.backends.tensorflow.build`)."""
    from harness.backends.tensorflow.build import compile_expression
    from harness.backends.tensorflow.tfimport import start, tf

    start()
    tensors = [tf.constant(np.asarray(c, dtype=np.float64)) for c in columns]
    user = tf.broadcast_to(tf.cast(fn(*tensors), tf.float64), tensors[0].shape)
    ours = compile_expression(node, dict(zip(names, tensors)), tf.float64)
    ours = tf.broadcast_to(ours, tensors[0].shape)
    return user.numpy().astype(np.float64), ours.numpy().astype(np.float64)
