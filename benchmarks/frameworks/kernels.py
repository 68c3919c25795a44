# Q4: kernel mapping TF / JAX / PyTorch / mpmath. For every kernel: verify the names import,
# compare float64 values and derivatives k=1..4 (wrt the first listed variable, other args fixed)
# against mpmath.diff of the mpmath formula. Derivatives: TF nested GradientTape, JAX nested
# jax.grad, torch nested autograd.grad(create_graph=True).
import os, inspect, math
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import mpmath as mp
import jax
jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp
import jax.scipy.special as jss
import torch
import torch.nn.functional as F
import tensorflow as tf

mp.mp.dps = 40
SELU_SCALE = mp.mpf("1.0507009873554804934193349852946")
SELU_ALPHA = mp.mpf("1.6732632423543772848170429916717")
C1, C2 = 0.7, 1.3     # fixed extra arguments

def mp_lse(*v): return mp.log(mp.fsum(mp.exp(t) for t in v))

# name: (tf_fn, tf_name, jax_fn, jax_name, torch_fn, torch_name, mp_fn, points)
K = {
 "elu": (tf.nn.elu, "tf.nn.elu", jax.nn.elu, "jax.nn.elu", F.elu, "torch.nn.functional.elu",
         lambda x: x if x > 0 else mp.expm1(x), [-0.7, 0.4]),
 "selu": (tf.nn.selu, "tf.nn.selu", jax.nn.selu, "jax.nn.selu", F.selu, "torch.nn.functional.selu",
          lambda x: SELU_SCALE * (x if x > 0 else SELU_ALPHA * mp.expm1(x)), [-0.7, 0.4]),
 "gelu_erf": (lambda x: tf.nn.gelu(x, approximate=False), "tf.nn.gelu(x, approximate=False)",
              lambda x: jax.nn.gelu(x, approximate=False), "jax.nn.gelu(x, approximate=False)",
              lambda x: F.gelu(x, approximate="none"), "torch.nn.functional.gelu(x, approximate='none')",
              lambda x: x / 2 * (1 + mp.erf(x / mp.sqrt(2))), [-0.7, 0.4]),
 "gelu_tanh": (lambda x: tf.nn.gelu(x, approximate=True), "tf.nn.gelu(x, approximate=True)",
               lambda x: jax.nn.gelu(x, approximate=True), "jax.nn.gelu(x, approximate=True)",
               lambda x: F.gelu(x, approximate="tanh"), "torch.nn.functional.gelu(x, approximate='tanh')",
               lambda x: x / 2 * (1 + mp.tanh(mp.sqrt(2 / mp.pi) * (x + mp.mpf("0.044715") * x ** 3))), [-0.7, 0.4]),
 "log_sigmoid": (tf.math.log_sigmoid, "tf.math.log_sigmoid", jax.nn.log_sigmoid, "jax.nn.log_sigmoid",
                 F.logsigmoid, "torch.nn.functional.logsigmoid",
                 lambda x: -mp.log1p(mp.exp(-x)), [-0.7, 0.4]),
 "logsumexp3": (lambda x: tf.math.reduce_logsumexp(tf.stack([x, x * 0 + C1, x * 0 + C2])), "tf.math.reduce_logsumexp",
                lambda x: jss.logsumexp(jnp.stack([x, x * 0 + C1, x * 0 + C2])), "jax.scipy.special.logsumexp (= jax.nn.logsumexp)",
                lambda x: torch.logsumexp(torch.stack([x, x * 0 + C1, x * 0 + C2]), 0), "torch.logsumexp(t, dim)",
                lambda x: mp_lse(x, C1, C2), [-0.7, 0.4]),
 "log_softmax3[0]": (lambda x: tf.nn.log_softmax(tf.stack([x, x * 0 + C1, x * 0 + C2]))[0], "tf.nn.log_softmax",
                     lambda x: jax.nn.log_softmax(jnp.stack([x, x * 0 + C1, x * 0 + C2]))[0], "jax.nn.log_softmax",
                     lambda x: F.log_softmax(torch.stack([x, x * 0 + C1, x * 0 + C2]), 0)[0], "torch.nn.functional.log_softmax(t, dim)",
                     lambda x: x - mp_lse(x, C1, C2), [-0.7, 0.4]),
 "erf": (tf.math.erf, "tf.math.erf", jss.erf, "jax.scipy.special.erf", torch.special.erf, "torch.special.erf",
         mp.erf, [-0.7, 0.4]),
 "erfc": (tf.math.erfc, "tf.math.erfc", jss.erfc, "jax.scipy.special.erfc", torch.special.erfc, "torch.special.erfc",
          mp.erfc, [-0.7, 0.4]),
 "lgamma": (tf.math.lgamma, "tf.math.lgamma", jss.gammaln, "jax.scipy.special.gammaln (jax.lax.lgamma)",
            torch.lgamma, "torch.lgamma (= torch.special.gammaln)", mp.loggamma, [0.3, 2.5]),
 "digamma": (tf.math.digamma, "tf.math.digamma", jss.digamma, "jax.scipy.special.digamma (jax.lax.digamma)",
             torch.special.digamma, "torch.special.digamma", mp.digamma, [0.3, 2.5]),
 "atan": (tf.math.atan, "tf.math.atan", jnp.arctan, "jax.numpy.arctan", torch.atan, "torch.atan",
          mp.atan, [-0.7, 0.4]),
 "atan2(x, c)": (lambda x: tf.math.atan2(x, x * 0 + C1), "tf.math.atan2(y, x)",
                 lambda x: jnp.arctan2(x, C1), "jax.numpy.arctan2(y, x)",
                 lambda x: torch.atan2(x, x * 0 + C1), "torch.atan2(y, x)",
                 lambda x: mp.atan2(x, C1), [-0.5, 0.4]),
 "atan2(c, x)": (lambda x: tf.math.atan2(x * 0 + C1, x), "", lambda x: jnp.arctan2(C1, x), "",
                 lambda x: torch.atan2(x * 0 + C1, x), "", lambda x: mp.atan2(C1, x), [-0.5, 0.4]),
 "sinh": (tf.math.sinh, "tf.math.sinh", jnp.sinh, "jax.numpy.sinh", torch.sinh, "torch.sinh", mp.sinh, [-0.7, 0.4]),
 "cosh": (tf.math.cosh, "tf.math.cosh", jnp.cosh, "jax.numpy.cosh", torch.cosh, "torch.cosh", mp.cosh, [-0.7, 0.4]),
 "asinh": (tf.math.asinh, "tf.math.asinh", jnp.arcsinh, "jax.numpy.arcsinh", torch.asinh, "torch.asinh", mp.asinh, [-0.7, 0.4]),
 "acosh": (tf.math.acosh, "tf.math.acosh", jnp.arccosh, "jax.numpy.arccosh", torch.acosh, "torch.acosh", mp.acosh, [1.3, 2.5]),
 "atanh": (tf.math.atanh, "tf.math.atanh", jnp.arctanh, "jax.numpy.arctanh", torch.atanh, "torch.atanh", mp.atanh, [-0.7, 0.4]),
 "xlogy(x, c)": (lambda x: tf.math.xlogy(x, x * 0 + C2), "tf.math.xlogy",
                 lambda x: jss.xlogy(x, C2), "jax.scipy.special.xlogy",
                 lambda x: torch.special.xlogy(x, C2), "torch.special.xlogy (= torch.xlogy)",
                 lambda x: x * mp.log(C2), [-0.7, 0.4]),
 "xlogy(c, y)": (lambda y: tf.math.xlogy(y * 0 + C1, y), "", lambda y: jss.xlogy(C1, y), "",
                 lambda y: torch.special.xlogy(C1, y), "", lambda y: C1 * mp.log(y), [0.3, 2.5]),
 "xlog1py(c, y)": (lambda y: tf.math.xlog1py(y * 0 + C1, y), "tf.math.xlog1py",
                   lambda y: jss.xlog1py(C1, y), "jax.scipy.special.xlog1py",
                   lambda y: torch.special.xlog1py(C1, y), "torch.special.xlog1py",
                   lambda y: C1 * mp.log1p(y), [-0.7, 0.4]),
 "pow(x, 2.5)": (lambda x: tf.math.pow(x, tf.constant(2.5, tf.float64)), "tf.math.pow",
                 lambda x: jnp.power(x, 2.5), "jax.numpy.power (lax.pow)",
                 lambda x: torch.pow(x, 2.5), "torch.pow", lambda x: x ** mp.mpf(2.5), [0.3, 2.5]),
 "pow(c, y)": (lambda y: tf.math.pow(tf.constant(C2, tf.float64), y), "",
               lambda y: jnp.power(C2, y), "", lambda y: torch.pow(C2, y), "", lambda y: mp.mpf(C2) ** y, [-0.7, 0.4]),
 "softplus": (tf.math.softplus, "tf.math.softplus (= tf.nn.softplus)", jax.nn.softplus, "jax.nn.softplus",
              F.softplus, "torch.nn.functional.softplus", lambda x: mp.log1p(mp.exp(x)), [-0.7, 0.4]),
 "sigmoid": (tf.math.sigmoid, "tf.math.sigmoid (= tf.nn.sigmoid)", jax.nn.sigmoid, "jax.nn.sigmoid (= jax.scipy.special.expit)",
             torch.sigmoid, "torch.sigmoid (= torch.special.expit)", lambda x: 1 / (1 + mp.exp(-x)), [-0.7, 0.4]),
 "tanh": (tf.math.tanh, "tf.math.tanh", jnp.tanh, "jax.numpy.tanh", torch.tanh, "torch.tanh", mp.tanh, [-0.7, 0.4]),
 "log1p": (tf.math.log1p, "tf.math.log1p", jnp.log1p, "jax.numpy.log1p", torch.log1p, "torch.log1p (= torch.special.log1p)",
           mp.log1p, [-0.7, 0.4]),
 "expm1": (tf.math.expm1, "tf.math.expm1", jnp.expm1, "jax.numpy.expm1", torch.expm1, "torch.expm1 (= torch.special.expm1)",
           mp.expm1, [-0.7, 0.4]),
}

