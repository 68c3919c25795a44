"""The stages of one case, each reading and writing ``results/<case>/``.

``reference`` (mpmath, no framework) -> ``reference.parquet``;
``evaluate`` (one back end: TensorFlow, JAX or PyTorch) -> ``<backend>/evaluations.parquet``
and ``<backend>/edges.parquet``;
``compare`` (the reference and every back end's evaluations) -> ``errors.parquet``, with a
``backend`` column. :func:`run_case` runs them all in one process. Every table carries provenance (see
:mod:`harness.provenance`); compare refuses inputs whose case or settings differ.
Nothing is written for a case that fails validation: the case is loaded (and raises)
before any stage touches the disk.
"""

from __future__ import annotations

import dataclasses
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
from harness.results import read_table, write_table
from harness.stage_inputs import (
    backend_dir,
    case_dir,
    check_input,
    read_stage_input,
    with_backend,
)

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
    backends: Sequence[str] | None = None


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
    def backends(self) -> tuple[str, ...]:
        """The study's back ends for this case that are installed here."""
        from harness.backends.catalogue import installed

        # An experiment runs in the frameworks its code is written in (harness.experiments).
        allowed = self.case.spec.backends if self.is_experiment else self.settings.backends
        return tuple(b for b in self.settings.backends if b in allowed and installed(b))

    def offered(self, backend: str) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
        """The case's methods, modes and dtypes that ``backend`` offers (modes in the
        order it runs them)."""
        from harness.backends.catalogue import get

        spec, s = get(backend), self.settings
        return (
            tuple(m for m in s.methods if m in spec.methods),
            tuple(m for m in spec.modes if m in s.modes),
            tuple(d for d in s.dtypes if d in spec.dtypes),
        )

    @property
    def is_experiment(self) -> bool:
        return isinstance(self.case, ExperimentCase)

    def selection_record(self) -> dict:
        s = self.settings
        extra = {"parameters": self.case.params(s.setting)} if self.is_experiment else {}
        return {
            **extra,
            "backends": list(self.backends),
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
        settings = settings_for(
            case,
            config,
            selection.dtypes,
            selection.methods,
            selection.modes,
            backends=selection.backends,
        )
        return Prepared(case, config, settings, {})
    if selection.orders is not None:
        keep = set(selection.orders)
        case = dataclasses.replace(case, partials=tuple(p for p in case.partials if len(p) in keep))
    settings = settings_for(
        case,
        config,
        selection.dtypes,
        selection.methods,
        selection.modes,
        selection.max_points,
        selection.backends,
    )
    # No reference for orders no selected method computes (the quick setting's caps).
    top = settings.highest_order
    case = dataclasses.replace(case, partials=tuple(p for p in case.partials if len(p) <= top))
    base = generate(case, settings.max_points)
    points = {d: represent(base, case.input_names, d) for d in settings.dtypes}
    return Prepared(case, config, settings, points)


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
    backend: str = "tensorflow",
) -> tuple[pd.DataFrame, dict]:
    """Evaluate the case in one back end and find the exact edges of every run of one
    outcome (:mod:`harness.edges.bisection`), which needs the case's reference (read from
    ``results`` unless given): writes ``<backend>/evaluations.parquet`` and
    ``<backend>/edges.parquet``."""
    from harness.backends.catalogue import load

    engine = load(backend)
    engine.start()  # the framework starts here (a no-op where the command set its threads)

    methods, modes, dtypes = prep.offered(backend)
    s = prep.settings
    where = backend_dir(results, prep.case, backend)
    flags = engine.probe_flush(dtypes, modes)
    if prep.is_experiment:
        from harness.experiments.stages import evaluate_experiment

        t0 = time.perf_counter()
        params = prep.case.params(s.setting)
        table, timing = evaluate_experiment(prep.case, params, dtypes, modes, backend)
        table = table[table["method"].isin(s.methods)].reset_index(drop=True)
        stats = {"seconds": round(time.perf_counter() - t0, 3), "traces": 0, **timing}
        meta = prep.provenance(
            "evaluate",
            backend=backend,
            framework=engine.facts(),
            platform={"flush": flags},
            evaluation=stats,
        )
        write_table(with_backend(table, backend), where / "evaluations.parquet", meta)
        write_table(_empty_edges(), where / "edges.parquet", meta)
        return table, meta
    edges = None
    if bisect:
        from harness.edges.finder import EdgeFinder
        from harness.reference.table import ReferenceStore
        from harness.reference.verify import ReferenceSettings

        reference = reference or read_stage_input(prep, results, "reference")
        ref_settings = ReferenceSettings(s.precision, s.verify_digits, s.max_precision)
        cache_dir = Path(results) / ".cache" / "reference" if cache else None
        store = ReferenceStore(prep.case, ref_settings, cache_dir)
        edges = EdgeFinder(
            prep.case, prep.points, reference[0], store, s.tolerance, flags, prep.segments
        )
    table, stats = engine.evaluate_case(
        prep.case,
        prep.points,
        dtypes,
        methods,
        modes,
        (lambda i, n: progress(f"evaluate {backend}", i, n)) if progress else None,
        s.max_order,
        edges,
    )
    meta = prep.provenance(
        "evaluate",
        backend=backend,
        framework=engine.facts(),
        platform={"flush": flags},
        evaluation={**dataclasses.asdict(stats), "bisection": edges.stats if edges else None},
    )
    table = with_backend(table, backend)
    write_table(table, where / "evaluations.parquet", meta)
    if edges is not None:
        edges.store.save()
    found = edges.table() if edges else _empty_edges()
    write_table(with_backend(found, backend), where / "edges.parquet", meta)
    return table, meta


