# Q1: JAX higher-order derivatives (orders 1..4), elementwise batch + mixed partials.
# Run: .venv/bin/python benchmarks/frameworks/jax_derivs.py
import time, math
import jax
jax.config.update("jax_enable_x64", True)   # must be set before creating arrays
import jax.numpy as jnp
from jax.experimental import jet
import mpmath as mp
import numpy as np

print("jax", jax.__version__, "x64:", jax.config.jax_enable_x64)

def f(x):            # elementwise scalar fn
    return jnp.exp(jnp.sin(x)) * jnp.log1p(x * x)

def f_mp(x):
    return mp.exp(mp.sin(x)) * mp.log1p(x * x)

xs = jnp.array([-1.3, 0.2, 0.7, 2.5], dtype=jnp.float64)
mp.mp.dps = 40
ref = np.array([[float(mp.diff(f_mp, mp.mpf(float(x)), k)) for x in xs] for k in range(1, 5)])

# (a) nested grad + vmap
def nth_grad(fun, k):
    g = fun
    for _ in range(k):
        g = jax.grad(g)
    return g
def a_grad_vmap(x, k):
    return jax.vmap(nth_grad(f, k))(x)

# (b) nested jvp (pure forward). Works on whole batch because f is elementwise
#     and the tangent is ones (diagonal Jacobian).
def nth_jvp(fun, k):
    g = fun
    for _ in range(k):
        g = (lambda h: (lambda x: jax.jvp(h, (x,), (jnp.ones_like(x),))[1]))(g)
    return g
def b_jvp(x, k):
    return nth_jvp(f, k)(x)

# (c) forward-over-reverse: first derivative by reverse (grad of sum), rest by jvp
def c_fwd_over_rev(x, k):
    g1 = jax.grad(lambda y: jnp.sum(f(y)))      # elementwise => grad of sum = f'(x)
    return nth_jvp(g1, k - 1)(x)

# (d) jet (Taylor mode). factorial_scaled=True (default in 0.10.2): series_out[k-1] = f^(k)(x)
def d_jet(x, k):
    ones, zeros = jnp.ones_like(x), jnp.zeros_like(x)
    series_in = ((ones,) + (zeros,) * 3,)        # x(t) = x + t, order 4
    _, out = jet.jet(f, (x,), series_in)
    return out[k - 1]
def d_jet_raw(x, k):   # factorial_scaled=False: out[k-1] = f^(k)/k!  (Taylor coeffs)
    ones, zeros = jnp.ones_like(x), jnp.zeros_like(x)
    _, out = jet.jet(f, (x,), ((ones,) + (zeros,) * 3,), factorial_scaled=False)
    return out[k - 1] * math.factorial(k)

methods = {"a grad+vmap": a_grad_vmap, "b nested jvp": b_jvp,
           "c jvp(grad)": c_fwd_over_rev, "d jet": d_jet, "d jet raw*k!": d_jet_raw}

print("\nreference (mpmath.diff), rows k=1..4:\n", ref)
for name, m in methods.items():
    for mode in ("eager", "jit"):
        maxrel = 0.0
        t_first = t_second = 0.0
        for k in range(1, 5):
            fn = (lambda x, m=m, k=k: m(x, k))
            if mode == "jit":
                fn = jax.jit(fn)
            t0 = time.perf_counter(); v = fn(xs).block_until_ready(); t1 = time.perf_counter()
            v = fn(xs).block_until_ready(); t2 = time.perf_counter()
            t_first += t1 - t0; t_second += t2 - t1
            maxrel = max(maxrel, float(np.max(np.abs(np.asarray(v) - ref[k - 1]) / np.abs(ref[k - 1]))))
        print(f"{name:14s} {mode:5s} max rel err k=1..4 vs mpmath: {maxrel:.2e}  "
              f"time 1st calls (sum k=1..4) {t_first*1e3:8.1f} ms, 2nd calls {t_second*1e3:7.2f} ms")

print("\nexample values k=4 at x=", np.asarray(xs))
for name, m in methods.items():
    print(f"  {name:14s}", np.asarray(m(xs, 4)))

