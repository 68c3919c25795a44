"""Shared fixtures, and the Hypothesis profiles.

Hypothesis runs the ``ci`` profile unless ``HYPOTHESIS_PROFILE`` names another: examples
derived from each test's own code (``derandomize``), no example database, so a fresh
clone draws the same examples as every other and a test cannot pass or fail on a lucky
draw. ``HYPOTHESIS_PROFILE=explore`` draws new random examples on every run, to
look for counterexamples by hand.
"""

from __future__ import annotations

import os
import sys
import textwrap
from pathlib import Path

import pytest
from hypothesis import settings

settings.register_profile("ci", derandomize=True, database=None, print_blob=True)
settings.register_profile("explore", database=None, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

ROOT = Path(__file__).resolve().parent.parent
CASES = ROOT / "cases"

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

#: The longest test files, longest first (their tests' seconds by ``--durations`` on 2
#: cores, 2026-12-02). ``--dist loadfile`` hands a worker the next file in collection
#: order when it is free: the longest start first and the short files fill in behind
#: them, instead of the longest starting last (in alphabetical order) with the other
#: core idle to the end. A scheduling hint only: no test depends on the order.
LONGEST_FIRST = (
    "test_workflow_faults.py",
    "test_reproducers.py",
    "test_workflow.py",
    "test_evaluate.py",
    "test_cli.py",
    "test_cluster.py",
    "test_determinism.py",
    "test_backends.py",
    "test_workflow_sources.py",
    "test_repro.py",
    "test_report.py",
    "test_seeds.py",
)


def pytest_collection_modifyitems(config, items):
    """The longest files first, every file's tests in their own order (a stable sort)."""
    rank = {name: i for i, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))


@pytest.fixture
def harness_cmd():
    """The harness command line as a subprocess argv prefix (this interpreter)."""
    return [sys.executable, "-m", "harness"]


def write_case(folder: Path, name: str, body: str) -> Path:
    """A case file ``folder/name.yaml`` from an indented YAML block (the tests' cases)."""
    path = Path(folder) / f"{name}.yaml"
    path.write_text(textwrap.dedent(body))
    return path
