"""The report's figures: bits of error and outcome bands against the swept input, one
panel per dtype and mode, drawn by matplotlib and inlined as SVG (:func:`harness.report.html.svg`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from harness.judge.compare import OUTCOMES, input_columns
from harness.report.html import COLOURS, svg

__all__ = ["axis_input", "band_edges", "band_figure", "bits_figure", "set_xscale"]

_DTYPE_ORDER = ("float16", "bfloat16", "float32", "float64")
_MODE_ORDER = ("eager", "function", "xla")
_METHOD_STYLE = {
    "reverse": "-",
    "forward": "--",
    "forward_over_reverse": "-.",
    "finite_difference": ":",
}


def axis_input(errors: pd.DataFrame, inputs: Sequence[str]) -> str:
    """The input a case's figures put on the x axis: the first that varies."""
    for name in inputs:
        if errors[name].nunique() > 1:
            return name
    return inputs[0]


def set_xscale(ax, x: np.ndarray) -> None:
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
            set_xscale(ax, panel[x_name].to_numpy())
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
            edges = band_edges(xs)
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
            set_xscale(ax, xs)
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
