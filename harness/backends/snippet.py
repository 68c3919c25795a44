"""Minimal standalone reproducers: one framework, no harness import, about fifteen lines.

A reproducer is the function (a primitive alone, or a case's implementation), the
input as an exact float (``float.fromhex``, its decimal beside it), the derivative the
way the harness took it (the method's nesting, the mode's compilation), and two printed
lines: what the framework gives and the certified truth. Each back end gives its
:class:`Style` (its imports, how it makes a scalar, nests a derivative and compiles) and
writes its own functions (``snippet.py`` in its folder); this module assembles the script.
No framework here: this module writes text.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from harness.cases import expressions as ex
from harness.cases import lets
from harness.cases.model import NestedRule
from harness.operators import OPERATORS, Kernel

__all__ = [
    "Style",
    "Table",
    "expression_text",
    "function_block",
    "operator_texts",
    "registered_blocks",
    "rule_texts",
    "script",
    "series_order",
    "shared_block",
    "tangent_text",
    "write_functions",
]


@dataclass(frozen=True)
class Table:
    """How one framework writes the expression language (source text, not callables)."""

    constant: str  # "{value!r}" is replaced: "tf.constant({value}, DTYPE)"
    pi: str
    functions: Mapping[str, str]  # a named function -> a callable's source
    where: str
    compare: Mapping[str, str]
    integer_pow: bool = False  # ``x**3`` with a Python int exponent


def operator_texts(backend: str, stack: str) -> dict[str, str]:
    """Every operator's kernel in ``backend`` as a callable's source text, from the
    operator table (``stack`` writes the arguments ``a`` stacked along a new first axis).
    An operator without a kernel there is left out: the back end reports a case that
    calls it as not applicable before any script is written."""
    out = {}
    for name, op in OPERATORS.items():
        kernel = op.kernels.get(backend)
        if isinstance(kernel, Kernel):
            out[name] = kernel.source(stack)
    return out


def expression_text(
    node: ex.Node, env: Mapping[str, str], table: Table, functions=None, assign=None
) -> str:
    """Python source computing ``node`` with the framework's kernels, in the order the
    back end's walker applies them (:func:`harness.backends.walker.walk`). With a list
    ``assign``, each node used more than once (:func:`harness.cases.lets.shared`) is
    computed once, as the walker does: ``sN = ...`` appended to it, used by name."""
    functions = functions or {}
    ops = {"add": "+", "sub": "-", "mul": "*", "div": "/", "pow": "**"}
    named: dict[int, str] = {}
    once = {id(n) for n in lets.shared(node)} if assign is not None else set()
    taken = set(env.values())

    def go(n: ex.Node) -> str:
        if id(n) in once:
            if id(n) not in named:
                text = write(n)
                name = next(f"s{i}" for i in range(1, 10**6) if f"s{i}" not in taken)
                taken.add(name)
                assign.append(f"{name} = {text}")
                named[id(n)] = name
            return named[id(n)]
        return write(n)

    def write(n: ex.Node) -> str:
        if isinstance(n, ex.Var):
            return env[n.name]
        if isinstance(n, ex.Num):
            return table.constant.format(value=repr(n.value))
        if isinstance(n, ex.Const):
            return table.pi
        if isinstance(n, ex.Unary):
            return f"(-{go(n.arg)})"
        if isinstance(n, ex.Binary):
            if (
                n.op == "pow"
                and table.integer_pow
                and isinstance(n.right, ex.Num)
                and float(n.right.value).is_integer()
            ):
                return f"({go(n.left)} ** {int(n.right.value)})"
            return f"({go(n.left)} {ops[n.op]} {go(n.right)})"
        if isinstance(n, ex.Call):
            args = ", ".join(go(a) for a in n.args)
            name = functions.get(n.func) or table.functions[n.func]
            return f"{name}({args})"
        if isinstance(n, ex.Where):
            cond = f"{table.compare[n.cond.op]}({go(n.cond.left)}, {go(n.cond.right)})"
            return f"{table.where}({cond}, {go(n.then)}, {go(n.otherwise)})"
        raise TypeError(f"cannot write {n!r}")

    return go(node)


@dataclass(frozen=True)
class Style:
    """A framework's reproducer: its header, scalars, derivative nesting and modes."""

    title: str
    header: str  # imports and settings
    dtypes: Mapping[str, str]
    scalar: str  # "{hex}" is replaced: an expression making one input of DTYPE
    helpers: Mapping[str, str]  # method -> the helper functions it needs (source)
    nest: Mapping[str, str]  # "reverse" / "forward" (/ "first" of forward-over-reverse)
    modes: Mapping[str, str]  # mode -> "{d}" wrapped ("tf.function({d})")
    # "{f}, {i}, {top}": the Taylor series to order ``top`` at once (JAX's jet), every term
    # returned; ``pick`` ("{n}") then keeps the n-th.
    taylor: str = ""
    pick: str = ""
    value: str = "{got}"  # the result as something float() takes
    extra: Mapping[str, str] = field(default_factory=dict)
    # > 0: each input is the point followed by BATCH - 1 ones and ``value`` the first
    # element: a CPU kernel's vectorised path (whole packets), which the harness's batch
    # takes and one element alone does not; and a mixed batch, as the harness's is (XLA
    # gives another value when every element is the same: TensorFlow's d2/du2 of
    # u ** 2.5 at u = 5.9e-42, forward mode, float32, is 0.0 for 64 copies, 9.93e-23
    # beside any other value).
    batch: int = 0


