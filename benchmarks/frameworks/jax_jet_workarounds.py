# jet-compatible rewrites (no custom_jvp, no lgamma/digamma/atan primitives) - verify vs nested jvp, float64.
import jax; jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp
from jax.experimental import jet
def nested_jvp(fun, k):
    g = fun
    for _ in range(k):
        g = (lambda h: (lambda x: jax.jvp(h, (x,), (jnp.ones_like(x),))[1]))(g)
    return g
def jet4(fun, x):
    o, z = jnp.ones_like(x), jnp.zeros_like(x)
    return jet.jet(fun, (x,), ((o, z, z, z),))[1]
rw = {
  "softplus = max(x,0)+log1p(exp(-|x|))": (lambda x: jnp.maximum(x, 0) + jnp.log1p(jnp.exp(-jnp.abs(x))), jax.nn.softplus),
  "log_sigmoid = -(max(-x,0)+log1p(exp(-|x|)))": (lambda x: -(jnp.maximum(-x, 0) + jnp.log1p(jnp.exp(-jnp.abs(x)))), jax.nn.log_sigmoid),
  "atan(x) = atan2(x, 1)": (lambda x: jnp.arctan2(x, jnp.ones_like(x)), jnp.arctan),
  "xlogy(c,y) = c*log(y) (y>0)": (lambda y: 0.7 * jnp.log(y), lambda y: jax.scipy.special.xlogy(0.7, y)),
}
for nm, (fn, orig) in rw.items():
    for x0 in (-0.7, 0.4, 3.0):
        if "log(y)" in nm and x0 <= 0: continue
        x = jnp.float64(x0)
        ref = [float(nested_jvp(orig, k)(x)) for k in range(1, 5)]
        out = [float(v) for v in jet4(fn, x)]
        err = max(abs(a - b) / max(abs(b), 1e-3) for a, b in zip(out, ref))
        print(f"{nm:46s} x={x0:5}: jet OK, max err vs nested jvp of original = {err:.1e}")
