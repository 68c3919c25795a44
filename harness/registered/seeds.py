"""Python implementations that case files may name (``registered: NAME``).

Each factory receives the TensorFlow module and the working dtype and returns a function
of 1-D input batches. Keep them faithful to the code a user would write: the point of a
registered implementation is to test that code, not a cleaned-up version of it.
"""

from __future__ import annotations

from harness.registered.register import implementation, port


@implementation(
    "seed000_newdiv",
    inputs=("a", "b"),
    description="The accepted answer of seed 000: division a/b with a hand-written gradient "
    "(1/b * dy, -(a/b)/b * dy), the Defun newDiv/newDivGrad ported to tf.custom_gradient.",
)
def _seed000_newdiv(tf, dtype):
    @tf.custom_gradient
    def new_div(x, y):
        def new_div_grad(grad):
            return tf.math.reciprocal(y) * grad, -tf.math.divide(tf.math.divide(x, y), y) * grad

        return tf.math.divide(x, y), new_div_grad

    def f(a, b):
        # The seed differentiates f = -a/b.
        return -new_div(a, b)

    return f


# -- Seed 001: the logistic ODE solved numerically ------------------------------------------
#
# dy/dt = r y (1 - y), y(0) = y0, solved as the seed's answer suggests: a fixed-step
# Runge-Kutta 4 written in TensorFlow ops, so autodiff sees every step, and the hitting
# time of y = 0.8 found on that numerical solution. Loops are ``tf.while_loop``: a Python
# loop in eager mode, one traced loop under ``tf.function`` (also inside a custom
# gradient's function, which AutoGraph does not convert).

RK4_STEPS = 200  # y(t): 200 steps of h = t / 200 from 0
MARCH_STEPS = 600  # t*: a march of h = (30 / r) / 600 (the seed's 0 < t < 3000 at r = 0.01)
NEWTON_STEPS = 4  # Newton iterations inside the step that crosses y = 0.8
LEVEL = 0.8


def _logistic_rhs(r, y):
    return r * y * (1 - y)


def _rk4_step(r, y, h):
    k1 = _logistic_rhs(r, y)
    k2 = _logistic_rhs(r, y + h / 2 * k1)
    k3 = _logistic_rhs(r, y + h / 2 * k2)
    k4 = _logistic_rhs(r, y + h * k3)
    return y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)


def _rk4_solution(tf, t, r, y0):
    h = t / RK4_STEPS
    _, y = tf.while_loop(
        lambda i, y: i < RK4_STEPS, lambda i, y: (i + 1, _rk4_step(r, y, h)), (0, y0)
    )
    return y


def _march(tf, r, y0):
    """The RK4 state (t, y) just before y passes 0.8, and the fixed step h."""
    h = (30 / r) / MARCH_STEPS

    def step(i, t, y, t_before, y_before):
        below = y < LEVEL
        return (
            i + 1,
            tf.where(below, t + h, t),
            tf.where(below, _rk4_step(r, y, h), y),
            tf.where(below, t, t_before),
            tf.where(below, y, y_before),
        )

    zero = tf.zeros_like(r)
    _, t, y, t_before, y_before = tf.while_loop(
        lambda i, *_: i < MARCH_STEPS, step, (0, zero, y0, zero, y0)
    )
    return t_before, y_before, y, h


def _newton_hitting_time(tf, r, y0):
    """t* on the RK4 solution: march until y passes 0.8, then Newton's method on the RK4
    step from the state before, y(t_k + s) = 0.8 (the solver's own interpolant), from the
    secant's s; differentiable in every operation."""
    t_before, y_before, y_after, h = _march(tf, r, y0)
    s = h * (LEVEL - y_before) / (y_after - y_before)
    for _ in range(NEWTON_STEPS):
        y = _rk4_step(r, y_before, s)
        s = s - (y - LEVEL) / _logistic_rhs(r, y)
    return t_before + s


def _solution_near(tf, t, r, y0):
    """The march's RK4 solution at a time t inside the step that crosses 0.8."""
    t_before, y_before, _, _ = _march(tf, r, y0)
    return _rk4_step(r, y_before, t - t_before)


def _ift_hitting_time(tf, stop_gradient: bool):
    @tf.custom_gradient
    def hitting_time(r, y0):
        t = _newton_hitting_time(tf, r, y0)

        def grad(dt):
            # The implicit function theorem on the solver's own y(t; r, y0) = 0.8:
            # dt*/dθ = -(∂y/∂θ) / (∂y/∂t) at t*.
            at = tf.stop_gradient(t) if stop_gradient else t
            with tf.GradientTape() as tape:
                tape.watch([at, r, y0])
                y = _solution_near(tf, at, r, y0)
            dy_dt, dy_dr, dy_dy0 = tape.gradient(y, [at, r, y0])
            return -dt * dy_dr / dy_dt, -dt * dy_dy0 / dy_dt

        return t, grad

    return hitting_time


