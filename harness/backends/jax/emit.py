"""JAX code for a case's implementation (:mod:`harness.backends.emit`): the functions
its reproducers write (``snippet.write``), a ``jax.custom_jvp`` function
(``jax.custom_vjp`` for reverse rules) where it has rules, as one module to paste. No
JAX here: this writes text."""

from __future__ import annotations

from functools import partial

from harness.backends.emit import implementation_module
from harness.backends.jax.snippet import write

__all__ = ["DTYPE_OF", "HEADER", "emit"]

HEADER = "import math\n\nimport jax\nimport jax.numpy as jnp"
#: How an input names its dtype (``{x}``: the input's name).
DTYPE_OF = "jnp.result_type({x})"

#: ``emit(case, implementation, name, doc, names=())``: the module of a case's
#: implementation in JAX (:func:`harness.backends.emit.implementation_module`).
emit = partial(implementation_module, write, HEADER, DTYPE_OF)
