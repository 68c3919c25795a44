"""What each kind of case does at each stage, in one place.

A kind (expression cases; experiment cases) implements the same four steps, each named
by its dotted path (``module:function``) so that a stage imports only its own step's
code, and its jobs depend only on that (:func:`harness.workflow.sources.package_files`):

- ``reference(prep, results, cache, progress) -> (table, meta)``: the reference table,
  and what the stage's provenance adds (``reference_counts``, ``facts``);
- ``evaluate(prep, engine, backend, piece, modes, flags, progress, reference, bisect,
  cache, results) -> Evaluated``: one piece's values in one back end, with their
  statistics, exact edges and localised primitives;
- ``judge(prep, table, reference, flush) -> errors``: one back end's values judged;
- ``page(case_id, case, errors, summary, findings, meta) -> html``: the case's page.

The stages (:mod:`.reference`, :mod:`.evaluate`, :mod:`.compare`, :mod:`.report`) do the
rest the same way for every kind: provenance, timings, atomic writes, findings.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass

import pandas as pd

__all__ = ["KINDS", "STEPS", "CaseKind", "Evaluated", "kind_of"]

#: The steps, in stage order.
STEPS = ("reference", "evaluate", "judge", "page")


@dataclass(frozen=True)
class Evaluated:
    """One piece's evaluation in one back end."""

    table: pd.DataFrame  # the values (a ``seconds`` column per method, mode and dtype)
    stats: dict  # the evaluation's statistics (provenance: the run's facts)
    edges: pd.DataFrame  # the exact edges of each run of one outcome (bisection)
    localised: pd.DataFrame  # the failing rows' primitives (harness.causes.localise)


@dataclass(frozen=True)
class CaseKind:
    name: str
    reference: str
    evaluate: str
    judge: str
    page: str

    def step(self, name: str) -> Callable:
        """The function of step ``name`` (imported here: only the stage that runs it)."""
        module, _, function = getattr(self, name).partition(":")
        return getattr(importlib.import_module(module), function)


KINDS: dict[str, CaseKind] = {
    "expression": CaseKind(
        "expression",
        reference="harness.stages.expression:reference",
        evaluate="harness.stages.expression_evaluate:evaluate",
        judge="harness.stages.expression:judge",
        page="harness.stages.pages:expression_page",
    ),
    "experiment": CaseKind(
        "experiment",
        reference="harness.stages.experiment:reference",
        evaluate="harness.stages.experiment_evaluate:evaluate",
        judge="harness.stages.experiment:judge",
        page="harness.stages.pages:experiment_page",
    ),
}


def kind_of(case) -> CaseKind:
    """The kind of a loaded case (its ``kind``: ``expression`` or ``experiment``)."""
    return KINDS[case.kind]
