"""How to reproduce a finding: the ``harness probe`` command and the standalone script
at its worst point, written by its back end's finding writer where the back end
registers one (:attr:`harness.backends.catalogue.BackendSpec.repro`: TensorFlow's)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from harness.backends.catalogue import SPECS
from harness.cases.model import label_partial
from harness.cases.schema import DEFAULT_BACKEND
from harness.results import text_as_objects

__all__ = ["reproduce"]


def reproduce(findings: pd.DataFrame, errors: pd.DataFrame, inputs, case) -> tuple[list, list]:
    """The ``harness probe`` command and the standalone script of each finding, at its
    worst point, by its worst point's method and mode, at that point's place in the
    harness's batch; "" for a back end that registers no finding writer."""
    import importlib

    if getattr(case, "experiment", None) or not set(inputs) <= set(errors.columns):
        # An experiment's values come from its own estimators: its page is the way back.
        return [""] * len(findings), [""] * len(findings)
    probes, snippets = [], []
    positions = {}
    for dtype, g in errors.groupby("dtype", observed=True):
        ids = np.sort(g["point"].unique())
        positions[dtype] = ({int(p): i for i, p in enumerate(ids)}, len(ids))
    if "backend" not in errors:
        errors = errors.assign(backend=DEFAULT_BACKEND)
    writers = {}
    for b in {getattr(f, "backend", "") or DEFAULT_BACKEND for f in findings.itertuples()}:
        if b in SPECS and SPECS[b].repro:
            writers[b] = importlib.import_module(SPECS[b].repro)
    # Row positions per combination, and per back end and method the orders and partials
    # the run computed: found once, not by masking the whole table for every finding.
    keys = ["backend", "implementation", "dtype", "partial", "method", "mode"]
    where_rows = errors.groupby(keys, observed=True, sort=False).indices
    per_method = {
        key: (int(g["order"].max()), sorted({str(v) for v in g["partial"].unique()}))
        for key, g in errors[["backend", "method", "order", "partial"]].groupby(
            ["backend", "method"], observed=True, sort=False
        )
    }
    # What locating a worst point reads, as arrays (a finding reads a few of its rows).
    located = {n: errors[n].to_numpy(np.float64) for n in inputs}
    point_ids = errors["point"].to_numpy()
    for f in text_as_objects(findings).itertuples(index=False):
        backend = getattr(f, "backend", DEFAULT_BACKEND) or DEFAULT_BACKEND
        if not f.worst_inputs or not f.worst_method or backend not in writers:
            # No finding writer (JAX and PyTorch: their root causes' reproducers).
            probes.append("")
            snippets.append("")
            continue
        point = json.loads(f.worst_inputs)
        key = (backend, f.implementation, f.dtype, f.partial, f.worst_method, f.worst_mode)
        rows = where_rows.get(key, np.array([], dtype=np.intp))
        at = np.ones(len(rows), dtype=bool)
        for n, v in point.items():
            at &= located[n][rows] == v
        index, batch = 0, 1
        if at.any():
            where, batch = positions[f.dtype]
            index = where[int(point_ids[rows[at][0]])]
        path = f"cases/{f.case}.yaml"
        # The run computed every partial of its method in one pass; so do both.
        max_order, labels = per_method.get((backend, f.worst_method), (len(f.partial), []))
        probes.append(
            writers[backend].probe_command(
                path,
                f.implementation,
                point,
                f.partial,
                f.worst_method,
                f.worst_mode,
                f.dtype,
                batch,
                index,
                max_order,
            )
        )
        text = None
        if case is not None:
            method_partials = sorted(
                {label_partial(lbl, inputs) for lbl in labels}, key=lambda p: (len(p), p)
            )
            text = writers[backend].snippet(
                case,
                f.implementation,
                point,
                label_partial(f.partial, inputs),
                f.worst_method,
                f.worst_mode,
                f.dtype,
                batch,
                index,
                method_partials,
                f.text,
            )
        snippets.append(text or "")
    return probes, snippets
