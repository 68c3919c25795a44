# Q2: PyTorch higher-order derivatives (orders 1..4), elementwise batch + mixed partials.
import time, math
import torch
import torch.autograd.forward_ad as fwAD
from torch.func import grad, jvp, vmap
import mpmath as mp
import numpy as np

print("torch", torch.__version__, "threads", torch.get_num_threads())
torch.set_default_dtype(torch.float64)

def f(x):
    return torch.exp(torch.sin(x)) * torch.log1p(x * x)
def f_mp(x):
    return mp.exp(mp.sin(x)) * mp.log1p(x * x)

xs = torch.tensor([-1.3, 0.2, 0.7, 2.5], dtype=torch.float64)
mp.mp.dps = 40
ref = np.array([[float(mp.diff(f_mp, mp.mpf(float(x)), k)) for x in xs] for k in range(1, 5)])

def short(e):
    return f"{type(e).__name__}: {e}".replace("\n", " | ")[:600]

# (a) nested autograd.grad(create_graph=True), sum trick (valid because f is elementwise)
def a_autograd(x, k):
    x = x.detach().requires_grad_(True)
    y = f(x)
    for _ in range(k):
        (y,) = torch.autograd.grad(y.sum(), x, create_graph=True)
    return y.detach()

# (b1) torch.func.jvp nested
def nth_jvp(fun, k):
    g = fun
    for _ in range(k):
        g = (lambda h: (lambda x: jvp(h, (x,), (torch.ones_like(x),))[1]))(g)
    return g
def b_func_jvp(x, k):
    return nth_jvp(f, k)(x)

# (b2) forward_ad dual numbers, nested dual levels
def b_fwad(x, k):
    def d(fun):
        def inner(x):
            with fwAD.dual_level():
                xd = fwAD.make_dual(x, torch.ones_like(x))
                return fwAD.unpack_dual(fun(xd)).tangent
        return inner
    g = f
    for _ in range(k):
        g = d(g)
    return g(x)

# (c1) torch.func.jvp over torch.func.grad  (grad needs a scalar output -> vmap over batch)
def c_jvp_grad(x, k):
    g1 = vmap(grad(f))
    return nth_jvp(g1, k - 1)(x)
# (c2) torch.func.jvp over torch.autograd.grad
def c_jvp_autograd(x, k):
    def g1(x):
        x = x.requires_grad_(True) if not x.requires_grad else x
        with torch.enable_grad():
            xx = x
            y = f(xx)
            (d,) = torch.autograd.grad(y.sum(), xx, create_graph=True)
        return d
    return nth_jvp(g1, k - 1)(x)
# (c3) forward_ad dual number over autograd.grad (double-backward-like "forward over reverse")
#      one forward level (dual) over (k-1) nested reverse passes: tangent of d^{k-1}f = d^k f
def c_fwad_autograd(x, k):
    assert k >= 2, "k=1 would need zero reverse passes"
    with fwAD.dual_level():
        xp = x.clone().requires_grad_(True)
        xd = fwAD.make_dual(xp, torch.ones_like(x))
        y = f(xd)
        for _ in range(k - 1):
            (y,) = torch.autograd.grad(y.sum(), xd, create_graph=True)
        return fwAD.unpack_dual(y).tangent
# (c2b) func.jvp over autograd.grad where x already requires grad before entering jvp
def c_jvp_autograd_b(x, k):
    def g1(x):
        y = f(x)
        (d,) = torch.autograd.grad(y.sum(), x, create_graph=True)
        return d
    xr = x.clone().requires_grad_(True)
    return nth_jvp(g1, k - 1)(xr)
# (d) vmap(grad^k)
def d_vmap_grad(x, k):
    g = f
    for _ in range(k):
        g = grad(g)
    return vmap(g)(x)

methods = {"a autograd.grad create_graph": a_autograd, "b1 func.jvp nested": b_func_jvp,
           "b2 forward_ad nested levels": b_fwad, "c1 func.jvp(vmap(func.grad))": c_jvp_grad,
           "c2 func.jvp(autograd.grad)": c_jvp_autograd, "c2b func.jvp(autograd.grad), x.requires_grad set outside": c_jvp_autograd_b,
           "c3 fwAD dual over (k-1) x autograd.grad": c_fwad_autograd,
           "d vmap(func.grad^k)": d_vmap_grad}
print("reference rows k=1..4:\n", ref)
for name, m in methods.items():
    res = []
    for k in range(1, 5):
        try:
            t0 = time.perf_counter(); v = m(xs, k); t1 = time.perf_counter()
            err = float(np.max(np.abs(v.detach().numpy() - ref[k - 1]) / np.abs(ref[k - 1])))
            res.append(f"k={k}: relerr {err:.1e} ({(t1-t0)*1e3:.1f} ms)")
        except Exception as e:
            res.append(f"k={k}: ERROR {short(e)}")
    print(f"{name}:\n   " + "\n   ".join(res))

# ---------------- mixed partials g(a,b): d3/da2db, d4/da2db2 ----------------
def g(a, b):
    return torch.sin(a * b) * torch.exp(a + 2 * b)
def g_mp(a, b):
    return mp.sin(a * b) * mp.exp(a + 2 * b)
a0, b0 = 0.3, -0.8
print(f"\nmixed ref d3/da2db = {float(mp.diff(g_mp,(mp.mpf(a0),mp.mpf(b0)),(2,1)))!r}, "
      f"d4/da2db2 = {float(mp.diff(g_mp,(mp.mpf(a0),mp.mpf(b0)),(2,2)))!r}")
A = torch.tensor(a0); B = torch.tensor(b0)
# (a) nested autograd.grad
a_ = A.clone().requires_grad_(True); b_ = B.clone().requires_grad_(True)
y = g(a_, b_)
(ga,) = torch.autograd.grad(y, a_, create_graph=True)
(gaa,) = torch.autograd.grad(ga, a_, create_graph=True)
(gaab,) = torch.autograd.grad(gaa, b_, create_graph=True)
(gaabb,) = torch.autograd.grad(gaab, b_, create_graph=True)
print("  (a) autograd.grad nested      :", repr(gaab.item()), repr(gaabb.item()))
# (a') torch.func.grad with argnums
print("  (a') func.grad argnums         :", repr(grad(grad(grad(g, 0), 0), 1)(A, B).item()),
      repr(grad(grad(grad(grad(g, 0), 0), 1), 1)(A, B).item()))
# (b) nested func.jvp with direction tuples
one, zero = torch.tensor(1.0), torch.tensor(0.0)
ea, eb = (one, zero), (zero, one)
def dd(fun, t):
    return lambda a, b: jvp(fun, (a, b), t)[1]
print("  (b) func.jvp nested           :", repr(dd(dd(dd(g, ea), ea), eb)(A, B).item()),
      repr(dd(dd(dd(dd(g, ea), ea), eb), eb)(A, B).item()))
# (c) jvp over grad
print("  (c) func.jvp(func.grad(g,0))  :", repr(dd(dd(grad(g, 0), ea), eb)(A, B).item()))
# (c') jacfwd(jacfwd(jacrev))
from torch.func import jacfwd, jacrev, hessian
print("  (c') jacfwd(jacfwd(jacrev))   :", repr(jacfwd(jacfwd(jacrev(g, 0), 0), 1)(A, B).item()))
