"""The operator table: one entry per named function of the expression language.

Each entry says what the operator is (arity, domain), how the reference computes it
(its mpmath rule, its Arb rule or None) and which kernel each framework's back end calls
for it (keyed by the back end's registered name), or why it has none. The parser
(:mod:`harness.cases.expressions`), the two reference engines (:mod:`harness.reference.jets`,
:mod:`harness.reference.balls` and :mod:`harness.reference.series`), the back ends'
builders and the reproducers' source writers all read it. The entries are written
in three modules by family (``table_elementary``, ``table_activations``, ``table_nary``,
each entry by :func:`harness.operators.entry.op`). Adding an operator is one entry (with
its rules in the ``mp_*`` and ``arb*`` modules) and its tests;
``tests/test_operators.py`` checks that every operator has its rules and a kernel or a
reason in every registered back end.
"""

from __future__ import annotations

from harness.operators import table_activations, table_elementary, table_nary
from harness.operators.model import Operator

__all__ = ["OPERATORS"]

#: Every operator by name, in the order of its family's module.
OPERATORS: dict[str, Operator] = {
    op.name: op
    for family in (table_elementary, table_activations, table_nary)
    for op in family.ENTRIES
}
