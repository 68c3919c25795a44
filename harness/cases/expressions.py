"""The case expression language: Python syntax, parsed with :mod:`ast` into a whitelist.

An expression is never evaluated by Python. :func:`parse` walks the syntax tree and
accepts only the node kinds listed below, building a small immutable tree of
:class:`Node` objects that the back ends (:mod:`harness.backends.walker`) and the
references (:mod:`harness.reference.jets`, :mod:`harness.reference.balls`) compile on
their own. What a named function is lives in the operator table (:mod:`harness.operators`).

Accepted:

- numbers (``2``, ``0.5``, ``1e-3``), the constant ``pi``;
- declared names (the case's inputs, plus ``dy`` inside a custom-gradient rule and ``dx``
  inside a forward rule);
- ``+ - * / **`` and unary ``-``/``+``;
- calls of the functions in :data:`FUNCTIONS` with positional arguments;
- ``where(cond, a, b)`` whose ``cond`` is one comparison ``< <= > >= == !=``.

Anything else (attribute access, subscripts, lambdas, comprehensions, keyword
arguments, strings, booleans, ``__import__``, ...) is rejected with a message that
names the offending construct and its column.
"""

from __future__ import annotations

import ast
import math
import warnings
from collections.abc import Iterator
from dataclasses import dataclass

from harness.operators import OPERATORS

__all__ = [
    "FUNCTIONS",
    "VARIADIC",
    "MAX_LENGTH",
    "Call",
    "Compare",
    "Const",
    "ExpressionError",
    "Node",
    "Num",
    "Var",
    "Where",
    "Binary",
    "Unary",
    "inline",
    "names_in",
    "walk",
    "parse",
    "unparse",
]

#: Named functions and their arity, from the operator table (:mod:`harness.operators`):
#: each maps to the framework's own kernel in a back end (``softplus`` is
#: ``tf.math.softplus`` with its registered gradient), so a case tests the framework,
#: not a re-implementation.
FUNCTIONS: dict[str, int] = {name: op.arity[0] for name, op in OPERATORS.items() if not op.variadic}

#: Named functions of any number of arguments within a range: ``logsumexp(a, b, c)``,
#: and ``log_softmax(a, b, c)``, the first component of the log-softmax of its arguments.
VARIADIC: dict[str, tuple[int, int]] = {
    name: op.arity for name, op in OPERATORS.items() if op.variadic
}

CONSTANTS = ("pi",)

#: Longer expressions are refused before parsing; deep nesting can exhaust the
#: parser's recursion limit, and no real case needs more.
MAX_LENGTH = 2000
_MAX_DEPTH = 60

_BINARY = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "div", ast.Pow: "pow"}
_BINARY_SYMBOL = {"add": "+", "sub": "-", "mul": "*", "div": "/", "pow": "**"}
_COMPARE = {ast.Lt: "lt", ast.LtE: "le", ast.Gt: "gt", ast.GtE: "ge", ast.Eq: "eq", ast.NotEq: "ne"}
_COMPARE_SYMBOL = {"lt": "<", "le": "<=", "gt": ">", "ge": ">=", "eq": "==", "ne": "!="}


class ExpressionError(ValueError):
    """An expression outside the language; ``column`` is 1-based, or 0 if unknown."""

    def __init__(self, message: str, column: int = 0):
        super().__init__(message)
        self.message = message
        self.column = column

    def __str__(self) -> str:
        return f"{self.message} (column {self.column})" if self.column else self.message


class Node:
    """Base class of expression nodes (immutable, hashable, comparable)."""

    __slots__ = ()


@dataclass(frozen=True)
class Num(Node):
    """A numeric literal; ``text`` keeps the decimal so mpmath reads it exactly."""

    text: str
    value: float


@dataclass(frozen=True)
class Const(Node):
    """A named mathematical constant (``pi``)."""

    name: str


@dataclass(frozen=True)
class Var(Node):
    """A declared input, ``dy`` in a custom-gradient rule or ``dx`` in a forward rule."""

    name: str