def _chain(
    style: Style, method: str, partial: Sequence[str], names: Sequence[str], top: int = 0
) -> str:
    """The nested derivative of ``f`` for ``partial`` by ``method`` (``top``: the order of
    the Taylor series computed, at least the partial's)."""
    d = "f"
    if method == "taylor":
        return style.taylor.format(f=d, i=names.index(partial[0]), top=max(top, len(partial)))
    for k, v in enumerate(partial):
        if method == "reverse":
            how = "reverse"
        elif method == "forward_over_reverse" and k == 0:
            how = "first" if "first" in style.nest else "reverse"
        else:
            how = "forward"
        d = style.nest[how].format(f=d, i=names.index(v))
    return d


def series_order(partials: Sequence[Sequence[str]], partial: Sequence[str]) -> int:
    """The order of the Taylor series the harness computes ``partial`` with: a variable's
    whole series at once, to the highest order among ``partials`` in that variable alone
    (JAX's ``jet``, :func:`harness.backends.jax.derivatives.all_partials`); ``partial``'s
    own where none is higher."""
    if not partial:
        return 0
    pure = [len(p) for p in partials if p and set(p) == {partial[0]}]
    return max([len(partial), *pure])


def script(
    style: Style,
    blocks: Sequence[str],
    names: Sequence[str],
    point: Mapping[str, float],
    partial: Sequence[str],
    method: str,
    mode: str,
    dtype: str,
    title: str,
    truth: str,
    top: int = 0,
) -> str:
    """The reproducer: ``blocks`` define ``f`` of ``names``; it prints ``got`` (the value
    and its hex) and the certified ``truth``. ``top``: by Taylor mode, the order of the
    series the harness computed with this partial (XLA compiles the whole series as one
    program, so its terms can round differently with its length)."""
    lines = [
        f'"""{title}',
        "",
        f"{style.title}, {dtype}, {method.replace('_', '-')}, {mode}.",
        '"""',
    ]
    lines += [style.header, "", f"DTYPE = {style.dtypes[dtype]}"]
    if style.batch:
        lines.append(
            f"BATCH = {style.batch}  # the point, then ones: a mixed batch, which takes the "
            "CPU kernels' vectorised path"
        )
    for n in names:
        value = float(point[n])
        lines.append(f"{n} = {style.scalar.format(hex=value.hex())}  # {value!r}")
    lines += ["", *blocks, ""]
    helper = style.helpers.get(method, "")
    if helper:
        lines += [helper, ""]
    d = _chain(style, method, partial, names, top) if partial else "f"
    lines.append(f"d = {style.modes[mode].format(d=d)}")
    lines.append(f"got = d({', '.join(names)})")
    if method == "taylor" and style.pick:
        lines.append(style.pick.format(n=len(partial)))
    value = style.value.format(got="got")
    lines.append(
        f'print("got  ", "None" if got is None else repr(float({value})), "" if got is None else float({value}).hex())'
    )
    lines.append(f'print("truth", {truth!r}, "(certified by Arb)")')
    return "\n".join(lines) + "\n"


def function_block(name: str, names: Sequence[str], body: str, lines: Sequence[str] = ()) -> str:
    """``def name(names): return body``, the statements ``lines`` before the return."""
    head = "".join(f"    {line}\n" for line in lines)
    return f"def {name}({', '.join(names)}):\n{head}    return {body}"


def shared_block(name: str, names: Sequence[str], node, table: Table, functions=None) -> str:
    """:func:`function_block` of ``node`` over ``names``, its shared nodes computed once."""
    lines: list[str] = []
    body = expression_text(node, {n: n for n in names}, table, functions, lines)
    return function_block(name, names, body, lines)


