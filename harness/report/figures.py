"""The report's figures: bits of error and outcome bands against the swept input, a row
of panels per dtype and framework and a panel per mode that framework ran (its compiled
modes too: tf.function and XLA, jax.jit, torch.compile), drawn by matplotlib and inlined
as SVG (:func:`harness.report.html.svg`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from harness.backends.catalogue import TITLES
from harness.cases.schema import DEFAULT_BACKEND
from harness.judge.compare import OUTCOMES, input_columns
from harness.report.html import COLOURS, svg

__all__ = ["axis_input", "band_edges", "band_figure", "bits_figure", "set_xscale"]

_DTYPE_ORDER = ("float16", "bfloat16", "float32", "float64")
_MODE_ORDER = ("eager", "function", "xla", "jit", "compile")
_METHOD_STYLE = {
    "reverse": "-",
    "forward": "--",
    "forward_over_reverse": "-.",
    "taylor": (0, (5, 1, 1, 1, 1, 1)),
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


#: Each back end's name as a reader knows it, in the registry's order.


def _layout(errors: pd.DataFrame) -> list[tuple[str, str, list[str]]]:
    """The figure's rows: one per (dtype, back end) present, each with the modes that
    back end ran (eager first, then its compiled modes: tf.function and XLA, jax.jit,
    torch.compile), one panel each."""
    if "backend" not in errors:
        errors = errors.assign(backend=DEFAULT_BACKEND)
    order = {m: i for i, m in enumerate(_MODE_ORDER)}
    out = []
    for dtype in (d for d in _DTYPE_ORDER if d in set(errors.dtype)):
        sub = errors[errors.dtype == dtype]
        present = set(sub["backend"])
        for backend in [b for b in TITLES if b in present] + sorted(present - set(TITLES)):
            modes = sorted(
                set(sub[sub["backend"] == backend]["mode"]), key=lambda m: order.get(m, 9)
            )
            out.append((dtype, backend, modes))
    return out


def _grid(layout, width_per=3.7, height_per=1.7, left=0.65, top=0.9, wgap=0.5):
    """Panels of ``width_per`` x ``height_per`` inches, a row per (dtype, back end) of
    ``layout``, a column per mode, with fixed margins in inches (``top`` holds the title
    and legend, ``left`` the y labels); unused panels are hidden."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows, cols = len(layout), max(len(m) for _, _, m in layout)
    bottom, right, hgap = 0.45, 0.15, 0.6
    width = left + cols * width_per + (cols - 1) * wgap + right
    height = top + rows * height_per + (rows - 1) * hgap + bottom
    fig, axes = plt.subplots(rows, cols, squeeze=False, figsize=(width, height))
    fig.subplots_adjust(
        left=left / width,
        right=1 - right / width,
        bottom=bottom / height,
        top=1 - top / height,
        wspace=wgap / width_per,
        hspace=hgap / height_per,
    )
    for i, (_, _, modes) in enumerate(layout):
        for j in range(len(modes), cols):
            axes[i][j].set_visible(False)
    return fig, axes


def _panel_title(dtype: str, backend: str, mode: str) -> str:
    return f"{TITLES.get(backend, backend)} · {dtype} · {mode}"


def bits_figure(errors: pd.DataFrame, x_name: str, derivative: str) -> str:
    """Bits of error against the input: a row of panels per (dtype, framework), a panel
    per mode that framework ran; colour implementation, line style method."""
    import matplotlib.pyplot as plt

    if "backend" not in errors:
        errors = errors.assign(backend=DEFAULT_BACKEND)
    layout = _layout(errors)
    impls = sorted(errors.implementation.unique())
    # On a grid, one line per combination of the other inputs (a single line through
    # every point would zigzag between them); an input tied to x is not another input.
    by_x = errors.groupby(x_name, observed=True)
    others = [c for c in input_columns(errors) if c != x_name and by_x[c].nunique().max() > 1]
    palette = plt.get_cmap("tab10")
    fig, axes = _grid(layout)
    for i, (dtype, backend, modes) in enumerate(layout):
        for j, mode in enumerate(modes):
            ax = axes[i][j]
            panel = errors[
                (errors.dtype == dtype) & (errors["backend"] == backend) & (errors["mode"] == mode)
            ]
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
                            ls=style,
                            color=palette(k % 10),
                            lw=1.1,
                            rasterized=True,
                        )
            set_xscale(ax, panel[x_name].to_numpy())
            ax.set_ylim(-0.5, {"float16": 16, "bfloat16": 16, "float32": 32}.get(dtype, 64) + 1)
            ax.grid(alpha=0.3)
            ax.set_title(_panel_title(dtype, backend, mode), fontsize=10)
            if j == 0:
                ax.set_ylabel("bits of error", fontsize=9)
            ax.set_xlabel(x_name, fontsize=9)
            ax.tick_params(labelsize=8)
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
        fontsize=9,
        bbox_to_anchor=(0.5, 1 - 0.3 / height),
        frameon=False,
    )
    fig.suptitle(
        f"derivative {derivative}: bits of error (0 = exact; NaN at the top)"
        + (f"; one line per value of {', '.join(others)}" if others else ""),
        y=1 - 0.05 / height,
        va="top",
        fontsize=11,
    )
    return svg(fig)


def band_figure(
    errors: pd.DataFrame, x_name: str, derivative: str, marks: Sequence[tuple] = ()
) -> str:
    """Outcome bands: one band per implementation and method, coloured by outcome along the
    input (the picture of seed 000's figure); a row of panels per (dtype, framework), a
    panel per mode that framework ran. ``marks``: ``(backend, dtype, mode, x, outcome)``
    edges of the findings, drawn as dashed lines on their own panel only."""
    from matplotlib.colors import ListedColormap

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
    cmap = ListedColormap([COLOURS[o] for o in OUTCOMES])
    # The left column carries the row labels ("implementation / method", 8 pt).
    label_inches = 0.3 + 0.065 * max(len(f"{a} / {b}") for r in bands.values() for a, b in r)
    fig, axes = _grid(layout, height_per=0.2 * most + 0.3, left=label_inches, top=0.45, wgap=0.3)
    for i, (dtype, backend, modes) in enumerate(layout):
        rows = bands[backend]
        for j, mode in enumerate(modes):
            ax = axes[i][j]
            panel = errors[
                (errors.dtype == dtype) & (errors["backend"] == backend) & (errors["mode"] == mode)
            ]
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
            for mark in marks:
                m_backend, m_dtype, m_mode, x, outcome = mark
                here = (m_backend, m_dtype, m_mode) == (backend, dtype, mode)
                if here and xs[0] <= x <= xs[-1]:
                    ax.axvline(x, color=COLOURS.get(outcome, "#000"), lw=0.9, ls="--")
            set_xscale(ax, xs)
            ax.set_yticks(np.arange(len(rows)) + 0.5)
            ax.set_yticklabels([f"{a} / {b}" for a, b in rows] if j == 0 else [], fontsize=8)
            ax.invert_yaxis()
            ax.set_title(_panel_title(dtype, backend, mode), fontsize=10)
            ax.set_xlabel(x_name, fontsize=9)
            ax.tick_params(axis="x", labelsize=8)
    fig.suptitle(
        f"derivative {derivative}: outcome along the input",
        y=1 - 0.05 / fig.get_figheight(),
        va="top",
        fontsize=11,
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
