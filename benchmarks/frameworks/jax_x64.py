# JAX float64: default off; what happens to float64 requests; switching at runtime.
import warnings
import jax, jax.numpy as jnp, numpy as np
print("default jax_enable_x64:", jax.config.jax_enable_x64)
with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter("always")
    a = jnp.asarray(np.float64(0.1))
    b = jnp.array(0.1, dtype=jnp.float64)
    print("x64 off: jnp.asarray(np.float64(0.1)).dtype =", a.dtype, "; jnp.array(0.1, dtype=float64).dtype =", b.dtype)
    for x in w: print("   warning:", str(x.message)[:200])
print("x64 off: jax.grad(jnp.sin)(np.float64(0.1)) dtype:", jax.grad(jnp.sin)(np.float64(0.1)).dtype)
jax.config.update("jax_enable_x64", True)
print("after jax.config.update('jax_enable_x64', True): jnp.array(0.1, dtype=float64).dtype =", jnp.array(0.1, dtype=jnp.float64).dtype,
      "; jnp.asarray(0.1).dtype =", jnp.asarray(0.1).dtype, "; old array a still", a.dtype)
print("x64 on: float32 input stays float32 through grad:", jax.grad(jnp.sin)(jnp.float32(0.1)).dtype)
print("hasattr jax.enable_x64:", hasattr(jax, "enable_x64"), "; jax.experimental.enable_x64:", hasattr(__import__("jax.experimental").experimental, "enable_x64"))
