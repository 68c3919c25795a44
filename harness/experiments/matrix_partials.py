"""Experiment ``matrix_mixed_partials``: second derivatives of ``loss = ||X X Y||_F``.

Seed 001 asks for ``d^2 loss / dY^2`` and the mixed block ``d/dX [d loss / dY]`` of
``loss(X, Y) = ||Z||_F``, ``Z = X @ X @ Y``, for symmetric n x n ``X`` and ``Y``, and
answers with the "trace trick" ``d/dX [Tr(d loss / dY)]``. The quantities, all order 2,
treat the n^2 entries of each matrix as independent variables (what a tape computes for
a matrix variable):

- ``YY`` ``[k, l, m, p]`` = d^2 loss / dY_kl dY_mp (n^4 entries);
- ``XY`` ``[k, l, a, b]`` = d^2 loss / dY_kl dX_ab, the mixed block in the layout of
  ``tape.jacobian(d loss / dY, X)`` (n^4 entries);
- ``trace_trick_X`` ``[a, b]`` = d/dX_ab of Tr(d loss / dY), and ``trace_trick_Y``
  ``[m, p]`` = d/dY_mp of the same trace (n^2 entries each): the seed's JAX code.

Implementations (the ``implementation`` column):

- ``jacobian`` (``reverse``): nested tapes, ``outer.jacobian(inner.gradient(loss, Y),
  [Y, X])``; its trace rows contract the blocks it computed;
- ``trace_trick`` (``reverse``): the seed's code, ``outer.gradient(trace(dY), [X, Y])``;
- ``hvp`` (``forward_over_reverse``): Hessian-vector products, a forward accumulator
  over a gradient tape, one per basis direction ``E_kl`` of ``Y`` (a column of both
  blocks) and one along the identity (the trace rows).

The same three ways in JAX and PyTorch, the seed's own frameworks:
:mod:`harness.experiments.matrix_ports`.

Inputs (columns): ``n``, ``sample`` (seeded X, Y), ``entry`` (the flat index in the
layouts above). X and Y are Gaussian samples rounded to multiples of 1/128, exact in
every dtype, so one mpmath reference serves all dtypes.

Reference: closed forms in mpmath. With A = X X, Z = A Y, S = ||Z||^2, loss = sqrt(S):
dS/dY_kl = 2 (A^T Z)_kl; dS/dX = 2 (Z Y^T X^T + X^T Z Y^T);
d^2 S / dY_kl dY_mp = 2 delta_lp (A^T A)_km;
d^2 S / dX_ab dY_kl = 2 [A_ak (X Y)_bl + (X^T A)_ak Y_bl + Z_al X_bk + delta_bk (X^T Z)_al];
and d^2 loss = d^2 S / (2 loss) - dS dS / (4 loss^3).
"""

from __future__ import annotations

import html
import itertools

import numpy as np
import pandas as pd

from harness.cases.experiment_kinds import MATRIX_PARTIALS
from harness.experiments import matrix_ports as ports
from harness.experiments.base import Experiment, experiment, run_in_mode
from harness.experiments.matrix_data import QUANTITIES, collect_rows, entries, flat_index, matrices


def exact_blocks(X: np.ndarray, Y: np.ndarray):
    """The four quantities in mpmath at the current precision, as dicts of index tuples."""
    import mpmath

    n = len(X)
    x = mpmath.matrix([[mpmath.mpf(float(v)) for v in row] for row in X])
    y = mpmath.matrix([[mpmath.mpf(float(v)) for v in row] for row in Y])
    a = x * x
    z = a * y
    xy = x * y
    xta = x.T * a
    xtz = x.T * z
    ata = a.T * a
    s = mpmath.fsum(z[i, j] ** 2 for i in range(n) for j in range(n))
    loss = mpmath.sqrt(s)
    gy = 2 * (a.T * z)
    gx = 2 * (z * y.T * x.T + x.T * z * y.T)
    yy, xyb = {}, {}
    for k, c, m, p in itertools.product(range(n), repeat=4):
        s2 = 2 * ata[k, m] if c == p else mpmath.mpf(0)
        yy[k, c, m, p] = s2 / (2 * loss) - gy[k, c] * gy[m, p] / (4 * loss**3)
    for k, c, a_, b in itertools.product(range(n), repeat=4):
        s2 = 2 * (
            a[a_, k] * xy[b, c]
            + xta[a_, k] * y[b, c]
            + z[a_, c] * x[b, k]
            + (xtz[a_, c] if b == k else 0)
        )
        xyb[k, c, a_, b] = s2 / (2 * loss) - gy[k, c] * gx[a_, b] / (4 * loss**3)
    tx = {(a_, b): mpmath.fsum(xyb[k, k, a_, b] for k in range(n)) for a_, b in entries(n, "X")}
    ty = {(m, p): mpmath.fsum(yy[k, k, m, p] for k in range(n)) for m, p in entries(n, "Y")}
    return {"YY": yy, "XY": xyb, "trace_trick_X": tx, "trace_trick_Y": ty}


