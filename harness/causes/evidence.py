"""The evidence a finding's root cause is decided by, from the case's own tables.

For each finding the compare stage adds what the rows say beside it, at the very points
where it fails (the same back end, implementation, derivative and dtype):

- ``modes_ok`` / ``methods_ok`` / ``backends_ok``: per other mode of the same method,
  other exact method (finite differences aside) in the same modes, and other back end by
  the same methods, the share of those points it gets right (JSON ``{name: share}``);
- ``value_ok``: the share of the function's own values (order 0, same back end,
  implementation, dtype and modes) right at those points (NaN: none computed there), so
  that a statement says "where its value is right" only where it was judged right;
- ``same_value``: for a value (order 0), the case's first implementation with the same
  expression (``naive`` for a custom gradient of ``log(1 + exp(x))``): one computation,
  so one root cause;
- ``fixes``: the case's other implementations right at 90% of those points or more (the
  rewrite a user can take);
- the localisation (:mod:`harness.causes.localise`) over its failing values: the culprit
  primitive most of them name, with its failing order, input, value and truth at the
  worst point; the first intermediate beyond the dtype; whether the derivative goes
  through a hand-written rule; a primitive whose subnormal derivative the platform
  flushes to 0 at half of them or more (``flushed``);
- ``scale``: the largest |truth| of the lower orders at the worst point (a truth far
  below ``eps * scale`` is noise at the function's own scale, ranked last);
- ``error_text``: the exceptions' own texts (one per line), without the harness's prefix.

No framework here.
"""

from __future__ import annotations

import json
from collections import Counter

import numpy as np
import pandas as pd

from harness.backends import catalogue
from harness.causes.rules import check_rules
from harness.causes.sites import custom_rules
from harness.judge.compare import NOT_JUDGED
from harness.judge.findings_text import exception_text
from harness.results import text_as_objects

__all__ = ["EVIDENCE_COLUMNS", "attach"]

EXACT_METHODS = ("reverse", "forward", "forward_over_reverse", "taylor")
_JUDGED_OUT = NOT_JUDGED

EVIDENCE_COLUMNS = [
    "modes_ok",
    "methods_ok",
    "backends_ok",
    "value_ok",  # the share of the function's own values (order 0) right at those points
    "same_value",  # at order 0: the case's first implementation with the same expression
    "fixes",
    "rules",  # JSON: the hand-written rules on its path, each checked exactly there
    "localised",  # share of the failing values an expression describes
    "culprit",
    "culprit_primitive",
    "culprit_partial",
    "culprit_outcome",
    "culprit_inputs",
    "culprit_got",
    "culprit_truth",
    "culprit_method",
    "culprit_mode",  # the mode its primitive was judged in (eager, or a compiled mode)
    "culprit_share",  # of the localised failing values, the share naming the culprit
    "value_wrong",
    "intermediate",
    "intermediate_kind",
    "kink",  # JSON: a kink or tie at most of the failing points (harness.causes.kinks)
    "flushed",  # JSON: a primitive's derivative flushed at most of them (the platform's)
    "scale",
    "error_text",
]


#: The columns the localisation fills.
_LOCALISATION = EVIDENCE_COLUMNS[EVIDENCE_COLUMNS.index("localised") : -2]


