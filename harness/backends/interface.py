"""What a back end implements (TensorFlow, JAX and PyTorch each do, in their folders).

A back end turns a validated case into evaluation rows: for every implementation, method,
mode and dtype it offers, each partial at every point, with ``status`` ``value``,
``missing`` (the framework gave no derivative), ``error`` (it raised; the message says
where) or ``not_applicable`` (the combination cannot be written in this framework; the
message says why). Every named function of a case maps to the framework's own kernel and
a case's custom gradient to the framework's own mechanism, so a case tests the framework,
not a re-implementation.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

import pandas as pd

from harness.backends.catalogue import BackendSpec

__all__ = ["EVALUATION_COLUMNS", "STATUSES", "Backend", "NotApplicable", "TraceError"]


class NotApplicable(Exception):
    """The combination cannot be written in this framework; the message says why (a
    ``not_applicable`` row)."""


class TraceError(ValueError):
    """A user's function cannot be traced into the harness's expression, or its trace does
    not compute what it computes; the message says why, naming the framework's primitive
    and the user's line where there is one (:mod:`harness.api.trace`)."""


#: The columns of a back end's evaluation rows (the pipeline adds ``backend``).
EVALUATION_COLUMNS = (
    "implementation",
    "method",
    "mode",
    "dtype",
    "partial",
    "order",
    "point",
    "value",
    "status",
    "message",
    "seconds",
)
STATUSES = ("value", "missing", "error", "not_applicable")


class Backend(Protocol):
    spec: BackendSpec
    #: The framework's module as the back end sets it up (``tf``, ``jax`` with 64-bit
    #: floats, ``torch``): what an experiment's own evaluation is written against.
    framework: Any

    def start(self, threads: int | None = None, cache: Path | None = None) -> None:
        """Start the framework (threads, devices); quiet, idempotent. ``cache``: a folder
        where the framework may keep what it compiles for the processes after this one
        (JAX's persistent compilation cache; TensorFlow and PyTorch keep nothing there),
        honoured by the first call only."""

    def facts(self) -> dict[str, Any]:
        """What about this framework shapes the numbers (versions, devices, flags)."""

    def probe_flush(self, dtypes: Sequence[str], modes: Sequence[str]) -> dict:
        """``{dtype: {mode: {"inputs": bool, "results": bool}}}``: whether subnormal inputs
        are read as 0 and subnormal results written as 0 (see :mod:`harness.numerics.flush`)."""

    def evaluate_case(
        self,
        case,
        points: Mapping[str, pd.DataFrame],
        dtypes: Sequence[str],
        methods: Sequence[str],
        modes: Sequence[str],
        progress: Callable[[int, int], None] | None = None,
        max_order: Mapping[str, int] | None = None,
        edges=None,
        batch: int | None = None,
    ) -> tuple[pd.DataFrame, Any]:
        """The rows (:data:`EVALUATION_COLUMNS`) and statistics (a dataclass); ``edges``
        (:class:`harness.edges.finder.EdgeFinder`) is handed each (method, dtype); each
        batch has ``batch`` points at least (:mod:`harness.backends.padding`)."""
