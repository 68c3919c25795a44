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

from harness.cases.experiment_kinds import HESSIAN_NORM, HESSIAN_NORM_FUNCTIONS
from harness.experiments.base import Experiment, exact_grid, experiment, run_in_mode

FUNCTIONS = HESSIAN_NORM_FUNCTIONS
HIDDEN = 8  # width of the tanh network


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

experiment(
    Experiment(
        spec=HESSIAN_NORM,
        reference=reference,
        evaluations={"tensorflow": evaluate},
        page="harness.experiments.hessian_norm_page",
    )
)
