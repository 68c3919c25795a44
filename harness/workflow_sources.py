"""Which package files each stage of the workflow runs (the rules list them as inputs,
so a change to a stage's code reruns that stage's jobs and no other): the lists
:mod:`harness.workflow` gives the Snakefile. A test checks that a stage imports nothing
from the package outside its list."""

from __future__ import annotations

from pathlib import Path

__all__ = ["BACKEND_SOURCES", "SNIPPET_SOURCES", "STAGE_SOURCES", "stage_sources"]

_PACKAGE = Path(__file__).resolve().parent

# What every stage reads: case files, settings, points, result files.
_COMMON = (
    "__init__.py",
    "cli.py",
    "cli_probe.py",
    "cli_causes.py",
    "cli_output.py",
    "pipeline.py",
    "prepared.py",
    "pieces.py",
    "stage_inputs.py",
    "cases/__init__.py",
    "cases/load.py",
    "cases/model.py",
    "cases/common.py",
    "cases/semantics.py",
    "cases/declarations.py",
    "cases/experiment_kinds.py",
    "cases/published_schema.py",
    "cases/schema.py",
    "cases/expressions.py",
    "cases/magnitude.py",
    "cases/yaml_lines.py",
    "registered/__init__.py",
    "registered/catalogue.py",
    "registered/register.py",
    "registered/seeds.py",
    "backends/__init__.py",
    "backends/catalogue.py",
    "experiments/__init__.py",
    "experiments/base.py",
    "experiments/catalogue.py",
    "experiments/stages.py",
    "experiments/page.py",
    "experiments/hessian_norm.py",
    "experiments/hessian_norm_page.py",
    "experiments/matrix_partials.py",
    "experiments/matrix_data.py",
    "experiments/matrix_ports.py",
    "config.py",
    "cases/points.py",
    "numerics/__init__.py",
    "numerics/floats.py",
    "report/__init__.py",
    "report/html.py",
    "results.py",
    "provenance.py",
    "study_defaults.yaml",
)

# The reference at new points: what the evaluation's bisection and localisation and the
# compare stage's checks of hand-written rules compute.
_REFERENCE = (
    "reference/__init__.py",
    "reference/verify.py",
    "reference/table.py",
    "reference/rounded.py",
    "reference/cache.py",
    "reference/certify.py",
    "reference/balls.py",
    "reference/series.py",
    "reference/jets.py",
    "reference/kernels.py",
    "reference/special.py",
)

# Judging rows and stating findings.
_JUDGING = (
    "judge/__init__.py",
    "judge/compare.py",
    "judge/expectations.py",
    "judge/summary.py",
    "judge/collect.py",
    "judge/diff.py",
    "judge/findings.py",
    "judge/reproduce.py",
    "judge/findings_text.py",
    "backends/tensorflow/__init__.py",
    "backends/tensorflow/repro.py",
    "backends/tensorflow/source.py",
    "judge/runs.py",
    "numerics/fd_model.py",
    "numerics/stencils.py",
    "numerics/flush.py",
    "causes/__init__.py",
    "causes/evidence.py",
    "causes/sites.py",
    "causes/classify.py",
    "causes/roots.py",
    "causes/statement.py",
    "causes/study.py",
    "causes/rules.py",
    "cases/synthetic.py",
    # The hand-written rules are checked exactly (Arb balls) where a finding needs it.
    *_REFERENCE,
)

