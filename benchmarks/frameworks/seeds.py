# Q3: seed cases. (1) naive softplus log(1+exp(x)) at x=100, float32, first derivative.
#                 (2) h(a,b) = (a/b)/b, dh/db, at a few points; exact = -2a/b^3.
import os
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import numpy as np
import mpmath as mp
import jax
jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp
import torch
import tensorflow as tf

def naive_sp_j(x): return jnp.log(1 + jnp.exp(x))
def naive_sp_t(x): return torch.log(1 + torch.exp(x))
def naive_sp_tf(x): return tf.math.log(1 + tf.math.exp(x))

print("== naive softplus log(1+exp(x)), x=100 ==")
print("exact f'(100) = sigmoid(100) =", mp.nstr(1 / (1 + mp.exp(-100)), 20))
for dt_name in ("float32", "float64"):
    jd = getattr(jnp, dt_name); td = getattr(torch, dt_name); tfd = getattr(tf, dt_name)
    x = jnp.asarray(100.0, dtype=jd)
    print(f" [{dt_name}] JAX f(x) =", naive_sp_j(x), " jax.grad =", jax.grad(naive_sp_j)(x),
          " jvp =", jax.jvp(naive_sp_j, (x,), (jnp.ones_like(x),))[1],
          " grad2 =", jax.grad(jax.grad(naive_sp_j))(x))
    xt = torch.tensor(100.0, dtype=td, requires_grad=True)
    y = naive_sp_t(xt)
    (g,) = torch.autograd.grad(y, xt, create_graph=True)
    (g2,) = torch.autograd.grad(g, xt)
    print(f" [{dt_name}] torch f(x) =", y.item(), " autograd.grad =", g.item(),
          " func.jvp =", torch.func.jvp(naive_sp_t, (xt.detach(),), (torch.ones(()),))[1].item() if dt_name=="float32" else
          torch.func.jvp(naive_sp_t, (xt.detach(),), (torch.ones((), dtype=td),))[1].item(),
          " grad2 =", g2.item())
    xf = tf.constant(100.0, dtype=tfd)
    with tf.GradientTape() as tape:
        tape.watch(xf); yf = naive_sp_tf(xf)
    print(f" [{dt_name}] TF f(x) =", float(yf), " GradientTape.gradient =", float(tape.gradient(yf, xf)))
print(" stable versions at x=100 float32: jax.grad(jax.nn.softplus) =", jax.grad(jax.nn.softplus)(jnp.float32(100.0)),
      "; torch softplus grad =", torch.autograd.grad(torch.nn.functional.softplus(torch.tensor(100.0, requires_grad=True)),
                                                     torch.tensor(0.0).new_tensor(0) if False else [t := torch.tensor(100.0, requires_grad=True)][0], allow_unused=True)[0]
      if False else torch.autograd.grad(torch.nn.functional.softplus(t := torch.tensor(100.0, requires_grad=True)), t)[0].item())

print("\n== h(a,b) = (a/b)/b, dh/db (exact -2a/b^3) ==")
mp.mp.dps = 50
pts = [(1.0, 2.0), (3.0, -0.5), (1.0, 1e-13), (1e-30, 1e-15), (1e30, 1e20), (1.0, 1e-40), (1.0, 0.0), (0.0, 0.0)]
def h_j(a, b): return (a / b) / b
def h_t(a, b): return (a / b) / b
for dt_name in ("float32", "float64"):
    print(f" [{dt_name}]")
    jd = getattr(jnp, dt_name); td = getattr(torch, dt_name); tfd = getattr(tf, dt_name); nd = getattr(np, dt_name)
    for a, b in pts:
        a_c, b_c = nd(a), nd(b)      # the values actually representable in this dtype
        ex = (-2 * mp.mpf(float(a_c)) / mp.mpf(float(b_c)) ** 3) if float(b_c) != 0 else "undefined (b=0)"
        exs = mp.nstr(ex, 8) if not isinstance(ex, str) else ex
        vj = jax.grad(h_j, 1)(jnp.asarray(a, jd), jnp.asarray(b, jd))
        at = torch.tensor(a, dtype=td); bt = torch.tensor(b, dtype=td, requires_grad=True)
        (vt,) = torch.autograd.grad(h_t(at, bt), bt)
        af = tf.constant(a, tfd); bf = tf.constant(b, tfd)
        with tf.GradientTape() as tape:
            tape.watch(bf); yf = (af / bf) / bf
        vf = tape.gradient(yf, bf)
        print(f"   a={a!r:8} b={b!r:8} (b as {dt_name}={float(b_c)!r}) exact={exs:>16}  "
              f"JAX={float(vj)!r:>24}  torch={vt.item()!r:>24}  TF={float(vf)!r:>24}")
