"""What the tests of ``harness.check`` share: the seeds' example modules imported from
``examples/``, and a case of ``cases/`` cut down to some points and one implementation,
run as the study runs it, to compare a check's rows with."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

ROOT = Path(__file__).resolve().parent.parent
KEYS = ["method", "mode", "dtype", "order", "partial", "point"]


def example(module: str):
    """``examples/<module>.py``, imported once."""
    name = f"examples_{module}"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, ROOT / "examples" / f"{module}.py")
        found = importlib.util.module_from_spec(spec)
        sys.modules[name] = found
        spec.loader.exec_module(found)
    return sys.modules[name]


def case_rows(case: str, implementation: str, result, folder: Path, rules=None) -> pd.DataFrame:
    """The errors table of ``cases/<case>.yaml`` run at ``result``'s points, its
    derivatives, back end, dtypes, methods and modes, for ``implementation`` alone (its
    entry updated by ``rules``), no expectations: how the study judges the same code."""
    from harness.config import load_config
    from harness.stages.run import run_case

    data = yaml.safe_load((ROOT / "cases" / f"{case}.yaml").read_text())
    impl = {**data["implementations"][implementation], **(rules or {})}
    data["implementations"] = {implementation: impl}
    data.pop("expectations", None)
    data.pop("quick", None)
    for key in ("inputs", "derivatives", "backends", "dtypes", "methods", "modes"):
        data[key] = result.data[key]
    path = Path(folder) / "cases" / f"{case}.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(data))
    config = load_config(None, {"setting": "full", "split": {"quick": [], "full": []}})
    return run_case(path, config, results=Path(folder) / "results")


def same_bits(a, b) -> np.ndarray:
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return (a.view(np.int64) == b.view(np.int64)) | (np.isnan(a) & np.isnan(b))


def compare_rows(checked: pd.DataFrame, cased: pd.DataFrame) -> pd.DataFrame:
    """The rows of the two tables side by side (every key in both), ``_case`` the case's."""
    a = checked.set_index(KEYS)[["value", "outcome"]]
    b = cased.set_index(KEYS)[["value", "outcome"]]
    assert sorted(a.index) == sorted(b.index)
    return a.join(b.add_suffix("_case"))
