"""Localise a failing derivative to the primitive whose own rule breaks there.

At a failing point, the evaluation stage computes in the framework (eager mode, the
point's dtype) the value every argument of every primitive of the differentiated
expression takes (:mod:`harness.causes.sites`), then judges each primitive on its own at
exactly those arguments: its value and every derivative up to the failing order, by the
failing method, against its own certified reference (a one-expression case,
:func:`harness.cases.synthetic.expression_case`, through the back end's own evaluation
and the study's judging). The primitives run in eager mode, except for a value that
fails only in a compiled mode (eager is right at that point): its primitives run in that
mode, so a compiler's rewrite of one primitive's derivative (XLA's) is found in it.
Whatever the failing points have in common is then evidence:

- a primitive whose value is right and whose derivative is not is the **culprit** (the
  framework's rule for it; innermost first, one failing like the composite first);
- where every primitive is right at its own arguments, the expression itself is at fault,
  and the first intermediate whose true value lies beyond the dtype (it overflows to
  ``inf`` or underflows to 0) is named;
- a primitive judged ``flushed`` alone (its derivative there is subnormal, and the
  platform writes it as 0: naive softplus's ``log(u)`` at ``u = 1 + exp(88)`` has
  ``1/u = 6e-39``) is **flushed**: the platform's flush of an intermediate, which the
  rest of the chain rule turns into a real failure (a 0 for a truth of 1); so is a Taylor
  coefficient ``f^(k)/k!`` below it (:func:`harness.numerics.flush.at_threshold`).

One table per evaluation piece (``localised.parquet``), a row per failing (implementation,
method, dtype, partial, point); the compare stage attaches it to the findings. The back
end is passed in: no framework is imported here.
"""

from __future__ import annotations

import collections
import functools
import json
import math
from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd

from harness.cases import expressions as ex
from harness.cases.model import label_partial
from harness.cases.synthetic import expression_case
from harness.causes.kinks import branches, kink_at, sides
from harness.causes.sampling import (
    OUTCOME_CLASS,
    RUNS,
    SAMPLE,
    in_modes,
    one_axis,
    routes,
    sample_failures,
)
from harness.causes.sites import Site, effective, sites
from harness.numerics.floats import FORMATS, is_subnormal
from harness.numerics.flush import at_threshold, with_flushes

__all__ = ["FAILING", "LOCALISED_COLUMNS", "RUNS", "SAMPLE", "localise", "sample_failures"]

#: Outcomes a primitive can explain (an ``error`` or ``missing`` has no number to trace).
FAILING = ("wrong", "nan", "inf", "zero", "inaccurate")
#: Localised with these methods (finite differences call no derivative rule).
METHODS = ("reverse", "forward", "forward_over_reverse", "taylor")

LOCALISED_COLUMNS = [
    "implementation",
    "method",
    "dtype",
    "partial",
    "point",
    "via",  # the method the primitives were judged by (reverse where it fails alike)
    "in_mode",  # the mode they ran in: eager, or the compiled mode a value fails in alone
    "localised",  # an expression describes the derivative (not a registered one)
    "through_rule",  # the derivative goes through a hand-written rule
    "culprit",  # the primitive's name ("softplus", "pow"); "" where every one is right
    "culprit_primitive",  # as written over u, v ("softplus(u)", "(u ** 8)")
    "culprit_partial",  # its failing partial ("uu")
    "culprit_outcome",
    "culprit_inputs",  # JSON {u: value, ...}: what it receives at the point
    "culprit_got",
    "culprit_truth",
    "value_wrong",  # a primitive whose own value is wrong there ("" none)
    "intermediate",  # the first node whose true value lies beyond the dtype ("" none)
    "intermediate_kind",  # overflow, underflow
    "nonfinite_input",  # a primitive received inf or NaN (an earlier overflow)
    "kink",  # JSON: a kink or tie at the point and what the framework picks (kinks.kink_at)
    "flushed",  # JSON: a primitive whose derivative there is subnormal, flushed to 0
]


