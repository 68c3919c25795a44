"""The study's index page: headline counts, the root causes (framework bugs first), the
combinations the frameworks do not offer, the findings, the expectations that did not
hold, the platform's flush, the outcome matrix, the cases and the provenance
(:func:`render_index`)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from harness.backends.catalogue import SPECS
from harness.causes.classify import FRAMEWORK_KINDS
from harness.judge.compare import OUTCOMES
from harness.report.findings_list import findings_list, load_case_quietly, platform_note, statements
from harness.report.html import e, key, page
from harness.report.html import table as html_table
from harness.report.root_causes_list import root_causes_section, unsupported_section
from harness.results import atomic_write_text, read_metadata, read_table

__all__ = ["index_page", "read_causes", "render_index"]

_DTYPE_ORDER = ("float16", "bfloat16", "float32", "float64")


def _share_colour(share: float) -> str:
    """Red (0% ok) through amber to green (100% ok)."""
    stops = [(0.0, (198, 40, 40)), (0.9, (249, 168, 37)), (1.0, (46, 125, 50))]
    for (a, ca), (b, cb) in zip(stops, stops[1:]):
        if share <= b:
            w = 0.0 if b == a else (share - a) / (b - a)
            rgb = [round(x + w * (y - x)) for x, y in zip(ca, cb)]
            return "#{:02x}{:02x}{:02x}".format(*rgb)
    return "#2e7d32"


def _matrix(summary: pd.DataFrame, findings: pd.DataFrame) -> str:
    """Cases x implementations against dtypes x orders: the share of ok values over
    every method and mode (flushed and unreliable rows aside), and a mark with the
    number of unexpected findings in the cell."""
    dtypes = [d for d in _DTYPE_ORDER if d in set(summary.dtype)]
    orders = sorted(summary.order.unique())
    head = (
        "<tr><th>case</th><th>implementation</th>"
        + "".join(f"<th>{d}<br>order {o}</th>" for d in dtypes for o in orders)
        + "</tr>"
    )
    unexpected = (
        findings[findings["expected"] == "unexpected"]
        .groupby(["case", "implementation", "dtype", "order"])
        .size()
        .to_dict()
        if not findings.empty
        else {}
    )
    rows = []
    for (case, impl), g in summary.groupby(["case", "implementation"], sort=True):
        cells = []
        for d in dtypes:
            for o in orders:
                c = g[(g.dtype == d) & (g.order == o)]
                if c.empty:
                    cells.append("<td></td>")
                    continue
                totals = {k: int(c[k].sum()) for k in OUTCOMES}
                judged = sum(
                    v
                    for k, v in totals.items()
                    if k not in ("ref_unreliable", "flushed", "not_applicable")
                )
                share = totals["ok"] / judged if judged else 1.0
                n = unexpected.get((case, impl, d, o), 0)
                mark = f' <span title="unexpected findings">●{n}</span>' if n else ""
                tip = ", ".join(f"{k} {v}" for k, v in totals.items() if v)
                light = " light" if 0.5 < share < 0.97 else ""
                cells.append(
                    f'<td class="cell{light}" style="background:{_share_colour(share)}" '
                    f'title="{e(tip)}">{100 * share:.0f}%{mark}</td>'
                )
        rows.append(
            f'<tr><td><a href="{e(case)}.html">{e(case)}</a></td>'
            f"<td>{e(impl)}</td>{''.join(cells)}</tr>"
        )
    return (
        f'<table>{head}{"".join(rows)}</table><p class="muted">Each cell: the share of '
        "judged values that are ok over every method and mode (flushed and unreliable rows "
        "aside), coloured from red (none) to green (all); ●N: N unexpected findings.</p>"
    )


def _broken_expectations(summary: pd.DataFrame) -> str:
    broken = summary[summary["expected_broken"] > 0]
    if broken.empty:
        return '<p class="muted">Every expectation held.</p>'
    keys = ["case", "backend", "implementation", "method", "mode", "dtype", "derivative"]
    return html_table(broken[[*keys, "expected_held", "expected_broken", "worst"]])


def index_page(
    summary: pd.DataFrame,
    meta: dict,
    case_meta: dict[str, dict],
    broken_cases: dict[str, list[str]],
    findings: pd.DataFrame | None = None,
    causes: tuple[pd.DataFrame, pd.DataFrame, dict] | None = None,
) -> str:
    """The study's index: headline counts, the root causes (framework bugs first) with
    their filters and reproducers, what the frameworks do not offer, the findings, the
    platform's flush, the outcome matrix, the cases, provenance. ``causes``: the root
    causes, the unsupported combinations and the reproducers by back end."""
    roots, unsupported, reproducers = causes or (pd.DataFrame(), pd.DataFrame(), {})
    findings = findings if findings is not None else pd.DataFrame()
    stated = statements(findings)
    totals = {o: int(summary[o].sum()) for o in OUTCOMES}
    judged = sum(
        v for k, v in totals.items() if k not in ("ref_unreliable", "flushed", "not_applicable")
    )
    unexpected = stated[stated["expected"] == "unexpected"] if not stated.empty else stated
    expected = stated[stated["expected"] == "expected"] if not stated.empty else stated
    per_impl = int((findings["expected"] == "unexpected").sum()) if not findings.empty else 0
    partly = int((unexpected["held"] > 0).sum()) if "held" in unexpected else 0
    stale = [c for c, m in case_meta.items() if m.get("stale")]

    def cell(number, what: str) -> str:
        return f'<td><div class="big">{number}</div>{what}</td>'

    open_roots = roots[roots["expected"] != "expected"] if not roots.empty else roots
    framework = int(open_roots["kind"].isin(FRAMEWORK_KINDS).sum()) if not roots.empty else 0
    headline = (
        '<table class="headline"><tr>'
        + cell(
            len(open_roots),
            f"root causes not expected<br>({framework} in the frameworks, "
            f"{len(open_roots) - framework} in the cases' own code; {len(roots) - len(open_roots)} "
            "expected)",
        )
        + cell(len(unsupported), "combinations a framework does not offer")
        + cell(
            len(unexpected),
            f"distinct unexpected findings<br>({per_impl} per implementation; {partly} "
            "partly covered by an expectation)",
        )
        + cell(len(expected), "expected findings")
        + cell(int((summary["expected_broken"] > 0).sum()), "combinations breaking an expectation")
        + cell(f"{totals['flushed']:,}", "flushed rows (platform)")
        + cell(f"{totals['ref_unreliable']:,}", "unreliable references")
        + cell(summary.case.nunique(), "cases")
        + cell(f"{judged:,}", f"values judged, {100 * totals['ok'] / max(judged, 1):.1f}% ok")
        + cell(_share(case_meta), "reference values certified by Arb balls")
        + cell(len(broken_cases), "case files that do not validate")
        + "</tr></table>"
    )
    frameworks: dict[str, dict] = {}
    for m in case_meta.values():
        for name, facts in (m.get("frameworks") or {}).items():
            frameworks.setdefault(name, facts or {})
    first = next(iter(case_meta.values()), {})
    prov = {
        "created": meta.get("created"),
        "git commit": f"{meta.get('git', {}).get('commit')} "
        f"({'dirty' if meta.get('git', {}).get('dirty') else 'clean'})",
        "python": meta.get("python"),
        "platform": meta.get("platform"),
        "cpu": meta.get("cpu"),
        "cpu features": meta.get("cpu_features"),
        # Each framework's facts (versions, devices, flags), in the registry's order.
        **{
            SPECS[name].title if name in SPECS else name: _facts(name, frameworks[name])
            for name in [
                *(n for n in SPECS if n in frameworks),
                *sorted(set(frameworks) - set(SPECS)),
            ]
        },
        "packages": ", ".join(f"{k} {v}" for k, v in (meta.get("packages") or {}).items()),
        "study settings": json.dumps(first.get("study")),
        "reference": json.dumps(first.get("reference")),
        "seed": first.get("seed"),
        **{
            f"case {c}'s settings (the study's, narrowed by its quick block)": json.dumps(
                m.get("selection")
            )
            for c, m in sorted(case_meta.items())
        },
    }
    prov_rows = "".join(f"<tr><th>{e(k)}</th><td>{e(v)}</td></tr>" for k, v in prov.items())
    cases = "".join(
        f'<li><a href="{e(c)}.html">{e(c)}</a> <span class="muted">'
        f"{e(case_meta.get(c, {}).get('title', ''))}"
        f"{e(_case_share(case_meta.get(c, {})))}</span>"
        + (' <b class="mark">stale results</b>' if c in stale else "")
        + "</li>"
        for c in sorted(summary.case.unique())
    )
    broken = "".join(
        f"<li><b>{e(c)}</b><pre>{e(chr(10).join(p))}</pre></li>"
        for c, p in sorted(broken_cases.items())
    )
    stale_text = (
        f'<p class="stale"><b>Stale results</b> for {e(", ".join(stale))}: computed from '
        "another version of the case file; rerun them.</p>"
        if stale
        else ""
    )
    flushed = summary[summary["flushed"] > 0] if "flushed" in summary else None
    flags = {c: m.get("flush") for c, m in case_meta.items()}
    body = (
        "<h1>Higher-order derivative study</h1>"
        + stale_text
        + headline
        + '<p><a href="frameworks.html">Frameworks side by side</a>: where TensorFlow, JAX '
        "and PyTorch agree on the same points, and where one is right and another wrong.</p>"
        + f"<h2>Root causes ({len(roots)})</h2>"
        + '<p class="muted">Each finding belongs to one root cause: one mechanism, stated once '
        "with its whole scope (results/root_causes.csv; <code>harness bug-report ID</code> "
        "prints one as a report).</p>"
        + root_causes_section(roots, reproducers)
        + f"<h2>What the frameworks do not offer ({len(unsupported)})</h2>"
        + unsupported_section(unsupported)
        + f"<h2>Findings: unexpected ({len(unexpected)})</h2>"
        + f"<details><summary>the {len(unexpected)} statements the root causes absorb</summary>"
        + findings_list(unexpected, link_case=True)
        + "</details>"
        + f"<h2>Findings: expected ({len(expected)})</h2>"
        + findings_list(expected, link_case=True, limit=20)
        + "<h2>Expectations that did not hold</h2>"
        + _broken_expectations(summary)
        + "<h2>Platform: subnormal numbers</h2>"
        + platform_note(flags, flushed)
        + "<h2>Outcome matrix</h2>"
        + key()
        + _matrix(summary, findings)
        + "<h2>Cases</h2><ul>"
        + cases
        + "</ul>"
        + (f"<h2>Case files that do not validate</h2><ul>{broken}</ul>" if broken else "")
        + f"<h2>Provenance</h2><table>{prov_rows}</table>"
    )
    return page("harness report", body)


def _share(case_meta: dict) -> str:
    pairs = [m["certified"] for m in case_meta.values() if m.get("certified")]
    certified, rows = sum(c for c, _ in pairs), sum(r for _, r in pairs)
    return f"{100 * certified / rows:.1f}% ({certified:,} of {rows:,})" if rows else "none"


def _case_share(meta: dict) -> str:
    pair = meta.get("certified")
    if not pair:
        return "; reference verified by its own method (not certified)"
    return f"; reference {100 * pair[0] / max(pair[1], 1):.1f}% certified by Arb"


def render_index(
    results: str | Path = "results", reports: str | Path = "reports", cases: str | Path = "cases"
) -> Path:
    """Write ``reports/index.html`` from ``results/summary.parquet`` and
    ``results/findings.parquet``; returns its path."""
    from harness.cases.load import validate_paths
    from harness.judge.case_tables import case_findings

    results, reports = Path(results), Path(reports)
    summary = read_table(results / "summary.parquet")
    meta = read_metadata(results / "summary.parquet")
    _, problems = validate_paths(sorted(Path(cases).glob("*.yaml")))
    broken: dict[str, list[str]] = {}
    for p in problems:
        broken.setdefault(Path(p.file).stem, []).append(str(p))
    case_meta = {}
    for case_id in sorted(summary.case.unique()):
        case = load_case_quietly(cases, case_id)
        path = results / case_id / "errors.parquet"
        recorded = read_metadata(path)
        case_meta[case_id] = {
            **recorded,
            "title": case.title if case else "",
            "stale": bool(case and recorded.get("case_hash") != case.content_hash),
            "flush": recorded.get("flush"),
            "certified": _certified(results / case_id / "reference.timings.parquet"),
        }
    found = results / "findings.parquet"
    if found.exists():
        findings = read_table(found)
    else:
        parts = [case_findings(results / c / "errors.parquet") for c in case_meta]
        findings = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()
    index = reports / "index.html"
    causes = read_causes(results)
    atomic_write_text(index, index_page(summary, meta, case_meta, broken, findings, causes))
    return index


def read_causes(results: Path) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    """The study's root causes, unsupported combinations and reproducers by back end
    (empty where the study has none yet)."""
    out = []
    for name in ("root_causes", "unsupported"):
        path = Path(results) / f"{name}.parquet"
        out.append(read_table(path) if path.exists() else pd.DataFrame())
    reproducers = {
        p.stem: read_table(p) for p in sorted((Path(results) / "reproducers").glob("*.parquet"))
    }
    return out[0], out[1], reproducers


def _certified(path: Path) -> tuple[int, int] | None:
    """``(certified, rows with a value)`` of a case's reference table, from its timings (``None``: an
    experiment's reference, or a table from before Arb)."""
    if not path.exists():
        return None
    row = read_table(path).iloc[0]
    if "certified" not in row or pd.isna(row["certified"]):
        return None
    # Rows where the ball proves no value exists (0/0, a kink) have nothing to certify.
    return int(row["certified"]), int(row["rows"]) - int(row.get("undefined", 0) or 0)


def _facts(name: str, facts: dict) -> str:
    """A framework's facts as one line, its own version first: ``tensorflow 2.21.0;
    devices /device:CPU:0; ...``."""

    def show(value) -> str:
        if isinstance(value, (list, tuple)):
            return ", ".join(map(str, value))
        return json.dumps(value) if isinstance(value, dict) else str(value)

    keys = sorted(facts, key=lambda k: k != name)
    return "; ".join(f"{k} {show(facts[k])}" for k in keys)
