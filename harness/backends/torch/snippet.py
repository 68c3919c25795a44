"""PyTorch's reproducers (:mod:`harness.backends.snippet`): the kernels as source text, a
case's custom gradient as a ``torch.autograd.Function``, the methods as the harness nests
them (:mod:`harness.backends.torch.derivatives`). No PyTorch here: this writes text."""

from __future__ import annotations

from collections.abc import Sequence

from harness.backends.snippet import (
    Style,
    Table,
    expression_text,
    operator_texts,
    rule_texts,
    tangent_text,
    write_functions,
)
from harness.cases import expressions as ex
from harness.cases.model import Case

__all__ = ["STYLE", "TABLE", "write"]

_STACK = "torch.stack(torch.broadcast_tensors(*a))"
TABLE = Table(
    constant="torch.tensor({value}, dtype=DTYPE)",
    pi="torch.tensor(math.pi, dtype=DTYPE)",
    functions=operator_texts("torch", _STACK),
    where="torch.where",
    compare={
        "lt": "torch.lt",
        "le": "torch.le",
        "gt": "torch.gt",
        "ge": "torch.ge",
        "eq": "torch.eq",
        "ne": "torch.ne",
    },
    integer_pow=True,
)

_GRAD = """def grad(f, i):  # reverse mode: torch.autograd.grad(create_graph=True) per order
    def g(*xs):
        xs = [x if x.requires_grad else x.detach().requires_grad_(True) for x in xs]
        (d,) = torch.autograd.grad(f(*xs).sum(), xs[i], create_graph=True, allow_unused=True)
        return d
    return g"""
_JVP = """def jvp(f, i):  # forward mode: one torch.func.jvp per order, a tangent of ones
    def g(*xs):
        tangents = tuple(torch.ones_like(x) if j == i else torch.zeros_like(x) for j, x in enumerate(xs))
        return torch.func.jvp(f, xs, tangents)[1]
    return g"""

STYLE = Style(
    title="PyTorch",
    header="import math\n\nimport torch",
    dtypes={
        "float16": "torch.float16",
        "bfloat16": "torch.bfloat16",
        "float32": "torch.float32",
        "float64": "torch.float64",
    },
    scalar="torch.cat([torch.tensor([float.fromhex({hex!r})], dtype=DTYPE), torch.ones(BATCH - 1, dtype=DTYPE)])",
    helpers={"reverse": _GRAD, "forward": _JVP, "forward_over_reverse": _JVP},
    # Forward-over-reverse: torch.func.grad inside the jvps, as the harness nests it.
    nest={
        "reverse": "grad({f}, {i})",
        "forward": "jvp({f}, {i})",
        "first": "torch.func.grad(lambda *ys: {f}(*ys).sum(), argnums={i})",
    },
    modes={"eager": "{d}", "compile": "torch.compile({d})"},
    value="{got}.detach()[0]",
    batch=64,
)


def _custom(
    name: str, body: ex.Node, gradient, params: Sequence[str], functions, tangent=None
) -> str | None:
    """``name``: ``apply`` of a ``torch.autograd.Function`` with the rules; a nested rule
    is a function of its own (``{name}_d{input}``, an ``autograd.Function`` with its
    rules), called with the inputs and times ``dy``, as the back end builds it (``None``:
    TensorFlow's decorated gradient function, which PyTorch has no place for)."""
    found = rule_texts(name, gradient, params, functions, TABLE, _custom)
    if found is None:
        return None
    blocks, texts = found
    args = ", ".join(params)
    env = {p: p for p in params}
    rules = [texts[p] or "None" for p in params]
    cls = f"{name.capitalize()}Rule"
    saved = "        ctx.save_for_backward(*inputs)\n"
    methods = ""
    if gradient:
        methods += f"    @staticmethod\n    def backward(ctx, dy):\n        {args}, = ctx.saved_tensors\n        return {', '.join(rules)}\n\n"
    if tangent:
        saved += "        ctx.save_for_forward(*inputs)\n"
        dots = {p: f"{p}_dot" for p in params}
        methods += (
            f"    @staticmethod\n    def jvp(ctx, {', '.join(dots.values())}):\n        {args}, = ctx.saved_tensors\n"
            f"        return {tangent_text(tangent, params, functions, TABLE, dots)}\n\n"
        )
    return "\n\n\n".join(
        [
            *blocks,
            f"class {cls}(torch.autograd.Function):\n"
            f"    @staticmethod\n    def forward({args}):\n        return {expression_text(body, env, TABLE, functions)}\n\n"
            f"    @staticmethod\n    def setup_context(ctx, inputs, output):\n{saved}\n"
            f"{methods}\n"
            f"def {name}({args}):\n    return {cls}.apply({args})",
        ]
    )


def write(case: Case | None, implementation: str | None, names: Sequence[str], expression=None):
    """``(blocks, "f")``: ``f`` of ``names`` is the implementation (or ``expression``);
    ``None`` where a reproducer cannot be written (TensorFlow's decorated gradient
    function, a registered implementation without a PyTorch port)."""
    return write_functions(
        case, implementation, names, expression, TABLE, _custom, port=("torch", "torch")
    )
