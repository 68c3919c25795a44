"""The report stage: ``reports/index.html`` and one page per case, from the result tables.

Pages are self-contained: every figure is an SVG drawn by matplotlib and inlined in the
page (heavy layers, the lines and bands, are rasterised inside the SVG to keep pages
small), styles are inline, and there is no script, font or image from anywhere else.
A page opens from disk with no server and no network. Static SVG was chosen over an
interactive plotting library because it needs nothing at view time and survives being
mailed, archived or opened in ten years; the small multiples (one panel per dtype and
mode) replace toggles.

Everything shown is derived from ``results/summary.parquet`` and the per-case errors
tables; nothing is computed anew.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from .compare import OUTCOMES, covers, input_columns
from .html import COLOURS, e, key, page, svg
from .html import table as html_table
from .report_findings import (
    findings_list,
    load_case_quietly,
    platform_note,
    stale_note,
    statements,
)
from .report_index import render_index
from .results import atomic_write_text, read_metadata, read_table
from .summary import ranked_failures

__all__ = ["COLOURS", "render_reports"]

_DTYPE_ORDER = ("float16", "bfloat16", "float32", "float64")
_MODE_ORDER = ("eager", "function", "xla")
_METHOD_STYLE = {
    "reverse": "-",
    "forward": "--",
    "forward_over_reverse": "-.",
    "finite_difference": ":",
}


# -- figures ----------------------------------------------------------------------------


def _axis_input(errors: pd.DataFrame, inputs: Sequence[str]) -> str:
    for name in inputs:
        if errors[name].nunique() > 1:
            return name
    return inputs[0]


def _set_xscale(ax, x: np.ndarray) -> None:
    nonzero = np.abs(x[x != 0])
    if len(nonzero) == 0:
        return
    if (x < 0).any():
        lo, hi = float(nonzero.min()), float(nonzero.max())
        ax.set_xscale("symlog", linthresh=lo)
        # At most ~4 decades labelled per sign, or the labels run into each other.
        decades = np.arange(np.floor(np.log10(lo)), np.ceil(np.log10(hi)) + 1)
        step = max(1, int(np.ceil(len(decades) / 4)))
        ticks = 10.0 ** decades[::-step][::-1]
        ax.set_xticks([*(-ticks[::-1]), *ticks])
        ax.set_xticklabels(
            [f"-1e{int(np.log10(t))}" for t in ticks[::-1]]
            + [f"1e{int(np.log10(t))}" for t in ticks]
        )
    elif (x > 0).all():
        ax.set_xscale("log")
    else:
        return
    # No minor ticks: 8 per decade on every panel were a quarter of a page's time (each
    # is an artist laid out at every draw), and the decades read well without them.
    from matplotlib.ticker import NullLocator

    ax.xaxis.set_minor_locator(NullLocator())


def _grid(dtypes, modes, width_per=3.7, height_per=1.7, left=0.65, top=0.9, wgap=0.5):
    """Panels of ``width_per`` x ``height_per`` inches, rows dtype, columns mode, with
    fixed margins in inches (``top`` holds the title and legend, ``left`` the y labels)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows, cols = len(dtypes), len(modes)
    bottom, right, hgap = 0.45, 0.15, 0.55
    width = left + cols * width_per + (cols - 1) * wgap + right
    height = top + rows * height_per + (rows - 1) * hgap + bottom
    fig, axes = plt.subplots(rows, cols, squeeze=False, sharex=True, figsize=(width, height))
    fig.subplots_adjust(
        left=left / width,
        right=1 - right / width,
        bottom=bottom / height,
        top=1 - top / height,
        wspace=wgap / width_per,
        hspace=hgap / height_per,
    )
    return fig, axes


