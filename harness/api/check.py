"""``harness.check(fn, framework=..., inputs=...)``: a user's own function, as written,
checked as the study checks a case: traced (:mod:`harness.api.trace`), its trace
verified bit for bit at the sweep's points, its reference certified by Arb, its
derivatives of orders 0-4 computed by every method and mode of its framework, judged, the
edges of every failure bisected to adjacent floats, its findings and root causes stated.

The run (:func:`harness.api.run.run_check`) is the study's own
(:func:`harness.stages.run.run_stages`, then the root causes of
:func:`harness.stages.collect.collect_stage`) on the case :mod:`harness.api.case`
writes; its tables go to ``results`` (a temporary folder by default, removed with the
result), the reference and JAX's compiled programs to the per-user cache
(:func:`harness.stages.folders.user_cache`), shared by every later check of the same
function. :meth:`CheckResult.repair` searches the function's repairs
(:mod:`harness.repair`)."""

from __future__ import annotations

import shutil
import weakref
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd
import yaml

from harness.api import case as check_case
from harness.api.run import run_check
from harness.api.trace import Traced
from harness.stages.folders import user_cache

__all__ = ["CheckResult", "check", "user_cache"]


@dataclass
class CheckResult:
    """What :func:`check` found: the errors table's ``rows``, the ``findings`` and the
    ``root_causes`` (the study's tables, for this one function), the ``traced`` function
    and the ``case`` it ran as."""

    traced: Traced
    case: object
    data: dict
    rows: pd.DataFrame
    findings: pd.DataFrame
    root_causes: pd.DataFrame
    results: Path
    _folder: object = field(default=None, repr=False)

    @property
    def failures(self) -> pd.DataFrame:
        """Rows judged wrong that no expectation holds, and rows an expectation said
        would fail that did not (``expected == "broken"``); errors the framework raises by
        design (an ``unsupported`` root cause) are not among them."""
        from harness.judge.summary import NOT_FAILURES

        r = self.rows
        failing = ~r["outcome"].isin(NOT_FAILURES) & (r["expected"] != "held")
        return r[(failing & ~self._unsupported()) | (r["expected"] == "broken")]

    @property
    def undecided(self) -> pd.DataFrame:
        """Rows the reference could not decide (``ref_unreliable``): neither pass nor fail."""
        return self.rows[self.rows["outcome"] == "ref_unreliable"]

    @property
    def ok(self) -> bool:
        return self.failures.empty

    def _unsupported(self):
        """Rows of an ``error`` the framework refuses by design (its root cause's kind)."""
        f = self.findings
        if f.empty or "kind" not in f:
            return pd.Series(False, index=self.rows.index)
        refused = f[(f["kind"] == "unsupported") & (f["outcome"] == "error")]
        mask = pd.Series(False, index=self.rows.index)
        for _, g in refused.iterrows():
            mask |= (
                (self.rows["outcome"] == "error")
                & (self.rows["dtype"] == g["dtype"])
                & (self.rows["partial"] == g["partial"])
                & self.rows["method"].isin(str(g["methods"]).split(", "))
                & self.rows["mode"].isin(str(g["modes"]).split(", "))
            )
        return mask

    def page(self, path: str | Path) -> Path:
        """The case's HTML page (as the study renders it) written to ``path``."""
        from harness.results import atomic_write_text
        from harness.stages.report import render_case

        written = render_case(
            self.case.id, self.results, self.results / "reports", self.results / "cases"
        )
        atomic_write_text(path, written.read_text(encoding="utf-8"))
        return Path(path)

    def repair(self, per_part: int = 6, results: str | Path | None = None, **limits):
        """The function's repairs (:func:`harness.repair.prove.repair`): its case
        (:meth:`to_case`: the trace, its custom rule's trace included) rewritten and
        judged in its framework, by the methods, modes and dtypes of this check; the code
        of the best, in any framework, from :meth:`~harness.repair.prove.Repair.code`."""
        from harness.repair.prove import repair
        from harness.results import atomic_write_text

        path = self.results / "repairs" / f"{self.case.id}.yaml"
        atomic_write_text(path, self.to_case())
        ((name, _),) = self.data["implementations"].items()
        return repair(path, name, results=results, per_part=per_part, **limits)

    def to_case(self) -> str:
        """The traced function as a case file for the study (``cases/NAME.yaml``)."""
        data = check_case.study_case(self.data, self.traced.rule_texts())
        head = (
            f"# {self.case.id}: written by harness.check from {self.traced.framework}'s trace "
            "of a Python function.\n"
        )
        return head + yaml.safe_dump(data, sort_keys=False, width=88)


def check(
    fn: Callable,
    framework: str,
    inputs: Mapping[str, object] | None = None,
    orders: Sequence[int] = (1, 2, 3, 4),
    partials: Sequence | None = None,
    dtypes: Sequence[str] | None = None,
    methods: Sequence[str] | None = None,
    modes: Sequence[str] | None = None,
    expect: Iterable[Mapping] = (),
    tolerances: Iterable[Mapping] = (),
    results: str | Path | None = None,
    title: str | None = None,
    bisect: bool = True,
    cache: bool = True,
    reference: Callable | None = None,
    progress: bool | object = False,
) -> CheckResult:
    """Check ``fn`` (of scalar inputs, written for ``framework``: ``jax``, ``torch`` or
    ``tensorflow``) against its certified reference.

    ``inputs``: per input (the function's parameters without a default, in order), a sweep
    (:mod:`harness.sweep`) or a list of values; an input not named is swept over
    ``harness.sweep.log(1e-30, 1e30, signs="both")``. ``orders``: the derivatives'
    orders (every partial of each; the value, order 0, is always judged), or
    ``partials``: those partials only (``["b", "ab"]`` or ``[("b",), ("a", "b")]``). ``dtypes`` (default float32 and
    float64), ``methods`` (default all the framework has) and ``modes`` (default: JAX
    eager and jit; TensorFlow eager, function and XLA; PyTorch eager) as in a case file;
    ``expect`` and ``tolerances``: a case file's ``expectations`` and ``tolerances``
    entries (the implementation is the function). ``reference``: for a function the
    operator table cannot express (a solver, a loop), an mpmath function of the inputs
    (mpf in, mpf out) whose value and ``mpmath.diff`` derivatives are the reference,
    verified at two precisions, not certified by Arb; the function is then traced where
    it can be (and verified), else not. Raises :class:`TraceError` where the function
    cannot be traced (and no ``reference`` is given) or its trace differs from it, and
    :class:`harness.cases.model.CaseError` for arguments a case file could not hold.
    ``progress``: ``True`` prints each stage's progress and, as soon as each method and
    dtype is judged, its verdicts (``judged jax reverse jit float32: 396 ok, 4 wrong``)
    on standard error, as ``harness run`` does; or an object of that interface
    (:class:`harness.cli.output.Progress`)."""
    from harness.results import read_table

    run = run_check(
        fn,
        framework,
        inputs=inputs,
        orders=orders,
        partials=partials,
        dtypes=dtypes,
        methods=methods,
        modes=modes,
        expect=expect,
        tolerances=tolerances,
        results=results,
        title=title,
        bisect=bisect,
        cache=cache,
        reference=reference,
        progress=progress,
    )
    result = CheckResult(
        run.traced,
        run.case,
        run.data,
        read_table(run.errors),
        read_table(run.results / "findings.parquet"),
        read_table(run.results / "root_causes.parquet"),
        run.results,
        run.keep,
    )
    if run.keep is not None:
        weakref.finalize(result, shutil.rmtree, str(run.results), True)
    return result
