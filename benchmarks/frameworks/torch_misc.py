# Q2 cont.: torch.compile on this CPU, low-precision dtypes, autograd.Function custom gradients.
import time, math, shutil, subprocess, os
import torch
import torch.autograd.forward_ad as fwAD
from torch.func import grad, jvp, vmap

def short(e, n=400):
    return f"{type(e).__name__}: {e}".replace("\n", " | ")[:n]

print("compilers:", {c: shutil.which(c) for c in ("gcc", "g++", "cc", "c++", "clang")})
print(subprocess.run(["g++", "--version"], capture_output=True, text=True).stdout.splitlines()[0])

# ---------------- torch.compile ----------------
def f(x):
    return torch.exp(torch.sin(x)) * torch.log1p(x * x)
x = torch.linspace(-2, 2, 1000, dtype=torch.float32)
try:
    cf = torch.compile(f)
    t0 = time.perf_counter(); y1 = cf(x); t1 = time.perf_counter(); y2 = cf(x); t2 = time.perf_counter()
    t3 = time.perf_counter(); y3 = f(x); t4 = time.perf_counter()
    print(f"torch.compile(f): first call {t1-t0:.2f} s, second call {(t2-t1)*1e3:.3f} ms, eager {(t4-t3)*1e3:.3f} ms, "
          f"max|diff| vs eager {float((y1-y3).abs().max()):.2e}")
except Exception as e:
    print("torch.compile(f) FAILED:", short(e, 2000))

# compile + higher order: (i) compiled f, then double backward through it
try:
    xr = x.clone().requires_grad_(True)
    y = cf(xr)
    (g1,) = torch.autograd.grad(y.sum(), xr, create_graph=True)
    (g2,) = torch.autograd.grad(g1.sum(), xr, create_graph=True)
    print("autograd.grad x2 through torch.compile(f): OK")
except Exception as e:
    print("autograd.grad x2 through torch.compile(f): FAIL", short(e, 600))
# (ii) compile a function that does nested autograd.grad inside
def d2_autograd(x):
    x = x.detach().requires_grad_(True)
    y = f(x)
    (g1,) = torch.autograd.grad(y.sum(), x, create_graph=True)
    (g2,) = torch.autograd.grad(g1.sum(), x, create_graph=True)
    return g2
try:
    c = torch.compile(d2_autograd)
    t0 = time.perf_counter(); r = c(x); t1 = time.perf_counter(); r = c(x); t2 = time.perf_counter()
    print(f"torch.compile(nested autograd.grad fn): OK first {t1-t0:.2f} s second {(t2-t1)*1e3:.2f} ms; "
          f"max|diff| {float((r - d2_autograd(x)).abs().max()):.2e}")
except Exception as e:
    print("torch.compile(nested autograd.grad fn): FAIL", short(e, 600))
# (iii) compile torch.func transforms: vmap(grad^4)
g4 = vmap(grad(grad(grad(grad(f)))))
try:
    c = torch.compile(g4)
    t0 = time.perf_counter(); r = c(x); t1 = time.perf_counter(); r = c(x); t2 = time.perf_counter()
    print(f"torch.compile(vmap(grad^4(f))): OK first {t1-t0:.2f} s second {(t2-t1)*1e3:.2f} ms; "
          f"max|diff| vs eager {float((r - g4(x)).abs().max()):.2e}")
except Exception as e:
    print("torch.compile(vmap(grad^4(f))): FAIL", short(e, 600))
# (iv) compile nested func.jvp
def j4(x):
    g = f
    for _ in range(4):
        g = (lambda h: (lambda z: jvp(h, (z,), (torch.ones_like(z),))[1]))(g)
    return g(x)
try:
    c = torch.compile(j4)
    t0 = time.perf_counter(); r = c(x); t1 = time.perf_counter(); r = c(x); t2 = time.perf_counter()
    print(f"torch.compile(func.jvp^4(f)): OK first {t1-t0:.2f} s second {(t2-t1)*1e3:.2f} ms; "
          f"max|diff| vs eager {float((r - j4(x)).abs().max()):.2e}")
except Exception as e:
    print("torch.compile(func.jvp^4(f)): FAIL", short(e, 600))

# ---------------- dtypes ----------------
print("\nlow-precision support on CPU: value of d^k op/dx^k at x=0.3 (k=0 forward), via nested autograd.grad;"
      " float64 reference in brackets")
ops = {"exp": torch.exp, "log": torch.log, "log1p": torch.log1p,
       "softplus": torch.nn.functional.softplus, "erf": torch.special.erf,
       "lgamma": torch.lgamma, "digamma": torch.special.digamma}
