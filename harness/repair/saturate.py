"""Equivalent forms of an expression, by equality saturation over the rule set (egglog).

The expression (:mod:`harness.cases.expressions`) goes into an e-graph as a term of one
datatype; each identity of :data:`harness.repair.identities.IDENTITIES` becomes a rewrite
both ways (one way where a side is a bare variable, which would match every term); the
graph is grown an iteration at a time until it saturates or a limit is reached (the
iterations, the e-graph's nodes, the seconds), and every limit reached is said in the
result. The forms are then read out of the graph: up to ``alternatives`` distinct terms
of the root's class, the smallest first (a bottom-up enumeration over the serialised
graph, whose classes may be cyclic). An identity is applied without its domain: a form
is a candidate, never a repair, until the judging has proved it at every point.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from fractions import Fraction

from harness.cases import expressions as ex
from harness.repair.identities import IDENTITIES, Identity

__all__ = ["Saturation", "saturate", "term"]

_BINARY = {"add": "Add", "sub": "Sub", "mul": "Mul", "div": "Div", "pow": "Pow"}
_FROM_BINARY = {v: k for k, v in _BINARY.items()}

_DECLARATIONS = """
(datatype E
  (Var String) (Num String) (Pi)
  (Add E E) (Sub E E) (Mul E E) (Div E E) (Pow E E) (Neg E)
  (F1 String E) (F2 String E E)
  (Sel String E E E E))
(ruleset identities)
"""


@dataclass(frozen=True)
class Saturation:
    """The forms found (``forms[0]`` the smallest; the original among them), and how the
    search ended: ``iterations`` run, the e-graph's ``nodes``, its ``seconds``, and
    ``stopped``: ``"saturated"`` or the limit reached (``"iterations"``, ``"nodes"``,
    ``"seconds"``)."""

    forms: tuple[ex.Node, ...]
    iterations: int
    nodes: int
    seconds: float
    stopped: str
    limits: dict


def _number(text: str) -> str:
    """A literal's canonical text: ``1.0`` and ``1`` are one constant to the rules."""
    value = Fraction(text)
    return str(value.numerator) if value.denominator == 1 else text


def term(node: ex.Node, variables: frozenset[str] = frozenset()) -> str:
    """``node`` as an egglog term; a name in ``variables`` is a pattern variable."""
    if isinstance(node, ex.Var):
        return f"?{node.name}" if node.name in variables else f'(Var "{node.name}")'
    if isinstance(node, ex.Num):
        return f'(Num "{_number(node.text)}")'
    if isinstance(node, ex.Const):
        return "(Pi)"
    if isinstance(node, ex.Unary):
        return f"(Neg {term(node.arg, variables)})"
    if isinstance(node, ex.Binary):
        return f"({_BINARY[node.op]} {term(node.left, variables)} {term(node.right, variables)})"
    if isinstance(node, ex.Call) and len(node.args) in (1, 2):
        args = " ".join(term(a, variables) for a in node.args)
        return f'(F{len(node.args)} "{node.func}" {args})'
    if isinstance(node, ex.Where):
        c = node.cond
        parts = [term(n, variables) for n in (c.left, c.right, node.then, node.otherwise)]
        return f'(Sel "{c.op}" {" ".join(parts)})'
    raise ValueError(f"the rewrite search takes no {ex.unparse(node)!r}")


def _rules(identities: tuple[Identity, ...]) -> str:
    out = []
    for identity in identities:
        names = frozenset(identity.names)
        lhs, rhs = (ex.parse(side, set(names)) for side in (identity.lhs, identity.rhs))
        left, right = term(lhs, names), term(rhs, names)
        if isinstance(rhs, ex.Var):
            out.append(f"(rewrite {left} {right} :ruleset identities)")
        elif isinstance(lhs, ex.Var):
            out.append(f"(rewrite {right} {left} :ruleset identities)")
        else:
            out.append(f"(birewrite {left} {right} :ruleset identities)")
    return "\n".join(out)


