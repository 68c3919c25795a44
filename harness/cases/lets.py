"""Local names (a case's ``let:``): a subexpression named once and used in several places
is one node, shared, as the user's code computes it once.

A case's ``let:`` maps names to expressions, in order (each may use the inputs and the
names above it). :func:`bind` puts the named node itself, the same object, wherever its
name is used, so the expression is a graph: the frameworks' walker
(:func:`harness.backends.walker.walk`) computes a shared node once, as the user's
``e = exp(x)`` is, and a derivative accumulates through it as the framework accumulates
through the user's variable (the sum of the uses' cotangents times one ``exp``, not one
product per use: an ulp apart at x = -2 in float64). The reference does not care:
mathematics is the same either way.

:func:`shared` finds the nodes a traced function uses more than once (a tracer keeps one
node per variable of the user's program) and :func:`unparse` writes them back as
``let:`` names, for a case file that computes what the user's code computes.
"""

from __future__ import annotations

from collections.abc import Mapping

from harness.cases import expressions as ex

__all__ = ["MAX_DEPTH", "MAX_NODES", "bind", "shared", "size", "unparse"]

#: How large an expression may grow with its names written out: every evaluator but
#: the frameworks' walker (the reference's jets, the causes' sites) walks it as a tree,
#: so ``a = x*x, b = a*a, ...`` thirty deep would be 2**30 nodes and a recursion past
#: Python's limit.
MAX_NODES = 20_000
MAX_DEPTH = 200


def bind(node: ex.Node, lets: Mapping[str, ex.Node]) -> ex.Node:
    """``node`` with each use of a ``let:`` name replaced by that name's node itself (one
    object for every use: not a copy)."""
    if not lets:
        return node

    def go(n: ex.Node) -> ex.Node:
        if isinstance(n, ex.Var):
            return lets.get(n.name, n)
        kids = _children(n)
        return _with_children(n, {id(c): go(c) for c in kids}) if kids else n

    return go(node)


def _children(n: ex.Node) -> tuple[ex.Node, ...]:
    if isinstance(n, ex.Unary):
        return (n.arg,)
    if isinstance(n, (ex.Binary, ex.Compare)):
        return (n.left, n.right)
    if isinstance(n, ex.Where):
        return (n.cond, n.then, n.otherwise)
    if isinstance(n, ex.Call):
        return n.args
    return ()


def size(node: ex.Node) -> tuple[int, int]:
    """``(nodes, depth)`` of ``node`` written out as a tree (each shared node counted at
    every use), counted over the graph, once per node."""
    memo: dict[int, tuple[int, int]] = {}

    def go(n: ex.Node) -> tuple[int, int]:
        if id(n) not in memo:
            kids = [go(c) for c in _children(n)]
            memo[id(n)] = (1 + sum(k[0] for k in kids), 1 + max((k[1] for k in kids), default=0))
        return memo[id(n)]

    return go(node)


def shared(node: ex.Node) -> list[ex.Node]:
    """The operations ``node`` uses more than once, by identity (one object reached by
    several paths), each after the shared nodes it uses: the order to compute them in.
    Leaves (inputs, numbers, constants) and comparisons are never shared."""
    uses: dict[int, int] = {}
    order: list[ex.Node] = []

    def visit(n: ex.Node) -> None:
        uses[id(n)] = uses.get(id(n), 0) + 1
        if uses[id(n)] > 1:
            return  # its own children were counted at its first use
        for c in _children(n):
            visit(c)
        order.append(n)

    visit(node)
    return [
        n
        for n in order
        if uses[id(n)] > 1 and isinstance(n, (ex.Unary, ex.Binary, ex.Call, ex.Where))
    ]


def unparse(node: ex.Node, taken: frozenset[str] | set[str]) -> tuple[dict[str, str], str]:
    """``node`` as a ``let:`` mapping (its shared operations, named ``s1``, ``s2``, ...,
    skipping the ``taken`` names) and the expression text that uses them."""
    names: dict[int, str] = {}
    counter = 0
    for n in shared(node):
        counter += 1
        while f"s{counter}" in taken:
            counter += 1
        names[id(n)] = f"s{counter}"

    def text(n: ex.Node, top: bool = False) -> str:
        if not top and id(n) in names:
            return names[id(n)]
        kids = _children(n)
        if not kids:
            return ex.unparse(n)
        # Rebuild with the children already written (as names), then unparse one level.
        return ex.unparse(_with_children(n, {id(c): ex.Var(text(c)) for c in kids}))

    lets = {names[id(n)]: text(n, top=True) for n in shared(node)}
    return lets, text(node, top=True)


def _with_children(n: ex.Node, kids: Mapping[int, ex.Node]) -> ex.Node:
    """``n`` with each child replaced by ``kids[id(child)]``."""

    def k(c: ex.Node) -> ex.Node:
        return kids[id(c)]

    if isinstance(n, ex.Unary):
        return ex.Unary(n.op, k(n.arg))
    if isinstance(n, ex.Binary):
        return ex.Binary(n.op, k(n.left), k(n.right))
    if isinstance(n, ex.Compare):
        return ex.Compare(n.op, k(n.left), k(n.right))
    if isinstance(n, ex.Where):
        return ex.Where(k(n.cond), k(n.then), k(n.otherwise))
    if isinstance(n, ex.Call):
        return ex.Call(n.func, tuple(k(a) for a in n.args))
    raise TypeError(n)