def bits_figure(errors: pd.DataFrame, x_name: str, derivative: str) -> str:
    """Bits of error against the input: rows dtype, columns mode; colour implementation,
    line style method."""
    import matplotlib.pyplot as plt

    dtypes = [d for d in _DTYPE_ORDER if d in set(errors.dtype)]
    modes = [m for m in _MODE_ORDER if m in set(errors["mode"])]
    impls = sorted(errors.implementation.unique())
    # On a grid, one line per combination of the other inputs (a single line through
    # every point would zigzag between them); an input tied to x is not another input.
    by_x = errors.groupby(x_name, observed=True)
    others = [c for c in input_columns(errors) if c != x_name and by_x[c].nunique().max() > 1]
    palette = plt.get_cmap("tab10")
    fig, axes = _grid(dtypes, modes)
    for i, dtype in enumerate(dtypes):
        for j, mode in enumerate(modes):
            ax = axes[i][j]
            panel = errors[(errors.dtype == dtype) & (errors["mode"] == mode)]
            for k, impl in enumerate(impls):
                for method, style in _METHOD_STYLE.items():
                    g = panel[(panel.implementation == impl) & (panel.method == method)]
                    if g.empty:
                        continue
                    lines = g.groupby(others, sort=False) if others else [(None, g)]
                    for _, line in lines:
                        line = line.sort_values(x_name)
                        ax.plot(
                            line[x_name],
                            line["bits"],
                            style,
                            color=palette(k % 10),
                            lw=1.1,
                            rasterized=True,
                        )
            _set_xscale(ax, panel[x_name].to_numpy())
            ax.set_ylim(-0.5, {"float16": 16, "bfloat16": 16, "float32": 32}.get(dtype, 64) + 1)
            ax.grid(alpha=0.3)
            ax.set_title(f"{dtype}, {mode}", fontsize=9)
            if j == 0:
                ax.set_ylabel("bits of error", fontsize=8)
            if i == len(dtypes) - 1:
                ax.set_xlabel(x_name, fontsize=8)
            ax.tick_params(labelsize=7)
    handles = [
        plt.Line2D([], [], color=palette(k % 10), lw=2, label=impl) for k, impl in enumerate(impls)
    ]
    handles += [
        plt.Line2D([], [], color="#444", ls=s, label=m)
        for m, s in _METHOD_STYLE.items()
        if m in set(errors.method)
    ]
    height = fig.get_figheight()
    fig.legend(
        handles=handles,
        loc="upper center",
        ncol=min(len(handles), 6),
        fontsize=8,
        bbox_to_anchor=(0.5, 1 - 0.3 / height),
        frameon=False,
    )
    fig.suptitle(
        f"derivative {derivative}: bits of error (0 = exact; NaN at the top)"
        + (f"; one line per value of {', '.join(others)}" if others else ""),
        y=1 - 0.05 / height,
        va="top",
        fontsize=10,
    )
    return svg(fig)


def band_figure(
    errors: pd.DataFrame, x_name: str, derivative: str, marks: Sequence[tuple] = ()
) -> str:
    """Outcome bands: one band per implementation and method, coloured by outcome along the
    input (the picture of seed 000's figure); rows dtype, columns mode. ``marks``:
    ``(dtype, x, outcome)`` edges of findings, drawn as dashed lines on that dtype's
    panels."""
    from matplotlib.colors import ListedColormap

    dtypes = [d for d in _DTYPE_ORDER if d in set(errors.dtype)]
    modes = [m for m in _MODE_ORDER if m in set(errors["mode"])]
    rows = (
        errors[["implementation", "method"]]
        .drop_duplicates()
        .sort_values(["implementation", "method"])
        .itertuples(index=False)
    )
    rows = [tuple(r) for r in rows]
    code = {o: i for i, o in enumerate(OUTCOMES)}
    cmap = ListedColormap([COLOURS[o] for o in OUTCOMES])
    # The left column carries the row labels ("implementation / method", 6 pt).
    label_inches = 0.2 + 0.05 * max(len(f"{a} / {b}") for a, b in rows)
    fig, axes = _grid(
        dtypes, modes, height_per=0.3 * len(rows) + 0.3, left=label_inches, top=0.45, wgap=0.3
    )
    for i, dtype in enumerate(dtypes):
        for j, mode in enumerate(modes):
            ax = axes[i][j]
            panel = errors[(errors.dtype == dtype) & (errors["mode"] == mode)]
            xs = np.sort(panel[x_name].unique())
            if len(xs) == 0:
                continue
            grid = np.full((len(rows), len(xs)), np.nan)
            where = {x: n for n, x in enumerate(xs)}
            for r, (impl, method) in enumerate(rows):
                g = panel[(panel.implementation == impl) & (panel.method == method)]
                for x, outcome in zip(g[x_name], g["outcome"].astype(str)):
                    grid[r, where[x]] = code[outcome]
            edges = _edges(xs)
            ax.pcolormesh(
                edges,
                np.arange(len(rows) + 1),
                np.ma.masked_invalid(grid),
                cmap=cmap,
                vmin=-0.5,
                vmax=len(OUTCOMES) - 0.5,
                rasterized=True,
            )
            for mark_dtype, x, outcome in marks:
                if mark_dtype == dtype and xs[0] <= x <= xs[-1]:
                    ax.axvline(x, color=COLOURS.get(outcome, "#000"), lw=0.8, ls="--")
            _set_xscale(ax, xs)
            ax.set_yticks(np.arange(len(rows)) + 0.5)
            ax.set_yticklabels([f"{a} / {b}" for a, b in rows] if j == 0 else [], fontsize=6)
            ax.invert_yaxis()
            ax.set_title(f"{dtype}, {mode}", fontsize=9)
            if i == len(dtypes) - 1:
                ax.set_xlabel(x_name, fontsize=8)
            ax.tick_params(axis="x", labelsize=7)
    fig.suptitle(
        f"derivative {derivative}: outcome along the input",
        y=1 - 0.05 / fig.get_figheight(),
        va="top",
        fontsize=10,
    )
    return svg(fig)


