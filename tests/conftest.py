"""Shared fixtures. Tests that start TensorFlow are marked ``tf`` (and run in CI)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CASES = ROOT / "cases"

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")


@pytest.fixture
def harness_cmd():
    """The harness command line as a subprocess argv prefix (this interpreter)."""
    return [sys.executable, "-m", "harness"]
