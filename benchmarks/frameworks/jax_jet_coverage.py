# Q1 cont.: jet primitive coverage, custom_jvp under jet, dtypes (f16/bf16/f32/f64) on CPU.
import math, traceback
import jax
jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp
import jax.scipy.special as jss
from jax.experimental import jet
import numpy as np

def nested_jvp(fun, k):
    g = fun
    for _ in range(k):
        g = (lambda h: (lambda x: jax.jvp(h, (x,), (jnp.ones_like(x),))[1]))(g)
    return g

def jet4(fun, x):
    o, z = jnp.ones_like(x), jnp.zeros_like(x)
    _, out = jet.jet(fun, (x,), ((o, z, z, z),))
    return out

def short(e):
    s = f"{type(e).__name__}: {e}"
    s = s.replace("\n", " | ")
    return s[:230]

cases = {
    "exp": (jnp.exp, 0.3),
    "log": (jnp.log, 0.7),
    "log1p": (jnp.log1p, 0.3),
    "expm1": (jnp.expm1, 0.3),
    "softplus jax.nn.softplus": (jax.nn.softplus, 0.3),
    "tanh": (jnp.tanh, 0.3),
    "sigmoid jax.nn.sigmoid": (jax.nn.sigmoid, 0.3),
    "erf jss.erf": (jss.erf, 0.3),
    "erfc jss.erfc": (jss.erfc, 0.3),
    "lgamma jss.gammaln": (jss.gammaln, 2.3),
    "digamma jss.digamma": (jss.digamma, 2.3),
    "sinh": (jnp.sinh, 0.3),
    "cosh": (jnp.cosh, 0.3),
    "asinh": (jnp.arcsinh, 0.3),
    "acosh": (jnp.arccosh, 1.7),
    "atanh": (jnp.arctanh, 0.3),
    "atan": (jnp.arctan, 0.3),
    "atan2(x, 0.7)": (lambda x: jnp.arctan2(x, 0.7), 0.3),
    "atan2(0.7, x)": (lambda x: jnp.arctan2(0.7, x), 0.3),
    "pow x**2.5": (lambda x: x ** 2.5, 0.7),
    "pow 2.5**x": (lambda x: 2.5 ** x, 0.7),
    "pow x**x": (lambda x: x ** x, 0.7),
    "integer_pow x**3": (lambda x: x ** 3, 0.7),
    "sqrt": (jnp.sqrt, 0.7),
    "where/select": (lambda x: jnp.where(x > 0, jnp.sin(x), x * x), 0.3),
    "logsumexp jss.logsumexp([x,2x,1])": (lambda x: jss.logsumexp(jnp.stack([x, 2 * x, jnp.ones_like(x)])), 0.3),
    "logaddexp": (lambda x: jnp.logaddexp(x, 0.5), 0.3),
    "log_softmax[0]": (lambda x: jax.nn.log_softmax(jnp.stack([x, 2 * x, jnp.ones_like(x)]))[0], 0.3),
    "elu": (jax.nn.elu, -0.3),
    "selu": (jax.nn.selu, -0.3),
    "gelu(approximate=False)": (lambda x: jax.nn.gelu(x, approximate=False), 0.3),
    "gelu(approximate=True)": (lambda x: jax.nn.gelu(x, approximate=True), 0.3),
    "log_sigmoid": (jax.nn.log_sigmoid, 0.3),
    "xlogy(x, 1.5) jss.xlogy": (lambda x: jss.xlogy(x, 1.5), 0.3),
    "xlogy(1.5, x)": (lambda x: jss.xlogy(1.5, x), 0.3),
    "xlog1py(1.5, x) jss.xlog1py": (lambda x: jss.xlog1py(1.5, x), 0.3),
    "naive softplus log(1+exp(x))": (lambda x: jnp.log(1 + jnp.exp(x)), 0.3),
}

print("jet order-4 coverage (float64), compared with 4 nested jvp's, max rel err over k=1..4")
for name, (fn, x0) in cases.items():
    x = jnp.float64(x0)
    try:
        ref = [float(nested_jvp(fn, k)(x)) for k in range(1, 5)]
        refs = "ok"
    except Exception as e:
        ref = None; refs = "nested-jvp ERROR " + short(e)
    try:
        out = jet4(fn, x)
        vals = [float(v) for v in out]
        if ref is not None:
            err = max(abs(v - r) / max(abs(r), 1e-300) for v, r in zip(vals, ref))
            print(f"  {name:36s} jet OK   relerr={err:.1e}   d4={vals[3]!r}")
        else:
            print(f"  {name:36s} jet OK d4={vals[3]!r}; {refs}")
    except Exception as e:
        print(f"  {name:36s} jet FAIL {short(e)}")
        try:
            out = jax.jit(lambda y: jet4(fn, y))(x)
            vals = [float(v) for v in out]
            err = max(abs(v - r) / max(abs(r), 1e-300) for v, r in zip(vals, ref)) if ref else float('nan')
            print(f"  {'':36s} ...but jax.jit(jet) OK relerr={err:.1e}")
        except Exception as e2:
            print(f"  {'':36s} ...jax.jit(jet) also FAIL {short(e2)[:120]}")