def saturate(
    node: ex.Node,
    identities: tuple[Identity, ...] = IDENTITIES,
    iterations: int = 8,
    max_nodes: int = 20_000,
    seconds: float = 10.0,
    alternatives: int = 16,
) -> Saturation:
    """The forms of ``node`` equal to it by ``identities`` (see the module's docstring)."""
    from egglog import bindings

    limits = {"iterations": iterations, "nodes": max_nodes, "seconds": seconds}
    graph = bindings.EGraph()
    setup = f"{_DECLARATIONS}\n{_rules(identities)}\n(let $root {term(node)})"
    graph.run_program(*graph.parse_program(setup))
    step = graph.parse_program("(run-schedule (run identities))")
    t0, done, stopped = time.perf_counter(), 0, "iterations"
    size = _size(graph)
    while done < iterations:
        graph.run_program(*step)
        done += 1
        grown = _size(graph)
        if grown == size:
            stopped = "saturated"
            break
        size = grown
        if size >= max_nodes:
            stopped = "nodes"
            break
        if time.perf_counter() - t0 >= seconds:
            stopped = "seconds"
            break
    spent = time.perf_counter() - t0
    forms = _forms(json.loads(graph.serialize([]).to_json()), alternatives)
    return Saturation(tuple(forms), done, size, round(spent, 3), stopped, limits)


def _size(graph) -> int:
    """The e-graph's nodes (its serialised form's, the primitives left out)."""
    nodes = json.loads(graph.serialize([]).to_json())["nodes"]
    return sum(1 for key in nodes if not key.startswith("primitive-"))


def _forms(data: dict, alternatives: int) -> list[ex.Node]:
    """Up to ``alternatives`` distinct terms of the root's class, smallest first."""
    nodes, classes = data["nodes"], data["class_data"]
    (root,) = [c for c, facts in classes.items() if facts.get("let") == "$root"]
    members: dict[str, list[dict]] = {}
    for node in nodes.values():
        members.setdefault(node["eclass"], []).append(node)
    best: dict[str, list[tuple]] = {}  # class -> [(size, term)], smallest first

    def literal(node_id: str):
        return json.loads(nodes[node_id]["op"])

    for _ in range(12):  # rounds of the bottom-up enumeration (terms grow by one level)
        changed = False
        for eclass, group in members.items():
            if eclass.startswith("String-"):
                continue
            found = dict.fromkeys(best.get(eclass, []))
            for node in group:
                for built in _built(node, nodes, best, literal, alternatives):
                    found[built] = None
            ranked = sorted(found, key=lambda t: (t[0], repr(t[1])))[:alternatives]
            if ranked != best.get(eclass):
                best[eclass], changed = ranked, True
        if not changed:
            break
    return [_node(t) for _, t in best.get(root, [])]


def _built(node: dict, nodes: dict, best: dict, literal, limit: int) -> list[tuple]:
    """The terms ``node`` makes from its children's best terms (at most ``limit``)."""
    op, children = node["op"], node["children"]
    if op in ("Var", "Num"):
        return [(1, (op, literal(children[0])))]
    if op == "Pi":
        return [(1, ("Pi",))]
    head, kids = [], children
    if op in ("F1", "F2", "Sel"):
        head, kids = [literal(children[0])], children[1:]
    options = [best.get(nodes[k]["eclass"], []) for k in kids]
    if any(not o for o in options):
        return []
    out = [(1, (op, *head))]
    for choices in options:
        out = [(s + cs, (*t, ct)) for s, t in out for cs, ct in choices][: limit * 4]
    return out


def _node(t: tuple) -> ex.Node:
    op = t[0]
    if op == "Var":
        return ex.Var(t[1])
    if op == "Num":
        return ex.Num(t[1], float(Fraction(t[1])))
    if op == "Pi":
        return ex.Const("pi")
    if op == "Neg":
        return ex.Unary("neg", _node(t[1]))
    if op in _FROM_BINARY:
        return ex.Binary(_FROM_BINARY[op], _node(t[1]), _node(t[2]))
    if op in ("F1", "F2"):
        return ex.Call(t[1], tuple(_node(a) for a in t[2:]))
    if op == "Sel":
        cond = ex.Compare(t[1], _node(t[2]), _node(t[3]))
        return ex.Where(cond, _node(t[4]), _node(t[5]))
    raise ValueError(op)