@dataclass(frozen=True)
class Unary(Node):
    op: str  # "neg"
    arg: Node


@dataclass(frozen=True)
class Binary(Node):
    op: str  # add sub mul div pow
    left: Node
    right: Node


@dataclass(frozen=True)
class Call(Node):
    func: str
    args: tuple[Node, ...]


@dataclass(frozen=True)
class Compare(Node):
    op: str  # lt le gt ge eq ne
    left: Node
    right: Node


@dataclass(frozen=True)
class Where(Node):
    cond: Compare
    then: Node
    otherwise: Node


def parse(
    text: str, names: set[str] | frozenset[str], functions: dict[str, int] | None = None
) -> Node:
    """Parse ``text`` into an expression tree over the declared ``names``.

    Parameters
    ----------
    text
        The expression, in Python syntax.
    names
        The names it may use (inputs, ``dy`` in gradient rules, ``dx`` in forward rules).
    functions
        The case's own functions (its ``functions:`` block) that may be called, with
        their arity, besides :data:`FUNCTIONS`.

    Raises
    ------
    ExpressionError
        If the text is not in the language; the message names the construct.
    """
    if not isinstance(text, str):
        raise ExpressionError(f"expected an expression string, got {type(text).__name__}")
    if len(text) > MAX_LENGTH:
        raise ExpressionError(f"expression longer than {MAX_LENGTH} characters")
    if not text.strip():
        raise ExpressionError("empty expression")
    try:
        with warnings.catch_warnings():
            # "invalid escape sequence" and the like: the text is refused or accepted on
            # its own merits, and a warning (or -W error) must not change that.
            warnings.simplefilter("ignore")
            tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as exc:
        column = _column(text.strip(), exc.lineno or 1, exc.offset - 1) if exc.offset else 0
        raise ExpressionError(f"syntax error: {exc.msg}", column) from None
    except (RecursionError, MemoryError, ValueError) as exc:
        raise ExpressionError(f"cannot parse: {type(exc).__name__}") from None
    return _Builder(frozenset(names), text.strip(), dict(functions or {})).build(tree.body, 0)


