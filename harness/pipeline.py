"""The stages of one case, each reading and writing ``results/<case>/``.

``reference`` (mpmath, no TensorFlow) -> ``reference.parquet``;
``evaluate`` (TensorFlow) -> ``evaluations.parquet``;
``compare`` (both) -> ``errors.parquet``.
:func:`run_case` runs all three in one process. Every table carries provenance (see
:mod:`harness.provenance`); compare refuses inputs whose case or settings differ.
Nothing is written for a case that fails validation: the case is loaded (and raises)
before any stage touches the disk.
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import pandas as pd

from . import provenance
from .cases import Case, load_case
from .config import Settings, StudyConfig, load_config, settings_for
from .experiments import ExperimentCase
from .points import generate, represent, segments
from .results import read_metadata, read_table, write_table

__all__ = [
    "Selection",
    "compare_stage",
    "evaluate_stage",
    "reference_stage",
    "run_case",
    "run_stages",
]

Progress = Callable[[str, int, int], None]


@dataclasses.dataclass(frozen=True)
class Selection:
    """What the command line narrowed (``None``: the case's and config's own lists)."""

    dtypes: Sequence[str] | None = None
    methods: Sequence[str] | None = None
    modes: Sequence[str] | None = None
    orders: Sequence[int] | None = None
    max_points: int | None = None


@dataclasses.dataclass(frozen=True)
class Prepared:
    case: Case
    config: StudyConfig
    settings: Settings
    points: dict[str, pd.DataFrame]

    def provenance(self, stage: str, **extra) -> dict:
        return provenance.collect(
            stage=stage,
            case=self.case.id,
            case_file=self.case.path,
            case_hash=self.case.content_hash,
            config=self.config.path,
            config_hash=self.config.hash,
            seed=self.config.seed,
            input_seeds={
                i.name: i.params["seed"]
                for i in getattr(self.case, "inputs", ())
                if i.kind == "random"
            },
            selection=self.selection_record(),
            points={
                d: {"evaluated": len(f), **f.attrs.get("dropped", {})}
                for d, f in self.points.items()
            },
            segments=self.segments,
            **extra,
        )

    @property
    def segments(self) -> dict[str, list[list[float]]]:
        """The intervals each input was sampled from (:func:`harness.points.segments`)."""
        return {} if self.is_experiment else segments(self.case)

    @property
    def is_experiment(self) -> bool:
        return isinstance(self.case, ExperimentCase)

    def selection_record(self) -> dict:
        s = self.settings
        extra = {"parameters": self.case.params(s.setting)} if self.is_experiment else {}
        return {
            **extra,
            "dtypes": list(s.dtypes),
            "methods": list(s.methods),
            "modes": list(s.modes),
            "partials": [self.case.label(p) for p in self.case.partials],
            "max_points": s.max_points,
            "setting": s.setting,
            "max_order": dict(sorted(s.max_order.items())),
        }


def prepare(
    case_path: str | Path, config: StudyConfig | None = None, selection: Selection = Selection()
) -> Prepared:
    """Load and validate the case (raises :class:`harness.cases.CaseError`), narrow it,
    and generate its points as each dtype represents them."""
    case = load_case(case_path)
    config = config or load_config()
    if isinstance(case, ExperimentCase):
        settings = settings_for(case, config, selection.dtypes, selection.methods, selection.modes)
        return Prepared(case, config, settings, {})
    if selection.orders is not None:
        keep = set(selection.orders)
        case = dataclasses.replace(case, partials=tuple(p for p in case.partials if len(p) in keep))
    settings = settings_for(
        case, config, selection.dtypes, selection.methods, selection.modes, selection.max_points
    )
    # No reference for orders no selected method computes (the quick setting's caps).
    top = settings.highest_order
    case = dataclasses.replace(case, partials=tuple(p for p in case.partials if len(p) <= top))
    base = generate(case, settings.max_points)
    points = {d: represent(base, case.input_names, d) for d in settings.dtypes}
    return Prepared(case, config, settings, points)


def case_dir(results: str | Path, case: Case) -> Path:
    return Path(results) / case.id


def reference_stage(
    prep: Prepared, results: str | Path, cache: bool = True, progress: Progress | None = None
) -> tuple[pd.DataFrame, dict]:
    from .reference import ReferenceSettings, compute_reference

    s = prep.settings
    ref_settings = ReferenceSettings(s.precision, s.verify_digits, s.max_precision)
    if prep.is_experiment:
        from .experiments import reference_experiment

        t0 = time.perf_counter()
        table, facts = reference_experiment(
            prep.case, prep.case.params(s.setting), s.dtypes, s.precision, s.verify_digits
        )
        meta = prep.provenance(
            "reference",
            reference=dataclasses.asdict(ref_settings),
            reference_counts={"computed": len(table) // max(1, len(s.dtypes)), "cached": 0},
            facts=facts,
            seconds=round(time.perf_counter() - t0, 3),
        )
        write_table(table, case_dir(results, prep.case) / "reference.parquet", meta)
        return table, meta
    cache_dir = Path(results) / ".cache" / "reference" if cache else None
    t0 = time.perf_counter()
    table, counts = compute_reference(
        prep.case,
        prep.points,
        ref_settings,
        cache_dir,
        (lambda i, n: progress("reference", i, n)) if progress else None,
    )
    seconds = time.perf_counter() - t0
    meta = prep.provenance(
        "reference",
        reference=dataclasses.asdict(ref_settings),
        reference_counts=counts,
        seconds=round(seconds, 3),
    )
    write_table(table, case_dir(results, prep.case) / "reference.parquet", meta)
    return table, meta


def evaluate_stage(
    prep: Prepared, results: str | Path, progress: Progress | None = None
) -> tuple[pd.DataFrame, dict]:
    from .evaluate import evaluate_case, probe_flush, tensorflow_facts  # TensorFlow starts here

    s = prep.settings
    if prep.is_experiment:
        from .experiments import evaluate_experiment

        t0 = time.perf_counter()
        table, timing = evaluate_experiment(
            prep.case, prep.case.params(s.setting), s.dtypes, s.modes
        )
        table = table[table["method"].isin(s.methods)].reset_index(drop=True)
        stats = {"seconds": round(time.perf_counter() - t0, 3), "traces": 0, **timing}
        meta = prep.provenance(
            "evaluate",
            tensorflow=tensorflow_facts(),
            platform={"flush": probe_flush(s.dtypes, s.modes)},
            evaluation=stats,
        )
        write_table(table, case_dir(results, prep.case) / "evaluations.parquet", meta)
        return table, meta
    table, stats = evaluate_case(
        prep.case,
        prep.points,
        s.dtypes,
        s.methods,
        s.modes,
        (lambda i, n: progress("evaluate", i, n)) if progress else None,
        s.max_order,
    )
    meta = prep.provenance(
        "evaluate",
        tensorflow=tensorflow_facts(),
        platform={"flush": probe_flush(s.dtypes, s.modes)},
        evaluation=dataclasses.asdict(stats),
    )
    write_table(table, case_dir(results, prep.case) / "evaluations.parquet", meta)
    return table, meta


#: What the reference and evaluations must share with the comparison that joins them.
#: (Not the whole configuration: the workflow gives each stage only the settings it
#: depends on, so a tolerance change reruns comparisons without new evaluations.)
_MUST_AGREE = ("case", "case_hash", "selection")
#: The part of the selection a reference depends on (not methods or modes).
_REFERENCE_SELECTION = ("dtypes", "partials", "max_points", "parameters")


def compare_stage(
    prep: Prepared,
    results: str | Path,
    reference: tuple[pd.DataFrame, dict] | None = None,
    evaluations: tuple[pd.DataFrame, dict] | None = None,
) -> pd.DataFrame:
    from .compare import compare

    where = case_dir(results, prep.case)
    if reference is None:
        path = where / "reference.parquet"
        reference = (read_table(path), read_metadata(path))
    if evaluations is None:
        path = where / "evaluations.parquet"
        evaluations = (read_table(path), read_metadata(path))
    s = prep.settings
    reference_settings = {
        "precision": s.precision,
        "verify_digits": s.verify_digits,
        "max_precision": s.max_precision,
    }
    mine = prep.provenance("compare", reference=reference_settings)
    checks = [
        ("reference", reference, (*_MUST_AGREE, "reference"), _REFERENCE_SELECTION),
        ("evaluations", evaluations, _MUST_AGREE, None),
    ]
    for name, (_, meta), keys, selection_keys in checks:
        for key in keys:
            theirs, ours = meta.get(key), mine.get(key)
            if key == "selection" and selection_keys:
                theirs = {k: (theirs or {}).get(k) for k in selection_keys}
                ours = {k: ours.get(k) for k in selection_keys}
            if json.dumps(theirs, sort_keys=True) != json.dumps(ours, sort_keys=True):
                raise ValueError(
                    f"{where / (name + '.parquet')} was made with a different {key} "
                    f"({theirs!r}, now {ours!r}); rerun its stage"
                )
    if prep.is_experiment:
        from .experiments import compare_experiment

        errors = compare_experiment(
            prep.case, evaluations[0], reference[0], prep.settings.tolerance
        )
    else:
        flush = (evaluations[1].get("platform") or {}).get("flush")
        errors = compare(prep.case, evaluations[0], reference[0], prep.settings.tolerance, flush)
    meta = {
        **mine,
        "inputs": {"reference": reference[1], "evaluations": evaluations[1]},
        "tensorflow": evaluations[1].get("tensorflow"),
    }
    write_table(errors, where / "errors.parquet", meta)
    from .collect import write_case_summary

    write_case_summary(errors, where / "errors.parquet", prep.case.input_names, meta)
    return errors


def run_case(
    case_path: str | Path,
    config: StudyConfig | None = None,
    selection: Selection = Selection(),
    results: str | Path = "results",
    cache: bool = True,
    progress: Progress | None = None,
) -> pd.DataFrame:
    """All three stages of one case in this process; returns the errors table."""
    return run_stages(prepare(case_path, config, selection), results, cache, progress)


def run_stages(
    prep: Prepared,
    results: str | Path = "results",
    cache: bool = True,
    progress: Progress | None = None,
) -> pd.DataFrame:
    """Reference, evaluation and comparison of a prepared case; returns the errors table."""
    reference = reference_stage(prep, results, cache, progress)
    evaluations = evaluate_stage(prep, results, progress)
    return compare_stage(prep, results, reference, evaluations)
