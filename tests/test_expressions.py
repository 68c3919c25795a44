"""The expression language: what :func:`harness.cases.expressions.parse` accepts and refuses.

The property tests feed the parser arbitrary text and Python-like expressions built
from dangerous pieces (``__import__``, ``open``, ``eval``, attributes, subscripts,
lambdas, calls) while sentinels watch: the builtins that run or load code are replaced
by tripwires, ``compile`` may only build syntax trees, and an audit hook records any
other runtime event (imports, file opens, ``exec``, ``os.system``, ...). Whatever the
text, parse returns a tree of whitelisted nodes or raises ExpressionError, and the
sentinels stay silent.
"""

from __future__ import annotations

import ast
import builtins
import math
import sys
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness.cases import expressions as ex
from harness.cases.expressions import (
    CONSTANTS,
    FUNCTIONS,
    MAX_LENGTH,
    Binary,
    Call,
    Compare,
    Const,
    ExpressionError,
    Node,
    Num,
    Unary,
    Var,
    Where,
    names_in,
    parse,
    unparse,
)

NAMES = frozenset({"x", "y"})

# -- accepted ---------------------------------------------------------------------------

x, y = Var("x"), Var("y")


def num(text: str) -> Num:
    return Num(text, float(text))


ACCEPTED = [
    ("x", x),
    ("pi", Const("pi")),
    ("2", num("2")),
    ("0.1", num("0.1")),
    ("1e-3", num("1e-3")),
    ("1_000.5", Num("1000.5", 1000.5)),
    ("-x", Unary("neg", x)),
    ("+x", x),
    ("x + 1", Binary("add", x, num("1"))),
    ("x - y", Binary("sub", x, y)),
    ("2 * x", Binary("mul", num("2"), x)),
    ("x / y", Binary("div", x, y)),
    ("x ** 2", Binary("pow", x, num("2"))),
    ("-x**2", Unary("neg", Binary("pow", x, num("2")))),
    ("x / y / y", Binary("div", Binary("div", x, y), y)),
    ("x ** y ** 2", Binary("pow", x, Binary("pow", y, num("2")))),
    ("(x + y) * x", Binary("mul", Binary("add", x, y), x)),
    ("exp(x)", Call("exp", (x,))),
    ("maximum(x, 0)", Call("maximum", (x, num("0")))),
    ("log(1 + exp(x))", Call("log", (Binary("add", num("1"), Call("exp", (x,))),))),
    ("where(x < 0, -x, x)", Where(Compare("lt", x, num("0")), Unary("neg", x), x)),
    ("  x  ", x),
    ("(x +\n  y)", Binary("add", x, y)),
]


@pytest.mark.parametrize(("text", "tree"), ACCEPTED, ids=[t for t, _ in ACCEPTED])
def test_accepts(text: str, tree: Node):
    assert parse(text, NAMES) == tree


@pytest.mark.parametrize(
    ("op", "symbol"),
    [("lt", "<"), ("le", "<="), ("gt", ">"), ("ge", ">="), ("eq", "=="), ("ne", "!=")],
)
def test_where_takes_each_comparison(op: str, symbol: str):
    tree = parse(f"where(x {symbol} y, x, y)", NAMES)
    assert tree == Where(Compare(op, x, y), x, y)


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_every_function_with_its_arity(name: str):
    args = ", ".join(["x"] * FUNCTIONS[name])
    assert parse(f"{name}({args})", NAMES) == Call(name, (x,) * FUNCTIONS[name])


def test_dy_only_where_declared():
    assert parse("dy * sigmoid(x)", NAMES | {"dy"}) == Binary(
        "mul", Var("dy"), Call("sigmoid", (x,))
    )
    with pytest.raises(ExpressionError, match="unknown name 'dy'"):
        parse("dy * x", NAMES)


def test_literal_keeps_its_decimal_text():
    # mpmath reads the text: 0.1 is one tenth there, not the nearest double.
    assert parse("0.1", NAMES).text == "0.1"
    assert parse("1e-45", NAMES) == Num("1e-45", 1e-45)


def test_names_in_and_unparse_round_trip():
    tree = parse("where(x < y, log1p(exp(-x)), maximum(x, pi) / 2)", NAMES)
    assert names_in(tree) == {"x", "y"}
    assert parse(unparse(tree), NAMES) == tree


