# Probe why JAX float32 d/db[(a/b)/b] at a=1e-30, b=1e-15 gives -inf while torch/TF give -2e15.
import jax, jax.numpy as jnp
import numpy as np
h = lambda a, b: (a / b) / b
a, b = jnp.float32(1e-30), jnp.float32(1e-15)
print(jax.make_jaxpr(jax.grad(h, 1))(a, b))
print("grad eager            :", jax.grad(h, 1)(a, b))
print("grad under jit        :", jax.jit(jax.grad(h, 1))(a, b))
with jax.disable_jit():
    print("grad disable_jit      :", jax.grad(h, 1)(a, b))
print("b*b float32           :", b * b, "  b**3 float32:", b * b * b, " (smallest normal f32 = %g)" % np.finfo(np.float32).tiny)
print("numpy a/(b*b)/b*-2... -(a/b)/(b*b) - (a/(b*b))/b =", -(np.float32(1e-30)/np.float32(1e-15))/(np.float32(1e-15)**2) - (np.float32(1e-30)/np.float32(1e-15)**2)/np.float32(1e-15))
