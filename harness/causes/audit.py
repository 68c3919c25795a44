"""Every root cause's statement read against its evidence: what a maintainer would check
before trusting a sentence, as rules a study's output must pass.

Each rule rests on the findings the root cause absorbs (their evidence columns, from the
rows: :mod:`harness.causes.evidence`), never on the statement's own code:

- ``id``: the id is an identifier (:data:`harness.causes.classify.ID_PATTERN`), with no
  exception message in it;
- ``empty clause``: no clause without content (``receives: .``, ``()``, ``; ;``);
- ``value right``: "where its value is right" only where the function's own value
  (order 0) was judged right at every failing point of every member (``value_ok``);
- ``framework``: "only in F" only where every other framework that ran is right at most
  of each member's failing points; and no two root causes of one implementation,
  derivative and dtype that each say "only in" a different framework over overlapping
  inputs;
- ``one mechanism``: a ``kernel`` root cause's members each name its primitive as their
  own culprit (or its wrong value), a ``platform`` one's the primitive whose derivative
  the platform flushed; a root cause's members share one outcome class; a ``kernel``
  root cause holds no framework whose failing inputs (beyond noise) meet none of the
  other frameworks' (the same case's input, overlapping intervals in any dtype);
- ``whole``: "the primitive being the whole function" only where every member's flushed
  primitive is the whole expression it differentiates (a census's, as localised);
- ``worst shown``: a worst value of NaN is named NaN, an infinity infinite (or the wrong
  sign: the opposite infinity to a truth beyond the dtype);
- ``beyond``: "the truth lies beyond the dtype there" only where no member is infinite
  for a finite truth and every NaN member's worst truth overflows the dtype;
- ``crash``: a root cause of exceptions or of missing gradients shows no value ("got nan");
- ``every primitive``: "every primitive is right at its own inputs" only where every
  member's failing values were localised (registered solvers never are);
- ``rule``: no value (order 0) blamed on a derivative rule, which a value never meets;
- ``inputs``: every input the statement prints (``x = 0.49999999999999994``,
  ``x in [a, b]``) reads back, in one of the root cause's dtypes, to an input its members
  hold (an edge or a worst point): nothing rounded, nothing invented.

:func:`audit` returns the problems; ``harness check-statements`` prints them.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re

import numpy as np
import pandas as pd

from harness.causes.classify import ID_LENGTH, ID_PATTERN, outcome_class
from harness.causes.clauses import RIGHT_SHARE
from harness.numerics.floats import round_decimal, to_format

__all__ = ["Problem", "audit", "printed_inputs"]

#: What the statements say where they claim these (the rules look for them).
VALUE_RIGHT = "where its value is right"
WHOLE = "the primitive being the whole function"
ONLY_IN = "only in "
EVERY_PRIMITIVE = "every primitive is right at its own inputs"

_EMPTY = re.compile(r":\s*[.;,)]|\(\s*\)|;\s*;|,\s*,|:\s*$|\s\.$")
_NUMBER = r"~?(-?(?:\d+\.?\d*(?:e[+-]?\d+)?|inf|nan))"
_EQUALS = re.compile(rf"(\|?)([A-Za-z_]\w*)\|? = {_NUMBER}")
_SPAN = re.compile(rf"(\|?)([A-Za-z_]\w*)\|? in \[{_NUMBER}, {_NUMBER}\]")


@dataclasses.dataclass(frozen=True)
class Problem:
    """One statement that says more than its evidence, or says it badly."""

    id: str
    rule: str
    detail: str

    def __str__(self) -> str:
        return f"{self.id}: {self.rule}: {self.detail}"


def printed_inputs(text: str) -> list[tuple[str, str, bool]]:
    """``(name, number as printed, mirrored)`` for each input value the text prints as
    ``name = v`` or ``name in [a, b]`` (``|name|``: mirrored about 0)."""
    out = []
    for m in _SPAN.finditer(text):
        out += [
            (m.group(2), m.group(3), bool(m.group(1))),
            (m.group(2), m.group(4), bool(m.group(1))),
        ]
    for m in _EQUALS.finditer(text):
        out.append((m.group(2), m.group(3), bool(m.group(1))))
    return out


def audit(roots: pd.DataFrame, findings: pd.DataFrame) -> list[Problem]:
    """The problems of every root cause in ``roots`` (a study's ``root_causes`` table),
    read against ``findings`` (its findings, classified: their ``root_cause`` column and
    evidence)."""
    problems: list[Problem] = []
    members = {k: g for k, g in findings.groupby("root_cause", sort=False)} if len(findings) else {}
    for r in roots.to_dict("records"):
        group = members.get(r["id"], findings.iloc[:0])
        for rule, detail in _problems(r, group):
            problems.append(Problem(r["id"], rule, detail))
    problems += _contradictions(roots, members)
    return problems


def _problems(r: dict, group: pd.DataFrame):
    rid, text = str(r["id"]), str(r["text"])
    if len(rid) > ID_LENGTH or not re.match(ID_PATTERN, rid):
        yield "id", f"not a short identifier ({len(rid)} characters)"
    said = text  # the exceptions it quotes are the frameworks' words, not clauses
    for quoted in group.get("error_text", pd.Series(dtype=object)):
        for line in str(quoted or "").splitlines():
            said = said.replace(line[:200].rstrip("."), "<exception>")
    for m in _EMPTY.finditer(said):
        yield "empty clause", f"...{said[max(0, m.start() - 40) : m.end() + 10]}..."
    if group.empty:
        yield "evidence", "no finding belongs to it"
        return
    if VALUE_RIGHT in text:
        shares = pd.to_numeric(group.get("value_ok", pd.Series(dtype=float)), errors="coerce")
        if shares.isna().any() or (shares < 1.0).any():
            least = "not judged" if shares.isna().any() else f"right at {shares.min():.0%}"
            yield "value right", f"order 0 {least} at some member's points"
    if EVERY_PRIMITIVE in text:
        judged = pd.to_numeric(group.get("localised", pd.Series(dtype=float)), errors="coerce")
        if (judged.fillna(0) <= 0).any():
            yield "every primitive", "a member whose primitives were not judged alone"
    if r["kind"] == "rule" and (group["order"].astype(int) == 0).any():
        yield "rule", "a value (order 0) blamed on a derivative rule"
    if r["kind"] == "framework" and text.startswith(ONLY_IN):
        mine = set(group["backend"])
        for f in group.itertuples(index=False):
            shares = json.loads(getattr(f, "backends_ok", "") or "{}")
            wrong = {b: v for b, v in shares.items() if b not in mine and v < RIGHT_SHARE}
            if wrong or not shares:
                yield "framework", f"{f.case}:{f.id}: the others' shares {shares}"
                break
    if r["kind"] == "kernel" and r["outcome"] != "error":
        # A primitive's rule (its culprit) and its value kernel (its own value wrong) are
        # two mechanisms: each member names the one its root cause states.
        name, _, value = str(r["primitive"]).partition(":")
        for f in group.itertuples(index=False):
            culprit = str(getattr(f, "culprit", "") or "")
            own = str(getattr(f, "value_wrong", "") or "") if value else culprit
            if own != name:
                yield "one mechanism", f"{f.case}:{f.id} names {own or 'no primitive'}"
                break
    if r["kind"] == "platform":
        # The platform's flush of one primitive's derivative: each member's own evidence.
        name = str(r["primitive"]).split(":")[0]
        for f in group.itertuples(index=False):
            own = json.loads(str(getattr(f, "flushed", "") or "{}") or "{}").get("name", "")
            if own != name:
                yield "one mechanism", f"{f.case}:{f.id} flushes {own or 'no primitive'}"
                break
    if WHOLE in text:
        for f in group.itertuples(index=False):
            flushed = json.loads(str(getattr(f, "flushed", "") or "{}") or "{}")
            if flushed and flushed.get("whole") is not True:
                yield "whole", f"{f.case}:{f.id}'s {flushed.get('name')} is inside its expression"
                break
    classes = {outcome_class(o) for o in group["outcome"]}
    if len(classes) > 1 and r["kind"] != "rule":
        yield "one mechanism", f"outcome classes {sorted(classes)}"
    if r["kind"] == "kernel":
        yield from _apart(group)
    yield from _outcomes(group, text)
    if r["outcome"] in ("error", "missing") and "got nan" in text:
        yield "crash", f"{'an exception' if r['outcome'] == 'error' else 'None'} shown as a value"
    yield from _inputs(r, group, text)


def _apart(group: pd.DataFrame):
    """A framework of a kernel root cause whose members' intervals meet no other
    framework's: two mechanisms told as one."""
    spans: dict[str, list[tuple]] = {}
    for f in group.itertuples(index=False):
        if f.impact <= 1:
            continue  # rounding noise, scattered in every framework, meets nothing
        if not f.input or pd.isna(f.lo) or pd.isna(f.hi):
            return  # a member with no interval meets every other
        spans.setdefault(f.backend, []).append((f.case, f.input, float(f.lo), float(f.hi)))
    if len(spans) < 2:
        return
    for backend, own in spans.items():
        others = [s for b, theirs in spans.items() if b != backend for s in theirs]
        if not any(a[:2] == b[:2] and a[2] <= b[3] and b[2] <= a[3] for a in own for b in others):
            yield "one mechanism", f"{backend}'s failing inputs meet no other framework's"
            return


#: "The truth lies beyond the dtype there" (of every non-finite value it names).
BEYOND_THERE = "the truth lies beyond the dtype there"


def _outcomes(group: pd.DataFrame, text: str):
    """The worst value shown is of an outcome the words name; the truth lies beyond the
    dtype "there" only where no member is infinite for a finite truth (outcome ``inf``)
    and every NaN member's worst truth overflows."""
    words, _, worst = text.partition("worst: ")
    got = re.search(r": got (-?inf|nan)\b", worst)
    # An infinity may be the opposite one to a truth beyond the dtype: "the wrong sign".
    named = ("NaN",) if got and got.group(1) == "nan" else ("infinite", "wrong sign")
    if got and not any(w in words for w in named):
        yield "worst shown", f"a worst of {got.group(1)} the words do not name"
    if BEYOND_THERE in text:
        nan = group[group["outcome"] == "nan"]
        if (group["outcome"] == "inf").any():
            yield "beyond", "a member infinite where its truth is finite"
        for truth, dtype in zip(nan["worst_truth"], nan["dtype"]):
            if not math.isinf(round_decimal(truth, dtype)):
                yield "beyond", f"a NaN whose truth {truth} is a {dtype}"
                break


def _inputs(r: dict, group: pd.DataFrame, text: str):
    """Each printed input against the inputs the root cause's members hold."""
    held: dict[str, set[float]] = {}

    def hold(name, value):
        try:
            v = float(value)
        except (TypeError, ValueError):
            return
        held.setdefault(name, set()).update({v, -v})

    for f in group.to_dict("records"):
        if f.get("input"):
            hold(f["input"], f["lo"])
            hold(f["input"], f["hi"])
        for n, (a, b) in json.loads(f.get("ranges") or "{}").items():
            hold(n, a)
            hold(n, b)
        for n, v in json.loads(f.get("worst_inputs") or "{}").items():
            hold(n, v)
        for n, v in json.loads(f.get("culprit_inputs") or "{}").items():
            hold(n, v)
        for rule in json.loads(f.get("rules") or "[]"):
            for n, v in (rule.get("at") or {}).items():
                hold(n, v)
    for c in json.loads(r.get("culprit") or "{}").values():
        for n, v in c.get("inputs", {}).items():
            hold(n, v)
    # A hand-written rule is checked exactly: its points print as the float64s they are.
    dtypes = [*(d for d in str(r["dtypes"]).split(", ") if d), "float64"]
    for name, number, _ in printed_inputs(text):
        if name not in held:
            continue  # not an input (dy, dx, a count)
        if not any(_reads_back(number, d, held[name]) for d in dtypes):
            yield "inputs", f"{name} = {number} is none of its inputs in {', '.join(dtypes)}"


def _reads_back(number: str, dtype: str, values: set[float]) -> bool:
    """Whether ``number``, read in ``dtype``, is one of ``values`` (exactly)."""
    try:
        v = float(to_format(np.array([float(number)]), dtype)[0])
    except (OverflowError, ValueError):
        return False
    return v in values or (math.isnan(v) and any(math.isnan(x) for x in values))


def _contradictions(roots: pd.DataFrame, members: dict) -> list[Problem]:
    """Pairs of ``only in`` framework root causes over one implementation, derivative and
    dtype whose members' intervals overlap, each naming another framework."""
    claims = []
    for r in roots.to_dict("records"):
        if r["kind"] != "framework" or not str(r["text"]).startswith(ONLY_IN):
            continue
        g = members.get(r["id"])
        if g is None:
            continue
        for f in g.to_dict("records"):
            key = (f["case"], f["implementation"], f["partial"], f["dtype"], f.get("input", ""))
            claims.append((key, f["backend"], float(f["lo"]), float(f["hi"]), r["id"]))
    out, seen = [], set()
    for i, (key, b, lo, hi, rid) in enumerate(claims):
        for key2, b2, lo2, hi2, rid2 in claims[i + 1 :]:
            if key == key2 and b != b2 and lo <= hi2 and lo2 <= hi and (rid, rid2) not in seen:
                seen.add((rid, rid2))
                out.append(
                    Problem(rid, "framework", f"contradicts {rid2} at {key[0]}.{key[1]} {key[2]}")
                )
    return out