def _points(values: dict[str, np.ndarray], dtype: str) -> pd.DataFrame:
    frame = pd.DataFrame(values)
    frame.insert(0, "point", np.arange(len(frame), dtype=np.int64))
    sub = np.zeros(len(frame), dtype=bool)
    for n in values:
        sub |= is_subnormal(frame[n].to_numpy(np.float64), FORMATS[dtype])
    frame["subnormal"] = sub
    return frame


def _evaluate(
    engine, case, pts: pd.DataFrame, dtype, method, order, size, mode="eager"
) -> pd.DataFrame:
    """The back end's evaluation of ``case`` at ``pts`` in ``mode``, in batches of the
    case's own ``size`` (the last padded with copies): a framework that compiles its
    eager operations per shape (JAX) finds them compiled by the evaluation just done, and
    does not compile them again for every new count of arguments."""
    size = max(int(size or len(pts)), 1)
    parts = []
    for start in range(0, len(pts), size):
        chunk = pts.iloc[start : start + size].reset_index(drop=True)
        n = len(chunk)
        if n < size:
            chunk = pd.concat([chunk, chunk.iloc[[-1] * (size - n)]], ignore_index=True)
        chunk["point"] = np.arange(len(chunk), dtype=np.int64)
        table, _ = engine.evaluate_case(
            case, {dtype: chunk}, [dtype], [method], [mode], None, {method: order}, None
        )
        table = table[table["point"] < n].copy()
        table["point"] = table["point"] + start
        parts.append(table)
    return pd.concat(parts, ignore_index=True)


def _reference(case, pts: pd.DataFrame, dtype: str, settings) -> pd.DataFrame:
    """The case's reference rows at ``pts`` (certified by Arb where a ball decides)."""
    from harness.reference.table import ReferenceStore, reference_rows
    from harness.reference.verify import ReferenceSettings

    s = settings
    store = ReferenceStore(case, ReferenceSettings.of(s), None)
    names = list(case.input_names)
    store.ensure(list(pts[names].itertuples(index=False, name=None)), list(case.partials))
    return reference_rows(case, {dtype: pts}, store, model=False)


def _judge_primitives(
    engine, kernels, variables, arrays, order, dtype, method, settings, flags, size, mode
):
    """Every primitive of ``kernels`` ({name: expression}, one arity) at the argument
    tuples it needs (``arrays``: {name: [tuple, ...]}) by ``method`` in ``mode``: one
    evaluation of them all over the union of the tuples, then each judged against its own
    reference. Returns ``{name: judged rows}`` with the tuple of each row in ``args``."""
    from harness.judge.compare import join_reference, judge_frame

    union = list(dict.fromkeys(a for tuples in arrays.values() for a in tuples))
    position = {a: i for i, a in enumerate(union)}
    columns = {v: np.array([a[k] for a in union], np.float64) for k, v in enumerate(variables)}
    pts = _points(columns, dtype)
    case = expression_case("primitives", kernels, variables, order)
    table = _evaluate(engine, case, pts, dtype, method, order, size, mode)
    table = table[table["status"] != "not_applicable"].drop(columns=["seconds"], errors="ignore")
    out = {}
    for name, node in kernels.items():
        mine = sorted(position[a] for a in arrays[name])
        rows = table[(table["implementation"] == name) & table["point"].isin(mine)]
        if rows.empty:
            continue
        one = expression_case(name, {name: node}, variables, order)
        sub = pts.set_index("point").loc[mine].reset_index()
        frame = join_reference(one, rows, _reference(one, sub, dtype, settings), flags)
        judged = judge_frame(frame, settings.tolerance)
        judged["args"] = [union[int(p)] for p in judged["point"]]
        out[name] = with_flushes(judged, flags)
    return out


