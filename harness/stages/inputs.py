"""Where a case's stage files live, and reading one stage's table as the next stage's
input, checked to belong to the same case and selection (``prep``: a prepared case,
:class:`harness.stages.prepared.Prepared`)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pandas as pd

from harness.cases.model import Case
from harness.results import read_metadata, read_table

__all__ = [
    "Progress",
    "backend_dir",
    "case_dir",
    "check_input",
    "evaluation_provenance",
    "merge_pieces",
    "piece_dir",
    "read_edges",
    "read_localised",
    "read_evaluations",
    "read_stage_input",
    "with_backend",
]


#: A stage's progress callback: (what, done, total).
Progress = Callable[[str, int, int], None]


def case_dir(results: str | Path, case: Case) -> Path:
    return Path(results) / case.id


def backend_dir(results: str | Path, case: Case, backend: str) -> Path:
    """Where one back end's evaluations and edges of the case go."""
    return Path(results) / case.id / backend


def piece_dir(results: str | Path, case: Case, backend: str, piece: str) -> Path:
    """Where one piece of a back end's evaluation goes (:mod:`harness.stages.pieces`)."""
    return backend_dir(results, case, backend) / piece


def _piece_files(prep, results, backend: str, name: str) -> list[Path]:
    """The piece files ``name`` of ``backend``'s evaluation, as the plan has them (raises
    ``ValueError`` naming the first missing one and the command that makes it)."""
    paths = []
    for piece in prep.pieces(backend):
        path = piece_dir(results, prep.case, backend, piece.name) / f"{name}.parquet"
        if not path.exists():
            raise ValueError(
                f"{path} does not exist; run `harness evaluate {prep.case.path} --backends "
                f"{backend} --piece {piece.name}` (or the study) first"
            )
        paths.append(path)
    return paths


def _checked_pieces(prep, results: str | Path, backend: str):
    """``(piece, path, provenance)`` of each piece of ``backend``'s evaluation, its
    provenance checked to belong to this case and selection."""
    for piece, path in zip(
        prep.pieces(backend), _piece_files(prep, results, backend, "evaluations")
    ):
        meta = read_metadata(path)
        check_input(prep.narrowed(piece), "evaluations", meta, path)
        yield piece, path, meta


def read_evaluations(
    prep, results: str | Path, backend: str, dtype: str | None = None
) -> tuple[pd.DataFrame, dict]:
    """Every piece of ``backend``'s evaluations of the case, checked to belong to this
    case and selection, merged (:func:`merge_pieces`); with ``dtype``, only its rows (the
    provenance is still every piece's; no piece with the dtype: an empty table)."""
    pairs = []
    for piece, path, meta in _checked_pieces(prep, results, backend):
        table = None
        if dtype is None or piece.dtypes == (dtype,):
            table = read_table(path)
        elif dtype in piece.dtypes:
            table = read_table(path, filters=[("dtype", "==", dtype)])
        pairs.append((table, meta))
    return merge_pieces(pairs)


def _read_pieces(prep, results: str | Path, backend: str, name: str) -> pd.DataFrame:
    tables = [read_table(p) for p in _piece_files(prep, results, backend, name)]
    return pd.concat(tables, ignore_index=True) if len(tables) > 1 else tables[0]


def read_edges(prep, results: str | Path, backend: str) -> pd.DataFrame:
    """The exact edges every piece of ``backend``'s evaluation found."""
    return _read_pieces(prep, results, backend, "edges")


def read_localised(prep, results: str | Path, backend: str) -> pd.DataFrame:
    """Every piece of ``backend``'s localisation of failing values
    (:mod:`harness.causes.localise`)."""
    return _read_pieces(prep, results, backend, "localised")


def evaluation_provenance(prep, results: str | Path, backend: str) -> dict:
    """The provenance of ``backend``'s evaluation as :func:`read_evaluations` gives it,
    without reading its rows."""
    return merge_pieces([(None, meta) for _, _, meta in _checked_pieces(prep, results, backend)])[1]


def merge_pieces(pairs: list[tuple[pd.DataFrame | None, dict]]) -> tuple[pd.DataFrame, dict]:
    """One back end's pieces as one evaluation: the rows in the pieces' order (a piece
    whose table is ``None`` gives its provenance only; none with rows: an empty table);
    the provenance of the first, with every piece's statistics (``evaluation``, by
    piece) and the subnormal flush each probed (``platform.flush``, by dtype)."""
    tables = [t for t, _ in pairs if t is not None]
    table = (
        pd.concat(tables, ignore_index=True)
        if len(tables) > 1
        else next(iter(tables), pd.DataFrame())
    )
    meta = dict(pairs[0][1])
    meta.pop("piece", None)
    meta["pieces"] = [m.get("piece") for _, m in pairs]
    stats = {m.get("piece"): m["evaluation"] for _, m in pairs if "evaluation" in m}
    if stats:  # evaluated in this process (the files keep them in their timings tables)
        meta["evaluation"] = stats
    flush: dict = {}
    for _, m in pairs:
        flush.update((m.get("platform") or {}).get("flush") or {})
    meta["platform"] = {**(meta.get("platform") or {}), "flush": flush}
    return table, meta


def with_backend(table: pd.DataFrame, backend: str) -> pd.DataFrame:
    """``table`` with the ``backend`` column first."""
    table = table.drop(columns=["backend"], errors="ignore")
    table.insert(0, "backend", backend)
    return table


def read_stage_input(
    prep, results: str | Path, name: str, backend: str | None = None
) -> tuple[pd.DataFrame, dict]:
    """A stage's input table and provenance, checked to belong to this case and selection
    (raises ``ValueError`` naming the file and what differs, or that it is missing)."""
    folder = (
        case_dir(results, prep.case)
        if backend is None
        else backend_dir(results, prep.case, backend)
    )
    path = folder / f"{name}.parquet"
    if not path.exists():
        command = f"harness {name}" + (f" --backend {backend}" if backend else "")
        raise ValueError(f"{path} does not exist; run `{command}` (or the study) first")
    pair = (read_table(path), read_metadata(path))
    check_input(prep, name, pair[1], path)
    return pair


def check_input(prep, name: str, meta: dict, path: Path) -> None:
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
            # One piece of an evaluation needs some of the reference's dtypes and partials.
            for k in _REFERENCE_COVERS:
                if set(ours[k] or ()) <= set(theirs[k] or ()):
                    theirs[k] = ours[k]
        elif key == "reference":
            # The study's precision settings; the rest (the cross-check's sampling) is
            # the code's, not the study's.
            theirs = {k: (theirs or {}).get(k) for k in ours}
        elif key == "selection":
            # An evaluation is one back end's, whichever others the study runs.
            theirs = {k: v for k, v in (theirs or {}).items() if k != "backends"}
            ours = {k: v for k, v in ours.items() if k != "backends"}
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
#: Of those, what a reference may hold more of than the stage reading it needs.
_REFERENCE_COVERS = ("dtypes", "partials")
