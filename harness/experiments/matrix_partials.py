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

import itertools

import numpy as np

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


experiment(
    Experiment(
        spec=MATRIX_PARTIALS,
        reference=reference,
        evaluations={
            "tensorflow": evaluate,
            "jax": ports.evaluate_jax,
            "torch": ports.evaluate_torch,
        },
        page="harness.experiments.matrix_partials_page",
    )
)