def _edges(xs: np.ndarray) -> np.ndarray:
    """Cell edges around sorted points (geometric midpoints where the sign allows)."""
    if len(xs) == 1:
        return np.array([xs[0] * 0.9 if xs[0] else -1, xs[0] * 1.1 if xs[0] else 1])
    mids = []
    for a, b in zip(xs[:-1], xs[1:]):
        mids.append(
            np.sqrt(a * b)
            if a > 0 and b > 0
            else -np.sqrt(a * b)
            if a < 0 and b < 0
            else (a + b) / 2
        )
    first = xs[0] - (mids[0] - xs[0]) if xs[0] <= 0 else xs[0] ** 2 / mids[0]
    last = xs[-1] + (xs[-1] - mids[-1]) if xs[-1] <= 0 else xs[-1] ** 2 / mids[-1]
    return np.array([first, *mids, last])


# -- pages ------------------------------------------------------------------------------


def _worst(errors: pd.DataFrame, inputs: Sequence[str], n: int = 25) -> pd.DataFrame:
    ranked = ranked_failures(errors).head(n)
    if ranked.empty:
        return pd.DataFrame()
    out = pd.DataFrame(
        {
            "where": ranked.implementation
            + " / "
            + ranked.method
            + " / "
            + ranked["mode"]
            + " / "
            + ranked.dtype
            + " / "
            + ranked.partial.replace("", "f"),
            "inputs": [", ".join(f"{k}={r[k]:.6g}" for k in inputs) for _, r in ranked.iterrows()],
            "got": ranked["value"].map(lambda v: f"{v:.8g}"),
            "wanted": ranked["reference"],
            "outcome": ranked["outcome"].astype(str),
            "bits": ranked["bits"],
            "message": ranked["message"],
        }
    )
    return out


def _outcomes_section(errors: pd.DataFrame) -> str:
    counts = errors.outcome.value_counts()
    found = ", ".join(f"<b>{o}</b> {int(counts.get(o, 0))}" for o in OUTCOMES if counts.get(o, 0))
    return f"<h2>Outcomes</h2>{key()}<p>{found}</p>"


def _worst_section(errors: pd.DataFrame, inputs: Sequence[str], heading: str) -> str:
    worst = _worst(errors, inputs)
    body = (
        html_table(worst, numeric=("bits",))
        if not worst.empty
        else "<p>Every judged value is ok.</p>"
    )
    return f"<h2>{heading}</h2>{body}"


