"""A root cause's input regions in words (``softplus: x ≥ 88.72284; ratio: |t| in
[1e-19, 2e-19]``): each bound the shortest decimal that reads back as that float of its
dtype, a pair mirrored about 0 told once, many regions told by their count and bounds."""

from __future__ import annotations

from harness.judge.findings_text import format_value

__all__ = ["CASES_LISTED", "LISTED", "listed", "regions_text"]


def regions_text(regions: list[dict], dtype: str, example: str | None = None) -> str:
    """``softplus: x ≥ 88.72284; ratio: |t| in [1e-19, 2e-19]``: per case, the merged
    intervals (a pair mirrored about 0 as one ``|x|`` statement), each in its own dtype
    (``dtype`` for a region that names none); where the regions span several dtypes, each
    case's are told per dtype (``softplus (float32): ...; softplus (float64): ...``); a case
    with more than :data:`LISTED` regions is told as their count and the bounds holding
    them all. Given an ``example`` case, regions in more than :data:`CASES_LISTED` cases
    are told as the count of cases and that case's regions alone."""
    several = len({r.get("dtype", dtype) for r in regions}) > 1
    parts: dict[str, list[str]] = {}

    def label(r: dict) -> str:
        return f"{r['case']} ({r.get('dtype', dtype)})" if several else r["case"]

    spans = [r for r in regions if r.get("input")]
    used: set[int] = set()
    for i, r in enumerate(spans):
        if i in used:
            continue
        mirror = next(
            (
                j
                for j, s in enumerate(spans)
                if j not in used
                and j != i
                and label(s) == label(r)
                and s["input"] == r["input"]
                and s["lo"] == -r["hi"]
                and s["hi"] == -r["lo"]
            ),
            None,
        )
        name, lo, hi = r["input"], r["lo"], r["hi"]
        if mirror is not None and lo >= 0:
            used.update({i, mirror})
            name, lo, hi = f"|{name}|", lo, hi
        elif mirror is not None:
            used.update({i, mirror})
            name, lo, hi = f"|{name}|", -hi, -lo
        else:
            used.add(i)
        own = r.get("dtype", dtype)
        a, b = format_value(lo, own), format_value(hi, own)
        text = f"{name} = {a}" if lo == hi else f"{name} in [{a}, {b}]"
        parts.setdefault(label(r), []).append(text)
    for r in regions:
        if not r.get("input"):
            own = r.get("dtype", dtype)
            span = ", ".join(
                f"{n} in [{format_value(a, own)}, {format_value(b, own)}]"
                for n, (a, b) in r.get("ranges", {}).items()
            )
            parts.setdefault(label(r), []).append(span or "grid points")
    for case, texts in parts.items():
        if len(texts) > LISTED:
            parts[case] = [_hull([r for r in regions if label(r) == case], dtype)]
    cases = list(dict.fromkeys(r["case"] for r in regions))
    if example is not None and len(cases) > CASES_LISTED:
        shown = example if example in cases else cases[0]
        kept = [(k, t) for k, t in parts.items() if k == shown or k.startswith(f"{shown} (")]
        told = "; ".join(f"{k}: " + ", ".join(t) for k, t in kept)
        return f"{len(cases)} cases, for example {told}"
    return "; ".join(f"{case}: " + ", ".join(texts) for case, texts in parts.items())


#: Regions listed one by one for a case; beyond this many (a crash at every point of
#: the sweep is a region per point), their count and the interval that holds them all.
LISTED = 6
#: Cases whose regions a statement lists; a mechanism across more (finite differences
#: in 60 of the census's kernels) is told by their count and its example's regions.
CASES_LISTED = 6


def _hull(regions: list[dict], dtype: str) -> str:
    """``56 regions within x in [-3.4028235e+38, 3.4028235e+38]``: each input's least
    and greatest bound over ``regions`` (spans and grid ranges alike)."""
    bounds: dict[str, list[float]] = {}
    own = regions[0].get("dtype", dtype)
    for r in regions:
        spans = {r["input"]: (r["lo"], r["hi"])} if r.get("input") else r.get("ranges", {})
        for name, (lo, hi) in spans.items():
            b = bounds.setdefault(name, [lo, hi])
            b[0], b[1] = min(b[0], lo), max(b[1], hi)
    within = ", ".join(
        f"{n} in [{format_value(lo, own)}, {format_value(hi, own)}]"
        for n, (lo, hi) in bounds.items()
    )
    return f"{len(regions)} regions within {within}" if within else f"{len(regions)} regions"


def listed(words: list[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]
