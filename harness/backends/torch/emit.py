"""PyTorch code for a case's implementation (:mod:`harness.backends.emit`): the functions
its reproducers write (``snippet.write``), a ``torch.autograd.Function`` (``forward``, ``backward``, ``jvp``) where it has rules, as one module to paste. No PyTorch
here: this writes text."""

from __future__ import annotations

from collections.abc import Sequence

from harness.backends.emit import module
from harness.backends.torch.snippet import write
from harness.cases.model import Case

__all__ = ["HEADER", "emit"]

HEADER = "import math\n\nimport torch"


def emit(case: Case, implementation: str, name: str, doc: str, names: Sequence[str] = ()):
    """The module defining ``name`` (of the case's inputs, or ``names``): the case's
    ``implementation`` in PyTorch; ``None`` where PyTorch cannot hold it (a rule it has no
    place for, a registered implementation without a port)."""
    names = list(names or case.input_names)
    written = write(case, implementation, names)
    if written is None:
        return None
    blocks, _ = written
    return module(name, names, blocks, HEADER, "{x}.dtype", doc)
