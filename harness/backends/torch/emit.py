"""PyTorch code for a case's implementation (:mod:`harness.backends.emit`): the
functions its reproducers write (``snippet.write``), a ``torch.autograd.Function``
(``forward``, ``backward``, ``jvp``) where it has rules, as one module to paste. No
PyTorch here: this writes text."""

from __future__ import annotations

from functools import partial

from harness.backends.emit import implementation_module
from harness.backends.torch.snippet import write

__all__ = ["DTYPE_OF", "HEADER", "emit"]

HEADER = "import math\n\nimport torch"
#: How an input names its dtype (``{x}``: the input's name).
DTYPE_OF = "{x}.dtype"

#: ``emit(case, implementation, name, doc, names=())``: the module of a case's
#: implementation in PyTorch (:func:`harness.backends.emit.implementation_module`).
emit = partial(implementation_module, write, HEADER, DTYPE_OF)