def attach(findings: pd.DataFrame, errors: pd.DataFrame, localised, case, inputs) -> pd.DataFrame:
    """``findings`` with :data:`EVIDENCE_COLUMNS` (``localised``: the back ends'
    localisation tables concatenated, a ``backend`` column, or ``None``)."""
    if findings.empty:
        return findings.assign(**{c: pd.Series(dtype=object) for c in EVIDENCE_COLUMNS})
    names = list(inputs)
    rows_of = _Rows(errors, names)
    col = rows_of.col
    located = _located(localised)
    checked: dict = {}  # (implementation, worst inputs) -> the rules checked there
    impls = {i.name: i for i in getattr(case, "implementations", ())} if case is not None else {}
    records = []
    for f in text_as_objects(findings).itertuples(index=False):
        key = (f.backend, f.implementation, f.partial, f.dtype)
        at = rows_of.combination(key)
        methods, modes = tuple(f.methods.split(", ")), tuple(f.modes.split(", "))
        its = rows_of.ways(key, methods, modes)
        rows = _failing_rows(f, its["failing"], col)
        points = rows_of.at_points(col["point"][rows])
        rec = {
            "modes_ok": _shares(its["modes"], "mode", points, col),
            "methods_ok": _shares(its["methods"], "method", points, col),
            "backends_ok": _shares(its["backends"], "backend", points, col),
        }
        value = rows_of.combination((f.backend, f.implementation, "", f.dtype))
        value = value[col["among"]["mode"](value, modes)]
        rec["value_ok"] = _shares(value, "backend", points, col, text=False).get(f.backend, np.nan)
        shares = _shares(its["implementations"], "implementation", points, col, text=False)
        rec["fixes"] = json.dumps(sorted(k for k, v in shares.items() if v >= 0.9))
        impl = impls.get(f.implementation)
        rec["same_value"] = _same_value(impl, impls.values()) if not f.partial else ""
        rec["rules"] = _rules(case, impl, f, checked)
        point = rows_of.worst_point(key, at, f.worst_inputs)
        rec.update(_localisation(f, rows, col, located, point))
        mine = rows_of.by_point.rows((f.backend, f.implementation, f.dtype), point)
        rec["scale"] = _scale(f, mine, col, point)
        # Every distinct exception the finding's rows raised (a mode can raise another),
        # one per line, in the rows' order.
        rec["error_text"] = (
            "\n".join(dict.fromkeys(exception_text(col["message"][i]) for i in rows))
            if f.outcome == "error"
            else ""
        )
        records.append(rec)
    extra = pd.DataFrame(records, index=findings.index, columns=EVIDENCE_COLUMNS)
    return pd.concat([findings, extra], axis=1)


class _Rows:
    """The errors table's columns as arrays (``col``), and the rows findings share, each
    found once: a combination's (back end, implementation, derivative, dtype), and those
    its evidence compares for one set of methods and modes."""

    _NONE = np.array([], dtype=np.intp)

    def __init__(self, errors: pd.DataFrame, names: list[str]):
        def groups(keys):
            return errors.groupby(keys, observed=True, sort=False).indices

        self._groups = groups(["backend", "implementation", "partial", "dtype"])
        self._by_impl = groups(["backend", "partial", "dtype"])
        self._by_backend = groups(["implementation", "partial", "dtype"])
        self.by_point = _ByPoint(errors)
        self._names = names
        col = {
            c: errors[c].to_numpy()
            for c in ("backend", "implementation", "method", "mode", "point", "message", *names)
        }
        col["outcome"] = np.asarray(errors["outcome"].to_numpy(), dtype=object).astype(str)
        col["among"] = {
            c: _Among(col[c]) for c in ("backend", "implementation", "method", "mode", "outcome")
        }
        col["reference_rounded"] = errors["reference_rounded"].to_numpy(np.float64)
        col["order"] = errors["order"].to_numpy(np.int64)
        point = errors["point"].to_numpy(np.int64)
        self._low = int(point.min()) if len(point) else 0
        self._span = int(point.max()) - self._low + 1 if len(point) else 0
        col["point_id"] = point - self._low  # an index into a lookup by point
        self.col = col
        self._ways: dict = {}
        self._inputs: dict = {}

    def combination(self, key: tuple) -> np.ndarray:
        return self._groups.get(key, self._NONE)

    def ways(self, key: tuple, methods: tuple, modes: tuple) -> dict:
        """Of the combination ``key``'s rows and its neighbours': ``failing`` (in
        ``methods`` and ``modes``), ``modes`` (its methods in other modes), ``methods``
        (other exact methods in its modes), ``backends`` (other back ends by its methods),
        ``implementations`` (the others in its back end, methods and modes)."""
        memo = (key, methods, modes)
        if memo in self._ways:
            return self._ways[memo]
        among = self.col["among"]
        backend, impl, partial, dtype = key
        at = self.combination(key)
        method, mode = among["method"](at, methods), among["mode"](at, modes)
        near = self._by_backend.get((impl, partial, dtype), self._NONE)
        alike = self._by_impl.get((backend, partial, dtype), self._NONE)
        out = self._ways[memo] = {
            "failing": at[method & mode],
            "modes": at[method & ~mode],
            "methods": at[~method & among["method"](at, EXACT_METHODS) & mode],
            "backends": near[~among["backend"](near, (backend,)) & among["method"](near, methods)],
            "implementations": alike[
                ~among["implementation"](alike, (impl,))
                & among["method"](alike, methods)
                & among["mode"](alike, modes)
            ],
        }
        return out

    def at_points(self, points: np.ndarray) -> np.ndarray | None:
        """A lookup by ``point_id``: true at the point ids ``points`` (``None``: none)."""
        if not len(points):
            return None
        lookup = np.zeros(self._span, dtype=bool)
        lookup[points - self._low] = True
        return lookup

    def worst_point(self, key: tuple, at: np.ndarray, worst_inputs: str) -> int | None:
        """The ``point`` id of the first of ``at`` (the combination ``key``'s rows) at the
        finding's worst inputs (``None``: none recorded, or no row there)."""
        if not worst_inputs or not len(at):
            return None
        if key not in self._inputs:
            self._inputs[key] = {n: self.col[n][at].astype(np.float64) for n in self._names}
        worst = json.loads(worst_inputs)
        here = np.ones(len(at), dtype=bool)
        for n, values in self._inputs[key].items():
            here &= values == worst[n]
        return int(self.col["point"][at[here]][0]) if here.any() else None