# -- refused ----------------------------------------------------------------------------

REFUSED = [
    # (text, fragment of the message, column)
    ("x.real", "attribute access is not allowed", 1),
    ("log(1 + exp(x.real))", "attribute access is not allowed", 13),
    ("x[0]", "subscripting is not allowed", 1),
    ("1 + x[0]", "subscripting is not allowed", 5),
    ("x[1:2]", "subscripting is not allowed", 1),
    ("lambda: 0", "a lambda is not allowed", 1),
    ("(lambda t: t)(x)", "only named functions can be called, not a lambda", 1),
    ("[t for t in x]", "a comprehension is not allowed", 1),
    ("{t for t in x}", "a comprehension is not allowed", 1),
    ("{t: 1 for t in x}", "a comprehension is not allowed", 1),
    ("(t for t in x)", "a generator expression is not allowed", 1),
    ("maximum(x, y=0)", "maximum() takes no keyword arguments", 1),
    ("exp(**x)", "exp() takes no keyword arguments", 1),
    ("exp(*x)", "exp() takes no *arguments", 1),
    ("'s'", "literal 's' is not a number", 1),
    ("x + 'a'", "literal 'a' is not a number", 5),
    ("b'x'", "literal b'x' is not a number", 1),
    ("True", "literal True is not a number", 1),
    ("None", "literal None is not a number", 1),
    ("1j", "literal 1j is not a number", 1),
    ("...", "literal Ellipsis is not a number", 1),
    ("1e400", "number 1e400 is too large for float64", 1),
    ("9" * 400, "too large for float64", 1),
    ("__import__('os')", "unknown function '__import__'", 1),
    ("x + __import__('os')", "unknown function '__import__'", 5),
    ("__import__('os').system('ls')", "only named functions can be called, not attribute", 1),
    ("open('/etc/passwd')", "unknown function 'open'", 1),
    ("eval('1')", "unknown function 'eval'", 1),
    ("exec('1')", "unknown function 'exec'", 1),
    ("compile('1', 'f', 'eval')", "unknown function 'compile'", 1),
    ("getattr(x, 'real')", "unknown function 'getattr'", 1),
    ("x.__class__.__bases__[0].__subclasses__()", "not attribute access", 1),
    ("exp(x)(x)", "not the result of a call", 1),
    ("erfcx(x)", "unknown function 'erfcx'; known: abs,", 1),
    ("z", "unknown name 'z'; declared: x, y", 1),
    ("x + z", "unknown name 'z'", 5),
    ("__builtins__", "unknown name '__builtins__'", 1),
    ("exp", "function 'exp' used without a call", 1),
    ("exp(x, y)", "exp() takes 1 argument(s), got 2", 1),
    ("maximum(x)", "maximum() takes 2 argument(s), got 1", 1),
    ("logsumexp(x)", "logsumexp() takes 2 to 8 arguments, got 1", 1),
    ("log_softmax(x, x, x, x, x, x, x, x, x)", "log_softmax() takes 2 to 8 arguments, got 9", 1),
    ("x % 2", "operator '%' is not allowed (use + - * / **)", 1),
    ("x // 2", "operator '//' is not allowed", 1),
    ("x @ y", "operator '@' is not allowed", 1),
    ("x & 1", "operator '&' is not allowed", 1),
    ("x << 1", "operator '<<' is not allowed", 1),
    ("not x", "operator 'not' is not allowed", 1),
    ("~x", "operator '~' is not allowed", 1),
    ("x < 1", "a comparison is allowed only as the condition of where()", 1),
    ("where(x, 1, 0)", "the first argument of where() must be one comparison", 7),
    ("where(0 < x < 1, 1, 0)", "must be one comparison", 7),
    ("where(x in y, 1, 0)", "comparison 'in' is not allowed", 7),
    ("where(x is y, 1, 0)", "comparison 'is' is not allowed", 7),
    ("where(x < 0, 1)", "where(cond, a, b) takes 3 arguments", 1),
    ("x if x > 0 else 0", "a conditional expression (use where())", 1),
    ("x and y", "and/or is not allowed", 1),
    ("(z := 1)", "an assignment expression is not allowed", 2),
    ("f'{x}'", "an f-string is not allowed", 1),
    ("(x, y)", "a tuple is not allowed", 1),
    ("[x]", "a list is not allowed", 1),
    ("{x: 1}", "a dict is not allowed", 1),
    ("{x}", "a set is not allowed", 1),
    ("await x", "await is not allowed", 1),
    ("x )", "syntax error: unmatched ')'", 3),
    ("1 +* 2", "syntax error", 4),
    ("x = 1", "syntax error", 3),
    ("import os", "syntax error", 1),
    ("(x +\n  y[0])", "subscripting is not allowed", 8),
    ("'é' + x[0]", "literal 'é' is not a number", 1),
    ("abs(x) + 'é'", "literal 'é' is not a number", 10),
]


