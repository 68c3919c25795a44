"""What differs between two result sets: rows whose outcome changed, stable domains that
moved, findings that appeared or went away.

The two sets are two ``results/`` folders (one back end at two versions: TensorFlow 2.20
against 2.21), or one folder's two back ends (``backend_a``/``backend_b``: JAX against
PyTorch). Rows are matched on what identifies a value (case, back end, implementation,
method, mode, dtype, partial and the point's inputs); with two back ends named, the back
end is left out of the match. This is how a framework engineer checks a release for
derivative regressions: ``harness diff OLD NEW``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from harness.judge.compare import input_columns
from harness.results import read_metadata, read_table

__all__ = ["ResultsDiff", "diff_results"]

_ROW_KEY = ["case", "backend", "implementation", "method", "mode", "dtype", "partial"]
_DOMAIN_KEY = ["case", "backend", "implementation", "method", "mode", "dtype", "partial"]
_FINDING_KEY = ["case", "backend", "implementation", "partial", "dtype", "outcome", "lo", "hi"]
#: The provenance facts compared (harness.provenance.collect), besides package versions.
_MACHINE = ("python", "platform", "cpu", "cpu_features")


@dataclass(frozen=True)
class ResultsDiff:
    rows: pd.DataFrame  # one row per value whose outcome differs (or is on one side only)
    domains: pd.DataFrame  # combinations whose stable domain differs
    findings: pd.DataFrame  # findings on one side only (``side``: "a" or "b")
    compared: dict  # counts: cases, rows matched, values that changed with the outcome kept
    # What produced each set, where the two differ: {fact: (in a, in b)} (package
    # versions, Python, platform, CPU); a difference here is not a difference in results.
    setting: dict = field(default_factory=dict)

    @property
    def empty(self) -> bool:
        return self.rows.empty and self.domains.empty and self.findings.empty


def _errors(folder: Path, backend: str | None) -> pd.DataFrame:
    parts = []
    for path in sorted(folder.glob("*/errors.parquet")):
        table = read_table(path)
        if backend is not None:
            table = table[table["backend"] == backend]
        # The point by its inputs (the same sweep in both sets), as text: exact floats.
        where = pd.Series("", index=table.index)
        for i, name in enumerate(input_columns(table)):
            text = name + "=" + table[name].astype(float).map(repr)
            where = text if i == 0 else where + ", " + text
        keep = table[[*_ROW_KEY, "outcome", "value"]].copy()
        keep["outcome"] = keep["outcome"].astype(str)
        keep["at"] = where.to_numpy()
        parts.append(keep)
    if not parts:
        return pd.DataFrame(columns=[*_ROW_KEY, "outcome", "value", "at"])
    return pd.concat(parts, ignore_index=True)


def _table(folder: Path, name: str, backend: str | None) -> pd.DataFrame:
    path = folder / f"{name}.parquet"
    if not path.exists():
        return pd.DataFrame()
    table = read_table(path)
    if backend is not None and "backend" in table:
        table = table[table["backend"] == backend]
    return table


def diff_results(
    a: str | Path, b: str | Path, backend_a: str | None = None, backend_b: str | None = None
) -> ResultsDiff:
    """The differences from result set ``a`` to ``b`` (each a ``results/`` folder with
    ``<case>/errors.parquet``, ``summary.parquet`` and ``findings.parquet``)."""
    a, b = Path(a), Path(b)
    two_backends = backend_a is not None or backend_b is not None
    key = [k for k in _ROW_KEY if not (two_backends and k == "backend")]
    left, right = _errors(a, backend_a), _errors(b, backend_b)
    if two_backends:
        left, right = left.drop(columns="backend"), right.drop(columns="backend")
    merged = left.merge(right, on=[*key, "at"], how="outer", suffixes=("_a", "_b"))
    for side in ("a", "b"):
        merged[f"outcome_{side}"] = merged[f"outcome_{side}"].fillna("(absent)")
    changed = merged["outcome_a"] != merged["outcome_b"]
    same_outcome = merged[~changed]
    moved = (same_outcome["value_a"] != same_outcome["value_b"]) & ~(
        same_outcome["value_a"].isna() & same_outcome["value_b"].isna()
    )
    rows = merged[changed][[*key, "at", "outcome_a", "outcome_b", "value_a", "value_b"]]
    rows = rows.sort_values([*key, "at"], kind="stable").reset_index(drop=True)

    dkey = [k for k in _DOMAIN_KEY if not (two_backends and k == "backend")]
    sa, sb = _table(a, "summary", backend_a), _table(b, "summary", backend_b)
    domains = pd.DataFrame(columns=[*dkey, "stable_domain_a", "stable_domain_b"])
    if not sa.empty or not sb.empty:
        cols = [*dkey, "stable_domain"]
        da = sa[cols] if not sa.empty else pd.DataFrame(columns=cols)
        db = sb[cols] if not sb.empty else pd.DataFrame(columns=cols)
        dm = da.merge(db, on=dkey, how="outer", suffixes=("_a", "_b"))
        dm = dm.fillna({"stable_domain_a": "(absent)", "stable_domain_b": "(absent)"})
        domains = dm[dm["stable_domain_a"] != dm["stable_domain_b"]].reset_index(drop=True)

    fkey = [k for k in _FINDING_KEY if not (two_backends and k == "backend")]
    fa, fb = _table(a, "findings", backend_a), _table(b, "findings", backend_b)
    findings = pd.DataFrame(columns=["side", *fkey, "text"])
    if not fa.empty or not fb.empty:
        cols = [*fkey, "text"]
        fa = fa[cols] if not fa.empty else pd.DataFrame(columns=cols)
        fb = fb[cols] if not fb.empty else pd.DataFrame(columns=cols)
        fm = fa.merge(fb[fkey], on=fkey, how="left", indicator=True)
        only_a = fm[fm["_merge"] == "left_only"].drop(columns="_merge").assign(side="a")
        fm = fb.merge(fa[fkey], on=fkey, how="left", indicator=True)
        only_b = fm[fm["_merge"] == "left_only"].drop(columns="_merge").assign(side="b")
        findings = pd.concat([only_a, only_b], ignore_index=True)[["side", *fkey, "text"]]
    compared = {
        "cases": int(pd.concat([left["case"], right["case"]]).nunique()),
        "rows_a": len(left),
        "rows_b": len(right),
        "outcome_changed": int(changed.sum()),
        "value_changed_same_outcome": int(moved.sum()),
    }
    pa, pb = _provenance(a), _provenance(b)
    setting = {
        k: (pa.get(k, "(absent)"), pb.get(k, "(absent)"))
        for k in sorted(set(pa) | set(pb))
        if pa.get(k) != pb.get(k)
    }
    return ResultsDiff(rows, domains, findings, compared, setting)


def _provenance(folder: Path) -> dict[str, str]:
    """What produced a result set, as the first case's errors table records it: the
    machine's facts and every package's version ("package tensorflow-cpu")."""
    first = next(iter(sorted(folder.glob("*/errors.parquet"))), None)
    if first is None:
        return {}
    meta = read_metadata(first)
    facts = {k: str(meta[k]) for k in _MACHINE if meta.get(k) is not None}
    facts |= {f"package {k}": str(v) for k, v in (meta.get("packages") or {}).items()}
    return facts
