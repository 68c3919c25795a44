"""The prefix trie of a set of partials, shared by every back end (no framework here).

A partial is written in differentiation order: ``('a', 'b')`` is d/db of df/da, so
``('b', 'b')`` is the derivative of ``('b',)``: a chain ``b, bb, bbb, bbbb`` costs one
nested pass, not four.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["leaves", "prefix_closure"]

Partial = tuple[str, ...]


def prefix_closure(partials: Sequence[Partial]) -> list[Partial]:
    """Every prefix of every partial, sorted by length (parents before children)."""
    nodes = {p[:k] for p in partials for k in range(len(p) + 1)}
    return sorted(nodes, key=lambda p: (len(p), p))


def leaves(partials: Sequence[Partial]) -> list[Partial]:
    """The partials that are no other partial's prefix (``()`` if there are none)."""
    nodes = prefix_closure(partials)
    found = [p for p in nodes if not any(q != p and q[: len(p)] == p for q in nodes)]
    return found or [()]