class _Builder:
    def __init__(self, names: frozenset[str], source: str, functions: dict[str, int]):
        self.names = names
        self.source = source
        self.functions = {**FUNCTIONS, **dict.fromkeys(VARIADIC, 0), **functions}

    def build(self, node: ast.AST, depth: int) -> Node:
        if depth > _MAX_DEPTH:
            raise ExpressionError(f"expression nested deeper than {_MAX_DEPTH} levels")
        col = _node_column(self.source, node)
        d = depth + 1
        if isinstance(node, ast.Constant):
            value = node.value
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise ExpressionError(f"literal {value!r} is not a number", col)
            # Keep the literal as written: mpmath reads "0.1" as one tenth, not as its double.
            written = (ast.get_source_segment(self.source, node) or _literal_text(value)).replace(
                "_", ""
            )
            try:
                as_float = float(value)
            except OverflowError:
                as_float = math.inf
            if not math.isfinite(as_float):
                # Python reads 1e400 as inf; the mpmath reference would read the text as
                # a finite number, so the two back ends would disagree.
                raise ExpressionError(f"number {written} is too large for float64", col)
            return Num(written, as_float)
        if isinstance(node, ast.Name):
            if node.id in self.names:
                return Var(node.id)
            if node.id in CONSTANTS:
                return Const(node.id)
            if node.id in self.functions or node.id == "where":
                raise ExpressionError(f"function {node.id!r} used without a call", col)
            hint = f"; declared: {', '.join(sorted(self.names))}" if self.names else ""
            raise ExpressionError(f"unknown name {node.id!r}{hint}", col)
        if isinstance(node, ast.UnaryOp):
            if isinstance(node.op, ast.USub):
                return Unary("neg", self.build(node.operand, d))
            if isinstance(node.op, ast.UAdd):
                return self.build(node.operand, d)
            raise ExpressionError(f"operator {_symbol(node.op)!r} is not allowed", col)
        if isinstance(node, ast.BinOp):
            op = _BINARY.get(type(node.op))
            if op is None:
                raise ExpressionError(
                    f"operator {_symbol(node.op)!r} is not allowed (use + - * / **)", col
                )
            return Binary(op, self.build(node.left, d), self.build(node.right, d))
        if isinstance(node, ast.Call):
            return self._call(node, col, d)
        if isinstance(node, ast.Compare):
            raise ExpressionError("a comparison is allowed only as the condition of where()", col)
        raise ExpressionError(f"{_describe(node)} is not allowed in an expression", col)

    def _call(self, node: ast.Call, col: int, d: int) -> Node:
        if not isinstance(node.func, ast.Name):
            raise ExpressionError(
                f"only named functions can be called, not {_describe(node.func)}", col
            )
        name = node.func.id
        if node.keywords:
            raise ExpressionError(f"{name}() takes no keyword arguments", col)
        if any(isinstance(a, ast.Starred) for a in node.args):
            raise ExpressionError(f"{name}() takes no *arguments", col)
        if name == "where":
            if len(node.args) != 3:
                raise ExpressionError("where(cond, a, b) takes 3 arguments", col)
            cond = node.args[0]
            cond_col = _node_column(self.source, cond)
            if not (isinstance(cond, ast.Compare) and len(cond.ops) == 1):
                raise ExpressionError(
                    "the first argument of where() must be one comparison, e.g. x < 0", cond_col
                )
            op = _COMPARE.get(type(cond.ops[0]))
            if op is None:
                raise ExpressionError(
                    f"comparison {_symbol(cond.ops[0])!r} is not allowed (use < <= > >= == !=)",
                    cond_col,
                )
            compare = Compare(op, self.build(cond.left, d), self.build(cond.comparators[0], d))
            return Where(compare, self.build(node.args[1], d), self.build(node.args[2], d))
        if name not in self.functions:
            known = ", ".join(sorted([*self.functions, "where"]))
            raise ExpressionError(f"unknown function {name!r}; known: {known}", col)
        if name in VARIADIC:
            low, high = VARIADIC[name]
            if not low <= len(node.args) <= high:
                raise ExpressionError(
                    f"{name}() takes {low} to {high} arguments, got {len(node.args)}", col
                )
        elif len(node.args) != self.functions[name]:
            raise ExpressionError(
                f"{name}() takes {self.functions[name]} argument(s), got {len(node.args)}", col
            )
        return Call(name, tuple(self.build(a, d) for a in node.args))


def _column(source: str, lineno: int, offset: int) -> int:
    """1-based position in ``source`` of character ``offset`` on line ``lineno``.

    A multi-line expression (a YAML block scalar) is counted as one string, so the
    column points into the text that the message quotes.
    """
    lines = source.split("\n")
    before = sum(len(line) + 1 for line in lines[: max(lineno - 1, 0)])
    return before + offset + 1


def _node_column(source: str, node: ast.AST) -> int:
    if not hasattr(node, "col_offset"):
        return 0
    # ast offsets count UTF-8 bytes; the message counts characters.
    line = source.split("\n")[node.lineno - 1] if node.lineno >= 1 else ""
    chars = len(line.encode("utf-8")[: node.col_offset].decode("utf-8", errors="ignore"))
    return _column(source, node.lineno, chars)


def _literal_text(value: int | float) -> str:
    # repr of a float is the shortest decimal that round-trips; mpmath reads it exactly.
    return str(value) if isinstance(value, int) else repr(value)


_SYMBOLS = {
    ast.Mod: "%",
    ast.FloorDiv: "//",
    ast.MatMult: "@",
    ast.BitAnd: "&",
    ast.BitOr: "|",
    ast.BitXor: "^",
    ast.LShift: "<<",
    ast.RShift: ">>",
    ast.Not: "not",
    ast.Invert: "~",
    ast.In: "in",
    ast.NotIn: "not in",
    ast.Is: "is",
    ast.IsNot: "is not",
}


