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

import html
import io
import json
import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from .compare import OUTCOMES, covers, input_columns
from .results import atomic_write_text, read_metadata, read_table
from .summary import NOT_FAILURES, ranked_failures

__all__ = ["COLOURS", "render_reports"]

#: One colour per outcome, the key on every page.
COLOURS = {
    "ok": "#2e7d32",
    "inaccurate": "#f9a825",
    "wrong": "#c62828",
    "nan": "#6a1b9a",
    "inf": "#ef6c00",
    "zero": "#1565c0",
    "missing": "#8d6e63",
    "error": "#212121",
    "ref_unreliable": "#cfd8dc",
    "flushed": "#80cbc4",
}
MEANING = {
    "ok": "within tolerance of the rounded reference",
    "inaccurate": "finite, beyond tolerance, right sign and magnitude",
    "wrong": "finite, wrong sign or off by a factor of 2 or more",
    "nan": "NaN",
    "inf": "infinite where the rounded reference is finite",
    "zero": "0 where the rounded reference is not",
    "missing": "the framework returned no gradient (None)",
    "error": "the framework raised an exception",
    "ref_unreliable": "the reference did not verify here; not judged",
    "flushed": "what the platform's flush of subnormals gives (a platform effect, reported apart)",
}
#: Most severe first: the colour of a matrix cell is its most severe outcome.
SEVERITY = (
    "error",
    "wrong",
    "nan",
    "inf",
    "zero",
    "missing",
    "inaccurate",
    "flushed",
    "ok",
    "ref_unreliable",
)
_DTYPE_ORDER = ("float16", "bfloat16", "float32", "float64")
_MODE_ORDER = ("eager", "function", "xla")
_METHOD_STYLE = {
    "reverse": "-",
    "forward": "--",
    "forward_over_reverse": "-.",
    "finite_difference": ":",
}

