"""The census's atlas as a table: one row per kernel, framework, dtype, order (partial),
method and mode, from each census case's summary and findings (written by the study's
own stages): how many values were judged, the share right, the stable region as exact
floats, the outcomes of the others and the root causes that explain them. A value the
framework refused to compute (an ``error`` whose exception is one of its back end's
refusals: JAX's ``jet`` through a ``custom_jvp`` kernel) is ``unsupported``, not judged:
what a framework does not offer is not a wrong derivative.

Two versions of a framework give two atlases that ``harness diff`` compares, since each
census case's tables are the study's own.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from harness.cases import expressions as ex
from harness.cases.load import load_case
from harness.causes.classify import refused
from harness.causes.study import refusals
from harness.judge.findings_text import exception_text, format_value
from harness.results import read_table

__all__ = ["ATLAS_COLUMNS", "FAILING", "build_atlas", "intersect", "region_text", "verdicts"]

#: The outcomes that are failures (``inaccurate`` included: beyond the tolerance).
FAILING = ("inaccurate", "wrong", "nan", "inf", "zero", "missing", "error")
ATLAS_COLUMNS = (
    "operator", "case", "backend", "dtype", "order", "partial", "method", "mode",
    "points", "judged", "ok", *FAILING, "unsupported", "not_applicable", "ref_unreliable",
    "share_right",
    "median_bits", "max_bits", "worst", "stable_domain", "stable_domain_json", "root_causes",
)  # fmt: skip


def _operator(case_path: Path) -> str:
    """The census case's operator: the function its one implementation calls (``x ** c``
    is the ``pow`` operator), from the case as the study's loader parses it."""
    (impl,) = load_case(case_path).implementations
    node = impl.expression
    return node.func if isinstance(node, ex.Call) else "pow"


def _causes(findings: pd.DataFrame) -> dict[tuple, list[str]]:
    """``(backend, dtype, partial, method, mode) -> root causes`` from a case's findings."""
    out: dict[tuple, set[str]] = {}
    for f in findings.itertuples(index=False):
        for method in str(f.methods).split(", "):
            for mode in str(f.modes).split(", "):
                key = (f.backend, f.dtype, f.partial, method, mode)
                out.setdefault(key, set()).add(str(f.root_cause))
    return {k: sorted(v) for k, v in out.items()}


def region_text(domain: dict[str, list], dtype: str) -> str:
    """A stable region (``{input: [[lo, hi], ...]}``) as exact floats of ``dtype``: each
    end the shortest decimal that reads back as it (``x: [-88.72283, 88.72283]``)."""
    parts = []
    for name, runs in domain.items():
        text = "; ".join(
            f"[{format_value(lo, dtype)}, {format_value(hi, dtype)}]" for lo, hi in runs
        )
        parts.append(f"{name}: {text or 'none'}")
    return " | ".join(parts)


def intersect(domains: list[dict[str, list]]) -> dict[str, list]:
    """Where every one of ``domains`` is stable: per input, the intersection of their
    runs (closed intervals)."""
    out = dict(domains[0]) if domains else {}
    for domain in domains[1:]:
        for name in out:
            a, b, both = out[name], domain.get(name, []), []
            i = j = 0
            while i < len(a) and j < len(b):
                lo, hi = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
                if lo <= hi:
                    both.append([lo, hi])
                if a[i][1] < b[j][1]:
                    i += 1
                else:
                    j += 1
            out[name] = both
    return out


#: What one atlas row is about, beyond its case.
_ROW = ["backend", "dtype", "partial", "method", "mode"]


def _refused(errors_table: Path) -> pd.Series:
    """How many values each row's framework refused to compute (by :data:`_ROW`)."""
    errors = read_table(errors_table, [*_ROW, "message"], [("outcome", "==", "error")])
    mine = pd.Series(
        [refused(exception_text(m), refusals(b)) for b, m in zip(errors.backend, errors.message)],
        index=errors.index,
        dtype=bool,
    )
    return errors[mine].groupby(_ROW).size()


def build_atlas(results: Path, cases: Path) -> pd.DataFrame:
    """The atlas of every census case in ``cases`` with results in ``results`` (a case
    not yet compared is left out: its summary does not exist)."""
    frames = []
    for path in sorted(cases.glob("census_*.yaml")):
        folder = results / path.stem
        if not (folder / "summary.parquet").exists():
            continue
        summary = read_table(folder / "summary.parquet")
        findings = read_table(folder / "findings.parquet")
        causes = _causes(findings)
        s = summary.assign(operator=_operator(path))
        refused_here = _refused(folder / "errors.parquet")
        s["unsupported"] = [
            int(refused_here.get(tuple(r), 0)) for r in s[_ROW].itertuples(index=False)
        ]
        s["error"] = s["error"] - s["unsupported"]
        s["judged"] = (
            s["points"] - s["not_applicable"] - s["ref_unreliable"] - s["flushed"]
            - s["unsupported"]
        )  # fmt: skip
        s["share_right"] = (s["ok"] / s["judged"]).where(s["judged"] > 0)
        s["stable_domain"] = [
            region_text(json.loads(d), dtype) if d else ""
            for d, dtype in zip(s["stable_domain_json"], s["dtype"])
        ]
        s["root_causes"] = [
            ", ".join(causes.get((r.backend, r.dtype, r.partial, r.method, r.mode), []))
            for r in s.itertuples(index=False)
        ]
        frames.append(s[list(ATLAS_COLUMNS)])
    if not frames:
        return pd.DataFrame(columns=list(ATLAS_COLUMNS))
    atlas = pd.concat(frames, ignore_index=True)
    return atlas.sort_values(
        ["operator", "case", "backend", "dtype", "order", "partial", "method", "mode"],
        kind="stable",
    ).reset_index(drop=True)


def verdicts(atlas: pd.DataFrame) -> pd.DataFrame:
    """Per case, dtype, partial and framework: the share right over every method and mode
    (all values judged there), the worst method/mode's share, the stable region of every
    method and mode at once (exact floats of the dtype) and the root causes."""
    judged = atlas[atlas["judged"] > 0]
    keys = ["operator", "case", "dtype", "order", "partial", "backend"]
    g = judged.groupby(keys, sort=True)
    out = g.agg(judged=("judged", "sum"), ok=("ok", "sum"), worst=("share_right", "min"))
    out["share_right"] = out["ok"] / out["judged"]
    out["stable_region"] = [
        region_text(intersect([json.loads(d) for d in group if d]), key[2])
        for key, group in g["stable_domain_json"]
    ]
    out["root_causes"] = g["root_causes"].agg(
        lambda s: ", ".join(sorted({c for v in s for c in str(v).split(", ") if c}))
    )
    return out.reset_index()
