"""Repair (issue 59): for a formula or a custom rule that fails, a stable one, judged.

Modules, one job each:

- :mod:`harness.repair.identities`: the rule set, the identities a rewrite may use (each
  written once, as data, in the case language over the operator table), and the check
  that holds each one to the certified reference: both sides' Arb jets, value and
  derivatives to order 4, at seeded points of the identity's domain.
- :mod:`harness.repair.saturate`: an expression's equivalent forms by equality saturation
  over that rule set (egglog), within stated limits on iterations, nodes and seconds:
  the candidates a repair is chosen from.
- :mod:`harness.repair.derivative`: an expression's symbolic derivative (the chain rule,
  each operator's derivative written once, as data): where custom rules start.
- :mod:`harness.repair.candidates`: a case implementation's candidates (its expression,
  or one rule at a time, rewritten), each an implementation of the case file's shape,
  and a copy of the case with them added, for the study to judge.
- :mod:`harness.repair.prove`: the candidates judged by the study's own stages beside
  the original, point by point: accepted where right wherever the original was right
  and right somewhere it failed, ranked by the share right, then by cost
  (``harness repair``).
- :mod:`harness.repair.code`: a repair as a module to paste into each framework (each
  back end's ``emit.py``), imported and checked by ``harness.check`` against the judged
  values, bit for bit.
"""