def _same_value(impl, impls) -> str:
    """The first of ``impls`` whose value is ``impl``'s expression (a custom gradient's
    value is its expression, whatever its rule): at order 0 they are one computation."""
    if impl is None or impl.expression is None:
        return ""
    return next((i.name for i in impls if i.expression == impl.expression), "")


def _rules(case, impl, f, checked: dict) -> str:
    """The hand-written rules on the finding's path that its back end's methods go through
    (:meth:`harness.backends.spec.BackendSpec.rules_used`: a forward rule in forward mode,
    ...), each checked exactly at its worst point (:func:`harness.causes.rules.
    check_rules`): JSON, ``[]`` without rules."""
    if impl is None or not custom_rules(case, impl) or not f.worst_inputs:
        return "[]"
    key = (impl.name, f.worst_inputs)
    if key not in checked:
        checked[key] = check_rules(case, impl, json.loads(f.worst_inputs))
    rules = checked[key]
    if f.backend in catalogue.SPECS:
        rules = catalogue.get(f.backend).rules_used(rules, f.methods.split(", "))
    return json.dumps(rules)


def _failing_rows(f, rows: np.ndarray, col: dict) -> np.ndarray:
    """The finding's failing rows, of ``rows`` (its combination's in its methods and
    modes): its outcomes, its interval."""
    keep = col["among"]["outcome"](rows, list(json.loads(f.counts)))
    if f.input:
        x = col[f.input][rows].astype(np.float64)
        lo = min(json.loads(f.lo_span)[0], f.lo)
        hi = max(json.loads(f.hi_span)[1], f.hi)
        keep &= (x >= lo) & (x <= hi)
    return rows[keep]


def _shares(rows: np.ndarray, by: str, points: np.ndarray | None, col: dict, text=True):
    """Per value of the column ``by``: the share of its judged rows at ``points`` (a
    lookup by point id, :meth:`_Rows.at_points`; ``None``: no point) that are ok. JSON
    (``text``) or a dict."""
    out = {}
    if len(rows) and points is not None:
        rows = rows[points[col["point_id"][rows]]]
        among = col["among"]
        judged = ~among["outcome"](rows, _JUDGED_OUT)
        ok = among["outcome"](rows[judged], ("ok",))
        codes = among[by].codes[rows[judged]]
        known = codes >= 0
        n = len(among[by].uniques)
        count = np.bincount(codes[known], minlength=n)
        right = np.bincount(codes[known], weights=ok[known], minlength=n)
        for code in np.flatnonzero(count):
            out[str(among[by].uniques[code])] = round(float(right[code] / count[code]), 4)
    return json.dumps(out, sort_keys=True) if text else out


class _Among:
    """Whether a string column's values at some rows are among a few names, by codes
    computed once for the column (``np.isin`` over strings sorts them at every call)."""

    def __init__(self, values: np.ndarray):
        self.codes, uniques = pd.factorize(values)
        self.uniques = np.asarray(uniques, dtype=object)
        self._hits: dict[tuple, np.ndarray] = {}  # per set of names asked (a few)

    def __call__(self, rows: np.ndarray, names) -> np.ndarray:
        key = tuple(names)
        hit = self._hits.get(key)
        if hit is None:
            # A missing value (code -1) is among none: the appended False.
            hit = self._hits[key] = np.append(np.isin(self.uniques, list(key)), False)
        return hit[self.codes[rows]]


def _located(localised: pd.DataFrame | None) -> dict:
    if localised is None or localised.empty:
        return {}
    out = {}
    for r in localised.to_dict("records"):
        key = (r["backend"], r["implementation"], r["method"], r["dtype"], r["partial"], r["point"])
        out[key] = r
    return out


