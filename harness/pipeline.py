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

from harness import provenance
from harness.cases.experiment_kinds import ExperimentCase
from harness.cases.load import load_case
from harness.cases.model import Case
from harness.cases.points import generate, represent, segments
from harness.config import Settings, StudyConfig, load_config, settings_for
from harness.results import read_metadata, read_table, write_table

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
        """The intervals each input was sampled from (:func:`harness.cases.points.segments`)."""
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
    """Load and validate the case (raises :class:`harness.cases.model.CaseError`), narrow it,
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
    from harness.reference.table import compute_reference
    from harness.reference.verify import ReferenceSettings

    s = prep.settings
    ref_settings = ReferenceSettings(s.precision, s.verify_digits, s.max_precision)
    if prep.is_experiment:
        from harness.experiments.stages import reference_experiment

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
    prep: Prepared,
    results: str | Path,
    progress: Progress | None = None,
    reference: tuple[pd.DataFrame, dict] | None = None,
    bisect: bool = True,
    cache: bool = True,
) -> tuple[pd.DataFrame, dict]:
    """Evaluate the case in TensorFlow and find the exact edges of every run of one
    outcome (:mod:`harness.edges.bisection`), which needs the case's reference (read from
    ``results`` unless given): writes ``evaluations.parquet`` and ``edges.parquet``."""
    from harness.backends.tensorflow.evaluate import evaluate_case, probe_flush, tensorflow_facts
    from harness.backends.tensorflow.tfimport import start

    start()  # TensorFlow starts here (quietly; a no-op where the command set its threads)

    s = prep.settings
    where = case_dir(results, prep.case)
    flags = probe_flush(s.dtypes, s.modes)
    if prep.is_experiment:
        from harness.experiments.stages import evaluate_experiment

        t0 = time.perf_counter()
        table, timing = evaluate_experiment(
            prep.case, prep.case.params(s.setting), s.dtypes, s.modes
        )
        table = table[table["method"].isin(s.methods)].reset_index(drop=True)
        stats = {"seconds": round(time.perf_counter() - t0, 3), "traces": 0, **timing}
        meta = prep.provenance(
            "evaluate", tensorflow=tensorflow_facts(), platform={"flush": flags}, evaluation=stats
        )
        write_table(table, where / "evaluations.parquet", meta)
        write_table(_empty_edges(), where / "edges.parquet", meta)
        return table, meta
    edges = None
    if bisect:
        from harness.edges.finder import EdgeFinder
        from harness.reference.table import ReferenceStore
        from harness.reference.verify import ReferenceSettings

        reference = reference or _read_stage_input(prep, results, "reference")
        ref_settings = ReferenceSettings(s.precision, s.verify_digits, s.max_precision)
        cache_dir = Path(results) / ".cache" / "reference" if cache else None
        store = ReferenceStore(prep.case, ref_settings, cache_dir)
        edges = EdgeFinder(
            prep.case, prep.points, reference[0], store, s.tolerance, flags, prep.segments
        )
    table, stats = evaluate_case(
        prep.case,
        prep.points,
        s.dtypes,
        s.methods,
        s.modes,
        (lambda i, n: progress("evaluate", i, n)) if progress else None,
        s.max_order,
        edges,
    )
    meta = prep.provenance(
        "evaluate",
        tensorflow=tensorflow_facts(),
        platform={"flush": flags},
        evaluation={**dataclasses.asdict(stats), "bisection": edges.stats if edges else None},
    )
    write_table(table, where / "evaluations.parquet", meta)
    if edges is not None:
        edges.store.save()
    write_table(edges.table() if edges else _empty_edges(), where / "edges.parquet", meta)
    return table, meta


def _empty_edges() -> pd.DataFrame:
    from harness.edges.bisection import EDGE_COLUMNS

    return pd.DataFrame(columns=list(EDGE_COLUMNS))


def _read_stage_input(prep: Prepared, results: str | Path, name: str) -> tuple[pd.DataFrame, dict]:
    """A stage's input table and provenance, checked to belong to this case and selection
    (raises ``ValueError`` naming the file and what differs, or that it is missing)."""
    path = case_dir(results, prep.case) / f"{name}.parquet"
    if not path.exists():
        raise ValueError(f"{path} does not exist; run `harness {name}` (or the study) first")
    pair = (read_table(path), read_metadata(path))
    _check_input(prep, name, pair[1], path)
    return pair


def _check_input(prep: Prepared, name: str, meta: dict, path: Path) -> None:
    s = prep.settings
    mine = prep.provenance(
        "check",
        reference={
            "precision": s.precision,
            "verify_digits": s.verify_digits,
            "max_precision": s.max_precision,
        },
    )
    keys = (*_MUST_AGREE, "reference") if name == "reference" else _MUST_AGREE
    selection_keys = _REFERENCE_SELECTION if name == "reference" else None
    for key in keys:
        theirs, ours = meta.get(key), mine.get(key)
        if key == "selection" and selection_keys:
            theirs = {k: (theirs or {}).get(k) for k in selection_keys}
            ours = {k: ours.get(k) for k in selection_keys}
        if json.dumps(theirs, sort_keys=True) != json.dumps(ours, sort_keys=True):
            raise ValueError(
                f"{path} was made with a different {key} ({theirs!r}, now {ours!r}); "
                "rerun its stage"
            )


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
    from harness.judge.compare import compare

    where = case_dir(results, prep.case)
    if reference is None:
        reference = _read_stage_input(prep, results, "reference")
    else:
        _check_input(prep, "reference", reference[1], where / "reference.parquet")
    if evaluations is None:
        evaluations = _read_stage_input(prep, results, "evaluations")
    else:
        _check_input(prep, "evaluations", evaluations[1], where / "evaluations.parquet")
    s = prep.settings
    mine = prep.provenance(
        "compare",
        reference={
            "precision": s.precision,
            "verify_digits": s.verify_digits,
            "max_precision": s.max_precision,
        },
    )
    if prep.is_experiment:
        from harness.experiments.stages import compare_experiment

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
    from harness.judge.collect import write_case_summary
    from harness.judge.findings import find

    edges_path = where / "edges.parquet"
    edges = read_table(edges_path) if edges_path.exists() else None
    names = list(prep.case.input_names)
    findings = find(errors, edges, names, prep.segments, prep.case)
    from harness.judge.collect import file_digest

    digest = {"errors_sha256": file_digest(where / "errors.parquet")}
    write_table(findings, where / "findings.parquet", {**meta, **digest})
    write_case_summary(errors, where / "errors.parquet", names, meta, edges)
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
    bisect: bool = True,
) -> pd.DataFrame:
    """Reference, evaluation and comparison of a prepared case; returns the errors table."""
    reference = reference_stage(prep, results, cache, progress)
    evaluations = evaluate_stage(prep, results, progress, reference, bisect, cache)
    return compare_stage(prep, results, reference, evaluations)
