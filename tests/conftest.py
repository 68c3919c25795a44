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


@pytest.fixture
def harness_cmd():
    """The harness command line as a subprocess argv prefix (this interpreter)."""
    return [sys.executable, "-m", "harness"]


def write_case(folder: Path, name: str, body: str) -> Path:
    """A case file ``folder/name.yaml`` from an indented YAML block (the tests' cases)."""
    path = Path(folder) / f"{name}.yaml"
    path.write_text(textwrap.dedent(body))
    return path


@pytest.fixture(autouse=True, scope="session")
def _harness_cache(tmp_path_factory):
    """``harness.check``'s per-user cache in this run's own temporary folder."""
    os.environ["HARNESS_CACHE"] = str(tmp_path_factory.getbasetemp() / "harness-cache")
