"""The report's figures: bits of error and outcome bands against the swept input, a row
of panels per dtype and framework and a panel per mode that framework ran (its compiled
modes too: tf.function and XLA, jax.jit, torch.compile), drawn as inline SVG by
:mod:`harness.report.svgplot` (a run of one outcome is one shape).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from harness.backends.catalogue import TITLES
from harness.cases.schema import DEFAULT_BACKEND
from harness.judge.compare import OUTCOMES, input_columns
from harness.report.html import COLOURS, SEVERITY
from harness.report.svgplot import Chart, polyline_points, runs

__all__ = ["axis_input", "band_edges", "band_figure", "bits_figure", "plain"]

_DTYPE_ORDER = ("float16", "bfloat16", "float32", "float64")
_MODE_ORDER = ("eager", "function", "xla", "jit", "compile")
#: Each method's dashes (SVG ``stroke-dasharray``); reverse mode is solid.
_METHOD_DASH = {
    "reverse": "",
    "forward": "6 3",
    "forward_over_reverse": "6 2 1 2",
    "taylor": "5 1 1 1 1 1",
    "finite_difference": "1 2",
}
#: matplotlib's tab10, the implementations' colours.
_PALETTE = (
    "#1f77b4",
    "#ff7f0e",
    "#2ca02c",
    "#d62728",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#7f7f7f",
    "#bcbd22",
    "#17becf",
)


def axis_input(errors: pd.DataFrame, inputs: Sequence[str]) -> str:
    """The input a case's figures put on the x axis: the first that varies."""
    for name in inputs:
        if errors[name].nunique() > 1:
            return name
    return inputs[0]


def _layout(errors: pd.DataFrame) -> list[tuple[str, str, list[str]]]:
    """The figure's rows: one per (dtype, back end) present, each with the modes that
    back end ran (eager first, then its compiled modes: tf.function and XLA, jax.jit,
    torch.compile), one panel each."""
    if "backend" not in errors:
        errors = errors.assign(backend=DEFAULT_BACKEND)
    order = {m: i for i, m in enumerate(_MODE_ORDER)}
    combos = errors[["dtype", "backend", "mode"]].drop_duplicates().astype(str)
    out = []
    for dtype in (d for d in _DTYPE_ORDER if d in set(combos["dtype"])):
        sub = combos[combos["dtype"] == dtype]
        present = set(sub["backend"])
        for backend in [b for b in TITLES if b in present] + sorted(present - set(TITLES)):
            modes = sorted(
                set(sub[sub["backend"] == backend]["mode"]), key=lambda m: order.get(m, 9)
            )
            out.append((dtype, backend, modes))
    return out


def _panel_title(dtype: str, backend: str, mode: str) -> str:
    return f"{TITLES.get(backend, backend)} · {dtype} · {mode}"


def _groups(frame: pd.DataFrame, keys: list[str]) -> dict:
    """``frame``'s rows by ``keys`` (one pass instead of a mask per panel and line)."""
    if frame.empty:
        return {}
    groups = frame.groupby(keys, sort=False, observed=True)
    return {k if isinstance(k, tuple) else (k,): g for k, g in groups}


