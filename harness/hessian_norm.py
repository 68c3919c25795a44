"""Experiment ``hessian_norm``: the Hessian's norm from Hessian-vector products.

Seed 001 ("How to use tensorflow to approximate hessian matrix's norm") estimates the
norm of the Hessian H of f at x with random probes delta ~ N(0, I) and central
differences of gradients. This experiment estimates, for fixed smooth test functions in
n dimensions:

- ``frobenius_norm``: Hutchinson's estimate sqrt(mean_j ||H delta_j||^2) over the first
  M probes (E ||H delta||^2 = ||H||_F^2 for delta ~ N(0, I));
- ``spectral_norm``: power iteration, v <- H v / ||H v|| from a seeded start, K steps,
  then ||H v||;

where H delta comes from (the ``method`` column):

- ``finite_difference``: the seed's (grad f(x + h delta) - grad f(x - h delta)) / 2h,
  over a sweep of steps h (input ``h``);
- ``forward_over_reverse``: a forward accumulator over a gradient tape (``h`` = 0);
- ``reverse``: the exact Hessian by nested tapes (``tape.jacobian`` of the gradient),
  then H @ delta (``h`` = 0).

The ``implementation`` column names the test function: ``rosenbrock``, ``log_sum_exp``,
``tanh_network`` (a fixed seeded 1-hidden-layer tanh network). Inputs: ``n``, ``h`` and
``probes`` (M; 1 for the spectral rows: one start vector).

Reference: each estimator evaluated exactly in mpmath *with the same probes and start
vector* (exact Hessians in closed form), so a row's error is what the floating-point
computation adds (rounding, and the finite difference's truncation) and not the
Monte-Carlo error of using M probes. The exact norms ||H||_F (mpmath) and ||H||_2
(eigenvalues of the exact Hessian rounded to float64) are kept as facts in the
reference's provenance; the report plots the Monte-Carlo error against them (the
1/sqrt(M) curve). The point x, the probes, the start vector and the network weights are
seeded Gaussian samples rounded to multiples of 1/64, so every dtype holds them exactly
and results are reproducible bit for bit.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .experiments import Experiment, exact_grid, experiment, run_in_mode

FUNCTIONS = ("rosenbrock", "log_sum_exp", "tanh_network")
HIDDEN = 8  # width of the tanh network

PARAMETERS = {
    "type": "object",
    "additionalProperties": False,
    "required": ["functions", "dimensions", "steps", "probes", "power_iterations", "seed"],
    "properties": {
        "functions": {
            "type": "array",
            "items": {"enum": list(FUNCTIONS)},
            "minItems": 1,
            "uniqueItems": True,
        },
        "dimensions": {
            "type": "array",
            "items": {"type": "integer", "minimum": 2, "maximum": 200},
            "minItems": 1,
            "uniqueItems": True,
        },
        "steps": {
            "type": "object",
            "additionalProperties": False,
            "required": ["from", "to", "count"],
            "properties": {
                "from": {"type": "number", "exclusiveMinimum": 0},
                "to": {"type": "number", "exclusiveMinimum": 0, "maximum": 10},
                "count": {"type": "integer", "minimum": 2, "maximum": 200},
            },
            "description": "Finite-difference steps h, log-spaced from..to.",
        },
        "probes": {
            "type": "array",
            "items": {"type": "integer", "minimum": 1, "maximum": 4096},
            "minItems": 1,
            "uniqueItems": True,
            "description": "Probe counts M of the Hutchinson estimate.",
        },
        "power_iterations": {"type": "integer", "minimum": 1, "maximum": 200},
        "seed": {"type": "integer", "minimum": 0},
    },
}


def steps(params: dict) -> np.ndarray:
    s = params["steps"]
    return np.geomspace(float(s["from"]), float(s["to"]), int(s["count"]))


class Problem:
    """The seeded data of one (function, n): point, probes, start vector, weights."""

    def __init__(self, function: str, n: int, seed: int, max_probes: int):
        rng = np.random.default_rng([seed, FUNCTIONS.index(function), n])
        self.function, self.n = function, n
        self.x = exact_grid(rng, n, 0.5)
        self.probes = exact_grid(rng, (max_probes, n), 1.0)
        self.start = exact_grid(rng, n, 1.0)
        self.w1 = exact_grid(rng, (HIDDEN, n), 1.0 / np.sqrt(n))
        self.b1 = exact_grid(rng, HIDDEN, 0.5)
        self.w2 = exact_grid(rng, HIDDEN, 1.0)


def problems(params: dict):
    top = max(params["probes"])
    for function in params["functions"]:
        for n in params["dimensions"]:
            yield Problem(function, n, params["seed"], top)


# -- reference ---------------------------------------------------------------------------


def exact_hessian(p: Problem):
    """The Hessian at ``p.x`` in mpmath (list of rows), in closed form."""
    import mpmath

    n = p.n
    x = [mpmath.mpf(float(v)) for v in p.x]
    h = [[mpmath.mpf(0)] * n for _ in range(n)]
    if p.function == "rosenbrock":
        # sum_i 100 (x_{i+1} - x_i^2)^2 + (1 - x_i)^2
        for i in range(n - 1):
            h[i][i] += 1200 * x[i] ** 2 - 400 * x[i + 1] + 2
            h[i + 1][i + 1] += 200
            h[i][i + 1] += -400 * x[i]
            h[i + 1][i] += -400 * x[i]
    elif p.function == "log_sum_exp":
        # diag(s) - s s^T, s = softmax(x)
        e = [mpmath.exp(v) for v in x]
        total = mpmath.fsum(e)
        s = [v / total for v in e]
        for i in range(n):
            for j in range(n):
                h[i][j] = (s[i] if i == j else 0) - s[i] * s[j]
    else:
        # w2 . tanh(W1 x + b1): sum_k w2_k tanh''(z_k) W1_k W1_k^T, tanh'' = -2 t (1 - t^2)
        w1 = [[mpmath.mpf(float(v)) for v in row] for row in p.w1]
        for k in range(HIDDEN):
            z = mpmath.fdot(w1[k], x) + mpmath.mpf(float(p.b1[k]))
            t = mpmath.tanh(z)
            c = mpmath.mpf(float(p.w2[k])) * (-2 * t * (1 - t**2))
            for i in range(n):
                for j in range(n):
                    h[i][j] += c * w1[k][i] * w1[k][j]
    return h


def _matvec(h, v):
    import mpmath

    return [mpmath.fdot(row, v) for row in h]


def _norm(v):
    import mpmath

    return mpmath.sqrt(mpmath.fdot(v, v))


def power_iteration(h, start, iterations: int):
    """||H v_K|| after K normalised steps from ``start`` (the estimator, exactly)."""
    v = list(start)
    norm = _norm(v)
    v = [c / norm for c in v]
    for _ in range(iterations):
        w = _matvec(h, v)
        norm = _norm(w)
        v = [c / norm for c in w]
    return _norm(_matvec(h, v))


def reference(params: dict, dps: int):
    import mpmath

    rows, facts = [], {}
    for p in problems(params):
        h = exact_hessian(p)
        squares = []
        for delta in p.probes:
            hv = _matvec(h, [mpmath.mpf(float(c)) for c in delta])
            squares.append(mpmath.fdot(hv, hv))
        for m in params["probes"]:
            rows.append(
                {
                    "implementation": p.function,
                    "partial": "frobenius_norm",
                    "n": p.n,
                    "probes": m,
                    "value": mpmath.sqrt(mpmath.fsum(squares[:m]) / m),
                }
            )
        start = [mpmath.mpf(float(c)) for c in p.start]
        rows.append(
            {
                "implementation": p.function,
                "partial": "spectral_norm",
                "n": p.n,
                "probes": 1,
                "value": power_iteration(h, start, params["power_iterations"]),
            }
        )
        dense = np.array([[float(v) for v in row] for row in h])
        facts[f"{p.function}/{p.n}"] = {
            "frobenius": float(mpmath.sqrt(mpmath.fsum(v**2 for row in h for v in row))),
            "spectral": float(np.max(np.abs(np.linalg.eigvalsh(dense)))),
        }
    return rows, {"norms": facts}


# -- TensorFlow --------------------------------------------------------------------------


def _function(tf, p: Problem, dtype):
    """f on a batch of points [B, n] -> [B], as a user would write it."""
    if p.function == "rosenbrock":

        def f(x):
            head, tail = x[:, :-1], x[:, 1:]
            return tf.reduce_sum(100.0 * (tail - head**2) ** 2 + (1.0 - head) ** 2, axis=-1)

    elif p.function == "log_sum_exp":

        def f(x):
            return tf.reduce_logsumexp(x, axis=-1)

    else:
        w1 = tf.constant(p.w1, dtype)
        b1 = tf.constant(p.b1, dtype)
        w2 = tf.constant(p.w2, dtype)

        def f(x):
            return tf.linalg.matvec(tf.tanh(tf.linalg.matvec(w1, x) + b1), w2)

    return f


def _estimators(tf, f, n: int, iterations: int):
    def grad(x):  # [B, n] -> [B, n]; rows are independent points
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.reduce_sum(f(x))
        return tape.gradient(y, x)

    def frobenius(hv, counts):  # hv [..., M, n] -> [..., len(counts)]
        q = tf.reduce_sum(hv * hv, axis=-1)
        mean = tf.cumsum(q, axis=-1) / tf.range(1, q.shape[-1] + 1, dtype=q.dtype)
        return tf.sqrt(tf.gather(mean, counts, axis=-1))

    def power(hvp, v):  # v [B, n]; hvp maps [B, n] -> [B, n]
        v = v / tf.norm(v, axis=-1, keepdims=True)
        # tf.range: under tf.function the loop is traced once (a while loop), not unrolled.
        for _ in tf.range(iterations):
            w = hvp(v)
            v = w / tf.norm(w, axis=-1, keepdims=True)
        return tf.norm(hvp(v), axis=-1)

    def finite_difference(x, probes, start, hs, counts):
        def hvp(v):  # v [H, B, n]: one step per leading row
            hh = hs[:, None, None]
            shape = tf.shape(v)
            plus = tf.reshape(x + hh * v, [-1, n])
            minus = tf.reshape(x - hh * v, [-1, n])
            return tf.reshape(grad(plus) - grad(minus), shape) / (2 * hh)

        tiled = tf.tile(probes[None], [hs.shape[0], 1, 1])
        frob = frobenius(hvp(tiled), counts)  # [H, len(counts)]
        spec = power(lambda v: hvp(v[:, None, :])[:, 0, :], tf.tile(start[None], [hs.shape[0], 1]))
        return frob, spec

    def forward_over_reverse(x, probes, start, hs, counts):
        def hvp(v):  # v [B, n]
            xb = tf.tile(x[None], [tf.shape(v)[0], 1])
            with tf.autodiff.ForwardAccumulator(primals=xb, tangents=v) as acc:
                g = grad(xb)
            return acc.jvp(g)

        return frobenius(hvp(probes), counts)[None], power(hvp, start[None])

    def reverse(x, probes, start, hs, counts):
        with tf.GradientTape() as tape:
            tape.watch(x)
            g = grad(x[None])[0]
        hessian = tape.jacobian(g, x)

        def hvp(v):
            return tf.linalg.matmul(v, hessian, transpose_b=True)

        return frobenius(hvp(probes), counts)[None], power(hvp, start[None])

    return {
        "finite_difference": finite_difference,
        "forward_over_reverse": forward_over_reverse,
        "reverse": reverse,
    }


def evaluate(tf, params: dict, dtype: str, mode: str) -> list[dict]:
    rows = []
    tf_dtype = getattr(tf, dtype)
    hs = steps(params)
    counts = list(params["probes"])
    for p in problems(params):
        f = _function(tf, p, tf_dtype)
        for method, fn in _estimators(tf, f, p.n, params["power_iterations"]).items():
            keys = []
            step_list = hs if method == "finite_difference" else np.zeros(1)
            for i, h in enumerate(step_list):
                keys += [("frobenius_norm", i, float(h), m, j) for j, m in enumerate(counts)]
                keys.append(("spectral_norm", i, float(h), 1, None))
            status, message = "value", ""
            try:
                frob, spec = run_in_mode(tf, fn, mode)(
                    tf.constant(p.x, tf_dtype),
                    tf.constant(p.probes, tf_dtype),
                    tf.constant(p.start, tf_dtype),
                    tf.constant(step_list, tf_dtype),
                    tf.constant(np.array(counts) - 1),
                )
                frob, spec = frob.numpy(), spec.numpy()
            except Exception as exc:  # noqa: BLE001 - recorded per row, as `error`
                status, message = "error", f"{type(exc).__name__}: {exc}"[:500]
            for quantity, i, h, m, j in keys:
                value = np.nan
                if status == "value":
                    value = float(frob[i, j] if quantity == "frobenius_norm" else spec[i])
                rows.append(
                    {
                        "implementation": p.function,
                        "method": method,
                        "partial": quantity,
                        "order": 2,
                        "n": p.n,
                        "h": h,
                        "probes": m,
                        "value": value,
                        "status": status,
                        "message": message,
                    }
                )
    return rows


# -- report ------------------------------------------------------------------------------

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

    from .html import svg
    from .html import table as _table

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


experiment(
    Experiment(
        name="hessian_norm",
        description="Hutchinson (Frobenius) and power-iteration (spectral) estimates of the "
        "Hessian norm from finite differences of gradients, forward-over-reverse HVPs and "
        "exact Hessians by nested tapes.",
        parameters=PARAMETERS,
        inputs=("n", "h", "probes"),
        reference_keys=("implementation", "partial", "n", "probes"),
        implementations=FUNCTIONS,
        quantities=("frobenius_norm", "spectral_norm"),
        reference=reference,
        evaluate=evaluate,
        page=page,
    )
)
