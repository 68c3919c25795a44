"""The run behind ``harness.check`` (:func:`run_check`): the user's function traced
(:mod:`harness.api.trace`), its trace verified at the sweep's points, the case
:mod:`harness.api.case` writes run through the study's own stages
(:func:`harness.stages.run.run_stages`, then the root causes of
:func:`harness.stages.collect.collect_stage`). Its tables go to ``results`` (a temporary
folder by default), the reference and JAX's compiled programs to the per-user cache
(:func:`harness.stages.folders.user_cache`). :mod:`harness.api.check` reads them into
its result; the repair's check of its own code (:mod:`harness.repair.code`) reads the
rows alone."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd
import yaml

from harness.api import case as check_case
from harness.api.trace import Traced, trace_rules, tracer_of, verify
from harness.backends.interface import TraceError
from harness.stages.folders import run_folder, share_cache

__all__ = ["Run", "run_check", "tracer_names"]


@dataclass
class Run:
    """A check's run: the ``traced`` function, the ``case`` it ran as (and its ``data``),
    the folder of its tables (``results``; ``keep``: the temporary folder's handle, or
    ``None`` where the caller named the folder)."""

    traced: Traced
    case: object
    data: dict
    results: Path
    keep: object = field(default=None, repr=False)

    @property
    def errors(self) -> Path:
        return self.results / self.case.id / "errors.parquet"


def _points(prep) -> list:
    """Every point of the case as float64 columns (each dtype's points, one after the
    other): where the trace is verified."""
    frames = [f for f in prep.points.values() if len(f)]
    names = prep.case.input_names
    both = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=names)
    return [both[n].to_numpy(dtype="float64") for n in names]


def run_check(
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
) -> Run:
    """:func:`harness.api.check.check`'s run, with its arguments (documented there): the
    :class:`Run` whose folder holds the errors, findings and root causes."""
    from harness.backends.catalogue import load
    from harness.cases.model import CaseError
    from harness.config import load_config
    from harness.registered.register import user_function, user_reference
    from harness.results import atomic_write_text
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
        warnings.warn(f"{check_case.case_id(fn)}: {note}", stacklevel=3)
    if progress is True:
        from harness.cli.output import Progress

        progress = Progress()
    run_stages(prep, folder, cache, progress or None, bisect)
    errors = folder / prep.case.id / "errors.parquet"
    collect_stage([errors], folder / "summary.parquet")
    return Run(traced, prep.case, data, folder, keep)


def tracer_names(fn: Callable) -> list[str]:
    """The function's inputs: its parameters without a default."""
    from harness.backends.tracing import input_names

    return input_names(fn, None)
