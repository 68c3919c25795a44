"""The lookup of experiments by name; importing it registers every experiment the package
ships."""

from __future__ import annotations

from harness.experiments import hessian_norm, matrix_partials  # noqa: F401  (register on import)
from harness.experiments.base import EXPERIMENTS, Experiment

__all__ = ["get", "names"]


def names() -> list[str]:
    """Names of the registered experiments."""
    return sorted(EXPERIMENTS)


def get(name: str) -> Experiment:
    """The experiment ``name`` (KeyError if unknown)."""
    return EXPERIMENTS[name]