def _expectations(case, errors: pd.DataFrame) -> str:
    if case is None or not case.expectations:
        return '<p class="muted">The case declares no expectations.</p>'
    rows = []
    for exp in case.expectations:
        mask = covers(exp, errors, case)
        g = errors[mask & (errors.expected_outcome == exp.outcome)]
        held, broken = int((g.expected == "held").sum()), int((g.expected == "broken").sum())
        scope = ", ".join(
            filter(
                None,
                [
                    "/".join(exp.implementations),
                    exp.methods and "/".join(exp.methods),
                    exp.modes and "/".join(exp.modes),
                    exp.dtypes and "/".join(exp.dtypes),
                    exp.orders and "order " + "/".join(map(str, exp.orders)),
                    exp.partial and "partial " + case.label(exp.partial),
                    *(f"{k} in [{lo:.3g}, {hi:.3g}]" for k, (lo, hi) in exp.where.items()),
                ],
            )
        )
        status = "held" if broken == 0 and held else ("broken" if broken else "no points")
        rows.append(
            {
                "expectation": f"{scope} => {exp.outcome}",
                "reason": exp.reason,
                "held": held,
                "broken": broken,
                "status": status,
            }
        )
    return html_table(pd.DataFrame(rows), numeric=("held", "broken"))


def experiment_page(
    case,
    errors: pd.DataFrame,
    summary: pd.DataFrame,
    facts: dict | None = None,
    findings: pd.DataFrame | None = None,
    notes: str = "",
) -> str:
    """The page of an experiment case: its findings, what and why, the experiment's own
    figures, the outcomes per quantity and the worst values."""
    from .experiments import get

    exp = get(case.experiment)
    inputs = list(exp.inputs)
    stated = statements(findings if findings is not None else pd.DataFrame())
    parts = [
        f'<p><a href="index.html">&larr; all cases</a></p><h1>{e(case.title)}</h1>',
        notes,
        "<h2>Findings</h2>" + findings_list(stated, anchor=True),
    ]
    parts.append(f"<p><b>Source.</b> {e(case.source)}</p>")
    if case.notes:
        parts.append(f"<p><b>Notes.</b> {e(case.notes)}</p>")
    params = errors.attrs.get("parameters") or case.parameters
    parts.append(
        f"<p><b>Experiment</b> <code>{e(exp.name)}</code>: {e(exp.description)} "
        f"Parameters: <code>{e(json.dumps(params, sort_keys=True))}</code>.</p>"
    )
    parts.append(_outcomes_section(errors))
    if case.expectations:
        parts.append("<h2>Expectations</h2>" + _expectations(case, errors))
    parts.append(exp.page(errors, facts or {}))
    if not summary.empty:
        table = summary[
            [
                "implementation",
                "method",
                "mode",
                "dtype",
                "derivative",
                "ok",
                "points",
                "max_bits",
                "stable_domain",
            ]
        ]
        parts.append(
            f"<h2>Stable domains</h2><details><summary>{len(table)} combinations</summary>"
            f"{html_table(table, numeric=('ok', 'points', 'max_bits'))}</details>"
        )
    parts.append(_worst_section(errors, inputs, "Worst values"))
    return page(f"{case.title} - harness report", "\n".join(parts))


