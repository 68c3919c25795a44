"""PyTorch's tracer (issue 58): a user's function of scalar inputs, as PyTorch records it
(``make_fx`` on 0-dimensional float64 tensors: the ATen graph), turned into the
harness's own expression, so that the reference can be computed from the user's code.

Each ATen call becomes a node of :mod:`harness.cases.expressions`: ATen's functions map
to the operator table's (:data:`FUNCTIONS`), arithmetic and comparisons to their nodes,
``where`` on a comparison to ``where``; an ``autograd.Function`` is recorded through its
``forward`` (the function its ``backward`` is a derivative of). Python numbers and
tensor constants keep their exact float64 value; a cast passes through (the reference is
the exact function, and :mod:`harness.api.trace` refuses a trace whose float64 values
differ from the function's). What cannot be mapped stops with a
:class:`harness.backends.interface.TraceError` naming ATen's operator and the user's
source line. This module imports PyTorch.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from harness.backends.interface import TraceError
from harness.backends.tracing import Refusal, input_names, mapped, number
from harness.cases import expressions as ex

__all__ = ["FUNCTIONS", "RULES", "TraceError", "derivative", "nested", "ruled", "trace", "values"]

#: ATen's operators (their overload packets' names) that are the operator table's
#: functions of the same name (softplus only with beta 1: ATen's softplus(x, beta,
#: threshold)).
_SAME = """
exp exp2 log log1p expm1 tanh sigmoid sin cos tan sinh cosh asinh acosh atanh
atan atan2 sqrt rsqrt square erf erfc erfinv lgamma digamma maximum minimum
abs softplus reciprocal
""".split()
FUNCTIONS = {name: name for name in _SAME}
_BINARY = {"add": "add", "sub": "sub", "mul": "mul", "div": "div", "pow": "pow"}
_COMPARE = {c: c for c in ("lt", "le", "gt", "ge", "eq", "ne")}
#: Operators that give their argument back.
_IDENTITY = ("lift_fresh_copy", "clone", "detach", "alias", "_to_copy")
#: The rules an ``autograd.Function`` is traced as: its ``backward`` (reverse mode) and,
#: where it has one, its ``jvp`` (forward mode).
RULES = ("gradient", "tangent")
ONE_RULE = False


def _user_line(fn: Callable, args: Sequence, op: str, nth: int) -> str:
    """Where the user's code calls ATen's ``op`` for the ``nth`` time (from 0): the
    function run again under a dispatch mode recording each call's stack ("" if PyTorch
    has no such mode). ``make_fx`` records no stack of its own."""
    import traceback

    try:
        from torch.utils._python_dispatch import TorchDispatchMode
    except ImportError:  # pragma: no cover - a PyTorch without it: no line to name
        return ""
    here = Path(__file__).resolve()

    class Recorder(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.lines: list[str] = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            if func.overloadpacket.__name__ == op:
                frames = [
                    f
                    for f in traceback.extract_stack()
                    if Path(f.filename).resolve() != here and "/torch/" not in f.filename
                ]
                self.lines.append(f"{frames[-1].filename}:{frames[-1].lineno}" if frames else "")
            return func(*args, **(kwargs or {}))

    recorder = Recorder()
    try:
        with recorder:
            fn(*args)
    except Exception:  # noqa: BLE001 - the line is a courtesy; the refusal stands
        pass
    return recorder.lines[nth] if nth < len(recorder.lines) else ""


def _refuse(node, why: str, where: str = "") -> TraceError:
    name = getattr(node.target, "__name__", str(node.target))
    return TraceError(f"PyTorch's operator '{name}'{f' at {where}' if where else ''}: {why}")


class _Refused(Exception):
    """An operator the trace cannot map (turned into a TraceError with the user's line)."""

    def __init__(self, node, why: str):
        super().__init__(why)
        self.node, self.why = node, why


def _needed(graph) -> set:
    """The nodes the graph's output is computed from."""
    (output,) = [n for n in graph.nodes if n.op == "output"]
    seen, todo = set(), [output]
    while todo:
        node = todo.pop()
        if node in seen:
            continue
        seen.add(node)
        todo += node.all_input_nodes
    return seen


class _Graph:
    def __init__(self, module, names: Sequence[str]):
        self.module, self.names = module, list(names)
        self.env: dict = {}

    def value(self, arg, node) -> ex.Node:
        if hasattr(arg, "op"):  # an fx node
            return self.env[arg]
        if not isinstance(arg, (int, float)) or isinstance(arg, bool):
            raise _Refused(node, f"an argument {arg!r} that is not a number")
        return number(arg)

    def run(self) -> ex.Node:
        placeholders = iter(self.names)
        needed = _needed(self.module.graph)
        for node in self.module.graph.nodes:
            if node.op == "call_function" and node not in needed:
                continue  # a check PyTorch records (is_same_size ...), used by nothing
            if node.op == "placeholder":
                self.env[node] = ex.Var(next(placeholders))
            elif node.op == "get_attr":
                const = np.asarray(getattr(self.module, node.target).detach().cpu())
                if const.shape != ():
                    raise TraceError(f"a tensor constant of shape {const.shape}: only scalars")
                self.env[node] = number(float(const))
            elif node.op == "call_function":
                self.env[node] = self.call(node)
            elif node.op == "output":
                (out,) = node.args
                if isinstance(out, (tuple, list)):
                    raise TraceError(f"the function returns {len(out)} values: one scalar")
                return self.env[out]
            else:
                raise TraceError(f"a graph node of kind {node.op}: only ATen calls can be traced")
        raise TraceError("the function's graph has no output")

    def call(self, node) -> ex.Node:
        name = node.target.overloadpacket.__name__
        kwargs = dict(node.kwargs)
        if name in _IDENTITY:
            return self.env[node.args[0]]
        ins = [self.value(a, node) for a in node.args]
        if name in ("add", "sub") and kwargs.pop("alpha", 1) != 1:
            raise _Refused(node, "an alpha other than 1")
        if kwargs:
            raise _Refused(node, f"keyword arguments {sorted(kwargs)}")
        if name == "where" and isinstance(ins[0], ex.Compare):
            return ex.Where(ins[0], ins[1], ins[2])
        if name == "softplus":  # (x, beta, threshold): the kernel's threshold is its own
            if len(ins) > 1 and not (isinstance(ins[1], ex.Num) and ins[1].value == 1.0):
                raise _Refused(node, "a beta other than 1")
            ins = ins[:1]
        if name == "rsub" and len(ins) == 2:
            name, ins = "sub", ins[::-1]
        try:
            return mapped(name, ins, FUNCTIONS, _BINARY, _COMPARE, "neg")
        except Refusal as why:
            raise _Refused(node, str(why)) from None


def trace(fn: Callable, names: Sequence[str] | None = None) -> ex.Node:
    """``fn`` of 0-dimensional tensors ``names`` (its parameters' names by default) as an
    expression of :class:`harness.cases.expressions.Var` nodes of those names."""
    import torch
    from torch.fx.experimental.proxy_tensor import make_fx

    names = input_names(fn, names)
    args = [torch.tensor(0.5, dtype=torch.float64) for _ in names]
    try:
        module = make_fx(fn, record_stack_traces=True)(*args)
    except TypeError as e:
        raise TraceError(f"calling the function with {len(names)} inputs {list(names)}: {e}") from e
    except RuntimeError as e:
        if "data-dependent" in str(e) or "Data dependent" in str(e):
            raise TraceError(
                "the function branches in Python on a tensor's value (an `if` on an "
                "input): write it with torch.where, which the trace maps to where(...); "
                "PyTorch said: " + str(e).splitlines()[0]
            ) from e
        raise
    out = [n for n in module.graph.nodes if n.op == "output"][0].args[0]
    shape = getattr(getattr(out, "meta", {}).get("val"), "shape", ())
    if not isinstance(out, (tuple, list)) and tuple(shape) != ():
        raise TraceError(f"the function returns a tensor of shape {tuple(shape)}: one scalar")
    try:
        return _Graph(module, names).run()
    except _Refused as refused:
        node = refused.node
        op = node.target.overloadpacket.__name__
        same = [
            n
            for n in module.graph.nodes
            if n.op == "call_function" and n.target.overloadpacket.__name__ == op
        ]
        where = _user_line(fn, args, op, same.index(node))
        raise _refuse(node, refused.why, where) from None


def _functions(out) -> set:
    """The ``autograd.Function`` nodes of ``out``'s autograd graph."""
    import torch

    todo, seen, found = [getattr(out, "grad_fn", None)], set(), set()
    while todo:
        node = todo.pop()
        if node is None or node in seen:
            continue
        if isinstance(node, torch.autograd.function.BackwardCFunction):
            found.add(node)
        seen.add(node)
        todo += [n for n, _ in node.next_functions]
    return found


def ruled(fn: Callable, names: Sequence[str]) -> bool:
    """Whether ``fn``'s autograd graph holds an ``autograd.Function`` (its own rules)."""
    import torch

    xs = [torch.tensor(0.5, dtype=torch.float64, requires_grad=True) for _ in names]
    with torch.enable_grad():
        return bool(_functions(fn(*xs)))


def nested(fn: Callable, kind: str, p: str, names: Sequence[str]) -> bool:
    """Whether ``fn``'s derivative in ``p`` goes through an ``autograd.Function`` that
    computing it made (a ``backward`` or ``jvp`` calling one), not one of ``fn``'s own."""
    import torch

    xs = [torch.tensor(0.5, dtype=torch.float64, requires_grad=True) for _ in names]
    with torch.enable_grad():
        out = fn(*xs)
        forward = _functions(out)
        try:
            (grad,) = torch.autograd.grad(out, (xs[list(names).index(p)],), create_graph=True)
        except RuntimeError:
            return False
        return bool(_functions(grad) - forward)


def derivative(fn: Callable, kind: str, p: str, names: Sequence[str]) -> Callable:
    """``fn``'s derivative in ``p`` as PyTorch computes it, a function of the inputs and a
    seed: ``kind`` ``gradient`` (``torch.autograd.grad``, the seed is the upstream
    ``dy``) or ``tangent`` (forward-mode AD, the seed is ``p``'s tangent ``dx``)."""
    import torch
    import torch.autograd.forward_ad as fwad

    i = list(names).index(p)
    if kind == "tangent":

        def tangent(*args):
            *xs, dx = args
            with fwad.dual_level():
                xs[i] = fwad.make_dual(xs[i], dx)
                out = fwad.unpack_dual(fn(*xs)).tangent
            if out is None:
                raise TraceError(f"the function's tangent in {p} is not computed")
            return out

        return tangent

    def gradient(*args):
        *xs, dy = args
        with torch.enable_grad():
            xs = [x.detach().requires_grad_(j == i) for j, x in enumerate(xs)]
            (out,) = torch.autograd.grad(fn(*xs), (xs[i],), dy, allow_unused=True)
        if out is None:
            raise TraceError(f"the function's gradient in {p} is not computed")
        return out

    return gradient


def values(fn: Callable, node: ex.Node, names: Sequence[str], columns) -> tuple:
    """``(the function's, the expression's)`` float64 values at the points ``columns``:
    the function called on them as 1-dimensional tensors, the expression computed
    by the harness's PyTorch kernels (:mod:`harness.backends.torch.build`)."""
    import torch

    from harness.backends.torch.build import compile_expression

    tensors = [torch.tensor(np.asarray(c, dtype=np.float64)) for c in columns]
    n = len(tensors[0])
    with torch.no_grad():
        # On the whole batch, as the harness computes (a CPU kernel's vectorised path can
        # round otherwise than one element alone); point by point where the function does
        # not broadcast.
        try:
            user = torch.as_tensor(fn(*tensors))
        except Exception:  # noqa: BLE001 - a function of true scalars only
            user = None
        if user is None or tuple(user.shape) != (n,):
            user = torch.tensor([float(fn(*(t[i] for t in tensors))) for i in range(n)])
        user = user.numpy().astype(np.float64)
        ours = compile_expression(node, dict(zip(names, tensors)), torch.float64)
        ours = torch.broadcast_to(torch.as_tensor(ours, dtype=torch.float64), tensors[0].shape)
    return user, ours.numpy().astype(np.float64)