# ---- custom_jvp under jet ----
print("\ncustom_jvp: f(x)=sin(x) with custom rule f'(x) := 2*cos(x)*t (deliberately wrong)")
@jax.custom_jvp
def fsin(x):
    return jnp.sin(x)
@fsin.defjvp
def fsin_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return fsin(x), 2.0 * jnp.cos(x) * t
x = jnp.float64(0.4)
print("  true sin derivatives at 0.4 k=1..4:", [math.cos(0.4), -math.sin(0.4), -math.cos(0.4), math.sin(0.4)])
print("  jax.grad x1..4  :", [float(g(x)) for g in [jax.grad(fsin), jax.grad(jax.grad(fsin)), jax.grad(jax.grad(jax.grad(fsin))), jax.grad(jax.grad(jax.grad(jax.grad(fsin))))]])
print("  nested jvp k=1..4:", [float(nested_jvp(fsin, k)(x)) for k in range(1, 5)])
for lbl, call in (("jet(fsin) eager", lambda: jet4(fsin, x)),
                  ("jax.jit(lambda x: jet(fsin))", lambda: jax.jit(lambda y: jet4(fsin, y))(x)),
                  ("jet(jax.jit(fsin))", lambda: jet4(jax.jit(fsin), x))):
    try:
        print(f"  {lbl:30s} k=1..4:", [float(v) for v in call()])
    except Exception as e:
        print(f"  {lbl:30s} FAIL", short(e))

# same for jax.nn.softplus-like custom_jvp functions in jax itself: logaddexp uses custom_jvp
print("\ncustom_vjp under jet:")
@jax.custom_vjp
def gsin(x):
    return jnp.sin(x)
gsin.defvjp(lambda x: (jnp.sin(x), x), lambda x, g: (3.0 * jnp.cos(x) * g,))
print("  jax.grad(gsin)(0.4) =", float(jax.grad(gsin)(x)), " (custom rule 3cos)")
try:
    print("  jet k=1..4:", [float(v) for v in jet4(gsin, x)])
except Exception as e:
    print("  jet FAIL", short(e))
try:
    print("  jit(jet) k=1..4:", [float(v) for v in jax.jit(lambda y: jet4(gsin, y))(x)])
except Exception as e:
    print("  jit(jet) FAIL", short(e))
try:
    print("  jax.jvp(gsin):", jax.jvp(gsin, (x,), (1.0,)))
except Exception as e:
    print("  jax.jvp FAIL", short(e))

# ---- dtypes ----
print("\ndtypes on CPU (x64 enabled): 4th derivative at x=0.3 via grad^4, nested jvp, jet; reference float64")
ops = {"exp": jnp.exp, "log": jnp.log, "log1p": jnp.log1p, "tanh": jnp.tanh,
       "sigmoid": jax.nn.sigmoid, "softplus": jax.nn.softplus, "erf": jss.erf,
       "lgamma": jss.gammaln, "digamma": jss.digamma}
def grad4(fn):
    return jax.grad(jax.grad(jax.grad(jax.grad(fn))))
for dt in (jnp.float16, jnp.bfloat16, jnp.float32, jnp.float64):
    print(f" dtype {jnp.dtype(dt).name}")
    for nm, fn in ops.items():
        x = jnp.asarray(0.3, dtype=dt)
        res = []
        for meth, call in (("grad4", lambda: grad4(fn)(x)),
                           ("jvp4", lambda: nested_jvp(fn, 4)(x)),
                           ("jet4", lambda: jet4(fn, x)[3])):
            try:
                v = call()
                res.append(f"{meth}={float(v):.6g}[{v.dtype}]")
            except Exception as e:
                res.append(f"{meth}=ERR({short(e)[:110]})")
        print(f"   {nm:9s}", "  ".join(res))

# float32 default when x64 disabled: show what happens with a float64 request
print("\nnote: with x64 enabled jnp.asarray(0.3).dtype =", jnp.asarray(0.3).dtype)
