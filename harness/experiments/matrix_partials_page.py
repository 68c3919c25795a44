"""The page of experiment ``matrix_partials`` (:mod:`harness.experiments.matrix_partials`):
the bits of error of every entry per back end and dtype, and what the trace trick
computes, shown on the computed numbers. Only the report stage imports it."""

from __future__ import annotations

import html

import numpy as np
import pandas as pd

from harness.cases.schema import DEFAULT_BACKEND

__all__ = ["page"]


def _bits_figure(errors: pd.DataFrame) -> str:
    """Bits of error of every entry: one column per (quantity, implementation), one
    panel per back end and dtype, colour by n (each back end's first mode only: the modes
    agree)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from harness.report.html import svg

    if errors.empty:
        return ""
    errors = errors if "backend" in errors else errors.assign(backend=DEFAULT_BACKEND)
    backends = list(dict.fromkeys(errors.backend))
    first = {b: errors["mode"][errors.backend == b].iloc[0] for b in backends}
    sub = errors[errors["mode"] == errors.backend.map(first)]
    columns = sorted({(q, i) for q, i in zip(sub.partial, sub.implementation)})
    dtypes = sorted(set(sub.dtype))
    fig, axes = plt.subplots(
        len(backends),
        len(dtypes),
        figsize=(5.2 * len(dtypes), 3.2 * len(backends)),
        squeeze=False,
    )
    rng = np.random.default_rng(0)  # jitter only; fixed so pages are reproducible
    for row, backend in enumerate(backends):
        for ax, dtype in zip(axes[row], dtypes):
            for k, n in enumerate(sorted(set(sub.n))):
                g = sub[(sub.backend == backend) & (sub.dtype == dtype) & (sub.n == n)]
                x = np.array([columns.index((q, i)) for q, i in zip(g.partial, g.implementation)])
                ax.scatter(
                    x + rng.uniform(-0.3, 0.3, len(x)) + (k - 1) * 0.05,
                    g.bits.to_numpy(float),
                    s=4,
                    color=f"C{k}",
                    label=f"n={n}",
                    rasterized=True,
                )
            ax.set_xticks(range(len(columns)))
            ax.set_xticklabels([f"{q}\n{i}" for q, i in columns], fontsize=6, rotation=60)
            ax.set_ylabel("bits of error", fontsize=7)
            ax.set_title(f"{backend} · {dtype} · {first[backend]}", fontsize=8)
            ax.tick_params(axis="y", labelsize=6)
            ax.legend(fontsize=6, markerscale=2)
    fig.subplots_adjust(left=0.08, right=0.98, bottom=0.38 / len(backends), top=0.95, hspace=0.9)
    fig.subplots_adjust(wspace=0.25)
    return f'<figure class="plot">{svg(fig)}</figure>'


def page(errors: pd.DataFrame, facts: dict) -> str:
    """What the trace trick computes, shown on the computed numbers."""
    from harness.report.html import table as _table

    parts = [
        "<h2>What the trace trick computes</h2>",
        "<p>The seed's author wanted the mixed block <code>d/dX [d loss/dY]</code>: the "
        "n<sup>2</sup> x n<sup>2</sup> numbers <code>XY[k,l,a,b] = d<sup>2</sup>loss / "
        "dY<sub>kl</sub> dX<sub>ab</sub></code>. The trick <code>d/dX [Tr(d loss/dY)]"
        "</code> returns n<sup>2</sup> numbers: <code>T[a,b] = sum<sub>k</sub> "
        "XY[k,k,a,b]</code>, the block contracted with the identity over its Y indices, "
        "which is the Hessian-vector product of the mixed block along <code>dY = I</code> "
        "(the derivative of <code>d loss/dX</code> when every diagonal entry of Y moves "
        "together). It equals the wanted block only for n = 1; for n &gt; 1 it discards "
        "n<sup>4</sup> - n<sup>2</sup> of the block's degrees of freedom, and no choice "
        "of trace recovers them. Likewise <code>d/dY [Tr(d loss/dY)]</code> is "
        "<code>sum<sub>k</sub> YY[k,k,m,p]</code>, not <code>d<sup>2</sup>loss/dY<sup>2"
        "</sup></code>. (For symmetric X the derivative along the independent entry "
        "X<sub>ab</sub> = X<sub>ba</sub>, a &ne; b, is <code>XY[..,a,b] + XY[..,b,a]"
        "</code>; the tables use the unconstrained entries, as a tape does.)</p>",
    ]
    if "backend" not in errors:
        errors = errors.assign(backend=DEFAULT_BACKEND)
    ok = errors[errors.outcome != "ref_unreliable"]
    rows = []
    for (backend, impl, method, quantity, dtype, mode), g in ok.groupby(
        ["backend", "implementation", "method", "partial", "dtype", "mode"], observed=True
    ):
        rows.append(
            {
                "backend": backend,
                "implementation": impl,
                "method": method,
                "quantity": quantity,
                "dtype": dtype,
                "mode": mode,
                "entries": len(g),
                "ok": int((g.outcome == "ok").sum()),
                "max_bits": float(g.bits.max()),
                "max_rel_error": float(g.rel_error.max()),
            }
        )
    parts.append(
        "<h2>Every way against the mpmath reference</h2>"
        + _bits_figure(ok)
        + _table(pd.DataFrame(rows), numeric=("entries", "ok", "max_bits", "max_rel_error"))
    )
    # One worked example: n = 2, the first sample, float64, the first back end and mode.
    ex = errors[(errors.n == 2) & (errors["sample"] == 0) & (errors.dtype == "float64")]
    ex = ex[ex.backend == ex.backend.iloc[0]] if not ex.empty else ex
    ex = ex[(ex["mode"] == ex["mode"].iloc[0])] if not ex.empty else ex
    if not ex.empty:
        block = ex[(ex.implementation == "jacobian") & (ex.partial == "XY")].sort_values("entry")
        trick = ex[(ex.implementation == "trace_trick") & (ex.partial == "trace_trick_X")]
        if len(block) == 16 and len(trick) == 4:
            m = block.value.to_numpy().reshape(2, 2, 2, 2)
            t = trick.sort_values("entry").value.to_numpy().reshape(2, 2)
            parts.append(
                "<h3>n = 2, sample 0, float64</h3><p>Mixed block by nested jacobians, "
                "rows (k,l), columns (a,b):</p><pre>"
                + html.escape(np.array2string(m.reshape(4, 4), precision=6))
                + "</pre><p>Trace trick T[a,b]:</p><pre>"
                + html.escape(np.array2string(t, precision=6))
                + "</pre><p>sum<sub>k</sub> XY[k,k,a,b] from the block:</p><pre>"
                + html.escape(np.array2string(np.einsum("kkab->ab", m), precision=6))
                + "</pre>"
            )
    return "\n".join(parts)
