# Probes for anomalies seen in kernels.out: atan2 d^4, torch trigamma accuracy, TF gelu float64 accuracy,
# torch autograd.grad of an x-independent derivative.
import os
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import mpmath as mp, math
import jax; jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp, jax.scipy.special as jss
import torch, tensorflow as tf
mp.mp.dps = 40
print("atan2(x, 0.7) d^4 at x=-0.7, 0.4:")
for p in (-0.7, 0.4):
    r1 = mp.diff(lambda x: mp.atan2(x, 0.7), mp.mpf(p), 4)
    r2 = mp.diff(lambda x: mp.atan(x / mp.mpf(0.7)), mp.mpf(p), 4)
    g = jnp.float64(p); f = lambda x: jnp.arctan2(x, 0.7)
    vj = jax.grad(jax.grad(jax.grad(jax.grad(f))))(g)
    print(f"  p={p}: mp.diff(atan2)={mp.nstr(r1, 12)}  mp.diff(atan(x/0.7))={mp.nstr(r2, 12)}  jax={float(vj)!r}")
print("  -> note float 0.7 != mp.mpf('0.7'); mp.diff(atan2) at default settings:", mp.nstr(mp.diff(lambda x: mp.atan2(x, mp.mpf(0.7)), mp.mpf(0.4), 4), 12))
print("\ntorch trigamma accuracy (float64): torch.special.polygamma(1,x) vs mpmath psi(1,x)")
for x in (0.3, 1.0, 2.5, 7.0, 30.0):
    t = torch.special.polygamma(1, torch.tensor(x, dtype=torch.float64)).item()
    j = float(jss.polygamma(1, jnp.float64(x)))
    tfv = float(tf.math.polygamma(tf.constant(1.0, tf.float64), tf.constant(x, tf.float64)))
    r = mp.psi(1, x)
    print(f"  x={x:5}: rel err torch={float(abs(t-r)/r):.1e}  jax={float(abs(j-r)/r):.1e}  tf={float(abs(tfv-r)/r):.1e}")
print("\ntf.nn.gelu float64 accuracy at x=0.4 (exact erf form):")
x = 0.4
ex = mp.mpf(x) / 2 * (1 + mp.erf(mp.mpf(x) / mp.sqrt(2)))
v = float(tf.nn.gelu(tf.constant(x, tf.float64), approximate=False))
v2 = float(0.5 * x * (1 + tf.math.erf(tf.constant(x, tf.float64) / tf.constant(math.sqrt(2), tf.float64))))
print(f"  exact={mp.nstr(ex, 17)} tf.nn.gelu={v!r} relerr={float(abs(v-ex)/ex):.1e}; manual tf erf formula={v2!r} relerr={float(abs(v2-ex)/ex):.1e}")
import inspect
src = inspect.getsource(tf.nn.gelu)
print("  tf.nn.gelu source lines with constants:")
for line in src.splitlines():
    if any(s in line for s in ("0.044715", "sqrt", "1.4142", "0.7978", "cast", "math_ops.", "erf")):
        print("    ", line.strip())
print("\ntorch: derivative of x*log(c) twice wrt x:")
x = torch.tensor(0.4, dtype=torch.float64, requires_grad=True)
y = torch.special.xlogy(x, 1.3)
(g1,) = torch.autograd.grad(y, x, create_graph=True)
print("  g1 =", g1.item(), " g1.requires_grad =", g1.requires_grad, " g1.grad_fn =", g1.grad_fn)
y2 = x * math.log(1.3)
(h1,) = torch.autograd.grad(y2, x, create_graph=True)
print("  plain x*log(1.3): h1.requires_grad =", h1.requires_grad, " grad_fn =", h1.grad_fn)
try:
    torch.autograd.grad(g1, x, create_graph=True, allow_unused=True, materialize_grads=True)
except Exception as e:
    print("  autograd.grad(g1, x, allow_unused=True, materialize_grads=True) ->", type(e).__name__, e)
print("  torch.func.grad(grad(xlogy)):", torch.func.grad(torch.func.grad(lambda z: torch.special.xlogy(z, 1.3)))(torch.tensor(0.4, dtype=torch.float64)))