def derivs(op, dt):
    out = []
    x = torch.tensor([0.3], dtype=dt, requires_grad=True)
    try:
        y = op(x)
    except Exception as e:
        return [f"fwd ERR {short(e, 120)}"]
    out.append(f"{y.item():.5g}")
    for k in range(1, 5):
        try:
            (y,) = torch.autograd.grad(y.sum(), x, create_graph=True)
            out.append(f"{y.item():.5g}")
        except Exception as e:
            out.append(f"k={k} ERR {short(e, 160)}")
            break
    return out
for nm, op in ops.items():
    ref = derivs(op, torch.float64)
    print(f"  {nm:9s} float64 {ref}")
    for dt in (torch.float32, torch.float16, torch.bfloat16):
        print(f"  {'':9s} {str(dt)[6:]:8s}{derivs(op, dt)}")
# forward-mode with bf16/f16
print("  func.jvp (k=1) in float16/bfloat16:")
for nm, op in ops.items():
    r = []
    for dt in (torch.float16, torch.bfloat16):
        xx = torch.tensor([0.3], dtype=dt)
        try:
            r.append(f"{str(dt)[6:]}={jvp(op, (xx,), (torch.ones_like(xx),))[1].item():.5g}")
        except Exception as e:
            r.append(f"{str(dt)[6:]} ERR {short(e, 150)}")
    print(f"    {nm:9s}", "  ".join(r))

# ---------------- autograd.Function ----------------
print("\nautograd.Function")
class ExpDiffBackward(torch.autograd.Function):
    """exp with a backward written in differentiable torch ops -> supports create_graph."""
    @staticmethod
    def forward(x):
        return torch.exp(x)
    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(output)
        ctx.save_for_forward(output)
    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return 2.0 * g * y          # deliberately 2x the true derivative, to see it is used
    @staticmethod
    def jvp(ctx, t):
        (y,) = ctx.saved_tensors
        return 3.0 * t * y          # deliberately 3x the true derivative

class ExpNoJvp(torch.autograd.Function):
    @staticmethod
    def forward(x):
        return torch.exp(x)
    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(output)
    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return 2.0 * g * y

from torch.autograd.function import once_differentiable
class ExpOnceDiff(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = torch.exp(x); ctx.save_for_backward(y); return y
    @staticmethod
    @once_differentiable
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return 2.0 * g * y

x0 = torch.tensor([0.5], dtype=torch.float64)
print("  exp(0.5) =", math.exp(0.5))
def nested_autograd(fn, k):
    x = x0.clone().requires_grad_(True)
    y = fn(x)
    out = []
    for _ in range(k):
        (y,) = torch.autograd.grad(y.sum(), x, create_graph=True)
        out.append(y.item())
    return out
for cls in (ExpDiffBackward, ExpNoJvp, ExpOnceDiff):
    try:
        print(f"  {cls.__name__}: autograd.grad create_graph k=1..4:", nested_autograd(cls.apply, 4))
    except Exception as e:
        print(f"  {cls.__name__}: autograd.grad create_graph FAIL", short(e))
    try:
        with fwAD.dual_level():
            d = fwAD.make_dual(x0, torch.ones_like(x0))
            print(f"  {cls.__name__}: forward_ad k=1:", fwAD.unpack_dual(cls.apply(d)).tangent.item())
    except Exception as e:
        print(f"  {cls.__name__}: forward_ad FAIL", short(e))
    try:
        print(f"  {cls.__name__}: func.jvp k=1:", jvp(cls.apply, (x0,), (torch.ones_like(x0),))[1].item())
    except Exception as e:
        print(f"  {cls.__name__}: func.jvp FAIL", short(e))
    try:
        j2 = lambda z: jvp(lambda w: jvp(cls.apply, (w,), (torch.ones_like(w),))[1], (z,), (torch.ones_like(z),))[1]
        print(f"  {cls.__name__}: func.jvp nested k=2:", j2(x0).item())
    except Exception as e:
        print(f"  {cls.__name__}: func.jvp nested k=2 FAIL", short(e))
    try:
        print(f"  {cls.__name__}: func.grad k=1, grad^2:", grad(lambda z: cls.apply(z).sum())(x0).item(),
              grad(lambda z: grad(lambda w: cls.apply(w).sum())(z).sum())(x0).item())
    except Exception as e:
        print(f"  {cls.__name__}: func.grad FAIL", short(e))
    try:
        r = jvp(lambda z: grad(lambda w: cls.apply(w).sum())(z), (x0,), (torch.ones_like(x0),))[1]
        print(f"  {cls.__name__}: func.jvp(func.grad) k=2:", r.item())
    except Exception as e:
        print(f"  {cls.__name__}: func.jvp(func.grad) FAIL", short(e))
