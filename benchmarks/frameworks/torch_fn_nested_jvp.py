# Probe: nested forward mode (func.jvp twice) over an autograd.Function with a jvp staticmethod.
import math, torch
from torch.func import jvp
class ExpJvpFromInput(torch.autograd.Function):
    @staticmethod
    def forward(x):
        return torch.exp(x)
    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_forward(inputs[0])
    @staticmethod
    def jvp(ctx, t):
        (x,) = ctx.saved_tensors
        return 3.0 * t * torch.exp(x)   # deliberately 3x
    @staticmethod
    def backward(ctx, g):
        raise RuntimeError("unused")
class ExpJvpFromOutput(torch.autograd.Function):
    @staticmethod
    def forward(x):
        return torch.exp(x)
    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_forward(output)
    @staticmethod
    def jvp(ctx, t):
        (y,) = ctx.saved_tensors
        return 3.0 * t * y
    @staticmethod
    def backward(ctx, g):
        raise RuntimeError("unused")
x0 = torch.tensor([0.5], dtype=torch.float64)
one = torch.ones_like(x0)
print("e^0.5 =", math.exp(0.5), " 3e^0.5 =", 3*math.exp(0.5), " 9e^0.5 =", 9*math.exp(0.5))
for cls in (ExpJvpFromInput, ExpJvpFromOutput):
    j1 = lambda z: jvp(cls.apply, (z,), (torch.ones_like(z),))[1]
    j2 = lambda z: jvp(j1, (z,), (torch.ones_like(z),))[1]
    j3 = lambda z: jvp(j2, (z,), (torch.ones_like(z),))[1]
    for nm, fn in (("k=1", j1), ("k=2", j2), ("k=3", j3)):
        try:
            print(f"  {cls.__name__} nested func.jvp {nm}: {fn(x0).item()!r}")
        except Exception as e:
            print(f"  {cls.__name__} nested func.jvp {nm}: ERROR {type(e).__name__}: {str(e)[:300]}")
