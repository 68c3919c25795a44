"""Candidates judged: a repair is what the study's own stages found right.

:func:`repair` writes a copy of the case holding the implementation to repair and its
candidates (:mod:`harness.repair.candidates`), runs it through the study's stages
(:func:`harness.stages.run.run_stages`: the certified reference, every back end, method,
mode, dtype and order the case has, edges bisected) and compares each candidate with
the original point by point (:class:`Judged`; finite differences aside, whose error is
the method's own). A candidate is *accepted* only where it is
right at every row the original was right at and right at some row the original failed;
it is *right everywhere* where no judged row fails. Alternatives are ranked by the share
right, then by cost (operations per value: the nodes of its expression and rules), as
Herbie's accuracy-versus-cost table is. Nothing here calls a candidate a repair before
these tables say so.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd
import yaml

from harness.backends.catalogue import BACKENDS
from harness.cases import expressions as ex
from harness.cases.model import Implementation, NestedRule
from harness.judge.compare import NOT_JUDGED
from harness.repair.candidates import Candidates, candidates, combined, with_candidates
from harness.repair.regimes import regimes

__all__ = ["Judged", "Repair", "judge_rows", "named_by_causes", "repair"]

#: What a row is, across the implementations of one case copy.
ROW = ["backend", "method", "mode", "dtype", "order", "partial", "point"]
#: Methods whose error is their own, not the formula's or the rule's: finite differences
#: run no rule, and their truncation and cancellation no rewrite removes.
OWN_ERROR = ("finite_difference",)


@dataclass(frozen=True)
class Judged:
    """One implementation of the copy against the original, over the rows the original
    is judged at (the study's ``NOT_JUDGED`` outcomes count neither way): ``right`` of
    ``judged``; ``regressions`` (right in the original, not here) and ``fixed`` (failing
    in the original, right here); ``still``: where it still fails, a line per (back end,
    method, mode, dtype, order) with its outcomes."""

    name: str
    part: str
    form: str
    cost: int
    judged: int
    right: int
    regressions: int
    fixed: int
    still: tuple[str, ...]
    #: Rows the original fails at and the study does not judge here (``flushed``, ...).
    unjudged: int = 0
    #: The id of the case copy it was judged in.
    proof_id: str = ""

    @property
    def share(self) -> float:
        return self.right / self.judged if self.judged else 1.0

    @property
    def everywhere(self) -> bool:
        return self.right == self.judged

    @property
    def accepted(self) -> bool:
        return self.regressions == 0 and self.fixed > 0


def _cost(impl: Implementation) -> int:
    """Operations per value: the nodes of the expression and of every rule (a nested
    rule's own expression and rules included)."""

    def nodes(rule) -> int:
        if isinstance(rule, NestedRule):
            return len(list(ex.walk(rule.expression))) + sum(map(nodes, rule.gradient.values()))
        return len(list(ex.walk(rule))) if isinstance(rule, ex.Node) else 0

    rules = [*(impl.gradient or {}).values(), *(impl.tangent or {}).values()]
    return nodes(impl.expression) + sum(map(nodes, rules))


def _still(rows: pd.DataFrame) -> tuple[str, ...]:
    bad = rows[rows["outcome"] != "ok"]
    lines = []
    for key, group in bad.groupby(ROW[:-1], sort=True, observed=True):
        what = ", ".join(f"{n} {o}" for o, n in group["outcome"].value_counts().items())
        b, m, mode, d, order, partial = key
        lines.append(f"{b} {m} {mode} {d} order {order} ({partial or 'value'}): {what}")
    return tuple(lines)


def judge_rows(errors: pd.DataFrame, original: str, name: str) -> dict:
    """``name``'s rows of an errors table against ``original``'s, on the rows where the
    original is judged: the counts of :class:`Judged`. A row the study does not judge in
    ``name`` (the truth flushed by the platform, say) where the original fails says
    nothing either way and is left out; where the original is right, it is a regression
    (the original's right value is lost)."""
    errors = errors[~errors["method"].isin(OWN_ERROR)]
    base = errors[errors["implementation"] == original].set_index(ROW)["outcome"].astype(str)
    base = base[~base.isin(NOT_JUDGED)]
    mine = errors[errors["implementation"] == name].set_index(ROW)["outcome"].astype(str)
    mine = mine.reindex(base.index).fillna("missing")
    ok_base, ok_mine = base == "ok", mine == "ok"
    keep = ok_base | ~mine.isin(NOT_JUDGED)
    rows = mine[keep].rename("outcome").reset_index()
    return {
        "judged": int(keep.sum()),
        "right": int(ok_mine.sum()),
        "regressions": int((ok_base & ~ok_mine).sum()),
        "fixed": int((~ok_base & ok_mine).sum()),
        "still": _still(rows),
        "unjudged": int((~keep).sum()),
    }


@dataclass
class Repair:
    """The search for ``implementation`` of ``case``: the ``original`` judged, the
    ``alternatives`` ranked (share right, then cost), the ``search`` that found them,
    the ``seconds`` it all took and where its tables are (``results``)."""

    case: str
    implementation: str
    original: Judged
    alternatives: tuple[Judged, ...]
    search: Candidates
    seconds: float
    results: Path
    proof: dict = field(repr=False)
    #: The back ends the candidates ran in, in the study's order.
    frameworks: tuple[str, ...] = ()
    _folder: object = field(default=None, repr=False)

    @property
    def best(self) -> Judged | None:
        """The best accepted alternative, if any."""
        return next((a for a in self.alternatives if a.accepted), None)

    def implementation_of(self, judged: Judged) -> dict:
        """``judged``'s implementation as a case file writes it."""
        return dict(self.proof["implementations"][judged.name])

    def case_with_repair(self, data: dict) -> dict:
        """A copy of the case file's ``data`` with the best repair added as
        ``<implementation>_repaired`` (raises ``LookupError`` where none was accepted)."""
        best = self._chosen(None)
        impl = self.implementation_of(best)
        impl["description"] = (
            f"The repair of {self.implementation} found by harness repair ({best.part} "
            f"rewritten): right at {best.right} of {best.judged} judged values, "
            f"{self.original.right} before."
        )
        out = dict(data)
        out["implementations"] = {
            **data["implementations"],
            f"{self.implementation}_repaired": impl,
        }
        return out

    def _chosen(self, judged: Judged | None) -> Judged:
        judged = judged or self.best
        if judged is None:
            raise LookupError(f"{self.implementation}: no candidate was accepted")
        return judged

    def code(self, framework: str, judged: Judged | None = None) -> str | None:
        """The best repair (or ``judged``) as a ``framework`` module defining
        ``<implementation>_repaired`` (:mod:`harness.repair.code`); ``None`` where the
        framework cannot hold it."""
        from harness.cases.load import load_case
        from harness.repair.code import code

        judged = self._chosen(judged)
        doc = (
            f"{self.implementation}_repaired: the repair of {self.implementation} of the "
            f"case {self.case}, found by harness repair.\n\n{judged.part}: {judged.form}\n\n"
            f"Right at {judged.right} of {judged.judged} judged values ({self.original.right} "
            "before), in the frameworks, methods, modes, dtypes and orders of the search. "
            "Call it with tensors of one dtype; differentiate it as you differentiate "
            "any function."
        )
        case = load_case(self.results / "cases" / f"{judged.proof_id}.yaml")
        name = f"{self.implementation}_repaired"
        text = code(case, judged.name, framework, name, doc)
        # The candidate's name, where a back end names a function after it, is the repair's.
        return None if text is None else text.replace(judged.name, name)

    def check_code(self, framework: str, judged: Judged | None = None):
        """:meth:`code` imported and checked by :func:`harness.check` against the judged
        values, bit for bit (:func:`harness.repair.code.check_code`); ``None`` where no
        code could be written."""
        from harness.cases.load import load_case
        from harness.repair.code import check_code
        from harness.results import read_table

        judged = self._chosen(judged)
        text = self.code(framework, judged)
        if text is None:
            return None
        errors = read_table(self.results / judged.proof_id / "errors.parquet")
        rows = errors[errors["implementation"] == judged.name]
        case = load_case(self.results / "cases" / f"{judged.proof_id}.yaml")
        name = f"{self.implementation}_repaired"
        return check_code(
            text, framework, name, case, self.proof["inputs"], rows, self.results / "code"
        )

    def frame(self) -> pd.DataFrame:
        """The original and the alternatives as a table, a row each (``kind``:
        ``original``, ``repair`` for the best, ``alternative``)."""
        best = self.best
        rows = []
        for j in (self.original, *self.alternatives):
            kind = "original" if j is self.original else "repair" if j is best else "alternative"
            rows.append(
                {
                    "case": self.case,
                    "implementation": self.implementation,
                    "candidate": j.name,
                    "kind": kind,
                    "part": j.part,
                    "form": j.form,
                    "judged": j.judged,
                    "right": j.right,
                    "share": j.share,
                    "regressions": j.regressions,
                    "fixed": j.fixed,
                    "unjudged": j.unjudged,
                    "accepted": j is not self.original and j.accepted,
                    "everywhere": j.everywhere,
                    "cost": j.cost,
                    "still": "; ".join(j.still),
                    "seconds": self.seconds,
                }
            )
        return pd.DataFrame(rows)

    def table(self) -> str:
        """The alternatives as text, the original first."""
        head = f"{'implementation':<34} {'right':>13} {'share':>7} {'cost':>5}  verdict"
        lines = [head, "-" * len(head)]
        for j in (self.original, *self.alternatives):
            if j is self.original:
                verdict = "the original"
            elif j.everywhere and j.accepted:
                verdict = "repair, right everywhere"
            elif j.accepted:
                verdict = f"repair, {j.fixed} fixed, fails at {j.judged - j.right}"
            else:
                verdict = f"rejected: {j.regressions} regressions, {j.fixed} fixed"
            if j.unjudged:
                verdict += f"; {j.unjudged} not judged (flushed, undecided)"
            right = f"{j.right}/{j.judged}"
            lines.append(f"{j.name:<34} {right:>13} {j.share:>7.1%} {j.cost:>5}  {verdict}")
            if j is not self.original:
                lines.append(f"{'':<4}{j.part}: {j.form}")
        return "\n".join(lines)


def _proof_data(data: dict, implementation: str, found: Candidates, name: str) -> dict:
    """The case file's ``data`` with only ``implementation`` and its candidates (the
    expectations, which may name the others, left out: they change no outcome)."""
    out = {k: v for k, v in data.items() if k != "expectations"}
    out["implementations"] = {implementation: data["implementations"][implementation]}
    out = with_candidates(out, found)
    out["title"] = f"{data.get('title', name)} (repair of {implementation})"
    return out


def repair(
    case_path: str | Path,
    implementation: str,
    config=None,
    selection=None,
    results: str | Path | None = None,
    per_part: int = 6,
    cache: bool = True,
    progress=None,
    symbolic: bool = True,
    **limits,
) -> Repair:
    """Search, judge and rank the repairs of ``implementation`` of the case at
    ``case_path`` (``limits``: the saturation's, :func:`harness.repair.saturate.saturate`);
    the study's ``config`` and a ``selection`` narrow the run as they narrow
    ``harness run``; ``symbolic``: custom rules from the function's derivative among the
    candidates (else rewrites alone). The tables go to ``results`` (a temporary folder
    by default, removed with the result), the reference to the per-user cache."""
    from harness.cases.load import load_case
    from harness.results import atomic_write_text, read_table
    from harness.stages.folders import run_folder, share_cache
    from harness.stages.prepared import Selection, prepare
    from harness.stages.run import run_stages

    start = time.perf_counter()
    case_path = Path(case_path)
    case = load_case(case_path)
    found = candidates(case, implementation, per_part, symbolic, **limits)
    data = yaml.safe_load(case_path.read_text(encoding="utf-8"))
    name = f"{case.id}_repair_{implementation}"
    proof = _proof_data(data, implementation, found, name)
    folder, keep = run_folder(results, prefix="harness-repair-")
    if cache:
        share_cache(folder)

    def run(proof: dict, name: str, wanted) -> tuple[dict, set]:
        """The copy ``proof`` judged: each of ``wanted`` (name, part, form) as
        :class:`Judged`, and the back ends it ran in."""
        path = folder / "cases" / f"{name}.yaml"
        atomic_write_text(path, yaml.safe_dump(proof, sort_keys=False, width=88))
        prep = prepare(path, config, selection or Selection())
        run_stages(prep, folder, cache, progress)
        errors = read_table(folder / prep.case.id / "errors.parquet")
        loaded = {i.name: i for i in prep.case.implementations}
        out = {
            impl: Judged(
                impl,
                part,
                form,
                _cost(loaded[impl]),
                **judge_rows(errors, implementation, impl),
                proof_id=name,
            )
            for impl, part, form in wanted
        }
        return out, errors

    def ranked(judged) -> list[Judged]:
        return sorted(judged, key=lambda j: (-j.accepted, -j.right, j.cost, j.name))

    wanted = [(c.name, c.part, c.form) for c in found.found]
    first, errors = run(proof, name, [*wanted, (implementation, "", "")])
    backends = set(errors["backend"].astype(str))
    original = first.pop(implementation)
    alternatives = ranked(first.values())
    if not any(a.accepted and a.everywhere for a in alternatives):
        # Where no part alone is right everywhere: the best expression with the best
        # rules, and each form where it is right (regimes).
        extra = combined(found, alternatives)
        sides = {implementation: proof["implementations"][implementation]["expression"]}
        sides |= {c.name: c.form for c in found.found if c.part == "expression"}
        try:
            extra += regimes(
                errors,
                proof["implementations"][implementation],
                implementation,
                case.input_names,
                sides,
                len(found.found) + len(extra) + 1,
                OWN_ERROR,
                NOT_JUDGED,
            )
        except ex.ExpressionError:  # a side written with the case's let: names
            pass
        if extra:
            both = {
                **proof,
                "implementations": {implementation: proof["implementations"][implementation]},
            }
            both["implementations"].update({c.name: c.mapping for c in extra})
            proof["implementations"].update({c.name: c.mapping for c in extra})
            found = Candidates((*found.found, *extra), found.searches, found.skipped)
            second, _ = run(both, f"{name}_combined", [(c.name, c.part, c.form) for c in extra])
            alternatives = ranked([*alternatives, *second.values()])
    out = Repair(
        case.id,
        implementation,
        original,
        tuple(alternatives),
        found,
        round(time.perf_counter() - start, 2),
        folder,
        proof,
        tuple(b for b in BACKENDS if b in backends),
        keep,
    )
    if keep is not None:
        import shutil
        import weakref

        weakref.finalize(out, shutil.rmtree, str(folder), True)
    return out


def named_by_causes(path: str, case: str) -> list[str]:
    """The implementations of ``case`` a formula or rule root cause names (those of
    finite differences aside: their error is the method's own)."""
    from harness.results import read_table

    roots = read_table(path)
    mine = roots[
        roots["kind"].isin(["formula", "rule"]) & ~roots["id"].str.contains("finite_difference")
    ]
    names = []
    for listed in mine["implementations"].astype(str):
        for item in listed.split(", "):
            owner, _, impl = item.partition(".")
            if owner == case and impl not in names:
                names.append(impl)
    return names
