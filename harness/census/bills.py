"""What the census says in few numbers: where each framework's kernel is right at every
value judged (a *clean bill*, per kernel, framework and dtype), and how many root causes
of each kind every framework has. A clean bill is a result as much as a failure: the
kernel, its derivatives of every order the setting runs, in every mode, are right
wherever the reference is certified.

Two bills per row: by autodiff (every method but finite differences, which the harness
builds from the framework's values and judges by their own error model) and by every
method. A value the framework refused to compute (``unsupported``) is not judged, so a
bill says how many there were; a kernel the framework does not have has no row."""

from __future__ import annotations

import pandas as pd

__all__ = ["BILL_COLUMNS", "cause_counts", "clean_bills", "clean_kernels"]

BILL_COLUMNS = (
    "operator", "backend", "dtype", "orders", "judged", "ok", "unsupported",
    "autodiff_judged", "autodiff_ok", "clean_autodiff", "clean",
)  # fmt: skip

#: The method the harness builds itself from the framework's values.
_NOT_AUTODIFF = "finite_difference"


def clean_bills(atlas: pd.DataFrame) -> pd.DataFrame:
    """One row per kernel (operator, over its census cases), framework and dtype with a
    value judged: the values judged and right, by autodiff and by every method, and
    whether every one of them is right (``clean_autodiff``, ``clean``)."""
    rows = atlas[atlas["points"] > atlas["not_applicable"]]
    if rows.empty:
        return pd.DataFrame(columns=list(BILL_COLUMNS))
    autodiff = rows["method"] != _NOT_AUTODIFF
    rows = rows.assign(
        autodiff_judged=rows["judged"].where(autodiff, 0),
        autodiff_ok=rows["ok"].where(autodiff, 0),
    )
    g = rows.groupby(["operator", "backend", "dtype"], sort=True)
    out = g[["judged", "ok", "unsupported", "autodiff_judged", "autodiff_ok"]].sum()
    out["orders"] = g["order"].agg(lambda o: f"{int(min(o))}-{int(max(o))}")
    out["clean_autodiff"] = (out["autodiff_judged"] > 0) & (
        out["autodiff_ok"] == out["autodiff_judged"]
    )
    out["clean"] = (out["judged"] > 0) & (out["ok"] == out["judged"])
    out = out.reset_index()
    for column in ("judged", "ok", "unsupported", "autodiff_judged", "autodiff_ok"):
        out[column] = out[column].astype(int)
    return out[list(BILL_COLUMNS)]


def clean_kernels(bills: pd.DataFrame, column: str = "clean_autodiff") -> dict[str, list]:
    """``{framework: [kernel, ...]}``: the kernels whose bill (``column``) is clean in
    every dtype the framework was judged in."""
    if bills.empty:
        return {}
    every = bills.groupby(["backend", "operator"], sort=True)[column].all()
    out: dict[str, list] = {}
    for (backend, operator), clean in every.items():
        if clean:
            out.setdefault(backend, []).append(operator)
    return out


def cause_counts(causes: pd.DataFrame, backends: list[str]) -> pd.DataFrame:
    """Root causes by kind (rows, most first) and framework (columns, in ``backends``'
    order; a root cause in two frameworks counts in both), and ``all`` (each once)."""
    kinds = causes["kind"].value_counts()
    order = sorted(kinds.index, key=lambda k: (-kinds[k], k))
    out = pd.DataFrame(0, index=order, columns=[*backends, "all"], dtype=int)
    for kind, frameworks in zip(causes["kind"], causes["frameworks"]):
        out.loc[kind, "all"] += 1
        for backend in {f for f in str(frameworks).split(", ") if f}:
            if backend in out.columns and backend != "all":
                out.loc[kind, backend] += 1
    out.index.name = "kind"
    return out
