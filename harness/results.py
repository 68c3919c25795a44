"""Result tables on disk: Parquet (and CSV) written atomically, with provenance inside.

Every table carries its provenance as Parquet schema metadata under the key
``harness`` (a JSON object), so a file is never separated from where it came from.
Writes go to a temporary file in the same folder, then ``os.replace`` it over the
target: an interrupted run leaves either the old file or the new one, never half of one.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

__all__ = [
    "ResultsError",
    "atomic_write_text",
    "read_metadata",
    "read_table",
    "text_as_objects",
    "write_csv",
    "write_csv_of",
    "write_table",
    "write_tables",
]

_KEY = b"harness"
_UMASK = os.umask(0)
os.umask(_UMASK)


class ResultsError(Exception):
    """A results file that cannot be read or written: the message is one line naming the
    file and why (the command line prints it, no traceback)."""


def _reason(exc: BaseException) -> str:
    """The first line of what went wrong (an OSError's own words where it has them)."""
    strerror = getattr(exc, "strerror", None)
    if strerror:
        return strerror
    lines = str(exc).strip().splitlines()
    return lines[0] if lines else type(exc).__name__


def _atomic(path: Path, write) -> None:
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        raise ResultsError(f"cannot write {path}: {_reason(exc)}") from None
    os.close(fd)
    try:
        write(tmp)
        os.chmod(tmp, 0o666 & ~_UMASK)  # mkstemp makes 0600; results are for reading
        os.replace(tmp, path)
    except OSError as exc:
        # A full disk, a quota: the old file (if any) stays whole, the new one goes.
        Path(tmp).unlink(missing_ok=True)
        raise ResultsError(f"cannot write {path}: {_reason(exc)}") from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_table(frame: pd.DataFrame, path: str | Path, metadata: dict[str, Any]) -> None:
    """Write ``frame`` to Parquet at ``path`` atomically, with ``metadata`` embedded."""
    table = pa.Table.from_pandas(frame, preserve_index=False)
    existing = table.schema.metadata or {}
    blob = json.dumps(metadata, sort_keys=True, default=str).encode()
    table = table.replace_schema_metadata({**existing, _KEY: blob})
    _atomic(Path(path), lambda tmp: pq.write_table(table, tmp))


def write_tables(
    frames: Iterable[pd.DataFrame],
    path: str | Path,
    metadata: dict[str, Any],
    schema: pa.Schema | None = None,
) -> int:
    """Write ``frames``, one after another, as one Parquet table at ``path`` (``schema``'s
    columns, in its order, and types, by default the first frame's; each frame is
    written when it comes, so a table larger than memory never is whole in it),
    atomically, with ``metadata`` embedded. Returns the rows written; raises
    ``ValueError`` when there is no frame."""
    blob = json.dumps(metadata, sort_keys=True, default=str).encode()
    rows = 0
    given = schema

    def write(tmp: str) -> None:
        nonlocal rows
        writer, schema = None, given
        try:
            for frame in frames:
                if given is not None:  # its columns in the schema's order (one it lacks: null)
                    frame = frame.reindex(columns=given.names)
                table = pa.Table.from_pandas(frame, preserve_index=False)
                if writer is None:
                    first = schema or table.schema
                    schema = first.with_metadata({**(first.metadata or {}), _KEY: blob})
                    writer = pq.ParquetWriter(tmp, schema)
                writer.write_table(table.cast(schema))
                rows += len(frame)
        finally:
            if writer is not None:
                writer.close()
        if writer is None:
            raise ValueError(f"{path}: no table to write")

    _atomic(Path(path), write)
    return rows


def write_csv(frame: pd.DataFrame, path: str | Path, metadata: dict[str, Any]) -> Path:
    """A plain CSV for people and spreadsheets (``pandas.read_csv`` reads it as is), with
    its provenance in a JSON sidecar beside it (``NAME.provenance.json``); returns the
    sidecar's path. Both written atomically."""

    def write(fh) -> None:
        frame.to_csv(fh, index=False)

    return _csv(Path(path), write, metadata)


def write_csv_of(
    parquet: str | Path, path: str | Path, metadata: dict[str, Any], leave_out=()
) -> Path:
    """:func:`write_csv` of the Parquet table at ``parquet``, its columns ``leave_out``
    aside, read a row group at a time (a table :func:`write_tables` wrote is never whole
    in memory)."""
    source = pq.ParquetFile(parquet)
    columns = [c for c in source.schema_arrow.names if c not in leave_out]

    def write(fh) -> None:
        if not source.num_row_groups:
            source.schema_arrow.empty_table().select(columns).to_pandas().to_csv(fh, index=False)
        for i in range(source.num_row_groups):
            part = source.read_row_group(i, columns=columns).to_pandas()
            part.to_csv(fh, index=False, header=i == 0)

    return _csv(Path(path), write, metadata)


def _csv(path: Path, write, metadata: dict[str, Any]) -> Path:
    def written(tmp: str) -> None:
        with open(tmp, "w", encoding="utf-8", newline="") as fh:
            write(fh)

    _atomic(path, written)
    sidecar = path.with_name(path.stem + ".provenance.json")
    atomic_write_text(sidecar, json.dumps(metadata, indent=1, sort_keys=True, default=str) + "\n")
    return sidecar


def atomic_write_text(path: str | Path, text: str) -> None:
    def write(tmp: str) -> None:
        Path(tmp).write_text(text, encoding="utf-8")

    _atomic(Path(path), write)


def read_table(path: str | Path, columns=None, filters=None, leave_out=()) -> pd.DataFrame:
    """A table the harness wrote (raises :class:`ResultsError` for a missing, corrupted or
    foreign file: one without the harness's provenance); ``columns`` and ``filters`` as
    :func:`pyarrow.parquet.read_table` takes them (only those columns and rows), and
    without the columns ``leave_out``."""
    path = Path(path)
    try:
        if leave_out:
            names = columns if columns is not None else pq.read_schema(path).names
            columns = [c for c in names if c not in leave_out]
        table = pq.read_table(path, columns=columns, filters=filters)
    except FileNotFoundError:
        raise ResultsError(f"{path} does not exist") from None
    except (pa.ArrowException, OSError) as exc:
        raise ResultsError(_unreadable(path, exc)) from None
    if _KEY not in (table.schema.metadata or {}):
        raise ResultsError(f"{path} was not written by the harness (it has no provenance)")
    return table.to_pandas()


def text_as_objects(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with its text columns as Python objects, for reading row by row
    (``itertuples``, ``to_dict("records")``): a value read from an Arrow-backed string
    column costs a call of its own (15 of 17 s of 86,610 findings' records)."""
    text = [c for c, t in frame.dtypes.items() if isinstance(t, pd.StringDtype)]
    return frame.astype(dict.fromkeys(text, object)) if text else frame


def read_metadata(path: str | Path) -> dict[str, Any]:
    """The provenance embedded by :func:`write_table` (``{}`` if none; raises
    :class:`ResultsError` for a missing or unreadable file)."""
    path = Path(path)
    try:
        meta = pq.read_schema(path).metadata or {}
    except FileNotFoundError:
        raise ResultsError(f"{path} does not exist") from None
    except (pa.ArrowException, OSError) as exc:
        raise ResultsError(_unreadable(path, exc)) from None
    return json.loads(meta[_KEY]) if _KEY in meta else {}


def _unreadable(path: Path, exc: BaseException) -> str:
    """A damaged file (truncated by a full disk, a copy cut short): what it is and how to
    recover, since every later run that reads it would stop at it again."""
    return (
        f"{path} is not a readable Parquet table ({_reason(exc)}); delete it and run again "
        "(Snakemake, or the harness stage that writes it, makes it anew)"
    )
