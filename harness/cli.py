"""The ``harness`` command line: validate, schema, reference, evaluate, compare, run.

Fast commands (``validate``, ``schema``, ``reference``) never import TensorFlow; only
``evaluate`` and ``run`` do, once per process.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

__all__ = ["main"]

EXIT_INVALID = 2


def _cmd_validate(args: argparse.Namespace) -> int:
    from .cases import validate_paths

    paths = args.cases or sorted(Path("cases").glob("*.yaml"))
    if not paths:
        print("harness validate: no case files given and none in cases/", file=sys.stderr)
        return EXIT_INVALID
    cases, problems = validate_paths(paths)
    for p in problems:
        print(p, file=sys.stderr)
    if problems:
        files = len({p.file for p in problems})
        print(f"{len(problems)} problem(s) in {files} file(s)", file=sys.stderr)
        return EXIT_INVALID
    if not args.quiet:
        print(f"{len(cases)} case file(s) valid")
    return 0


def _cmd_schema(args: argparse.Namespace) -> int:
    from .case_schema import schema_json

    sys.stdout.write(schema_json())
    return 0


def _csv(kind):
    def parse(text: str):
        items = [t.strip() for t in text.split(",") if t.strip()]
        return [kind(t) for t in items]

    return parse


def _add_selection(p: argparse.ArgumentParser) -> None:
    from .case_schema import DTYPES, METHODS, MODES

    p.add_argument("case", help="the case file (cases/NAME.yaml)")
    p.add_argument("--config", help="study configuration YAML (default: the built-in defaults)")
    p.add_argument("--results", default="results", help="results folder (default: results)")
    p.add_argument("--dtypes", type=_csv(str), help=f"comma-separated subset of {','.join(DTYPES)}")
    p.add_argument(
        "--methods", type=_csv(str), help=f"comma-separated subset of {','.join(METHODS)}"
    )
    p.add_argument("--modes", type=_csv(str), help=f"comma-separated subset of {','.join(MODES)}")
    p.add_argument("--orders", type=_csv(int), help="comma-separated orders, 0-4 (0: the value)")
    p.add_argument(
        "--points", type=int, metavar="N", help="thin each swept input to at most N values"
    )
    p.add_argument(
        "--setting",
        choices=("quick", "full"),
        help="quick: what the default study runs (each case's quick block); full: everything "
        "(default: the config's setting)",
    )
    p.add_argument(
        "--study",
        metavar="JSON",
        help="study settings as a JSON object, on top of --config (the workflow passes each "
        "stage its slice this way)",
    )


def _check_selection(args: argparse.Namespace) -> str | None:
    from .case_schema import DTYPES, MAX_ORDER, METHODS, MODES

    for name, allowed in (
        ("dtypes", DTYPES),
        ("methods", METHODS),
        ("modes", MODES),
        ("orders", range(MAX_ORDER + 1)),
    ):
        bad = [x for x in getattr(args, name) or [] if x not in allowed]
        if bad:
            return f"--{name}: unknown {', '.join(map(str, bad))}; choose from " + ", ".join(
                map(str, allowed)
            )
    if args.points is not None and args.points < 1:
        return "--points must be at least 1"
    return None


class _Progress:
    """``[stage] done/total`` on a terminal; silent when piped."""

    def __init__(self) -> None:
        self.enabled = sys.stderr.isatty()

    def __call__(self, stage: str, done: int, total: int) -> None:
        if self.enabled:
            end = "\n" if done == total else ""
            print(
                f"\r{stage}: {done}/{total} combinations"
                if stage == "evaluate"
                else f"\r{stage}: {done}/{total} points",
                end=end,
                file=sys.stderr,
                flush=True,
            )


def _prepare(args: argparse.Namespace):
    """Validate selection, config and case before anything is written; None on failure."""
    from .cases import CaseError
    from .config import ConfigError, load_config
    from .pipeline import Selection, prepare

    problem = _check_selection(args)
    if problem:
        print(f"harness {args.command}: {problem}", file=sys.stderr)
        return None
    try:
        overrides = _study_json(args.study)
        if args.setting:
            overrides = {**(overrides or {}), "setting": args.setting}
        config = load_config(args.config, overrides)
        selection = Selection(args.dtypes, args.methods, args.modes, args.orders, args.points)
        prep = prepare(args.case, config, selection)
    except (CaseError, ConfigError) as exc:
        print(exc, file=sys.stderr)
        return None
    except ValueError as exc:
        print(f"harness {args.command}: {exc}", file=sys.stderr)
        return None
    empty = [k for k in ("dtypes", "methods", "modes") if not getattr(prep.settings, k)]
    if empty or not (prep.is_experiment or prep.case.partials):
        what = ", ".join(empty) or "orders"
        print(
            f"harness {args.command}: nothing to run: the selection leaves no {what} "
            f"for {args.case}",
            file=sys.stderr,
        )
        return None
    return prep


def _study_json(text: str | None) -> dict | None:
    if not text:
        return None
    import json

    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"--study is not valid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise ValueError("--study must be a JSON object of study settings")
    return data


def _threads(n: int | None) -> None:
    if n:
        import tensorflow as tf

        tf.config.threading.set_intra_op_parallelism_threads(n)
        tf.config.threading.set_inter_op_parallelism_threads(n)


def _cmd_collect(args: argparse.Namespace) -> int:
    from .collect import ProvenanceMismatch, collect
    from .results import write_csv, write_table

    files = args.errors or sorted(Path(args.results).glob("*/errors.parquet"))
    if not files:
        print(
            f"harness collect: no errors tables given and none in {args.results}/*/",
            file=sys.stderr,
        )
        return EXIT_INVALID
    try:
        summary, meta = collect(files)
    except ProvenanceMismatch as exc:
        print(f"harness collect: {exc}", file=sys.stderr)
        return EXIT_INVALID
    out = Path(args.out)
    write_table(summary, out, meta)
    write_csv(summary.drop(columns=["stable_domain_json"]), out.with_suffix(".csv"), meta)
    print(f"{len(files)} case(s), {len(summary)} summary rows -> {out}, {out.with_suffix('.csv')}")
    return 0


def _cmd_report(args: argparse.Namespace) -> int:
    from .report import render_case, render_index, render_reports

    if args.case:
        errors = Path(args.results) / args.case / "errors.parquet"
        if not errors.exists():
            print(f"harness report: {errors} does not exist; run the case first", file=sys.stderr)
            return EXIT_INVALID
        print(f"1 page -> {render_case(args.case, args.results, args.reports, args.cases)}")
        return 0
    summary = Path(args.results) / "summary.parquet"
    if not summary.exists():
        print(
            f"harness report: {summary} does not exist; run `harness collect` first",
            file=sys.stderr,
        )
        return EXIT_INVALID
    if args.index_only:
        print(f"1 page -> {render_index(args.results, args.reports, args.cases)}")
        return 0
    written = render_reports(args.results, args.reports, args.cases)
    print(f"{len(written)} page(s) -> {args.reports}/index.html")
    return 0


def _cmd_reference(args: argparse.Namespace) -> int:
    from .pipeline import reference_stage

    prep = _prepare(args)
    if prep is None:
        return EXIT_INVALID
    table, meta = reference_stage(prep, args.results, not args.no_cache, _Progress())
    counts = meta["reference_counts"]
    print(
        f"{prep.case.id}: {len(table)} reference values ({int(table['reliable'].sum())} "
        f"verified); {counts['computed']} points computed, {counts['cached']} from cache"
    )
    return 0


def _cmd_evaluate(args: argparse.Namespace) -> int:
    from .pipeline import evaluate_stage

    prep = _prepare(args)
    if prep is None:
        return EXIT_INVALID
    _threads(args.threads)
    table, meta = evaluate_stage(prep, args.results, _Progress())
    print(
        f"{prep.case.id}: {len(table)} values evaluated in "
        f"{meta['evaluation']['seconds']:.1f} s ({meta['evaluation']['traces']} traces)"
    )
    return 0


def _print_summary(prep, errors) -> None:
    from .collect import summarise_case
    from .summary import format_summary

    summary = summarise_case(errors, list(prep.case.input_names), domains=False)
    print(format_summary(summary))
    counts = errors["outcome"].value_counts()
    total = ", ".join(f"{k} {v}" for k, v in counts.items() if v)
    broken = int((errors["expected"] == "broken").sum())
    print(
        f"\n{prep.case.id}: {len(errors)} values: {total}"
        + (f"; {broken} broke an expectation" if broken else "")
    )


def _cmd_compare(args: argparse.Namespace) -> int:
    from .pipeline import compare_stage

    prep = _prepare(args)
    if prep is None:
        return EXIT_INVALID
    try:
        errors = compare_stage(prep, args.results)
    except (FileNotFoundError, ValueError) as exc:
        print(f"harness compare: {exc}", file=sys.stderr)
        return 1
    _print_summary(prep, errors)
    return 0


def _cmd_trace(args: argparse.Namespace) -> int:
    from .cases import CaseError, load_case

    try:
        case = load_case(args.case)
    except CaseError as exc:
        print(exc, file=sys.stderr)
        return EXIT_INVALID
    point = {}
    for item in args.at:
        name, _, value = item.partition("=")
        try:
            point[name.strip()] = float(value)
        except ValueError:
            print(f"harness trace: --at {item!r}: expected NAME=NUMBER", file=sys.stderr)
            return EXIT_INVALID
    unknown = sorted(set(point) - set(case.input_names))
    if unknown:
        print(
            f"harness trace: --at: {case.id} has no input {unknown[0]!r}; inputs: "
            + ", ".join(case.input_names),
            file=sys.stderr,
        )
        return EXIT_INVALID
    from .gradient_trace import trace_gradients  # TensorFlow starts here

    try:
        trace = trace_gradients(case, args.implementation, point, args.dtype)
    except KeyError as exc:
        print(f"harness trace: {exc.args[0]}", file=sys.stderr)
        return EXIT_INVALID
    for call in trace.calls:
        inputs = " ".join(f"{k}={_scalar(v)}" for k, v in call.inputs.items())
        out = " ".join(f"d{k}={_scalar(v)}" for k, v in call.downstream.items())
        print(f"{call.function}: {inputs}  upstream={_scalar(call.upstream)}  downstream: {out}")
    if not trace.calls:
        print("(no custom gradient was called)")
    print("gradient: " + " ".join(f"d/d{k}={v}" for k, v in trace.gradient.items()))
    return 0


def _scalar(value) -> str:
    import numpy as np

    if value is None:
        return "None"
    return f"{np.asarray(value).reshape(-1)[0]:.9g}"


def _cmd_run(args: argparse.Namespace) -> int:
    from .pipeline import run_stages

    prep = _prepare(args)
    if prep is None:
        return EXIT_INVALID
    errors = run_stages(prep, args.results, not args.no_cache, _Progress())
    _print_summary(prep, errors)
    return 0


def build_parser() -> argparse.ArgumentParser:
    from .case_schema import DTYPES

    parser = argparse.ArgumentParser(
        prog="harness",
        description="Differential testing of higher-order derivatives against an mpmath reference.",
    )
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser(
        "validate", help="check case files; every problem as file:line: key: message"
    )
    p.add_argument("cases", nargs="*", help="case files (default: cases/*.yaml)")
    p.add_argument("-q", "--quiet", action="store_true", help="print nothing when valid")
    p.set_defaults(func=_cmd_validate)

    p = sub.add_parser("schema", help="print the case JSON Schema (cases/case.schema.json)")
    p.set_defaults(func=_cmd_schema)

    p = sub.add_parser("run", help="one case end to end: reference, evaluate, compare")
    _add_selection(p)
    p.add_argument("--no-cache", action="store_true", help="recompute every reference value")
    p.set_defaults(func=_cmd_run)

    p = sub.add_parser("reference", help="the mpmath reference of one case (no TensorFlow)")
    _add_selection(p)
    p.add_argument("--no-cache", action="store_true", help="recompute every reference value")
    p.set_defaults(func=_cmd_reference)

    p = sub.add_parser("evaluate", help="the TensorFlow derivatives of one case")
    _add_selection(p)
    p.add_argument("--threads", type=int, help="TensorFlow intra- and inter-op threads")
    p.set_defaults(func=_cmd_evaluate)

    p = sub.add_parser("compare", help="judge evaluations against the reference")
    _add_selection(p)
    p.set_defaults(func=_cmd_compare)

    p = sub.add_parser(
        "trace",
        help="the upstream gradient each custom gradient receives, at one point (seed 003)",
    )
    p.add_argument("case", help="the case file (cases/NAME.yaml)")
    p.add_argument("implementation", help="one of the case's implementations")
    p.add_argument("--at", nargs="+", required=True, metavar="NAME=VALUE", help="the point")
    p.add_argument("--dtype", default="float32", choices=DTYPES)
    p.set_defaults(func=_cmd_trace)

    p = sub.add_parser("collect", help="summarise every case's errors table")
    p.add_argument("errors", nargs="*", help="errors tables (default: RESULTS/*/errors.parquet)")
    p.add_argument("--results", default="results", help="results folder (default: results)")
    p.add_argument(
        "--out",
        default="results/summary.parquet",
        help="summary Parquet path; the CSV goes beside it",
    )
    p.set_defaults(func=_cmd_collect)

    p = sub.add_parser("report", help="render reports/ (HTML) from results/")
    p.add_argument("--results", default="results", help="results folder (default: results)")
    p.add_argument("--reports", default="reports", help="reports folder (default: reports)")
    p.add_argument("--cases", default="cases", help="case files, for titles and broken cases")
    which = p.add_mutually_exclusive_group()
    which.add_argument("--case", metavar="ID", help="render only reports/ID.html")
    which.add_argument("--index-only", action="store_true", help="render only reports/index.html")
    p.set_defaults(func=_cmd_report)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return int(args.func(args) or 0)
