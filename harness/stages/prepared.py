"""A case prepared for its stages: loaded, validated, narrowed to the study's settings
(and the command line's selection), its points generated as each dtype represents them;
the provenance every stage writes, and the pieces its evaluation is split into."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from harness import provenance
from harness.cases.load import load_case
from harness.cases.model import Case
from harness.cases.points import generate, represent, segments
from harness.config import Settings, StudyConfig, load_config, settings_for
from harness.stages.pieces import ALL, Piece, plan

__all__ = ["Prepared", "Selection", "prepare"]


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
        return segments(self.case) if self.case.sampled else {}

    @property
    def backends(self) -> tuple[str, ...]:
        """The study's back ends for this case that are installed here."""
        from harness.backends.catalogue import installed

        return tuple(b for b in self.case.runs_in(self.settings.backends) if installed(b))

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

    def pieces(self, backend: str) -> list[Piece]:
        """The jobs ``backend``'s evaluation of this case is split into (:mod:`harness.stages.pieces`)."""
        methods, _, dtypes = self.offered(backend)
        return plan(self.settings.split, dtypes, methods, whole=not self.case.sampled)

    def narrowed(self, piece: Piece) -> Prepared:
        """The case as one piece of its evaluation sees it: the piece's dtypes and methods,
        the partials they compute. Its provenance is the piece's own, so a piece made
        under a study with more dtypes or methods still belongs to this one."""
        if piece.name == ALL:
            return self
        s = self.settings
        settings = dataclasses.replace(
            s,
            dtypes=piece.dtypes,
            methods=piece.methods,
            max_order={m: k for m, k in s.max_order.items() if m in piece.methods},
        )
        top = settings.highest_order
        case = dataclasses.replace(
            self.case, partials=tuple(p for p in self.case.partials if len(p) <= top)
        )
        points = {d: self.points[d] for d in piece.dtypes if d in self.points}
        return Prepared(case, self.config, settings, points)

    def selection_record(self) -> dict:
        s = self.settings
        return {
            **self.case.parameters_of(s.setting),
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
    if not case.sampled:
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
        selection.orders,
    )
    # No reference for orders no selected method computes (the quick setting's caps).
    top = settings.highest_order
    case = dataclasses.replace(case, partials=tuple(p for p in case.partials if len(p) <= top))
    base = generate(case, settings.max_points)
    points = {d: represent(base, case.input_names, d) for d in settings.dtypes}
    return Prepared(case, config, settings, points)