def _spread(x: pd.Series, y: pd.Series) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The distinct ``x`` in order, and the least and most ``y`` at each (NaN ignored, as
    a pandas groupby's min and max; one sort instead of a groupby per line)."""
    xs, ys = x.to_numpy(dtype=float), y.to_numpy(dtype=float)
    keep = ~np.isnan(xs)
    xs, ys = xs[keep], ys[keep]
    order = np.argsort(xs, kind="stable")
    xs, ys = xs[order], ys[order]
    at, start = np.unique(xs, return_index=True)
    if not len(at):
        return at, at.copy(), at.copy()
    with np.errstate(invalid="ignore"):
        return at, np.fmin.reduceat(ys, start), np.fmax.reduceat(ys, start)


def plain(errors: pd.DataFrame) -> pd.DataFrame:
    """``errors`` with its label columns as categories: the figures group and compare
    them hundreds of times, and a column of Arrow strings iterates a value at a time."""
    labels = ("backend", "implementation", "method", "mode", "dtype", "partial", "outcome")
    return errors.astype({c: "category" for c in labels if c in errors})


#: Pixels: a panel's width, the gap between panels, the margins.
_PANEL_W, _GAP, _RIGHT, _BOTTOM = 360, 40, 10, 44


def bits_figure(errors: pd.DataFrame, x_name: str, derivative: str) -> str:
    """Bits of error against the input: a row of panels per (dtype, framework), a panel
    per mode that framework ran; colour implementation, dashes method; NaN at the top."""
    if "backend" not in errors:
        errors = errors.assign(backend=DEFAULT_BACKEND)
    layout = _layout(errors)
    impls = sorted(errors.implementation.unique())
    colour = {impl: _PALETTE[k % len(_PALETTE)] for k, impl in enumerate(impls)}
    # On a grid, one line per combination of the other inputs (a single line through
    # every point would zigzag between them); an input tied to x is not another input.
    by_x = errors.groupby(x_name, observed=True)
    others = [c for c in input_columns(errors) if c != x_name and by_x[c].nunique().max() > 1]
    cols = max(len(m) for _, _, m in layout)
    left, top, height_per = 56, 62, 150
    width = left + cols * _PANEL_W + (cols - 1) * _GAP + _RIGHT
    height = top + len(layout) * (height_per + _BOTTOM)
    chart = Chart(width, height)
    panels = _groups(errors, ["dtype", "backend", "mode"])
    for i, (dtype, backend, modes) in enumerate(layout):
        top_bits = {"float16": 16, "bfloat16": 16, "float32": 32}.get(dtype, 64)
        y = top + i * (height_per + _BOTTOM)
        for j, mode in enumerate(modes):
            sub = panels.get((dtype, backend, mode), errors.iloc[:0])
            p = chart.panel(
                left + j * (_PANEL_W + _GAP),
                y,
                _PANEL_W,
                height_per,
                sub[x_name].to_numpy(dtype=float),
                _panel_title(dtype, backend, mode),
                x_name,
            )
            lo, hi = -0.5, top_bits + 1
            for tick in range(0, top_bits + 1, 16 if top_bits > 16 else 4):
                p.hline(p.y_of(tick, lo, hi), "#eee")
            if j == 0:
                for tick in range(0, top_bits + 1, 16 if top_bits > 16 else 4):
                    chart.text(p.x - 4, p.y_of(tick, lo, hi) + 3, str(tick), size=8, anchor="end")
            # One line per implementation and method; on a grid, the worst over the
            # other inputs at each x, over a shade from their best to their worst.
            lines = _groups(sub, ["implementation", "method"])
            for impl, method in sorted(lines, key=str):
                g = lines[(impl, method)]
                dash = _METHOD_DASH.get(method, "")
                if others:
                    at, least, most = _spread(g[x_name], g["bits"])
                    xs = p.scale(at)
                    low = p.y_of(np.clip(least, lo, hi), lo, hi)
                    high = p.y_of(np.clip(most, lo, hi), lo, hi)
                    p.area(colour[impl], xs, low, high)
                    segs = polyline_points(xs, high)
                else:
                    g = g.sort_values(x_name)
                    # A NaN result has the most bits (the top); an unjudged value has
                    # none, and the line breaks there.
                    segs = polyline_points(
                        p.scale(g[x_name].to_numpy(dtype=float)),
                        p.y_of(np.clip(g["bits"].to_numpy(dtype=float), lo, hi), lo, hi),
                    )
                p.line(colour[impl], segs, dash, title=f"{impl} / {method}")
        chart.text(14, y + height_per / 2, "bits of error", size=9, anchor="middle", rotate=True)
    legend = [(colour[i], "", i) for i in impls] + [
        ("#444", dash, m) for m, dash in _METHOD_DASH.items() if m in set(errors.method)
    ]
    _legend(chart, legend, width, 36)
    chart.text(
        width / 2,
        16,
        f"derivative {derivative}: bits of error (0 = exact; NaN at the top)"
        + (
            f"; each line the worst over {', '.join(others)}, shaded down to the best"
            if others
            else ""
        ),
        size=12,
        anchor="middle",
    )
    return chart.svg()


def _legend(chart: Chart, items, width: float, y: float) -> None:
    """A centred legend line: ``(colour, dash, label)`` per item."""
    widths = [34 + 6.2 * len(label) for _, _, label in items]
    x = max(4.0, (width - sum(widths)) / 2)
    for (colour, dash, label), w in zip(items, widths):
        style = f' stroke-dasharray="{dash}"' if dash else ""
        chart.raw(f'<path stroke="{colour}" stroke-width="2"{style} d="M{x:.0f} {y - 4:.0f}h24"/>')
        chart.text(x + 28, y, label, size=10)
        x += w


def band_figure(
    errors: pd.DataFrame, x_name: str, derivative: str, marks: Sequence[tuple] = ()
) -> str:
    """Outcome bands: one band per implementation and method, coloured by outcome along the
    input (the picture of seed 000's figure), each run of one outcome one shape; a row
    of panels per (dtype, framework), a panel per mode that framework ran. ``marks``:
    ``(backend, dtype, mode, x, outcome)`` edges of the findings, drawn as dashed lines
    on their own panel only. Hovering a box tells its outcome."""
    if "backend" not in errors:
        errors = errors.assign(backend=DEFAULT_BACKEND)
    layout = _layout(errors)
    # Each framework's own bands: the implementations and the methods it ran.
    bands = {
        backend: [
            tuple(r)
            for r in errors[errors["backend"] == backend][["implementation", "method"]]
            .drop_duplicates()
            .sort_values(["implementation", "method"])
            .itertuples(index=False)
        ]
        for backend in set(errors["backend"])
    }
    most = max(len(r) for r in bands.values())
    code = {o: i for i, o in enumerate(OUTCOMES)}
    severity = {o: i for i, o in enumerate(SEVERITY)}
    # The left column carries the row labels ("implementation / method", 8 px text).
    left = 12 + 5.0 * max(len(f"{a} / {b}") for r in bands.values() for a, b in r)
    row_h, top = 14, 34
    height_per = row_h * most
    cols = max(len(m) for _, _, m in layout)
    width = left + cols * _PANEL_W + (cols - 1) * (_GAP / 2) + _RIGHT
    # Each row of bands its title above and its axis label below: 8 px more than a bits row.
    height = top + len(layout) * (height_per + _BOTTOM + 8)
    chart = Chart(width, height)
    # Each row's severity rank, once for the figure (a map per band took most of it).
    errors = errors.assign(_rank=errors["outcome"].astype(str).map(severity).astype(float))
    panels = _groups(errors, ["dtype", "backend", "mode"])
    for i, (dtype, backend, modes) in enumerate(layout):
        rows = bands[backend]
        y = top + i * (height_per + _BOTTOM + 8)
        for j, mode in enumerate(modes):
            sub = panels.get((dtype, backend, mode), errors.iloc[:0])
            xs = np.sort(sub[x_name].unique()).astype(float)
            if len(xs) == 0:
                continue
            edges = band_edges(xs)
            p = chart.panel(
                left + j * (_PANEL_W + _GAP / 2),
                y,
                _PANEL_W,
                row_h * len(rows),
                xs,
                _panel_title(dtype, backend, mode),
                x_name,
                domain=(edges[0], edges[-1]),
            )
            px = p.scale(edges)
            by_row = _groups(sub, ["implementation", "method"])
            boxes: dict[int, list] = {}
            for r, key in enumerate(rows):
                g = by_row.get(key)
                if g is None:
                    continue
                # On a grid, the most severe outcome over the other inputs at each x.
                grid = np.full(len(xs), np.nan)
                rank = g["_rank"].to_numpy(dtype=float)
                at = np.searchsorted(xs, g[x_name].to_numpy(dtype=float))
                worst = np.full(len(xs), np.inf)
                np.minimum.at(worst, at, rank)
                seen = np.isfinite(worst)
                grid[seen] = [code[SEVERITY[int(k)]] for k in worst[seen]]
                for start, stop, c in runs(grid):
                    boxes.setdefault(int(c), []).append(
                        (px[start], px[stop], p.y + r * row_h, p.y + (r + 1) * row_h)
                    )
            for c in sorted(boxes):
                p.fill(COLOURS[OUTCOMES[c]], boxes[c], title=OUTCOMES[c])
            for m_backend, m_dtype, m_mode, x, outcome in marks:
                here = (m_backend, m_dtype, m_mode) == (backend, dtype, mode)
                if here and xs[0] <= x <= xs[-1]:
                    p.vline(float(p.scale(x)), COLOURS.get(outcome, "#000"))
            if j == 0:
                for r, (a, b) in enumerate(rows):
                    chart.text(p.x - 4, p.y + r * row_h + row_h - 4, f"{a} / {b}", 8, "end")
    chart.text(width / 2, 14, f"derivative {derivative}: outcome along the input", 12, "middle")
    return chart.svg()


def band_edges(xs: np.ndarray) -> np.ndarray:
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