def _node_values(engine, case, subtrees, pts, dtype, size) -> dict:
    """``{subtree: values at pts}``, each computed by the framework alone (eager)."""
    names = list(case.input_names)
    todo = {f"n{i}": node for i, node in enumerate(subtrees) if not isinstance(node, ex.Var)}
    out = {n: pts[n.name].to_numpy(np.float64) for n in subtrees if isinstance(n, ex.Var)}
    if todo:
        values_case = expression_case("values", todo, names, 0)
        table = _evaluate(engine, values_case, pts, dtype, "reverse", 0, size)
        table = table[table["partial"] == ""]
        for name, rows in table.groupby("implementation", sort=False):
            got = np.full(len(pts), np.nan)
            got[rows["point"].to_numpy()] = rows["value"].to_numpy(np.float64)
            out[todo[name]] = got
    return out


def _affine(site: Site) -> bool:
    """A primitive whose derivatives are constants (``1 + u``, ``2 * u``, ``-u``,
    ``u / 4``): only its value is judged."""
    if site.name == "neg":
        return True
    if len(site.args) != 1 or site.name not in ("add", "sub", "mul", "div"):
        return False
    return site.name != "div" or isinstance(site.primitive.left, ex.Var)


def _whole(site: Site, eff, names: Sequence[str]) -> dict[str, str] | None:
    """``{input: variable}`` where ``site`` is the whole expression differentiated, one
    primitive of distinct inputs (a census case's ``op(x)``): the evaluation's own rows
    judge it at the point's own arguments, the partial's inputs read as its variables."""
    inputs = [a.name if isinstance(a, ex.Var) else "" for a in site.args]
    whole = not eff.through_rule and site.node == eff.expression
    if whole and set(inputs) <= set(names) and len(set(inputs)) == len(inputs):
        return dict(zip(inputs, site.variables))
    return None


def _own_rows(judged: pd.DataFrame | None) -> Callable[[tuple], list | None]:
    """The judged rows by (implementation, dtype, point, method, mode), made on demand."""
    if judged is None or judged.empty:
        return lambda key: None
    by = judged.groupby(["implementation", "dtype", "point", "method", "mode"], dropna=False)
    at = {(i, d, int(p), m, o): rows for (i, d, p, m, o), rows in by.indices.items()}
    # Each key's rows as itertuples gives them, without a DataFrame per key (a job asks
    # for hundreds: 0.44 s by iloc, 0.045 s from the columns' arrays).
    Row = collections.namedtuple("Row", judged.columns)
    arrays = [judged[c].to_numpy() for c in judged.columns]
    rows = lambda key: [Row(*v) for v in zip(*(a[at[key]].tolist() for a in arrays))]  # noqa: E731
    return functools.cache(lambda key: rows(key) if key in at else None)


