"""The operators of the expression language, one entry each (:mod:`.table`): arity,
domain, the reference's rules (mpmath: :mod:`.mp_elementary`, :mod:`.mp_special`,
:mod:`.mp_jets`; Arb: :mod:`.arb`) and each framework's kernel (:mod:`.model`)."""

from harness.operators.model import ArbRule, Kernel, NoKernel, Operator
from harness.operators.table import OPERATORS

__all__ = ["OPERATORS", "ArbRule", "Kernel", "NoKernel", "Operator"]