def tf_d(fn, x, k):
    if k == 0:
        return fn(x)
    with tf.GradientTape() as t:
        t.watch(x)
        y = tf_d(fn, x, k - 1)
    g = t.gradient(y, x)
    if g is None:
        raise RuntimeError("GradientTape.gradient returned None")
    return g
def jax_d(fn, x, k):
    g = fn
    for _ in range(k):
        g = jax.grad(g)
    return g(x)
def torch_d(fn, x, k):
    xt = torch.tensor(x, dtype=torch.float64, requires_grad=True)
    y = fn(xt)
    for _ in range(k):
        (y,) = torch.autograd.grad(y, xt, create_graph=True)
    return y

def short(e): return f"{type(e).__name__}: {e}".replace("\n", " | ")[:200]

print(f"{'kernel':16s} framework  max over points of |v-ref|/max(|ref|,1e-3) for d^k, k=0..4; 'ERR' if raised")
summary = []
for name, (tff, tfn, jf, jn, tof, ton, mpf, pts) in K.items():
    refs = [[mp.diff(mpf, mp.mpf(p), k) for k in range(5)] for p in pts]
    for fw, d in (("tf", lambda k, p: float(tf_d(tff, tf.constant(p, tf.float64), k))),
                  ("jax", lambda k, p: float(jax_d(jf, jnp.float64(p), k))),
                  ("torch", lambda k, p: float(torch_d(tof, p, k).detach()))):
        errs = []
        for k in range(5):
            e = 0.0
            try:
                for i, p in enumerate(pts):
                    v = d(k, p); r = refs[i][k]
                    e = max(e, float(abs(v - r) / max(abs(r), mp.mpf('1e-3'))))
                errs.append(f"{e:.0e}")
            except Exception as ex:
                errs.append("ERR")
                summary.append(f"{name} {fw} k={k}: {short(ex)}")
        print(f"{name:16s} {fw:6s} " + " ".join(f"{s:>6s}" for s in errs))