@pytest.mark.parametrize(("text", "fragment", "column"), REFUSED, ids=[t for t, _, _ in REFUSED])
def test_refuses_with_column(text: str, fragment: str, column: int):
    with pytest.raises(ExpressionError) as info:
        parse(text, NAMES)
    assert fragment in info.value.message
    assert info.value.column == column
    assert str(info.value).endswith(f"(column {column})")


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("", "empty expression"),
        ("   ", "empty expression"),
        ("x" * (MAX_LENGTH + 1), f"longer than {MAX_LENGTH}"),
        ("-" * 100 + "x", "nested deeper than"),
        ("(" * 500 + "x" + ")" * 500, "syntax error"),
        ("x\x00", "syntax error"),
    ],
)
def test_refuses_without_column(text: str, fragment: str):
    with pytest.raises(ExpressionError, match=fragment.replace("(", r"\(")):
        parse(text, NAMES)


@pytest.mark.parametrize("value", [5, 1.5, None, ["x"], {"x": 1}])
def test_refuses_non_strings(value):
    with pytest.raises(ExpressionError, match="expected an expression string"):
        parse(value, NAMES)


# -- nothing runs: sentinels ------------------------------------------------------------

_GUARDED = ("__import__", "open", "eval", "exec", "compile")
_PARSER_IMPORTS = frozenset({"unicodedata"})


class _Audit:
    """A process-wide audit hook (hooks cannot be removed), recording only when on."""

    installed = False
    on = False
    events: list[tuple[str, str]] = []

    @classmethod
    def hook(cls, event: str, args: tuple) -> None:
        if not cls.on:
            return
        # ast.parse raises "compile" for every parse; a tracer (coverage, Hypothesis)
        # reads each frame's f_code. Those are the only events a parse may cause.
        if event == "compile" or (event == "object.__getattr__" and args[1:] == ("f_code",)):
            return
        if event == "import" and args[0] in _PARSER_IMPORTS:
            return
        cls.events.append((event, repr(args)[:80]))


@contextmanager
def _sentinels() -> Iterator[list[tuple[str, str]]]:
    if not _Audit.installed:
        sys.addaudithook(_Audit.hook)
        _Audit.installed = True
    fired: list[tuple[str, str]] = []
    saved = {name: getattr(builtins, name) for name in _GUARDED}
    real_compile = saved["compile"]

    def tripwire(name: str):
        def trip(*args, **kwargs):
            fired.append((name, repr(args[0])[:80] if args else ""))
            raise AssertionError(f"{name} was called while parsing")

        return trip

    def import_for_the_tokenizer(name, *args, **kwargs):
        # CPython's tokenizer imports unicodedata itself to normalise non-ASCII
        # identifiers (NFKC); that module, and only it, may be imported.
        if name in _PARSER_IMPORTS:
            return saved["__import__"](name, *args, **kwargs)
        return tripwire("__import__")(name)

    def syntax_tree_only(source, filename, mode, flags=0, *args, **kwargs):
        # ast.parse compiles with PyCF_ONLY_AST: a syntax tree, never a code object.
        if not flags & ast.PyCF_ONLY_AST:
            fired.append(("compile", mode))
            raise AssertionError("compile() was asked for a code object")
        return real_compile(source, filename, mode, flags, *args, **kwargs)

    for name in ("open", "eval", "exec"):
        setattr(builtins, name, tripwire(name))
    builtins.__import__ = import_for_the_tokenizer
    builtins.compile = syntax_tree_only
    _Audit.events.clear()
    _Audit.on = True
    try:
        yield fired
    finally:
        _Audit.on = False
        for name, value in saved.items():
            setattr(builtins, name, value)
        fired.extend(_Audit.events)


