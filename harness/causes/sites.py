"""Where a derivative can break inside an expression: its primitive applications.

A *site* is one application of a primitive (a named kernel such as ``softplus``, an
operator such as ``/`` or ``**``) inside an implementation's expression. Its *primitive*
is the same operation as an expression of its own: the arguments that vary with the
case's inputs become the variables ``u``, ``v``, ... and the constant ones stay as they
are written (``x**8`` is the primitive ``u ** 8``, ``a / b**2`` has the sites
``u ** 2`` and ``u / v``). Judging the primitive at the values its arguments take at a
failing point (:mod:`harness.causes.localise`) says whether the framework's own rule for
it is wrong there, or whether every primitive is right and the expression as a whole
overflows or cancels.

The expression whose derivatives a method computes is not always the implementation's:
a custom gradient replaces the first derivative by its rule, so the higher orders are
the rule's derivatives (:func:`effective`). No framework here.
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.cases import expressions as ex
from harness.cases.model import Case, Implementation, NestedRule

__all__ = ["VARIABLES", "Effective", "Site", "custom_rules", "effective", "sites"]

#: The variables of a primitive, in argument order (one letter each, so a partial's
#: label is its letters: ``uv``).
VARIABLES = ("u", "v", "w", "p", "q", "r", "s", "t")

_OPERATORS = {"add": "add", "sub": "sub", "mul": "mul", "div": "div", "pow": "pow"}


@dataclass(frozen=True)
class Site:
    """One primitive application: ``node`` in the expression, the primitive's ``name``
    (``softplus``, ``pow``, ``div``, ``neg``), the primitive as an expression over
    :data:`VARIABLES` (its constant arguments kept), and the argument subtrees that feed
    its variables, in order."""

    node: ex.Node
    name: str
    primitive: ex.Node
    args: tuple[ex.Node, ...]

    @property
    def text(self) -> str:
        """The primitive as written (``softplus(u)``, ``(u ** 8)``)."""
        return ex.unparse(self.primitive)

    @property
    def variables(self) -> tuple[str, ...]:
        return VARIABLES[: len(self.args)]


def _constant(node: ex.Node) -> bool:
    return not any(isinstance(n, ex.Var) for n in ex.walk(node))


def _site(node: ex.Node) -> Site | None:
    if isinstance(node, ex.Unary):
        if _constant(node.arg):
            return None
        return Site(node, "neg", ex.Unary(node.op, ex.Var("u")), (node.arg,))
    if isinstance(node, ex.Binary):
        name, operands = _OPERATORS[node.op], [node.left, node.right]
    elif isinstance(node, ex.Call):
        name, operands = node.func, list(node.args)
    else:  # variables, numbers, constants; where() selects, it computes nothing
        return None
    args: list[ex.Node] = []
    written = []
    for operand in operands:
        if _constant(operand):
            written.append(operand)
        else:
            written.append(ex.Var(VARIABLES[len(args)]))
            args.append(operand)
    if not args or len(args) > len(VARIABLES):
        return None
    if isinstance(node, ex.Binary):
        primitive: ex.Node = ex.Binary(node.op, written[0], written[1])
    else:
        primitive = ex.Call(node.func, tuple(written))
    return Site(node, name, primitive, tuple(args))


def sites(node: ex.Node) -> list[Site]:
    """Every primitive application in ``node``, innermost first (post-order), each
    distinct subtree once."""
    out: list[Site] = []
    seen: set[ex.Node] = set()

    def go(n: ex.Node) -> None:
        for child in _children(n):
            go(child)
        if n in seen:
            return
        seen.add(n)
        site = _site(n)
        if site is not None:
            out.append(site)

    go(node)
    return out


def _children(n: ex.Node) -> tuple[ex.Node, ...]:
    if isinstance(n, ex.Unary):
        return (n.arg,)
    if isinstance(n, ex.Binary):
        return (n.left, n.right)
    if isinstance(n, ex.Call):
        return n.args
    if isinstance(n, ex.Where):
        return (n.cond.left, n.cond.right, n.then, n.otherwise)
    return ()


@dataclass(frozen=True)
class Effective:
    """The expression whose ``partial`` a method differentiates, over the case's inputs:
    the implementation's own (case functions inlined), or its custom gradient's rule
    (with the upstream gradient ``dy`` = 1) for the orders above the first."""

    expression: ex.Node
    partial: tuple[str, ...]
    through_rule: bool  # the derivative goes through a hand-written rule


def _functions(case: Case) -> dict:
    return {f.name: (f.params, f.expression) for f in case.functions}


def custom_rules(case: Case, impl: Implementation) -> list[str]:
    """The hand-written rules a derivative of ``impl`` goes through: the implementation's
    own (``impl``) and those of the case functions its expression calls."""
    out = [impl.name] if impl.ruled else []
    if impl.expression is not None:
        called = {n.func for n in ex.walk(impl.expression) if isinstance(n, ex.Call)}
        with_rules = {f.name: f for f in case.functions if f.ruled}
        # A function calls earlier ones: follow the calls through their bodies.
        todo = list(called)
        while todo:
            name = todo.pop()
            f = next((g for g in case.functions if g.name == name), None)
            if f is None:
                continue
            if name in with_rules and name not in out:
                out.append(name)
            todo += [n.func for n in ex.walk(f.expression) if isinstance(n, ex.Call)]
    return out


def effective(case: Case, impl: Implementation, partial: tuple[str, ...]) -> Effective | None:
    """The expression a method differentiates for ``partial`` of ``impl`` (``None``: a
    registered implementation, or a nested second-order rule, which no expression
    describes)."""
    if impl.registered or impl.expression is None:
        return None
    functions = _functions(case)
    rules = bool(custom_rules(case, impl))
    if not impl.gradient or not partial:
        return Effective(ex.inline(impl.expression, functions), partial, rules)
    rule = impl.gradient.get(partial[0])
    if rule is None or isinstance(rule, NestedRule):
        return None
    one = ex.Num("1", 1.0)
    expression = ex.inline(_replace(rule, "dy", one), functions)
    return Effective(expression, partial[1:], True)


def _replace(n: ex.Node, name: str, value: ex.Node) -> ex.Node:
    if isinstance(n, ex.Var):
        return value if n.name == name else n
    if isinstance(n, ex.Unary):
        return ex.Unary(n.op, _replace(n.arg, name, value))
    if isinstance(n, ex.Binary):
        return ex.Binary(n.op, _replace(n.left, name, value), _replace(n.right, name, value))
    if isinstance(n, ex.Call):
        return ex.Call(n.func, tuple(_replace(a, name, value) for a in n.args))
    if isinstance(n, ex.Compare):
        return ex.Compare(n.op, _replace(n.left, name, value), _replace(n.right, name, value))
    if isinstance(n, ex.Where):
        cond = _replace(n.cond, name, value)
        return ex.Where(cond, _replace(n.then, name, value), _replace(n.otherwise, name, value))
    return n
