"""The page of experiment ``hessian_norm`` (:mod:`harness.experiments.hessian_norm`): the
error of each estimator against the finite-difference step, the best step per dtype against
the rounding-truncation optimum, and the Monte-Carlo error against the exact norms."""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["optimum_table", "page"]


_EPS = {"float16": 2.0**-10, "bfloat16": 2.0**-7, "float32": 2.0**-23, "float64": 2.0**-52}


def optimum_table(errors: pd.DataFrame) -> pd.DataFrame:
    """Per (function, n, dtype): the step h with the smallest error of the finite-difference
    Frobenius estimate (largest M), that error, and eps^(1/3)."""
    fd = errors[(errors.method == "finite_difference") & (errors.partial == "frobenius_norm")]
    fd = fd[fd.probes == fd.probes.max()]
    rows = []
    for (fn, n, dtype), g in fd.groupby(["implementation", "n", "dtype"], observed=True):
        g = g[g["mode"] == g["mode"].iloc[0]]
        best = g.loc[g.rel_error.idxmin()]
        auto = errors[
            (errors.implementation == fn)
            & (errors.n == n)
            & (errors.dtype == dtype)
            & (errors.method == "forward_over_reverse")
            & (errors.partial == "frobenius_norm")
            & (errors.probes == best.probes)
        ]
        rows.append(
            {
                "function": fn,
                "n": int(n),
                "dtype": dtype,
                "best_h": float(best.h),
                "eps^(1/3)": _EPS[dtype] ** (1 / 3),
                "fd_rel_error": float(best.rel_error),
                "fd_bits": float(best.bits),
                "for_rel_error": float(auto.rel_error.max()) if len(auto) else np.nan,
            }
        )
    return pd.DataFrame(rows)


def page(errors: pd.DataFrame, facts: dict) -> str:
    import matplotlib

    from harness.report.html import svg
    from harness.report.html import table as _table

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    parts = [
        "<h2>Error of the finite difference against the step h</h2>",
        "<p>Relative error of the Frobenius estimate (the largest M) against the same "
        "estimator computed exactly with the same probes. Small h: the difference of "
        "gradients cancels (rounding error ~ eps/h, and 0 once x + h delta rounds to x); "
        "large h: truncation (~ h<sup>2</sup>). The grey line marks eps<sup>1/3</sup>, "
        "the textbook optimum for a central difference; dashed lines are "
        "forward-over-reverse, which needs no step.</p>",
    ]
    functions = list(dict.fromkeys(errors.implementation))
    dtypes = [d for d in _EPS if d in set(errors.dtype)]
    mode = errors["mode"].iloc[0]
    sub = errors[errors["mode"] == mode]
    fig, axes = plt.subplots(
        len(functions),
        len(dtypes),
        figsize=(4.2 * len(dtypes), 2.6 * len(functions)),
        squeeze=False,
    )
    top = sub.probes[sub.partial == "frobenius_norm"].max()
    for r, fn in enumerate(functions):
        for c, dtype in enumerate(dtypes):
            ax = axes[r][c]
            g = sub[(sub.implementation == fn) & (sub.dtype == dtype)]
            g = g[(g.partial == "frobenius_norm") & (g.probes == top)]
            for k, (n, gn) in enumerate(g.groupby("n")):
                color = f"C{k}"
                fd = gn[gn.method == "finite_difference"].sort_values("h")
                err = np.clip(fd.rel_error.to_numpy(float), 1e-18, 1e3)
                ax.loglog(fd.h, err, "o-", ms=2.5, lw=1, color=color, label=f"n={n}")
                auto = gn[gn.method == "forward_over_reverse"].rel_error
                if len(auto):
                    ax.axhline(max(float(auto.max()), 1e-18), color=color, ls="--", lw=0.8)
            ax.axvline(_EPS[dtype] ** (1 / 3), color="0.5", lw=1)
            ax.set_title(f"{fn}, {dtype}", fontsize=8)
            ax.set_xlabel("h", fontsize=7)
            ax.set_ylabel("relative error", fontsize=7)
            ax.tick_params(labelsize=6)
            ax.legend(fontsize=6)
    fig.tight_layout()
    parts.append(f'<figure class="plot">{svg(fig)}</figure>')
    plt.close(fig)
    parts.append(
        "<h3>Best step per function, size and dtype</h3>"
        + _table(
            optimum_table(errors),
            numeric=("n", "best_h", "eps^(1/3)", "fd_rel_error", "fd_bits", "for_rel_error"),
        )
    )

    norms = (facts or {}).get("norms", {})
    parts.append(
        "<h2>Monte-Carlo error against the probe count M</h2><p>Relative error of "
        "Hutchinson's estimate (forward-over-reverse, the widest dtype) against the exact "
        "||H||<sub>F</sub>: the statistical error, shrinking like 1/sqrt(M) (grey), whatever "
        "the arithmetic. Power iteration's estimate against ||H||<sub>2</sub> is in the "
        "table below.</p>"
    )
    widest = dtypes[-1]
    fig, axes = plt.subplots(1, len(functions), figsize=(4.2 * len(functions), 2.8), squeeze=False)
    rows = []
    for c, fn in enumerate(functions):
        ax = axes[0][c]
        g = sub[
            (sub.implementation == fn)
            & (sub.dtype == widest)
            & (sub.method == "forward_over_reverse")
        ]
        for k, (n, gn) in enumerate(g.groupby("n")):
            exact = norms.get(f"{fn}/{int(n)}")
            if not exact:
                continue
            fr = gn[gn.partial == "frobenius_norm"].sort_values("probes")
            mc = np.abs(fr.value.to_numpy(float) - exact["frobenius"]) / exact["frobenius"]
            ax.loglog(
                fr.probes, np.clip(mc, 1e-18, None), "o-", ms=3, color=f"C{k}", label=f"n={n}"
            )
            sp = gn[gn.partial == "spectral_norm"].value
            rows.append(
                {
                    "function": fn,
                    "n": int(n),
                    "||H||_F": exact["frobenius"],
                    "||H||_2": exact["spectral"],
                    "power_iteration": float(sp.iloc[0]) if len(sp) else np.nan,
                    "power_rel_error": (
                        abs(float(sp.iloc[0]) - exact["spectral"]) / exact["spectral"]
                        if len(sp)
                        else np.nan
                    ),
                }
            )
        m = np.array(sorted(set(g.probes[g.partial == "frobenius_norm"])), dtype=float)
        if len(m):
            ax.loglog(m, 1 / np.sqrt(m), color="0.5", lw=1, label="1/sqrt(M)")
        ax.set_title(f"{fn}, {widest}", fontsize=8)
        ax.set_xlabel("probes M", fontsize=7)
        ax.set_ylabel("relative error vs ||H||_F", fontsize=7)
        ax.tick_params(labelsize=6)
        ax.legend(fontsize=6)
    fig.tight_layout()
    parts.append(f'<figure class="plot">{svg(fig)}</figure>')
    plt.close(fig)
    if rows:
        parts.append(
            _table(
                pd.DataFrame(rows),
                numeric=("n", "||H||_F", "||H||_2", "power_iteration", "power_rel_error"),
            )
        )
    return "\n".join(parts)