def _positional(hitting_time):
    """The case calls ``f(r=..., y0=...)``; tf.custom_gradient takes positional arguments
    only under tf.function."""

    def f(r, y0):
        return hitting_time(r, y0)

    return f


@implementation(
    "logistic_rk4",
    inputs=("t", "r", "y0"),
    description="y(t) of dy/dt = r y (1 - y) by 200 fixed Runge-Kutta 4 steps (h = t/200) "
    "in TensorFlow ops, differentiated by autodiff through the solver.",
)
def _logistic_rk4(tf, dtype):
    def f(t, r, y0):
        return _rk4_solution(tf, t, r, y0)

    return f


@port("logistic_rk4", "jax")
def _logistic_rk4_jax(jax, dtype):
    # The same 200 steps in a lax.fori_loop (static bounds: a scan, so reverse mode
    # differentiates it).
    def f(t, r, y0):
        h = t / RK4_STEPS
        return jax.lax.fori_loop(0, RK4_STEPS, lambda i, y: _rk4_step(r, y, h), y0)

    return f


@port(
    "logistic_rk4",
    "torch",
    not_in={
        "compile": "torch.compile unrolls the port's Python loop of 200 RK4 steps: compiling "
        "one computation took over 400 s (reverse mode, float64) and over 14 minutes at "
        "3.9 GB (forward mode, float32) on a 2-core CPU with PyTorch 2.13, so the port runs "
        "in eager mode only"
    },
)
def _logistic_rk4_torch(torch, dtype):
    # The same 200 steps in a Python loop, as PyTorch code writes a solver.
    def f(t, r, y0):
        h = t / RK4_STEPS
        y = y0
        for _ in range(RK4_STEPS):
            y = _rk4_step(r, y, h)
        return y

    return f


@implementation(
    "hitting_time_newton_rk4",
    inputs=("r", "y0"),
    description="t* of y = 0.8 on the RK4 solution: a fixed-step march (h = 30/(600 r)) "
    "until y passes 0.8, then 4 Newton steps inside the crossing step; autodiff through "
    "the march and the iterations.",
)
def _hitting_time_newton_rk4(tf, dtype):
    def f(r, y0):
        return _newton_hitting_time(tf, r, y0)

    return f


@implementation(
    "hitting_time_ift_rk4",
    inputs=("r", "y0"),
    description="The same t*, with a custom gradient from the implicit function theorem, "
    "-(dy/dθ)/(dy/dt) at t* on the solver's y(t; r, y0), both by a tape; t* stays "
    "differentiable inside the rule, so higher orders see its dependence on θ.",
)
def _hitting_time_ift_rk4(tf, dtype):
    return _positional(_ift_hitting_time(tf, stop_gradient=False))


@implementation(
    "hitting_time_ift_rk4_stopped",
    inputs=("r", "y0"),
    description="As hitting_time_ift_rk4, but the rule evaluates at tf.stop_gradient(t*), "
    "as implicit-differentiation code often does: right at order 1, and at order 2 it "
    "drops the rule's dependence on t*(θ).",
)
def _hitting_time_ift_rk4_stopped(tf, dtype):
    return _positional(_ift_hitting_time(tf, stop_gradient=True))


@implementation(
    "hitting_time_solve_ivp",
    inputs=("r", "y0"),
    description="The float64 baseline a user would write: scipy.integrate.solve_ivp (RK45, "
    "rtol 1e-10, atol 1e-12) with a terminal event at y = 0.8, through tf.numpy_function; "
    "autodiff cannot see into it, so only finite differences give derivatives.",
)
def _hitting_time_solve_ivp(tf, dtype):
    import numpy as np

    def solve(r, y0):
        from scipy.integrate import solve_ivp

        def crossing(t, y):
            return y[0] - LEVEL

        crossing.terminal = True
        crossing.direction = 1
        out = np.full(r.shape, np.nan)
        for i, (rate, start) in enumerate(zip(r.ravel(), y0.ravel())):
            sol = solve_ivp(
                lambda t, y, rate=rate: rate * y * (1 - y),
                (0.0, 30.0 / rate),
                [start],
                method="RK45",
                events=crossing,
                rtol=1e-10,
                atol=1e-12,
            )
            if len(sol.t_events[0]):
                out.flat[i] = sol.t_events[0][0]
        return out

    def f(r, y0):
        t = tf.numpy_function(solve, [tf.cast(r, tf.float64), tf.cast(y0, tf.float64)], tf.float64)
        return tf.cast(tf.reshape(t, tf.shape(r)), dtype)

    return f