def case_page(
    case_id: str,
    errors: pd.DataFrame,
    summary: pd.DataFrame,
    case=None,
    findings: pd.DataFrame | None = None,
    notes: str = "",
) -> str:
    """A case's page: its findings first, each derivative's beside its band chart (their
    edges marked), then the bits of error, stable domains, worst points, expectations.
    ``notes``: HTML put first (a stale-results warning, the platform's flush)."""
    inputs = input_columns(errors)
    x_name = _axis_input(errors, inputs)
    title = case.title if case else case_id
    stated = statements(findings if findings is not None else pd.DataFrame())
    parts = [f'<p><a href="index.html">&larr; all cases</a></p><h1>{e(title)}</h1>', notes]
    unexpected = stated[stated["expected"] == "unexpected"] if not stated.empty else stated
    parts.append(
        f"<h2>Findings</h2><p>{len(unexpected)} unexpected and "
        f"{len(stated) - len(unexpected)} expected (the derivatives below list theirs beside "
        "their charts).</p>" + findings_list(stated, anchor=False, limit=25)
    )
    if case is not None:
        parts.append(f"<p><b>Source.</b> {e(case.source)}</p>")
        if case.notes:
            parts.append(f"<p><b>Notes.</b> {e(case.notes)}</p>")
        impl_rows = [
            {
                "implementation": i.name,
                "kind": i.kind,
                "definition": i.registered or i.text,
                "description": i.description,
            }
            for i in case.implementations
        ]
        parts.append("<h2>Implementations</h2>" + html_table(pd.DataFrame(impl_rows)))
        parts.append(
            f"<p>Function: <code>{e(case.function_text)}</code>; reference: "
            f"<code>{e(case.reference.text)}</code> in mpmath, verified.</p>"
        )
    parts.append(_outcomes_section(errors))
    parts.append("<h2>Expectations</h2>" + _expectations(case, errors))
    for partial in sorted(errors.partial.unique(), key=lambda p: (len(p), p)):
        label = partial or "f"
        sub = errors[errors.partial == partial]
        mine = stated[stated["partial"] == partial] if not stated.empty else stated
        marks = [
            (r.dtype, x, r.outcome)
            for r in mine.itertuples(index=False)
            for x, is_open in ((r.lo, r.lo_open), (r.hi, r.hi_open))
            if not is_open
        ]
        parts.append(f'<h2 id="d-{e(label)}">Derivative {e(label)} (order {len(partial)})</h2>')
        parts.append(
            '<div class="pair">'
            f'<figure class="plot">{band_figure(sub, x_name, label, marks)}</figure>'
            f'<div class="side"><h3>Findings</h3>{findings_list(mine, anchor=True)}</div>'
            "</div>"
        )
        parts.append(f'<figure class="plot">{bits_figure(sub, x_name, label)}</figure>')
        dom = summary[(summary.case == case_id) & (summary.partial == partial)]
        if not dom.empty:
            domain = dom[
                [
                    "implementation",
                    "method",
                    "mode",
                    "dtype",
                    "ok",
                    "points",
                    "max_bits",
                    "stable_domain",
                ]
            ]
            parts.append(
                f"<details><summary>Stable domain ({len(domain)} combinations)"
                f"</summary>{html_table(domain, numeric=('ok', 'points', 'max_bits'))}"
                "</details>"
            )
    parts.append(_worst_section(errors, inputs, "Worst points"))
    return page(f"{title} - harness report", "\n".join(parts))


def _case_notes(case_id: str, case, meta: dict, summary: pd.DataFrame) -> str:
    """A case page's notes: stale results, and the platform's flush with its rows."""
    stale = stale_note(case_id, meta.get("case_hash"), case.content_hash if case else None)
    flags = ((meta.get("inputs") or {}).get("evaluations") or {}).get("platform") or {}
    flushed = summary[summary["flushed"] > 0] if "flushed" in summary else None
    flush = ""
    if flushed is not None and not flushed.empty:
        flush = "<h2>Platform: subnormal numbers</h2>" + platform_note(
            {case_id: flags.get("flush")}, flushed
        )
    return stale + flush


def render_case(
    case_id: str,
    results: str | Path = "results",
    reports: str | Path = "reports",
    cases: str | Path = "cases",
    summary: pd.DataFrame | None = None,
) -> Path:
    """Write ``reports/<case_id>.html``; returns its path. Without the case's ``summary``
    rows it reads the one the compare stage wrote beside the errors table (or summarises
    the table itself), so each page can be its own job, in parallel with the other cases."""
    from .collect import case_findings, case_summary

    errors_path = Path(results) / case_id / "errors.parquet"
    errors = read_table(errors_path)
    meta = read_metadata(errors_path)
    case = load_case_quietly(cases, case_id)
    inputs = list(case.input_names) if case else input_columns(errors)
    if summary is None:
        summary = case_summary(errors_path, inputs)
    findings = case_findings(errors_path, inputs)
    notes = _case_notes(case_id, case, meta, summary)
    out = Path(reports) / f"{case_id}.html"
    from .experiments import ExperimentCase

    if isinstance(case, ExperimentCase):
        reference = (meta.get("inputs") or {}).get("reference") or {}
        errors.attrs["parameters"] = (meta.get("selection") or {}).get("parameters")
        text = experiment_page(case, errors, summary, reference.get("facts"), findings, notes)
    else:
        text = case_page(case_id, errors, summary, case, findings, notes)
    atomic_write_text(out, text)
    return out


def render_reports(
    results: str | Path = "results", reports: str | Path = "reports", cases: str | Path = "cases"
) -> list[Path]:
    """Write ``reports/index.html`` and ``reports/<case>.html`` for every case in
    ``results/summary.parquet``; returns the paths."""
    summary = read_table(Path(results) / "summary.parquet")
    pages = [
        render_case(c, results, reports, cases, summary[summary.case == c])
        for c in sorted(summary.case.unique())
    ]
    return [render_index(results, reports, cases), *pages]
