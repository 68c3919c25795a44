# Are eager and jax.jit results bitwise equal in float32 for d^k f (nested grad / nested jvp / jet)?
import jax, jax.numpy as jnp, numpy as np
from jax.experimental import jet
def f(x): return jnp.exp(jnp.sin(x)) * jnp.log1p(x * x)
xs = jnp.linspace(-3, 3, 1001, dtype=jnp.float32)
def grad_k(k):
    g = f
    for _ in range(k): g = jax.grad(g)
    return jax.vmap(g)
def jvp_k(k):
    g = f
    for _ in range(k): g = (lambda h: (lambda x: jax.jvp(h, (x,), (jnp.ones_like(x),))[1]))(g)
    return g
def jet_k(k):
    def h(x):
        o, z = jnp.ones_like(x), jnp.zeros_like(x)
        return jet.jet(f, (x,), ((o, z, z, z),))[1][k - 1]
    return h
for nm, mk in (("vmap(grad^k)", grad_k), ("jvp^k", jvp_k), ("jet", jet_k)):
    row = []
    for k in range(1, 5):
        e = np.asarray(mk(k)(xs)); j = np.asarray(jax.jit(mk(k))(xs))
        nd = int(np.sum(e != j)); mx = float(np.max(np.abs(e - j) / np.maximum(np.abs(e), 1e-30)))
        row.append(f"k={k}: {nd}/1001 differ, max rel {mx:.1e}")
    print(f"{nm:13s}", " | ".join(row))
