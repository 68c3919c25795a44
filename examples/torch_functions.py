"""The seeds' functions as a PyTorch user writes them."""

import torch


def naive_log1pexp(x):
    """Seed 002's log(1 + exp(x)), differentiated by autograd."""
    return torch.log(1 + torch.exp(x))


class Log1pexp(torch.autograd.Function):
    """log(1 + exp(x)) with the documentation's rule as a backward and as a jvp."""

    @staticmethod
    def forward(x):
        return torch.log(1 + torch.exp(x))

    @staticmethod
    def setup_context(ctx, inputs, output):
        (x,) = inputs
        ctx.save_for_backward(x)
        ctx.save_for_forward(x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * (1 - 1 / (1 + torch.exp(x)))

    @staticmethod
    def jvp(ctx, x_dot):
        (x,) = ctx.saved_tensors
        return x_dot * (1 - 1 / (1 + torch.exp(x)))


def log1pexp(x):
    return Log1pexp.apply(x)


class NewDiv(torch.autograd.Function):
    """Seed 000's division with its own gradient, (1/b, -(a/b)/b)."""

    @staticmethod
    def forward(x, y):
        return x / y

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(*inputs)

    @staticmethod
    def backward(ctx, grad):
        x, y = ctx.saved_tensors
        return 1 / y * grad, -((x / y) / y) * grad


def ratio(a, b):
    """The seed's f = -a/b through the custom division."""
    return -NewDiv.apply(a, b)