_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:1.5rem auto;
max-width:1300px;padding:0 1rem;color:#212121;line-height:1.4}
h1{font-size:1.6rem}h2{font-size:1.25rem;margin-top:2rem;border-bottom:1px solid #ddd}
h3{font-size:1.05rem}table{border-collapse:collapse;font-size:.85rem;margin:.5rem 0}
th,td{border:1px solid #ddd;padding:.2rem .45rem;text-align:left;vertical-align:top}
th{background:#f5f5f5}td.num{text-align:right;font-variant-numeric:tabular-nums}
.key span{display:inline-block;margin:.15rem .6rem .15rem 0;font-size:.85rem}
.sw{display:inline-block;width:.9rem;height:.9rem;vertical-align:middle;margin-right:.25rem;
border:1px solid #999}.cell{color:#fff;text-align:center;font-size:.75rem;min-width:2.3rem}
.cell.light{color:#212121}.muted{color:#666}.big{font-size:1.6rem;font-weight:600}
.headline td{padding:.4rem .9rem}figure{margin:.5rem 0}figure svg{max-width:100%;height:auto}
code{background:#f5f5f5;padding:0 .2rem}details{margin:.4rem 0}
"""


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _page(title: str, body: str) -> str:
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width,initial-scale=1">'
        f"<title>{_e(title)}</title><style>{_CSS}</style></head><body>\n{body}\n</body></html>\n"
    )


def _key() -> str:
    items = "".join(
        f'<span><i class="sw" style="background:{COLOURS[o]}"></i><b>{o}</b> '
        f'<span class="muted">{_e(MEANING[o])}</span></span>'
        for o in OUTCOMES
    )
    return f'<div class="key">{items}</div>'


def _table(frame: pd.DataFrame, numeric: Sequence[str] = ()) -> str:
    head = "".join(f"<th>{_e(c)}</th>" for c in frame.columns)
    rows = []
    for rec in frame.itertuples(index=False):
        cells = []
        for c, v in zip(frame.columns, rec):
            if isinstance(v, float):
                v = "" if np.isnan(v) else f"{v:.3g}"
            cls = ' class="num"' if c in numeric else ""
            cells.append(f"<td{cls}>{_e(v)}</td>")
        rows.append("<tr>" + "".join(cells) + "</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"


# -- figures ----------------------------------------------------------------------------


def _svg(fig) -> str:
    import matplotlib.pyplot as plt

    buf = io.StringIO()
    # No metadata block: it carries a render date (pages would differ run to run) and
    # RDF namespace addresses that look like links.
    # Fixed margins (see _grid), not bbox_inches="tight" or tight_layout: each of those
    # lays out every log axis's ticks again, most of a page's time.
    fig.savefig(
        buf,
        format="svg",
        dpi=110,
        metadata={"Date": None, "Creator": None, "Format": None, "Type": None},
    )
    plt.close(fig)
    text = buf.getvalue()
    text = re.sub(r"<metadata>.*?</metadata>", "", text, flags=re.S)
    return text[text.index("<svg") :]


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
    return _svg(fig)


def band_figure(errors: pd.DataFrame, x_name: str, derivative: str) -> str:
    """Outcome bands: one band per implementation and method, coloured by outcome along the
    input (the picture of seed 000's figure); rows dtype, columns mode."""
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
    return _svg(fig)


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
    return f"<h2>Outcomes</h2>{_key()}<p>{found}</p>"


def _worst_section(errors: pd.DataFrame, inputs: Sequence[str], heading: str) -> str:
    worst = _worst(errors, inputs)
    body = (
        _table(worst, numeric=("bits",)) if not worst.empty else "<p>Every judged value is ok.</p>"
    )
    return f"<h2>{heading}</h2>{body}"


def _expectations(case, errors: pd.DataFrame) -> str:
    if case is None or not case.expectations:
        return '<p class="muted">The case declares no expectations.</p>'
    rows = []
    for e in case.expectations:
        mask = covers(e, errors, case)
        g = errors[mask & (errors.expected_outcome == e.outcome)]
        held, broken = int((g.expected == "held").sum()), int((g.expected == "broken").sum())
        scope = ", ".join(
            filter(
                None,
                [
                    "/".join(e.implementations),
                    e.methods and "/".join(e.methods),
                    e.modes and "/".join(e.modes),
                    e.dtypes and "/".join(e.dtypes),
                    e.orders and "order " + "/".join(map(str, e.orders)),
                    e.partial and "partial " + case.label(e.partial),
                    *(f"{k} in [{lo:.3g}, {hi:.3g}]" for k, (lo, hi) in e.where.items()),
                ],
            )
        )
        status = "held" if broken == 0 and held else ("broken" if broken else "no points")
        rows.append(
            {
                "expectation": f"{scope} => {e.outcome}",
                "reason": e.reason,
                "held": held,
                "broken": broken,
                "status": status,
            }
        )
    return _table(pd.DataFrame(rows), numeric=("held", "broken"))


def experiment_page(
    case, errors: pd.DataFrame, summary: pd.DataFrame, facts: dict | None = None
) -> str:
    """The page of an experiment case: what and why, the experiment's own figures, the
    outcomes per quantity and the worst values."""
    from .experiments import get

    exp = get(case.experiment)
    inputs = list(exp.inputs)
    parts = [f'<p><a href="index.html">&larr; all cases</a></p><h1>{_e(case.title)}</h1>']
    parts.append(f"<p><b>Source.</b> {_e(case.source)}</p>")
    if case.notes:
        parts.append(f"<p><b>Notes.</b> {_e(case.notes)}</p>")
    params = errors.attrs.get("parameters") or case.parameters
    parts.append(
        f"<p><b>Experiment</b> <code>{_e(exp.name)}</code>: {_e(exp.description)} "
        f"Parameters: <code>{_e(json.dumps(params, sort_keys=True))}</code>.</p>"
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
            f"{_table(table, numeric=('ok', 'points', 'max_bits'))}</details>"
        )
    parts.append(_worst_section(errors, inputs, "Worst values"))
    return _page(f"{case.title} - harness report", "\n".join(parts))


def case_page(case_id: str, errors: pd.DataFrame, summary: pd.DataFrame, case=None) -> str:
    inputs = input_columns(errors)
    x_name = _axis_input(errors, inputs)
    title = case.title if case else case_id
    parts = [f'<p><a href="index.html">&larr; all cases</a></p><h1>{_e(title)}</h1>']
    if case is not None:
        parts.append(f"<p><b>Source.</b> {_e(case.source)}</p>")
        if case.notes:
            parts.append(f"<p><b>Notes.</b> {_e(case.notes)}</p>")
        impl_rows = [
            {
                "implementation": i.name,
                "kind": i.kind,
                "definition": i.registered or i.text,
                "description": i.description,
            }
            for i in case.implementations
        ]
        parts.append("<h2>Implementations</h2>" + _table(pd.DataFrame(impl_rows)))
        parts.append(
            f"<p>Function: <code>{_e(case.function_text)}</code>; reference: "
            f"<code>{_e(case.reference.text)}</code> in mpmath, verified.</p>"
        )
    parts.append(_outcomes_section(errors))
    parts.append("<h2>Expectations</h2>" + _expectations(case, errors))
    for partial in sorted(errors.partial.unique(), key=lambda p: (len(p), p)):
        label = partial or "f"
        sub = errors[errors.partial == partial]
        parts.append(f'<h2 id="d-{_e(label)}">Derivative {_e(label)} (order {len(partial)})</h2>')
        parts.append(f'<figure class="plot">{band_figure(sub, x_name, label)}</figure>')
        parts.append(f'<figure class="plot">{bits_figure(sub, x_name, label)}</figure>')
        dom = summary[(summary.case == case_id) & (summary.partial == partial)]
        if not dom.empty:
            table = dom[
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
                f"<details><summary>Stable domain ({len(table)} combinations)"
                f"</summary>{_table(table, numeric=('ok', 'points', 'max_bits'))}"
                "</details>"
            )
    parts.append(_worst_section(errors, inputs, "Worst points"))
    return _page(f"{title} - harness report", "\n".join(parts))


def _matrix(summary: pd.DataFrame) -> str:
    dtypes = [d for d in _DTYPE_ORDER if d in set(summary.dtype)]
    orders = sorted(summary.order.unique())
    head = (
        "<tr><th>case</th><th>implementation</th>"
        + "".join(f"<th>{d}<br>order {o}</th>" for d in dtypes for o in orders)
        + "</tr>"
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
                worst = next((k for k in SEVERITY if totals[k]), "ref_unreliable")
                judged = sum(v for k, v in totals.items() if k != "ref_unreliable")
                pct = 100 * totals["ok"] / judged if judged else 0
                light = " light" if worst in ("inaccurate", "ref_unreliable") else ""
                tip = ", ".join(f"{k} {v}" for k, v in totals.items() if v)
                cells.append(
                    f'<td class="cell{light}" style="background:{COLOURS[worst]}" '
                    f'title="{_e(tip)}">{pct:.0f}%</td>'
                )
        rows.append(
            f'<tr><td><a href="{_e(case)}.html">{_e(case)}</a></td>'
            f"<td>{_e(impl)}</td>{''.join(cells)}</tr>"
        )
    return (
        f'<table>{head}{"".join(rows)}</table><p class="muted">Each cell: the share of '
        "judged values that are ok over every method and mode; its colour is the most "
        "severe outcome present.</p>"
    )


def _findings(summary: pd.DataFrame, limit: int = 60) -> str:
    keys = ["case", "implementation", "method", "mode", "dtype", "derivative"]
    bad = [o for o in OUTCOMES if o not in NOT_FAILURES]

    def listing(frame: pd.DataFrame, what: str) -> str:
        if frame.empty:
            return f'<p class="muted">No {what}.</p>'
        frame = frame.copy()
        frame["failures"] = frame[bad].sum(axis=1)
        frame["outcomes"] = frame.apply(
            lambda r: ", ".join(f"{o} {int(r[o])}" for o in bad if r[o]), axis=1
        )
        shown = frame.sort_values(["failures"], ascending=False).head(limit)
        more = len(frame) - len(shown)
        table = _table(shown[[*keys, "points", "outcomes", "worst"]], numeric=("points",))
        tail = (
            f'<p class="muted">and {more} more: see <code>results/summary.csv</code>.</p>'
            if more > 0
            else ""
        )
        return table + tail

    failing = summary[summary[bad].sum(axis=1) > 0]
    unexpected = failing[failing["unexpected_failures"] > 0]
    expected = failing[(failing["unexpected_failures"] == 0) & (failing["expected_held"] > 0)]
    broken = summary[summary["expected_broken"] > 0]
    return (
        f"<h3>Unexpected failures ({len(unexpected)} combinations)</h3>"
        + listing(unexpected, "unexpected failures")
        + f"<h3>Expected failures ({len(expected)})</h3>"
        + listing(expected, "expected failures")
        + f"<h3>Expectations that did not hold ({len(broken)})</h3>"
        + (
            _table(broken[[*keys, "expected_held", "expected_broken", "worst"]])
            if not broken.empty
            else '<p class="muted">Every expectation held.</p>'
        )
    )


def index_page(
    summary: pd.DataFrame,
    meta: dict,
    case_meta: dict[str, dict],
    broken_cases: dict[str, list[str]],
) -> str:
    totals = {o: int(summary[o].sum()) for o in OUTCOMES}
    judged = sum(v for k, v in totals.items() if k != "ref_unreliable")
    headline = (
        '<table class="headline"><tr>'
        f'<td><div class="big">{summary.case.nunique()}</div>cases</td>'
        f'<td><div class="big">{judged:,}</div>values judged</td>'
        f'<td><div class="big">{100 * totals["ok"] / max(judged, 1):.1f}%</div>ok</td>'
        f'<td><div class="big">{int((summary["unexpected_failures"] > 0).sum())}</div>'
        "combinations with unexpected failures</td>"
        f'<td><div class="big">{int((summary["expected_broken"] > 0).sum())}</div>'
        "combinations breaking an expectation</td>"
        f'<td><div class="big">{len(broken_cases)}</div>case files that do not validate</td>'
        "</tr></table>"
    )
    tf = next((m.get("tensorflow") for m in case_meta.values() if m.get("tensorflow")), {}) or {}
    first = next(iter(case_meta.values()), {})
    prov = {
        "created": meta.get("created"),
        "git commit": f"{meta.get('git', {}).get('commit')} "
        f"({'dirty' if meta.get('git', {}).get('dirty') else 'clean'})",
        "python": meta.get("python"),
        "platform": meta.get("platform"),
        "cpu": meta.get("cpu"),
        "tensorflow": f"{tf.get('tensorflow')} on {', '.join(tf.get('devices', []))}",
        "grappler options": json.dumps(tf.get("grappler_options")),
        "packages": ", ".join(f"{k} {v}" for k, v in (meta.get("packages") or {}).items()),
        "study settings": json.dumps(first.get("selection")),
        "reference": json.dumps(first.get("reference")),
        "seed": first.get("seed"),
    }
    prov_rows = "".join(f"<tr><th>{_e(k)}</th><td>{_e(v)}</td></tr>" for k, v in prov.items())
    cases = "".join(
        f'<li><a href="{_e(c)}.html">{_e(c)}</a> <span class="muted">'
        f"{_e(case_meta.get(c, {}).get('title', ''))}</span></li>"
        for c in sorted(summary.case.unique())
    )
    broken = "".join(
        f"<li><b>{_e(c)}</b><pre>{_e(chr(10).join(p))}</pre></li>"
        for c, p in sorted(broken_cases.items())
    )
    body = (
        "<h1>Higher-order derivative study</h1>"
        + headline
        + "<h2>Outcome matrix</h2>"
        + _key()
        + _matrix(summary)
        + "<h2>Findings</h2>"
        + _findings(summary)
        + "<h2>Cases</h2><ul>"
        + cases
        + "</ul>"
        + (f"<h2>Case files that do not validate</h2><ul>{broken}</ul>" if broken else "")
        + f"<h2>Provenance</h2><table>{prov_rows}</table>"
    )
    return _page("harness report", body)


def _load_case_quietly(cases: str | Path, case_id: str):
    from .cases import load_case

    try:
        return load_case(Path(cases) / f"{case_id}.yaml")
    except Exception:  # noqa: BLE001 - the page still renders from the tables
        return None


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
    errors = read_table(Path(results) / case_id / "errors.parquet")
    case = _load_case_quietly(cases, case_id)
    if summary is None:
        from .collect import case_summary

        inputs = list(case.input_names) if case else input_columns(errors)
        summary = case_summary(Path(results) / case_id / "errors.parquet", inputs)
    out = Path(reports) / f"{case_id}.html"
    from .experiments import ExperimentCase

    if isinstance(case, ExperimentCase):
        meta = read_metadata(Path(results) / case_id / "errors.parquet")
        reference = (meta.get("inputs") or {}).get("reference") or {}
        errors.attrs["parameters"] = (meta.get("selection") or {}).get("parameters")
        page = experiment_page(case, errors, summary, reference.get("facts"))
    else:
        page = case_page(case_id, errors, summary, case)
    atomic_write_text(out, page)
    return out


def render_index(
    results: str | Path = "results", reports: str | Path = "reports", cases: str | Path = "cases"
) -> Path:
    """Write ``reports/index.html`` from ``results/summary.parquet``; returns its path."""
    from .cases import validate_paths

    results, reports = Path(results), Path(reports)
    summary = read_table(results / "summary.parquet")
    meta = read_metadata(results / "summary.parquet")
    _, problems = validate_paths(sorted(Path(cases).glob("*.yaml")))
    broken: dict[str, list[str]] = {}
    for p in problems:
        broken.setdefault(Path(p.file).stem, []).append(str(p))
    case_meta = {}
    for case_id in sorted(summary.case.unique()):
        case = _load_case_quietly(cases, case_id)
        path = results / case_id / "errors.parquet"
        case_meta[case_id] = {**read_metadata(path), "title": case.title if case else ""}
    index = reports / "index.html"
    atomic_write_text(index, index_page(summary, meta, case_meta, broken))
    return index


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