def _check_tree(node: Node, names: frozenset[str]) -> None:
    """Only whitelisted node kinds, names, functions and arities; comparisons under where."""
    if isinstance(node, Num):
        assert isinstance(node.text, str) and math.isfinite(node.value)
    elif isinstance(node, Const):
        assert node.name in CONSTANTS
    elif isinstance(node, Var):
        assert node.name in names
    elif isinstance(node, Unary):
        assert node.op == "neg"
        _check_tree(node.arg, names)
    elif isinstance(node, Binary):
        assert node.op in {"add", "sub", "mul", "div", "pow"}
        _check_tree(node.left, names)
        _check_tree(node.right, names)
    elif isinstance(node, Call):
        assert node.func in FUNCTIONS and len(node.args) == FUNCTIONS[node.func]
        for arg in node.args:
            _check_tree(arg, names)
    elif isinstance(node, Where):
        assert type(node.cond) is Compare
        assert node.cond.op in {"lt", "le", "gt", "ge", "eq", "ne"}
        for child in (node.cond.left, node.cond.right, node.then, node.otherwise):
            _check_tree(child, names)
    else:  # Compare only as where's condition; nothing else at all
        raise AssertionError(f"unexpected node {node!r}")


def _parse_watched(text: str, names: frozenset[str] = NAMES) -> Node | ExpressionError:
    with _sentinels() as fired:
        try:
            result: Node | ExpressionError = parse(text, names)
        except ExpressionError as exc:
            result = exc
    assert fired == [], f"{text!r} made the parser run something: {fired}"
    if isinstance(result, Node):
        _check_tree(result, names)
    else:
        assert isinstance(result.message, str) and result.column >= 0
    return result


def test_sentinels_fire():
    """The tripwires work: the same watch catches code that does run things."""
    with pytest.raises(AssertionError):
        with _sentinels():
            __import__("os")
    with _sentinels() as fired:
        with pytest.raises(AssertionError):
            eval("1")
    assert fired and fired[0][0] == "eval"
    with _sentinels() as fired:
        code = builtins.compile("1", "<test>", "eval", ast.PyCF_ONLY_AST)
    assert isinstance(code, ast.Expression) and fired == []


_DANGEROUS_NAMES = [
    "x",
    "y",
    "dy",
    "pi",
    "e",
    "__import__",
    "open",
    "eval",
    "exec",
    "compile",
    "globals",
    "locals",
    "vars",
    "getattr",
    "setattr",
    "breakpoint",
    "input",
    "print",
    "__builtins__",
    "__class__",
    "os",
    "sys",
    "subprocess",
    "exp",
    "log",
    "where",
    "maximum",
    "softplus",
    "True",
    "None",
]
_ATTRIBUTES = ["real", "system", "__class__", "__globals__", "__subclasses__", "read", "popen"]
_BINARY = ["+", "-", "*", "/", "**", "%", "//", "@", "&", "|", "^", "<<", ">>", "and", "or"]
_COMPARE = ["<", "<=", ">", ">=", "==", "!=", "in", "not in", "is", "is not"]


def _literal() -> st.SearchStrategy[str]:
    return st.one_of(
        st.integers(-(10**30), 10**30).map(str),
        st.floats(allow_nan=False).map(repr),
        st.text(max_size=8).map(repr),
        st.sampled_from(["...", "1j", "0x1f", "1_000", "1e400", "b'os'", "inf", "nan"]),
    )