def tangent_text(tangent, params: Sequence[str], functions, table: Table, tangents) -> str:
    """The output's tangent: the sum of each input's share (its rule in the inputs and
    ``dx``, written with ``tangents[input]`` for ``dx``), in the order the back ends add
    them."""
    env = {p: p for p in params}
    shares = [
        expression_text(tangent[p], {**env, "dx": tangents[p]}, table, functions)
        for p in params
        if p in tangent
    ]
    return " + ".join(shares)


def rule_texts(
    name: str, gradient, params: Sequence[str], functions, table: Table, custom: Callable
) -> tuple[list[str], dict[str, str | None]] | None:
    """The text of each input's rule in ``gradient`` (``None``: the input has none), and
    the blocks it needs first: a nested rule is a custom function of its own,
    ``custom(f"{name}_d{input}", ...)`` with its rules, called with the inputs and times
    ``dy``, as the back ends build it. ``None`` where a framework other than TensorFlow
    has no place for a rule (TensorFlow's decorated gradient function, issue #34503)."""
    args = ", ".join(params)
    env = {p: p for p in params}
    blocks: list[str] = []
    texts: dict[str, str | None] = {}
    for p in params:
        rule = gradient.get(p)
        if rule is None:
            texts[p] = None
        elif isinstance(rule, NestedRule):
            if rule.pattern == "decorated_grad_fn":
                return None
            inner = custom(f"{name}_d{p}", rule.expression, rule.gradient, params, functions)
            if inner is None:
                return None
            blocks.append(inner)
            texts[p] = f"dy * {name}_d{p}({args})"
        else:
            texts[p] = expression_text(rule, {**env, "dy": "dy"}, table, functions)
    return blocks, texts


def registered_blocks(name: str, backend: str, alias: str, names: Sequence[str]):
    """``(blocks, "f")``: registered implementation ``name``'s factory for ``backend`` as
    the harness ships it (:func:`harness.registered.catalogue.source`), called with the
    framework module (``alias`` in the script) and ``DTYPE``; ``f`` of ``names`` calls
    it. ``None`` where it has no port to ``backend``."""
    from harness.registered import catalogue

    found = catalogue.source(name, backend)
    if found is None:
        return None
    code, factory = found
    keywords = ", ".join(f"{n}={n}" for n in names)
    return [
        f"# The registered implementation {name!r} ({backend}), as the harness ships it.\n"
        + code
        + f"\n\n\n_registered = {factory}({alias}, DTYPE)",
        f"def f({', '.join(names)}):\n    return _registered({keywords})",
    ], "f"


def write_functions(
    case,
    implementation: str | None,
    names: Sequence[str],
    expression,
    table: Table,
    custom: Callable[..., str | None],
    every_input: bool = False,
    port: tuple[str, str] | None = None,
):
    """``(blocks, "f")``: ``f`` of ``names`` is ``expression`` alone, or the case's
    implementation with the case's own functions before it, custom rules written by the
    framework's ``custom(name, body, gradient, params, functions, tangent=...)``; ``None`` where
    no script can be written (a registered implementation without a port to ``port``'s
    back end, a rule ``custom`` has no place for, or, with ``every_input``, a rule that
    leaves an input without a cotangent). ``port``: (back end, the name its framework
    module has in the script) for a registered implementation's port."""
    if expression is not None:
        return [shared_block("f", names, expression, table)], "f"
    impl = case.implementation(implementation)
    if impl.registered and port is not None:
        return registered_blocks(impl.registered, *port, names)
    if impl.registered or impl.expression is None:
        return None
    blocks: list[str] = []
    functions: dict[str, str] = {}
    for cf in case.functions:
        if cf.ruled:
            block = custom(
                cf.name, cf.expression, cf.gradient or {}, cf.params, functions, tangent=cf.tangent
            )
        else:
            env = {q: q for q in cf.params}
            block = function_block(
                cf.name, cf.params, expression_text(cf.expression, env, table, functions)
            )
        if block is None:
            return None
        blocks.append(block)
        functions[cf.name] = cf.name
    if impl.ruled:
        if every_input and not impl.tangent and set(impl.gradient) != set(names):
            return None
        block = custom(
            "f", impl.expression, impl.gradient or {}, names, functions, tangent=impl.tangent
        )
        if block is None:
            return None
    else:
        block = shared_block("f", names, impl.expression, table, functions)
    blocks.append(block)
    return blocks, "f"