print("\nErrors raised:")
for s in summary:
    print("  ", s)
print("\nNames table:")
for name, (tff, tfn, jf, jn, tof, ton, mpf, pts) in K.items():
    if tfn:
        print(f"  {name:16s} | {tfn} | {jn} | {ton}")

# ---- constants / defaults actually used ----
print("\nselu constants recovered in float64 (scale = selu(1); alpha = selu(-40)/(-scale)):")
for fw, fn in (("tf", lambda x: float(tf.nn.selu(tf.constant(x, tf.float64)))),
               ("jax", lambda x: float(jax.nn.selu(jnp.float64(x)))),
               ("torch", lambda x: float(F.selu(torch.tensor(x, dtype=torch.float64))))):
    s = fn(1.0); a = fn(-40.0) / (-s)
    print(f"  {fw:6s} scale={s!r} alpha={a!r}  | exact rounded to f64: scale={float(SELU_SCALE)!r} alpha={float(SELU_ALPHA)!r}")
print("\ndefault arguments (inspect.signature):")
for lbl, fn in (("tf.nn.elu", tf.nn.elu), ("jax.nn.elu", jax.nn.elu), ("F.elu", F.elu),
                ("tf.nn.gelu", tf.nn.gelu), ("jax.nn.gelu", jax.nn.gelu), ("F.gelu", F.gelu),
                ("F.softplus", F.softplus), ("tf.math.softplus", tf.math.softplus), ("jax.nn.softplus", jax.nn.softplus)):
    try:
        print(f"  {lbl:18s} {inspect.signature(fn)}")
    except Exception as e:
        print(f"  {lbl:18s} (signature n/a: {short(e)}) doc: {(fn.__doc__ or '').strip().splitlines()[0][:120]}")

print("\nsoftplus far tail, float64, x = 25 and 40: d^1, d^2 (exact sigmoid(x), sigmoid'(x))")
for x in (25.0, 40.0):
    ex1 = 1 / (1 + mp.exp(-x)); ex2 = mp.exp(-x) / (1 + mp.exp(-x)) ** 2
    print(f"  x={x}: exact d1={mp.nstr(ex1, 17)} d2={mp.nstr(ex2, 6)}")
    for fw, d in (("tf", lambda k: float(tf_d(tf.math.softplus, tf.constant(x, tf.float64), k))),
                  ("jax", lambda k: float(jax_d(jax.nn.softplus, jnp.float64(x), k))),
                  ("torch", lambda k: float(torch_d(F.softplus, x, k).detach()))):
        print(f"     {fw:6s} d1={d(1)!r} d2={d(2)!r}")