def _combine(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    names = st.sampled_from(_DANGEROUS_NAMES)
    args = st.lists(inner, max_size=3).map(", ".join)
    kwargs = st.lists(st.tuples(names, inner).map("=".join), max_size=2)
    call_args = st.tuples(args, kwargs).map(lambda t: ", ".join(filter(None, [t[0], *t[1]])))
    return st.one_of(
        st.tuples(inner, st.sampled_from(_BINARY), inner).map(lambda t: f"({t[0]} {t[1]} {t[2]})"),
        st.tuples(st.sampled_from(["-", "+", "not ", "~", "*", "**"]), inner).map("".join),
        st.tuples(inner, st.sampled_from(_ATTRIBUTES)).map(lambda t: f"{t[0]}.{t[1]}"),
        st.tuples(inner, inner).map(lambda t: f"{t[0]}[{t[1]}]"),
        st.tuples(st.one_of(names, inner), call_args).map(lambda t: f"{t[0]}({t[1]})"),
        st.tuples(names, inner).map(lambda t: f"(lambda {t[0]}: {t[1]})"),
        st.tuples(inner, names, inner).map(lambda t: f"[{t[0]} for {t[1]} in {t[2]}]"),
        st.tuples(inner, inner, inner).map(lambda t: f"({t[0]} if {t[1]} else {t[2]})"),
        st.tuples(inner, st.sampled_from(_COMPARE), inner, inner, inner).map(
            lambda t: f"where({t[0]} {t[1]} {t[2]}, {t[3]}, {t[4]})"
        ),
        st.tuples(inner, inner).map(lambda t: f"({t[0]}, {t[1]})"),
        st.tuples(inner, inner).map(lambda t: f"{{{t[0]}: {t[1]}}}"),
        inner.map(lambda s: f"[{s}]"),
        inner.map(lambda s: f"(z := {s})"),
        inner.map(lambda s: f"f'{{{s}}}'"),
    )


PYTHON_LIKE = st.recursive(
    st.one_of(st.sampled_from(_DANGEROUS_NAMES), _literal()), _combine, max_leaves=10
)


def _allowed_combine(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    calls = [
        st.lists(inner, min_size=n, max_size=n).map(lambda a, f=f: f"{f}({', '.join(a)})")
        for f, n in sorted(FUNCTIONS.items())
    ]
    return st.one_of(
        st.tuples(inner, st.sampled_from(["+", "-", "*", "/", "**"]), inner).map(
            lambda t: f"({t[0]} {t[1]} {t[2]})"
        ),
        st.tuples(st.sampled_from(["-", "+"]), inner).map("".join),
        *calls,
        st.tuples(inner, st.sampled_from(_COMPARE[:6]), inner, inner, inner).map(
            lambda t: f"where({t[0]} {t[1]} {t[2]}, {t[3]}, {t[4]})"
        ),
    )


ALLOWED = st.recursive(
    st.one_of(
        st.sampled_from(["x", "y", "pi"]),
        st.integers(0, 10**6).map(str),
        st.floats(min_value=0, max_value=1e300, allow_nan=False).map(repr),
    ),
    _allowed_combine,
    max_leaves=12,
)

_PROPERTY = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@_PROPERTY
@given(st.text(max_size=300))
def test_arbitrary_text_runs_nothing(text: str):
    _parse_watched(text)


@_PROPERTY
@given(PYTHON_LIKE)
def test_python_like_expressions_run_nothing(text: str):
    _parse_watched(text)


@_PROPERTY
@given(PYTHON_LIKE, st.sampled_from(["", "dy"]))
def test_dangerous_names_are_never_callable(text: str, extra: str):
    names = NAMES | {extra} if extra else NAMES
    result = _parse_watched(text, names)
    if isinstance(result, Node):
        assert names_in(result) <= names
        assert {n.func for n in ex.walk(result) if isinstance(n, Call)} <= set(FUNCTIONS)


@_PROPERTY
@given(ALLOWED)
def test_language_expressions_parse_and_round_trip(text: str):
    tree = _parse_watched(text)
    assert isinstance(tree, Node), f"{text!r} was refused: {tree}"
    assert _parse_watched(unparse(tree)) == tree


def test_case_functions_parse_with_their_arity_and_inline_to_the_builtin_language():
    from harness.cases.expressions import inline, parse, unparse

    sq = parse("u**2", {"u"})
    node = parse("foo(foo(x)) + 1", {"x"}, {"foo": 1})
    flat = inline(node, {"foo": (("u",), sq)})
    assert unparse(flat) == unparse(parse("(x**2)**2 + 1", {"x"}))
    with pytest.raises(ExpressionError, match="takes 1 argument"):
        parse("foo(x, x)", {"x"}, {"foo": 1})
    with pytest.raises(ExpressionError, match="unknown function 'foo'"):
        parse("foo(x)", {"x"})