def _localisation(f, rows: np.ndarray, col: dict, located: dict, point) -> dict:
    found = [
        located.get(
            (
                f.backend,
                f.implementation,
                col["method"][i],
                f.dtype,
                f.partial,
                int(col["point"][i]),
            )
        )
        for i in rows
    ]
    found = [r for r in found if r is not None]
    out = dict.fromkeys(_LOCALISATION, "")
    out.update(localised=0.0, culprit_got=np.nan, culprit_share=0.0)
    if not found:
        return out
    described = [r for r in found if r["localised"]]
    out["localised"] = round(len(described) / len(found), 4)
    if not described:
        return out
    culprits = Counter(r["culprit"] for r in described)
    name, count = culprits.most_common(1)[0]
    if name == "" and len(culprits) > 1:
        # Where some values name a primitive, the others (every primitive right there)
        # are its neighbours: a culprit at a third of them or more is the finding's.
        name, count = next((n, c) for n, c in culprits.most_common() if n)
        if count * 3 < len(described):
            name, count = "", culprits[""]
    mine = [r for r in described if r["culprit"] == name]
    at_worst = [r for r in mine if r["point"] == point and r["method"] == f.worst_method]
    pick = (at_worst or mine)[0]
    if name:
        for k in ("primitive", "partial", "outcome", "inputs", "got", "truth"):
            out[f"culprit_{k}"] = pick[f"culprit_{k}"]
        out["culprit"] = name
        out["culprit_method"] = pick["via"]
        out["culprit_mode"] = pick.get("in_mode") or "eager"
        out["culprit_share"] = round(count / len(described), 4)
    walls = Counter(r["intermediate"] for r in described if r["intermediate"])
    if walls:
        text, _ = walls.most_common(1)[0]
        out["intermediate"] = text
        out["intermediate_kind"] = next(
            r["intermediate_kind"] for r in described if r["intermediate"] == text
        )
    kinks = Counter(r.get("kink") or "" for r in described)
    kink, count = kinks.most_common(1)[0]
    out["kink"] = kink if kink and count * 2 >= len(described) else ""
    # A primitive whose subnormal derivative the platform flushes, at half of them or more.
    flushes = [json.loads(r["flushed"]) for r in described if r.get("flushed")]
    names = Counter(x["name"] for x in flushes)
    if names and names.most_common(1)[0][1] * 2 >= len(described):
        top = names.most_common(1)[0][0]
        at = [
            x
            for r, x in zip([r for r in described if r.get("flushed")], flushes)
            if x["name"] == top and r["point"] == point
        ]
        out["flushed"] = json.dumps(at[0] if at else next(x for x in flushes if x["name"] == top))
    wrong = Counter(r["value_wrong"] for r in described if r["value_wrong"])
    out["value_wrong"] = wrong.most_common(1)[0][0] if wrong else ""
    return out


class _ByPoint:
    """The rows of each (back end, implementation, dtype) at one point, found by a sort
    of that combination's point ids done once (not by comparing all its rows each time)."""

    def __init__(self, errors: pd.DataFrame):
        keys = ["backend", "implementation", "dtype"]
        self._groups = errors.groupby(keys, observed=True, sort=False).indices
        self._point = errors["point"].to_numpy(np.int64)
        self._sorted: dict = {}

    def rows(self, key: tuple, point: int | None) -> np.ndarray:
        """The rows of combination ``key`` at ``point`` (none for no point)."""
        if point is None or key not in self._groups:
            return np.array([], dtype=np.intp)
        if key not in self._sorted:
            rows = self._groups[key]
            rows = rows[np.argsort(self._point[rows], kind="stable")]
            self._sorted[key] = (rows, self._point[rows])
        rows, points = self._sorted[key]
        return rows[np.searchsorted(points, point) : np.searchsorted(points, point, "right")]


def _scale(f, rows: np.ndarray, col: dict, point: int | None) -> float:
    """The largest finite |rounded truth| among the worst point's partials of lower
    order than the finding's (``rows``: the implementation's rows at that point in its
    back end and dtype; NaN for a value, order 0, or no point)."""
    if point is None or f.order == 0 or not len(rows):
        return float("nan")
    mine = rows[col["order"][rows] < f.order]
    lower = np.abs(col["reference_rounded"][mine])
    lower = lower[np.isfinite(lower)]
    return float(lower.max()) if len(lower) else float("nan")
