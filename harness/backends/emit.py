"""Code to paste: a case's implementation as one importable module of one framework.

A repair (:mod:`harness.repair`) ends in code a user pastes into a project: the function,
with its custom rules in the framework's own idiom (``tf.custom_gradient``,
``jax.custom_jvp`` or ``custom_vjp``, a ``torch.autograd.Function`` with ``forward``,
``backward`` and ``jvp``). Each back end writes its functions as its reproducers do
(``write`` in its ``snippet.py``: the operations the harness runs, in its order, the
constants of a module-level ``DTYPE``); its ``emit.py`` gives its imports and how an input
names its dtype, and :func:`module` assembles the module: the functions built once per
dtype (``functools.cache``), the public function calling those of its inputs' dtype, so
that the same code serves float32 and float64 and computes, bit for bit, what the
harness judged. No framework here: this module writes text.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable, Sequence

__all__ = ["implementation_module", "module"]


def module(
    name: str,
    names: Sequence[str],
    blocks: Sequence[str],
    header: str,
    dtype_of: str,
    doc: str,
) -> str:
    """The module text: ``doc`` as its docstring, ``header`` (imports), ``blocks`` (the
    back end's functions, ``f`` of ``names`` the one called) built by ``_build(DTYPE)``,
    and ``name(names)`` calling them for the dtype of its first input (``dtype_of``:
    ``"{x}"`` replaced by that input's name)."""
    args = ", ".join(names)
    paragraphs = [textwrap.fill(p, 88, break_long_words=False) for p in doc.strip().split("\n\n")]
    doc = "\n\n".join(paragraphs)
    body = textwrap.indent("\n\n".join(blocks), "    ")
    lines = [
        f'"""{doc}\n"""',
        "",
        "import functools",
        header.strip(),
        "",
        "",
        "@functools.cache",
        "def _build(DTYPE):",
        '    """The functions for inputs of DTYPE (their constants are of it), built once."""',
        "",
        body,
        "",
        "    return f",
        "",
        "",
        f"def {name}({args}):",
        f"    return _build({dtype_of.format(x=names[0])})({args})",
    ]
    return "\n".join(lines) + "\n"


def implementation_module(
    write: Callable,
    header: str,
    dtype_of: str,
    case,
    implementation: str,
    name: str,
    doc: str,
    names: Sequence[str] = (),
) -> str | None:
    """The module defining ``name`` (of the case's inputs, or ``names``): the case's
    ``implementation`` as the back end's snippet ``write`` writes it, with ``header``
    and ``dtype_of`` (:func:`module`); ``None`` where the framework cannot hold it (a rule
    it has no place for, a registered implementation without a port)."""
    names = list(names or case.input_names)
    written = write(case, implementation, names)
    if written is None:
        return None
    blocks, _ = written
    return module(name, names, blocks, header, dtype_of, doc)