def _symbol(op: ast.AST) -> str:
    return _SYMBOLS.get(type(op), type(op).__name__)


def _describe(node: ast.AST) -> str:
    names = {
        ast.Attribute: "attribute access",
        ast.Subscript: "subscripting",
        ast.Lambda: "a lambda",
        ast.ListComp: "a comprehension",
        ast.SetComp: "a comprehension",
        ast.DictComp: "a comprehension",
        ast.GeneratorExp: "a generator expression",
        ast.BoolOp: "and/or",
        ast.IfExp: "a conditional expression (use where())",
        ast.NamedExpr: "an assignment expression",
        ast.JoinedStr: "an f-string",
        ast.Await: "await",
        ast.Yield: "yield",
        ast.YieldFrom: "yield",
        ast.Tuple: "a tuple",
        ast.List: "a list",
        ast.Dict: "a dict",
        ast.Set: "a set",
        ast.Starred: "a starred expression",
        ast.Slice: "a slice",
        ast.Call: "the result of a call",
    }
    return names.get(type(node), type(node).__name__)


def walk(node: Node) -> Iterator[Node]:
    """Yield ``node`` and all its descendants, parents first."""
    yield node
    if isinstance(node, Unary):
        yield from walk(node.arg)
    elif isinstance(node, (Binary, Compare)):
        yield from walk(node.left)
        yield from walk(node.right)
    elif isinstance(node, Call):
        for a in node.args:
            yield from walk(a)
    elif isinstance(node, Where):
        yield from walk(node.cond)
        yield from walk(node.then)
        yield from walk(node.otherwise)


def inline(node: Node, functions: dict[str, tuple[tuple[str, ...], Node]]) -> Node:
    """``node`` with every call of a case function replaced by its body.

    ``functions`` maps a name to ``(parameters, body)``; bodies may call functions
    defined before them. The result uses only the built-in language (what the mpmath
    reference compiles: a custom gradient does not change the mathematics).
    """

    def go(n: Node, env: dict[str, Node]) -> Node:
        if isinstance(n, Var):
            return env.get(n.name, n)
        if isinstance(n, Unary):
            return Unary(n.op, go(n.arg, env))
        if isinstance(n, Binary):
            return Binary(n.op, go(n.left, env), go(n.right, env))
        if isinstance(n, Compare):
            return Compare(n.op, go(n.left, env), go(n.right, env))
        if isinstance(n, Where):
            return Where(go(n.cond, env), go(n.then, env), go(n.otherwise, env))
        if isinstance(n, Call):
            args = tuple(go(a, env) for a in n.args)
            if n.func in functions:
                params, body = functions[n.func]
                return go(body, dict(zip(params, args)))
            return Call(n.func, args)
        return n

    return go(node, {})


def names_in(node: Node) -> set[str]:
    """The variable names an expression uses."""
    return {n.name for n in walk(node) if isinstance(n, Var)}


def unparse(node: Node) -> str:
    """Render a tree back to (fully parenthesised) expression text."""
    if isinstance(node, Num):
        return node.text
    if isinstance(node, (Const, Var)):
        return node.name
    if isinstance(node, Unary):
        return f"(-{unparse(node.arg)})"
    if isinstance(node, Binary):
        return f"({unparse(node.left)} {_BINARY_SYMBOL[node.op]} {unparse(node.right)})"
    if isinstance(node, Compare):
        return f"{unparse(node.left)} {_COMPARE_SYMBOL[node.op]} {unparse(node.right)}"
    if isinstance(node, Call):
        return f"{node.func}({', '.join(unparse(a) for a in node.args)})"
    if isinstance(node, Where):
        return f"where({unparse(node.cond)}, {unparse(node.then)}, {unparse(node.otherwise)})"
    raise TypeError(node)
