"""``harness.check(fn, framework=..., inputs=...)``: a user's own function, as written,
checked as the study checks a case: traced (:mod:`harness.api.trace`), its trace
verified bit for bit at the sweep's points, its reference certified by Arb, its
derivatives of orders 0-4 computed by every method and mode of its framework, judged, the
edges of every failure bisected to adjacent floats, its findings and root causes stated.

The run is the study's own (:func:`harness.stages.run.run_stages`, then the root causes
of :func:`harness.stages.collect.collect_stage`) on the case :mod:`harness.api.case`
writes; its tables go to ``results`` (a temporary folder by default, removed with the
result), the reference and JAX's compiled programs to the per-user cache
(:func:`harness.stages.folders.user_cache`), shared by every later check of the same function."""

from __future__ import annotations

import shutil
import warnings
import weakref
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd
import yaml

from harness.api import case as check_case
from harness.api.trace import Traced, trace_rules, tracer_of, verify
from harness.backends.interface import TraceError
from harness.stages.folders import run_folder, share_cache, user_cache

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

    def to_case(self) -> str:
        """The traced function as a case file for the study (``cases/NAME.yaml``)."""
        data = check_case.study_case(self.data, self.traced.rule_texts())
        head = (
            f"# {self.case.id}: written by harness.check from {self.traced.framework}'s trace "
            "of a Python function.\n"
        )
        return head + yaml.safe_dump(data, sort_keys=False, width=88)


def _points(prep) -> list:
    """Every point of the case as float64 columns (each dtype's points, one after the
    other): where the trace is verified."""
    frames = [f for f in prep.points.values() if len(f)]
    names = prep.case.input_names
    both = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=names)
    return [both[n].to_numpy(dtype="float64") for n in names]


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
    from harness.backends.catalogue import load
    from harness.cases.model import CaseError
    from harness.config import load_config
    from harness.registered.register import user_function, user_reference
    from harness.results import atomic_write_text, read_table
    from harness.stages.collect import collect_stage
    from harness.stages.prepared import prepare
    from harness.stages.run import run_stages

    tracer = tracer_of(framework)
    names = tuple(inputs) if inputs else tuple(tracer_names(fn))
    if not names:
        raise TraceError("the function has no inputs to differentiate")
    folder, keep = run_folder(results)
    if cache:
        share_cache(folder)
    # The framework starts before the trace compiles anything: JAX reads where its
    # compiled programs are kept once, at its first compilation, and keeps that path
    # for the process, so it is given resolved (the per-user folder, not this run's
    # link to it, which goes with a temporary result).
    compiled = (folder / ".cache").resolve() / "compiled" if cache else None
    load(framework).start(None, compiled)
    try:
        node, untraced = tracer.trace(fn, names), ""
    except TraceError as exc:
        if reference is None:
            raise
        node, untraced = None, f"not traced ({exc}): the reference is the mpmath function given"
    data = check_case.case_data(
        fn,
        framework,
        node,
        names,
        inputs,
        orders,
        partials,
        dtypes,
        methods,
        modes,
        expect,
        tolerances,
        title,
    )
    if reference is not None:
        data = check_case.with_reference(data, reference)
        spec = data["reference"]
        user_reference(spec["registered"], reference, names, data["notes"])
    path = folder / "cases" / f"{check_case.case_id(fn)}.yaml"
    atomic_write_text(path, yaml.safe_dump(data, sort_keys=False, width=88))
    impl = data["implementations"][check_case.case_id(fn)]
    user_function(impl["registered"], framework, fn, names, impl["description"])
    config = load_config(None, {"setting": "full", "split": {"quick": [], "full": []}})
    try:
        prep = prepare(path, config)
    except CaseError as exc:
        raise CaseError(exc.problems) from None
    points = _points(prep)
    rules, note = {}, untraced
    if node is not None:
        verify(fn, framework, node, names, points)
        # The custom rule, if any, traced and verified at the same points; the case is
        # prepared again with it, for the causes to judge the rule exactly.
        rules, note = trace_rules(fn, framework, names, points)
    traced = Traced(node, names, framework, rules, note)
    if rules:
        trace = {"expression": traced.text, **traced.rule_texts()}
        user_function(impl["registered"], framework, fn, names, impl["description"], trace)
        prep = prepare(path, config)
    if note:
        warnings.warn(f"{check_case.case_id(fn)}: {note}", stacklevel=2)
    if progress is True:
        from harness.cli.output import Progress

        progress = Progress()
    run_stages(prep, folder, cache, progress or None, bisect)
    errors = folder / prep.case.id / "errors.parquet"
    collect_stage([errors], folder / "summary.parquet")
    result = CheckResult(
        traced,
        prep.case,
        data,
        read_table(errors),
        read_table(folder / "findings.parquet"),
        read_table(folder / "root_causes.parquet"),
        folder,
        keep,
    )
    if keep is not None:
        weakref.finalize(result, shutil.rmtree, str(folder), True)
    return result


def tracer_names(fn: Callable) -> list[str]:
    """The function's inputs: its parameters without a default."""
    from harness.backends.tracing import input_names

    return input_names(fn, None)