def _empty_edges() -> pd.DataFrame:
    from harness.edges.bisection import EDGE_COLUMNS

    return pd.DataFrame(columns=list(EDGE_COLUMNS))


def compare_stage(
    prep: Prepared,
    results: str | Path,
    reference: tuple[pd.DataFrame, dict] | None = None,
    evaluations: dict[str, tuple[pd.DataFrame, dict]] | None = None,
) -> pd.DataFrame:
    """Judge every back end's evaluations against the reference: ``errors.parquet`` (one
    table, a ``backend`` column), the case's findings and summary rows."""
    from harness.judge.compare import compare

    where = case_dir(results, prep.case)
    if reference is None:
        reference = read_stage_input(prep, results, "reference")
    else:
        check_input(prep, "reference", reference[1], where / "reference.parquet")
    evaluations = dict(evaluations or {})
    for backend in prep.backends:
        if backend not in evaluations:
            evaluations[backend] = read_stage_input(prep, results, "evaluations", backend)
        else:
            path = backend_dir(results, prep.case, backend) / "evaluations.parquet"
            check_input(prep, "evaluations", evaluations[backend][1], path)
    if not prep.backends:
        raise ValueError(f"{prep.case.id}: none of the study's back ends is installed here")
    s = prep.settings
    mine = prep.provenance(
        "compare",
        reference={
            "precision": s.precision,
            "verify_digits": s.verify_digits,
            "max_precision": s.max_precision,
        },
    )
    parts = []
    for backend in prep.backends:
        table, emeta = evaluations[backend]
        if table.empty:  # the back end offers none of the case's modes or methods
            continue
        if prep.is_experiment:
            from harness.experiments.stages import compare_experiment

            part = compare_experiment(prep.case, table, reference[0], prep.settings.tolerance)
        else:
            flush = (emeta.get("platform") or {}).get("flush")
            part = compare(prep.case, table, reference[0], prep.settings.tolerance, flush)
        parts.append(with_backend(part.drop(columns=["case"], errors="ignore"), backend))
    errors = pd.concat(parts, ignore_index=True)
    errors.insert(0, "case", prep.case.id)
    meta = {
        **mine,
        "inputs": {
            "reference": reference[1],
            "evaluations": {b: evaluations[b][1] for b in prep.backends},
        },
        "frameworks": {b: evaluations[b][1].get("framework") for b in prep.backends},
        # The platform's subnormal flush as each back end probed it.
        "flush": {b: (evaluations[b][1].get("platform") or {}).get("flush") for b in prep.backends},
    }
    write_table(errors, where / "errors.parquet", meta)
    from harness.judge.collect import file_digest, write_case_summary
    from harness.judge.findings import find

    edges = []
    for backend in prep.backends:
        path = backend_dir(results, prep.case, backend) / "edges.parquet"
        if path.exists():
            edges.append(read_table(path))
    edges = pd.concat(edges, ignore_index=True) if edges else None
    names = list(prep.case.input_names)
    findings = find(errors, edges, names, prep.segments, prep.case)
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
    evaluations = {
        b: evaluate_stage(prep, results, progress, reference, bisect, cache, b)
        for b in prep.backends
    }
    return compare_stage(prep, results, reference, evaluations)