# ---------------- mixed partials: g(a,b), d^3 g / da da db ----------------
def g(a, b):
    return jnp.sin(a * b) * jnp.exp(a + 2 * b)
def g_mp(a, b):
    return mp.sin(a * b) * mp.exp(a + 2 * b)
a0, b0 = 0.3, -0.8
ref_aab = float(mp.diff(g_mp, (mp.mpf(a0), mp.mpf(b0)), (2, 1)))
ref_aabb = float(mp.diff(g_mp, (mp.mpf(a0), mp.mpf(b0)), (2, 2)))
A, B = jnp.float64(a0), jnp.float64(b0)
print(f"\nmixed: ref d3g/da2db = {ref_aab!r}, ref d4g/da2db2 = {ref_aabb!r}")
# (a) nested grad with argnums
v_a = jax.grad(jax.grad(jax.grad(g, 0), 0), 1)(A, B)
v_a4 = jax.grad(jax.grad(jax.grad(jax.grad(g, 0), 0), 1), 1)(A, B)
# (b) nested jvp, tangent directions per level
def dir_deriv(fun, tangent):
    return lambda a, b: jax.jvp(fun, (a, b), tangent)[1]
ea, eb = (1.0, 0.0), (0.0, 1.0)
ea = tuple(jnp.float64(t) for t in ea); eb = tuple(jnp.float64(t) for t in eb)
v_b = dir_deriv(dir_deriv(dir_deriv(g, ea), ea), eb)(A, B)
v_b4 = dir_deriv(dir_deriv(dir_deriv(dir_deriv(g, ea), ea), eb), eb)(A, B)
# (c) forward-over-reverse: grad wrt a, then jvp in a, then b
ga = jax.grad(g, 0)
v_c = dir_deriv(dir_deriv(ga, ea), eb)(A, B)
# also full Hessian-of-grad style: jax.hessian / jacfwd(jacrev)
v_c_hess = jax.jacfwd(jax.jacfwd(jax.jacrev(g, 0), 0), 1)(A, B)
# (d) jet: only univariate (one direction) Taylor series; mixed partials by polarization:
#     T(u,u,v) = [D3(u+v) - D3(u-v) - 2 D3(v)] / 6 where D3(w) = d^3/dt^3 g(p + t w)
def jet_dir(fun, p, w, order):
    a, b = p
    wa, wb = w
    z = jnp.float64(0.0)
    ser = ((jnp.float64(wa),) + (z,) * (order - 1), (jnp.float64(wb),) + (z,) * (order - 1))
    _, out = jet.jet(fun, (a, b), ser)
    return out[order - 1]
D3 = lambda w: jet_dir(g, (A, B), w, 3)
v_d = (D3((1, 1)) - D3((1, -1)) - 2 * D3((0, 1))) / 6
# jvp over jet (is jet differentiable?) : d/db of [d^2/da^2 via jet]
def jet_aa(a, b):
    z = jnp.zeros_like(a)
    _, out = jet.jet(g, (a, b), ((jnp.ones_like(a), z), (z, z)))
    return out[1]
try:
    v_d2 = jax.grad(jet_aa, 1)(A, B)
except Exception as e:
    v_d2 = f"ERROR {type(e).__name__}: {e}"
try:
    v_d3 = dir_deriv(jet_aa, eb)(A, B)
except Exception as e:
    v_d3 = f"ERROR {type(e).__name__}: {e}"
print("  (a) grad(grad(grad(g,0),0),1)            :", repr(float(v_a)), " d4 aabb:", repr(float(v_a4)))
print("  (b) nested jvp (ea,ea,eb)                :", repr(float(v_b)), " d4 aabb:", repr(float(v_b4)))
print("  (c) jvp(jvp(grad(g,0)))                  :", repr(float(v_c)))
print("  (c') jacfwd(jacfwd(jacrev(g,0),0),1)      :", repr(float(v_c_hess)))
print("  (d) jet + polarization                   :", repr(float(v_d)))
print("  (d') grad wrt b of jet 2nd coeff in a    :", v_d2 if isinstance(v_d2, str) else repr(float(v_d2)))
print("  (d'') jvp wrt b of jet 2nd coeff in a    :", v_d3 if isinstance(v_d3, str) else repr(float(v_d3)))