#: Package files each stage runs, beyond :data:`_COMMON` (a test checks that a stage
#: imports nothing from the package outside its list).
STAGE_SOURCES: dict[str, tuple[str, ...]] = {
    "reference": (
        "reference/__init__.py",
        "reference/verify.py",
        "reference/kernels.py",
        "reference/special.py",
        "reference/table.py",
        "reference/rounded.py",
        "reference/cache.py",
        "reference/certify.py",
        "reference/balls.py",
        "reference/series.py",
        "reference/jets.py",
        "numerics/fd_model.py",
        "numerics/stencils.py",
        "numerics/flush.py",
    ),
    # Evaluation judges as it goes, to find the exact edges of each outcome (bisection).
    "evaluate": (
        "backends/interface.py",
        "registered/seeds.py",
        "numerics/stencils.py",
        "edges/__init__.py",
        "edges/bisection.py",
        "edges/brackets.py",
        "edges/finder.py",
        "judge/runs.py",
        "judge/__init__.py",
        "judge/compare.py",
        "judge/expectations.py",
        "judge/summary.py",
        "backends/catalogue.py",
        *_REFERENCE,
        "numerics/fd_model.py",
        "numerics/flush.py",
        "cases/synthetic.py",
        "causes/__init__.py",
        "causes/sites.py",
        "causes/localise.py",
    ),
    "compare": _JUDGING,
    "collect": _JUDGING,
    # Each root cause's standalone scripts, run in the framework (its own files below).
    "reproduce": (
        "cli_causes.py",
        "cases/synthetic.py",
        "causes/__init__.py",
        "causes/reproduce.py",
        "causes/roots.py",
        "causes/classify.py",
        "causes/statement.py",
        "causes/sites.py",
        "judge/__init__.py",
        "judge/findings_text.py",
        "judge/runs.py",
        "backends/snippet.py",
        "numerics/floats.py",
    ),
    "report": (
        "render.py",
        "report/case_page.py",
        "report/figures.py",
        "report/sections.py",
        "report/findings_list.py",
        "report/index.py",
        "report/frameworks_page.py",
        "report/root_causes_list.py",
        "judge/agreement.py",
        "backends/catalogue.py",
        *_JUDGING,
    ),
}

#: Each back end's own files: what its ``evaluate`` jobs run beyond ``STAGE_SOURCES``.
BACKEND_SOURCES: dict[str, tuple[str, ...]] = {
    "tensorflow": (
        "backends/partials.py",
        "backends/walker.py",
        "backends/tensorflow/__init__.py",
        "backends/tensorflow/backend.py",
        "backends/tensorflow/evaluate.py",
        "backends/tensorflow/tfimport.py",
        "backends/tensorflow/derivatives.py",
        "backends/tensorflow/build.py",
    ),
    "jax": (
        "backends/sweep.py",
        "backends/partials.py",
        "backends/walker.py",
        "backends/batch_stencil.py",
        "backends/jax/__init__.py",
        "backends/jax/backend.py",
        "backends/jax/build.py",
        "backends/jax/derivatives.py",
    ),
    "torch": (
        "backends/sweep.py",
        "backends/partials.py",
        "backends/walker.py",
        "backends/batch_stencil.py",
        "backends/torch/__init__.py",
        "backends/torch/backend.py",
        "backends/torch/build.py",
        "backends/torch/derivatives.py",
    ),
}


#: Each back end's reproducers: what its ``reproduce`` job writes and runs.
SNIPPET_SOURCES: dict[str, tuple[str, ...]] = {
    "tensorflow": (
        "backends/tensorflow/__init__.py",
        "backends/tensorflow/snippet.py",
        "backends/tensorflow/source.py",
    ),
    "jax": ("backends/jax/__init__.py", "backends/jax/snippet.py"),
    "torch": ("backends/torch/__init__.py", "backends/torch/snippet.py"),
}


def stage_sources(stage: str, root: str | Path = ".", backend: str | None = None) -> list[str]:
    """Paths (relative to ``root``) of the package files ``stage`` depends on (a list entry
    is a path inside the package: ``cases/load.py``); an ``evaluate`` or ``reproduce`` job
    also runs its ``backend``'s files."""
    own = ()
    if backend:
        own = SNIPPET_SOURCES[backend] if stage == "reproduce" else BACKEND_SOURCES[backend]
    names = dict.fromkeys((*_COMMON, *STAGE_SOURCES[stage], *own))
    base = Path(root) / "harness"
    return [str(base / n) for n in names if (_PACKAGE / n).exists()]