def localise(
    engine, case, failing: pd.DataFrame, settings, flags, sizes=None, judged_rows=None
) -> pd.DataFrame:
    """The localisation of every failing row in ``failing`` (judged evaluation rows of
    one back end: ``implementation method dtype partial point outcome`` and the case's
    inputs); see the module's docstring. ``settings``: :class:`harness.config.Settings`;
    ``sizes``: the case's batch size per dtype (the shape its evaluation ran);
    ``judged_rows``: every judged row of the evaluation (``failing`` among them), where a
    primitive that is the whole expression over the case's inputs is judged already.

    The framework runs one evaluation per dtype for the values of every node, and one per
    (dtype, method, number of arguments) for the primitives, all primitives of that
    arity in one case over the union of their arguments (a call of a back end's
    evaluation costs what its setup costs, more than the points do)."""

    names = list(case.input_names)
    rows = failing[failing["outcome"].isin(FAILING) & failing["method"].isin(METHODS)]
    rows = rows.assign(in_mode=in_modes(rows))
    rows = rows.sort_values("in_mode", key=lambda m: m != "eager", kind="stable")
    rows = rows.drop_duplicates(["implementation", "dtype", "partial", "method", "point"])
    rows = sample_failures(rows.assign(via=routes(rows)), RUNS if one_axis(rows, names) else 0)
    impls = {i.name: i for i in case.implementations}
    out: list[dict] = []
    # 1. What each failing row differentiates.
    tasks: dict[str, list] = {}  # dtype -> [(row, effective expression, its sites)]
    found_sites: dict[ex.Node, list[Site]] = {}
    for r in rows.itertuples(index=False):
        impl = impls.get(r.implementation)
        eff = effective(case, impl, label_partial(r.partial, names)) if impl is not None else None
        if eff is None:
            out.append(_row(r, localised=False, through_rule=True))
            continue
        if eff.expression not in found_sites:
            found_sites[eff.expression] = sites(eff.expression)
        tasks.setdefault(r.dtype, []).append((r, eff, found_sites[eff.expression]))
    # 2. The arguments' values at each failing point, by the framework.
    wanted: dict[tuple, dict[tuple, int]] = {}  # (dtype, method, arity) -> (site, args) -> order
    primitives: dict[str, Site] = {}
    located: list[tuple] = []
    own = _own_rows(None if judged_rows is None else with_flushes(judged_rows, flags))
    judged: dict[tuple, dict] = {}  # (site, dtype, args, mode) -> {(method, label): row}
    for dtype, members in tasks.items():
        subtrees = list(dict.fromkeys(a for _, _, found in members for s in found for a in s.args))
        wheres = {e.expression: branches(e.expression) for _, e, _ in members}
        subtrees += [c for ws in wheres.values() for w in ws for c in sides(w) if c not in subtrees]
        points = sorted({int(r.point) for r, _, _ in members})
        at = failing[failing["dtype"] == dtype].drop_duplicates("point").set_index("point")
        pts = _points({n: at.loc[points, n].to_numpy(np.float64) for n in names}, dtype)
        size = (sizes or {}).get(dtype)
        values = _node_values(engine, case, subtrees, pts, dtype, size)
        index = {p: i for i, p in enumerate(points)}
        for r, eff, found in members:
            i = index[int(r.point)]
            args = [(s, tuple(float(values[a][i]) for a in s.args)) for s in found]
            at_sides = {c: float(values[c][i]) for w in wheres[eff.expression] for c in sides(w)}
            located.append((r, eff, args, (wheres[eff.expression], at_sides)))
            for s, a in args:
                if not all(math.isfinite(v) for v in a):
                    continue
                primitives[s.text] = s
                affine = _affine(s)
                method = "reverse" if affine else r.via
                rename = _whole(s, eff, names)
                mine = own((r.implementation, dtype, int(r.point), method, r.in_mode))
                if rename is not None and mine:
                    found_rows = judged.setdefault((s.text, dtype, a, r.in_mode), {})
                    for g in mine:
                        label = "".join(rename[n] for n in label_partial(g.partial, names))
                        found_rows[(method, label)] = g
                    continue
                bucket = wanted.setdefault((dtype, method, len(a), r.in_mode), {})
                order = 0 if affine else len(eff.partial)
                bucket[(s.text, a)] = max(bucket.get((s.text, a), 0), order)
    # 3. Every primitive judged on its own at the arguments it received (the evaluation's
    # own rows where it is the whole expression over the inputs, judged above).
    for (dtype, method, _, mode), needed in wanted.items():
        texts = list(dict.fromkeys(t for t, _ in needed))
        kernels = {f"k{i}": primitives[t].primitive for i, t in enumerate(texts)}
        arrays = {f"k{i}": [a for u, a in needed if u == t] for i, t in enumerate(texts)}
        variables = primitives[texts[0]].variables
        order = max(needed.values())
        got = _judge_primitives(
            engine,
            kernels,
            variables,
            arrays,
            order,
            dtype,
            method,
            settings,
            flags,
            (sizes or {}).get(dtype),
            mode,
        )
        for name, judged_rows in got.items():
            text = texts[int(name[1:])]
            for g in judged_rows.itertuples(index=False):
                judged.setdefault((text, dtype, g.args, mode), {})[(method, g.partial)] = g
    # 4. What the failing points have in common.
    for r, eff, args, (ws, at_sides) in located:
        kink = kink_at(args, ws, at_sides, judged, r.dtype, r.via, r.in_mode)
        out.append({**_verdict(r, eff, args, judged, names), "kink": kink})
    return pd.DataFrame(out, columns=LOCALISED_COLUMNS)


