"""Where a case's stage files live, and reading one stage's table as the next stage's
input, checked to belong to the same case and selection (``prep``: a prepared case,
:class:`harness.pipeline.Prepared`)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from harness.cases.model import Case
from harness.results import read_metadata, read_table

__all__ = ["backend_dir", "case_dir", "check_input", "read_stage_input", "with_backend"]


def case_dir(results: str | Path, case: Case) -> Path:
    return Path(results) / case.id


def backend_dir(results: str | Path, case: Case, backend: str) -> Path:
    """Where one back end's evaluations and edges of the case go."""
    return Path(results) / case.id / backend


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
