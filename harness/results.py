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
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

__all__ = ["atomic_write_text", "read_metadata", "read_table", "write_csv", "write_table"]

_KEY = b"harness"
_UMASK = os.umask(0)
os.umask(_UMASK)


def _atomic(path: Path, write) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    try:
        write(tmp)
        os.chmod(tmp, 0o666 & ~_UMASK)  # mkstemp makes 0600; results are for reading
        os.replace(tmp, path)
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


def write_csv(frame: pd.DataFrame, path: str | Path, metadata: dict[str, Any]) -> None:
    """CSV for people: provenance as leading ``#`` comment lines (``pd.read_csv(comment='#')``)."""
    header = "".join(f"# {k}: {json.dumps(v, default=str)}\n" for k, v in sorted(metadata.items()))

    def write(tmp: str) -> None:
        with open(tmp, "w", encoding="utf-8", newline="") as fh:
            fh.write(header)
            frame.to_csv(fh, index=False)

    _atomic(Path(path), write)


def atomic_write_text(path: str | Path, text: str) -> None:
    def write(tmp: str) -> None:
        Path(tmp).write_text(text, encoding="utf-8")

    _atomic(Path(path), write)


def read_table(path: str | Path) -> pd.DataFrame:
    return pq.read_table(path).to_pandas()


def read_metadata(path: str | Path) -> dict[str, Any]:
    """The provenance embedded by :func:`write_table` (``{}`` if none)."""
    meta = pq.read_schema(path).metadata or {}
    return json.loads(meta[_KEY]) if _KEY in meta else {}
