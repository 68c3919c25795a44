"""A repair as code to paste into each framework, and that code checked bit for bit.

:func:`code` writes a case's implementation (a repair, once judged) as one module of
one framework, by that back end's emitter (``emit.py`` in its folder,
:mod:`harness.backends.emit`). :func:`check_code` holds the text to what was judged: it
imports the module, runs its function as :func:`harness.check` does
(:func:`harness.api.run.run_check`: traced, its trace
verified, its derivatives computed by every method, mode and dtype the judged rows
have, at the case's own points) and compares each value with the judged one, bit for
bit (any NaN equal to any NaN). Code that computes anything else is not the repair.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import tempfile
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from harness.cases.model import Case

__all__ = ["CodeCheck", "check_code", "code", "import_code"]

#: What identifies a value across two runs of the same case.
_KEY = ["method", "mode", "dtype", "partial"]


def code(case: Case, implementation: str, framework: str, name: str, doc: str) -> str | None:
    """``implementation`` of ``case`` as a ``framework`` module defining ``name`` (``doc``
    its docstring); ``None`` where the framework cannot hold it."""
    from harness.backends.catalogue import SPECS

    emitter = importlib.import_module(SPECS[framework].emitter)
    return emitter.emit(case, implementation, name, doc)


def import_code(text: str, name: str, folder: str | Path | None = None, module: str = ""):
    """The function ``name`` of the module ``text``, written to ``folder`` (a temporary
    one by default) as ``module.py`` (``name.py`` by default) and imported."""
    folder = Path(folder or tempfile.mkdtemp(prefix="harness-code-"))
    folder.mkdir(parents=True, exist_ok=True)
    module = module or name
    path = folder / f"{module}.py"
    path.write_text(text, encoding="utf-8")
    spec = importlib.util.spec_from_file_location(module, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[module] = mod
    spec.loader.exec_module(mod)
    return getattr(mod, name)


@dataclass(frozen=True)
class CodeCheck:
    """The emitted code of ``framework`` against the judged rows: ``compared`` values,
    ``differ`` of them not bit for bit the same (``first``: the first, said), ``missing``:
    judged values at the check's points that it did not compute."""

    framework: str
    compared: int
    differ: int
    missing: int
    first: str
    #: What the check said on the way (a custom rule its tracer could not read: the
    #: values are compared all the same).
    note: str = ""

    @property
    def same(self) -> bool:
        return self.compared > 0 and self.differ == 0 and self.missing == 0


def _bits(values: pd.Series) -> np.ndarray:
    v = values.to_numpy(dtype="float64")
    out = v.view(np.int64).copy()
    out[np.isnan(v)] = -1  # any NaN is any NaN
    return out


def _keyed(rows: pd.DataFrame, names) -> pd.DataFrame:
    out = rows[[*_KEY, *names, "value", "outcome"]].copy()
    for k in _KEY:
        out[k] = out[k].astype(str)
    for n in names:
        out[n] = _bits(out[n])
    out["bits"] = _bits(out["value"])
    return out


def check_code(
    text: str,
    framework: str,
    name: str,
    case: Case,
    inputs: dict,
    judged: pd.DataFrame,
    folder: str | Path | None = None,
) -> CodeCheck:
    """Import ``text`` (``name`` its function of ``case``'s inputs), check it with
    :func:`harness.check` at the case's ``inputs`` (its file's sweeps), by the methods,
    modes and dtypes of the ``judged`` rows (one implementation's rows of an errors
    table) in ``framework``, and compare every value the two have at the same point."""
    from harness.api.run import run_check
    from harness.results import read_table

    names = list(case.input_names)
    mine = judged[judged["backend"] == framework]
    fn = import_code(text, name, folder, f"{name}_{framework}")
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        run = run_check(
            fn,
            framework,
            inputs=inputs,
            partials=[p for p in case.partials if p],
            dtypes=sorted(set(mine["dtype"].astype(str))),
            methods=sorted(set(mine["method"].astype(str))),
            modes=sorted(set(mine["mode"].astype(str))),
            bisect=False,
        )
    a, b = _keyed(mine, names), _keyed(read_table(run.errors), names)
    points = b[names].drop_duplicates()
    a = a.merge(points, on=names)  # the judged values at the check's points
    both = a.merge(b, on=[*_KEY, *names], how="left", suffixes=("", "_code"), indicator=True)
    there = both["_merge"] == "both"
    differ = both[there & (both["bits"] != both["bits_code"])]
    first = ""
    if len(differ):
        r = differ.iloc[0]
        at = ", ".join(f"{n} = {float(np.int64(r[n]).view(np.float64))!r}" for n in names)
        first = (
            f"{r['method']} {r['mode']} {r['dtype']} {r['partial'] or 'value'} at {at}: "
            f"judged {r['value']!r}, the code {r['value_code']!r}"
        )
    note = "; ".join(str(w.message) for w in said)
    return CodeCheck(framework, int(there.sum()), len(differ), int((~there).sum()), first, note)