def reference(params: dict, dps: int):
    rows = []
    for n in params["sizes"]:
        for sample in range(params["samples"]):
            blocks = exact_blocks(*matrices(params["seed"], n, sample))
            for quantity in QUANTITIES:
                for index, value in blocks[quantity].items():
                    rows.append(
                        {
                            "partial": quantity,
                            "n": n,
                            "sample": sample,
                            "entry": flat_index(index, n),
                            "value": value,
                        }
                    )
    return rows, {}


def _loss(tf, X, Y):
    # The seed's loss: torch.linalg.norm(X.mm(X).mm(Y), ord='fro').
    return tf.norm(tf.matmul(tf.matmul(X, X), Y), ord="fro", axis=(-2, -1))


def _implementations(tf):
    def jacobian(X, Y):
        with tf.GradientTape(persistent=True) as outer:
            outer.watch([X, Y])
            with tf.GradientTape() as inner:
                inner.watch(Y)
                loss = _loss(tf, X, Y)
            d_y = inner.gradient(loss, Y)
        yy = outer.jacobian(d_y, Y)
        xy = outer.jacobian(d_y, X)
        return {
            "YY": yy,
            "XY": xy,
            "trace_trick_X": tf.einsum("kkab->ab", xy),
            "trace_trick_Y": tf.einsum("kkmp->mp", yy),
        }

    def trace_trick(X, Y):
        # The seed's JAX answer in TensorFlow: scalarized_dy = trace(grad(f, Y)); then
        # grad(scalarized_dy, X) and grad(scalarized_dy, Y).
        with tf.GradientTape(persistent=True) as outer:
            outer.watch([X, Y])
            with tf.GradientTape() as inner:
                inner.watch(Y)
                loss = _loss(tf, X, Y)
            d_y = inner.gradient(loss, Y)
            scalarized = tf.linalg.trace(d_y)
        d_yx, d_yy = outer.gradient(scalarized, [X, Y])
        return {"trace_trick_X": d_yx, "trace_trick_Y": d_yy}

    def hvp(X, Y):
        n = X.shape[0]

        def along(v):
            with tf.autodiff.ForwardAccumulator(primals=Y, tangents=v) as acc:
                with tf.GradientTape() as tape:
                    tape.watch([X, Y])
                    loss = _loss(tf, X, Y)
                g_x, g_y = tape.gradient(loss, [X, Y])
            return acc.jvp(g_x), acc.jvp(g_y)

        cols_x, cols_y = [], []
        for k in range(n):
            for c in range(n):
                basis = tf.scatter_nd([[k, c]], tf.ones([1], Y.dtype), [n, n])
                jx, jy = along(basis)
                cols_x.append(jx)
                cols_y.append(jy)
        # Column (k, l) of each block: YY is symmetric, so jy[m, p] = YY[k, l, m, p].
        tx, ty = along(tf.eye(n, dtype=Y.dtype))
        return {
            "YY": tf.reshape(tf.stack(cols_y), [n, n, n, n]),
            "XY": tf.reshape(tf.stack(cols_x), [n, n, n, n]),
            "trace_trick_X": tx,
            "trace_trick_Y": ty,
        }

    return {
        "jacobian": ("reverse", jacobian),
        "trace_trick": ("reverse", trace_trick),
        "hvp": ("forward_over_reverse", hvp),
    }


def evaluate(tf, params: dict, dtype: str, mode: str) -> list[dict]:
    tf_dtype = getattr(tf, dtype)

    def call(fn, X, Y):
        out = fn(tf.constant(X, tf_dtype), tf.constant(Y, tf_dtype))
        return {q: (None if v is None else v.numpy()) for q, v in out.items()}

    ways = {
        name: (method, run_in_mode(tf, fn, mode))
        for name, (method, fn) in _implementations(tf).items()
    }
    return collect_rows(ways, params, call)


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
    errors = errors if "backend" in errors else errors.assign(backend="tensorflow")
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
        errors = errors.assign(backend="tensorflow")
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


experiment(
    Experiment(
        spec=MATRIX_PARTIALS,
        reference=reference,
        evaluate=evaluate,
        page=page,
        ports={"jax": ports.evaluate_jax, "torch": ports.evaluate_torch},
    )
)
