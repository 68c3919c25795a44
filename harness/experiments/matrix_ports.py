"""Experiment ``matrix_mixed_partials`` in JAX and PyTorch: the seed's own frameworks.

Seed 001 asks its question in PyTorch (``torch.autograd.grad(..., create_graph=True)``
on ``torch.linalg.norm(X.mm(X).mm(Y), ord='fro')``) and answers it in JAX
(``jax.grad(scalarized_dy, argnums=...)`` of ``trace(grad(f, argnums=1))``). The same
three ways as in TensorFlow (:mod:`harness.experiments.matrix_partials`), written as a
user of each framework writes them:

- ``jacobian`` (``reverse``): the block by differentiating the gradient again, JAX
  ``jax.jacrev(jax.grad(loss, argnums=1), argnums=(1, 0))``; PyTorch one
  ``torch.autograd.grad(d_y[k, l], (Y, X), retain_graph=True)`` per entry of
  ``d_y = autograd.grad(loss, Y, create_graph=True)``; the trace rows contract the
  blocks;
- ``trace_trick`` (``reverse``): the seed's answer, the gradient of ``trace(d loss/dY)``
  with respect to X and Y;
- ``hvp`` (``forward_over_reverse``): ``jvp`` of the gradient along each basis direction
  ``E_kl`` of Y (``jax.jvp``; ``torch.func.jvp`` of ``torch.func.grad``) and along the
  identity.

Modes: JAX ``eager`` and ``jit`` (``jax.jit`` of each way); PyTorch ``eager`` and
``compile`` (``torch.compile`` of each way; a way it cannot compile gives error rows
with its message).
"""

from __future__ import annotations

from harness.experiments.matrix_data import collect_rows

__all__ = ["evaluate_jax", "evaluate_torch"]


def evaluate_jax(jax, params: dict, dtype: str, mode: str) -> list[dict]:
    """The three ways in JAX (``jax``: the module, 64-bit floats on)."""
    jnp = jax.numpy

    def loss(X, Y):
        return jnp.linalg.norm(X @ X @ Y, ord="fro")

    def jacobian(X, Y):
        yy, xy = jax.jacrev(jax.grad(loss, argnums=1), argnums=(1, 0))(X, Y)
        return {
            "YY": yy,
            "XY": xy,
            "trace_trick_X": jnp.einsum("kkab->ab", xy),
            "trace_trick_Y": jnp.einsum("kkmp->mp", yy),
        }

    def trace_trick(X, Y):
        # The seed's answer: scalarized_dy = trace(grad(f, argnums=1)); its gradients.
        def scalarized_dy(X, Y):
            return jnp.trace(jax.grad(loss, argnums=1)(X, Y))

        d_yx, d_yy = jax.grad(scalarized_dy, argnums=(0, 1))(X, Y)
        return {"trace_trick_X": d_yx, "trace_trick_Y": d_yy}

    def hvp(X, Y):
        n = X.shape[0]
        grads = jax.grad(loss, argnums=(0, 1))

        def along(v):
            return jax.jvp(lambda y: grads(X, y), (Y,), (v,))[1]

        basis = jnp.eye(n * n, dtype=Y.dtype).reshape(n * n, n, n)
        cols_x, cols_y = jax.vmap(along)(basis)
        # Column (k, l) of each block: YY is symmetric, so jy[m, p] = YY[k, l, m, p].
        tx, ty = along(jnp.eye(n, dtype=Y.dtype))
        return {
            "YY": cols_y.reshape(n, n, n, n),
            "XY": cols_x.reshape(n, n, n, n),
            "trace_trick_X": tx,
            "trace_trick_Y": ty,
        }

    ways = {
        "jacobian": ("reverse", jacobian),
        "trace_trick": ("reverse", trace_trick),
        "hvp": ("forward_over_reverse", hvp),
    }
    if mode == "jit":
        ways = {name: (method, jax.jit(fn)) for name, (method, fn) in ways.items()}
    jdtype = jnp.dtype(dtype)

    def call(fn, X, Y):
        out = fn(jnp.asarray(X, jdtype), jnp.asarray(Y, jdtype))
        return {q: jax.device_get(v).astype("float64") for q, v in out.items()}

    return collect_rows(ways, params, call)


def evaluate_torch(torch, params: dict, dtype: str, mode: str) -> list[dict]:
    """The three ways in PyTorch (``torch``: the module, as its back end set it up)."""

    def loss(X, Y):
        # The seed's loss.
        return torch.linalg.norm(X.mm(X).mm(Y), ord="fro")

    def jacobian(X, Y):
        n = X.shape[0]
        X, Y = X.requires_grad_(), Y.requires_grad_()
        (d_y,) = torch.autograd.grad(loss(X, Y), Y, create_graph=True)
        cols_y, cols_x = [], []
        for k in range(n):
            for c in range(n):
                gy, gx = torch.autograd.grad(d_y[k, c], (Y, X), retain_graph=True)
                cols_y.append(gy)
                cols_x.append(gx)
        yy = torch.stack(cols_y).reshape(n, n, n, n)
        xy = torch.stack(cols_x).reshape(n, n, n, n)
        return {
            "YY": yy,
            "XY": xy,
            "trace_trick_X": torch.einsum("kkab->ab", xy),
            "trace_trick_Y": torch.einsum("kkmp->mp", yy),
        }

    def trace_trick(X, Y):
        X, Y = X.requires_grad_(), Y.requires_grad_()
        (d_y,) = torch.autograd.grad(loss(X, Y), Y, create_graph=True)
        d_yx, d_yy = torch.autograd.grad(torch.trace(d_y), (X, Y))
        return {"trace_trick_X": d_yx, "trace_trick_Y": d_yy}

    def hvp(X, Y):
        n = X.shape[0]
        grads = torch.func.grad(loss, argnums=(0, 1))

        def along(v):
            return torch.func.jvp(lambda y: grads(X, y), (Y,), (v,))[1]

        cols_x, cols_y = [], []
        for k in range(n):
            for c in range(n):
                basis = torch.zeros(n, n, dtype=Y.dtype)
                basis[k, c] = 1
                jx, jy = along(basis)
                cols_x.append(jx)
                cols_y.append(jy)
        tx, ty = along(torch.eye(n, dtype=Y.dtype))
        return {
            "YY": torch.stack(cols_y).reshape(n, n, n, n),
            "XY": torch.stack(cols_x).reshape(n, n, n, n),
            "trace_trick_X": tx,
            "trace_trick_Y": ty,
        }

    ways = {
        "jacobian": ("reverse", jacobian),
        "trace_trick": ("reverse", trace_trick),
        "hvp": ("forward_over_reverse", hvp),
    }
    if mode == "compile":
        ways = {name: (method, torch.compile(fn)) for name, (method, fn) in ways.items()}
    tdtype = getattr(torch, dtype)

    def call(fn, X, Y):
        out = fn(torch.tensor(X, dtype=tdtype), torch.tensor(Y, dtype=tdtype))
        return {q: v.detach().to(torch.float64).numpy(force=True) for q, v in out.items()}

    return collect_rows(ways, params, call)