def _row(r, **kw) -> dict:
    base = dict.fromkeys(LOCALISED_COLUMNS, "")
    base.update(
        implementation=r.implementation,
        method=r.method,
        dtype=r.dtype,
        partial=r.partial,
        point=int(r.point),
        localised=True,
        through_rule=False,
        culprit_got=math.nan,
        nonfinite_input=False,
        via=r.via,
        in_mode=r.in_mode,
    )
    base.update(kw)
    return base


def _verdict(r, eff, args: Sequence[tuple[Site, tuple]], judged: dict, names) -> dict:
    n = len(eff.partial)
    want = OUTCOME_CLASS.get(r.outcome, "")
    candidates = []
    value_wrong = intermediate = kind = flushed = ""
    nonfinite = False
    for site, a in args:
        if not all(math.isfinite(v) for v in a):
            nonfinite = True
            continue
        found = judged.get((site.text, r.dtype, a, r.in_mode), {})
        value = found.get(("reverse", "")) or found.get((r.via, ""))
        if value is not None and not intermediate:
            truth = float(value.reference_rounded)
            if math.isinf(truth):
                intermediate, kind = ex.unparse(site.node), "overflow"
            elif truth == 0 and _nonzero(value.reference):
                intermediate, kind = ex.unparse(site.node), "underflow"
        if value is not None and value.outcome not in _RIGHT:
            value_wrong = value_wrong or site.name
            continue
        for (method, label), g in found.items():
            edge = (
                method == "taylor"
                and getattr(g, "flushes", False)
                and at_threshold(g.value, g.reference, r.dtype, len(label))
            )
            if method == r.via and label and len(label) <= n and (g.outcome == "flushed" or edge):
                whole = _whole(site, eff, names) is not None  # a census's op(x)
                flushed = flushed or _flushed(site, label, g, a, r.via, r.in_mode, edge, whole)
            if method != r.via or label == "" or len(label) > n or g.outcome in _RIGHT or edge:
                continue
            if g.outcome in ("missing", "error", "not_applicable"):
                continue
            candidates.append((OUTCOME_CLASS.get(g.outcome) != want, site, label, g, a))
            break
    base = _row(
        r, through_rule=eff.through_rule, value_wrong=value_wrong, intermediate=intermediate
    )
    base.update(intermediate_kind=kind, nonfinite_input=nonfinite, via=r.via, flushed=flushed)
    if candidates:
        _, site, label, g, a = min(candidates, key=lambda c: c[0])
        base.update(
            culprit=site.name,
            culprit_primitive=site.text,
            culprit_partial=label,
            culprit_outcome=str(g.outcome),
            culprit_inputs=json.dumps(dict(zip(site.variables, a))),
            culprit_got=float(g.value),
            culprit_truth=str(g.reference),
        )
    return base


_RIGHT = ("ok", "flushed", "ref_unreliable")


def _flushed(
    site: Site, label: str, g, a: tuple, via: str, mode: str, edge: bool, whole: bool
) -> str:
    """The flush of one primitive's derivative at its arguments, as JSON (``threshold``:
    the derivative lies just above the smallest normal, a step of its rule below it;
    ``whole``: the primitive of the inputs themselves is the whole differentiated
    expression, a census's ``sigmoid(x)``; ``log(1 + exp(x))``'s log is not)."""
    return json.dumps(
        {
            "name": site.name,
            "primitive": site.text,
            "partial": label,
            "inputs": dict(zip(site.variables, a)),
            "got": float(g.value),
            "truth": str(g.reference),
            "method": via,
            "mode": mode,
            "threshold": bool(edge),
            "whole": bool(whole),
        }
    )


def _nonzero(decimal) -> bool:
    try:
        return float(decimal) != 0.0 or str(decimal).strip("-+0.e") != ""
    except (TypeError, ValueError):
        return False
