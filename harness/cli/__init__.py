"""The ``harness`` command line (the probe, root-cause and census commands beside it).
Fast commands (``validate``, ``schema``, ``reference``, ``compare``) import no framework;
``evaluate`` imports the back end it evaluates in (``--backend``), ``run`` each of the
study's back ends in turn, once per process."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from harness.backends import crashes
from harness.cli.causes import add_cause_commands
from harness.cli.census import add_census_commands
from harness.cli.check import add_check_commands
from harness.cli.output import EXIT_INVALID, Progress, print_summary, run_diff
from harness.cli.probe import add_probe_commands
from harness.cli.repair import add_repair_commands
from harness.cli.selection import add_selection, each_case, prepare_case

__all__ = ["EXIT_INVALID", "main"]


def _cmd_validate(args: argparse.Namespace) -> int:
    from harness.cases.load import validate_paths

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


def _cmd_implementations(args: argparse.Namespace) -> int:
    """What a case may name: registered implementations and references (``registered:``)
    and experiments (``experiment:``), with what each is."""
    import textwrap

    from harness.experiments import catalogue as experiments
    from harness.registered import catalogue as registry

    sections = [
        ("implementations (implementations.NAME.registered)", registry.names(), registry.get),
        ("references (reference.registered)", registry.reference_names(), registry.get_reference),
    ]
    for title, names, get in sections:
        print(f"{title}:")
        for name in names:
            entry = get(name)
            print(f"  {name}  (inputs: {', '.join(entry.inputs)})")
            print(textwrap.indent(textwrap.fill(entry.description, 84), "      "))
        if not names:
            print("  (none)")
    print("experiments (experiment: NAME):")
    for name in experiments.names():
        exp = experiments.get(name)
        print(f"  {name}  (quantities: {', '.join(exp.quantities)})")
        print(textwrap.indent(textwrap.fill(exp.description, 84), "      "))
    return 0


def _cmd_schema(args: argparse.Namespace) -> int:
    from harness.cases.published_schema import schema_json

    sys.stdout.write(schema_json())
    return 0


def _cmd_collect(args: argparse.Namespace) -> int:
    from harness.stages.collect import ProvenanceMismatch, collect_stage

    results = Path(args.results)
    files = args.errors or sorted(results.glob("*/errors.parquet"))
    if not files:
        print(f"harness collect: no errors tables given and none in {results}/*/", file=sys.stderr)
        return EXIT_INVALID
    # Outputs follow --results (or --out): never another study's folder.
    out = Path(args.out) if args.out else results / "summary.parquet"
    try:
        print(collect_stage(files, out))
    except ProvenanceMismatch as exc:
        print(f"harness collect: {exc}", file=sys.stderr)
        return EXIT_INVALID
    return 0


def _cmd_report(args: argparse.Namespace) -> int:
    from harness.stages.report import render_case, render_reports, render_study_pages

    if args.repairs:
        from harness.report.repairs_page import read_repairs, repairs_page
        from harness.results import atomic_write_text

        tables, codes = read_repairs(args.results)
        out = Path(args.reports) / "repairs.html"
        atomic_write_text(out, repairs_page(tables, codes))
        print(f"1 page -> {out} ({len(tables)} cases)")
        return 0
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
    if args.index_only or args.frameworks_only:
        page = "index" if args.index_only else "frameworks"
        written = render_study_pages(args.results, args.reports, args.cases, pages=(page,))
        print(f"{len(written)} page -> {', '.join(str(p) for p in written)}")
        return 0
    written = render_reports(args.results, args.reports, args.cases)
    print(f"{len(written)} page(s) -> {args.reports}/index.html")
    return 0


def _cmd_reference(args: argparse.Namespace) -> int:
    from harness.stages.reference import reference_stage

    prep = prepare_case(args)
    if prep is None:
        return EXIT_INVALID
    table, meta = reference_stage(prep, args.results, not args.no_cache, Progress())
    counts = meta["reference_counts"]
    certified = (
        f", {counts['certified']} certified by Arb balls of {counts['rows'] - counts['undefined']}"
        f" with a value, {counts.get('cross_checked', 0)} cross-checked by mpmath"
        if "certified" in counts
        else ""
    )
    print(
        f"{prep.case.id}: {len(table)} reference values ({int(table['reliable'].sum())} "
        f"verified{certified}); {counts['computed']} points computed, {counts['cached']} "
        "from cache"
    )
    return 0


def _cmd_evaluate(args: argparse.Namespace) -> int:
    from harness.stages.evaluate import compilation_cache, evaluate_stage

    prep = prepare_case(args)
    if prep is None:
        return EXIT_INVALID
    from harness.backends.catalogue import load

    for backend in prep.backends:
        try:
            # The framework starts here, with its threads and its compilation cache.
            load(backend).start(args.threads, compilation_cache(prep, args.results))
            table, meta = evaluate_stage(
                prep,
                args.results,
                Progress(),
                bisect=not args.no_bisect,
                backend=backend,
                piece=args.piece,
            )
        except ValueError as exc:
            print(f"harness evaluate: {exc}", file=sys.stderr)
            return EXIT_INVALID
        stats = [s or {} for s in meta["evaluation"].values()]
        seconds = sum(s.get("seconds", 0.0) for s in stats)
        traces = sum(s.get("traces", 0) for s in stats)
        pieces = "" if meta["pieces"] == ["all"] else f" ({', '.join(meta['pieces'])})"
        print(
            f"{prep.case.id} ({backend}{pieces}): {len(table)} values evaluated in "
            f"{seconds:.1f} s ({traces} traces)"
        )
    return 0


def _cmd_compare(args: argparse.Namespace) -> int:
    from harness.stages.compare import compare_stage

    prep = prepare_case(args)
    if prep is None:
        return EXIT_INVALID
    try:
        compare_stage(prep, args.results, keep=False)
    except (FileNotFoundError, ValueError) as exc:
        print(f"harness compare: {exc}", file=sys.stderr)
        return 1
    print_summary(prep, args.results, args.table)
    return 0


def _cmd_run(args: argparse.Namespace) -> int:
    from harness.stages.run import run_stages

    prep = prepare_case(args)
    if prep is None:
        return EXIT_INVALID
    run_stages(prep, args.results, not args.no_cache, Progress(), not args.no_bisect)
    print_summary(prep, args.results, args.table)
    return 0


def build_parser() -> argparse.ArgumentParser:
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

    p = sub.add_parser(
        "implementations",
        help="list the registered implementations, references and experiments a case may name",
    )
    p.set_defaults(func=_cmd_implementations)

    p = sub.add_parser("schema", help="print the case JSON Schema (cases/case.schema.json)")
    p.set_defaults(func=_cmd_schema)

    p = sub.add_parser("run", help="one case end to end: reference, evaluate, compare")
    add_selection(p)
    p.add_argument("--no-cache", action="store_true", help="recompute every reference value")
    p.add_argument(
        "--no-bisect",
        action="store_true",
        help="skip finding the exact edges of each outcome (findings keep sweep points)",
    )
    p.add_argument("--table", action="store_true", help="also print every combination's counts")
    p.set_defaults(func=_cmd_run)

    p = sub.add_parser("reference", help="the mpmath reference of cases (no framework)")
    add_selection(p, many=True)
    p.add_argument("--no-cache", action="store_true", help="recompute every reference value")
    p.set_defaults(func=each_case(_cmd_reference))

    p = sub.add_parser(
        "evaluate", help="the derivatives of cases in each back end (--backends: which)"
    )
    add_selection(p, many=True)
    p.add_argument(
        "--no-bisect",
        action="store_true",
        help="skip finding the exact edges of each outcome (findings keep sweep points)",
    )
    p.add_argument(
        "--threads",
        type=int,
        help="the framework's threads (TensorFlow: intra- and inter-op; default 1, so a "
        "rerun gives bitwise the same values)",
    )
    p.add_argument(
        "--piece",
        help="evaluate only this piece (all, DTYPE or DTYPE.METHOD, as the study's `split` "
        "setting cuts it; default: every piece)",
    )
    p.set_defaults(func=each_case(_cmd_evaluate))

    p = sub.add_parser("compare", help="judge cases' evaluations against the reference")
    add_selection(p, many=True)
    p.add_argument("--table", action="store_true", help="also print every combination's counts")
    p.set_defaults(func=each_case(_cmd_compare))

    add_probe_commands(sub)
    add_cause_commands(sub)
    add_census_commands(sub)
    add_check_commands(sub)
    add_repair_commands(sub)

    p = sub.add_parser("collect", help="summarise every case's errors table")
    p.add_argument("errors", nargs="*", help="errors tables (default: RESULTS/*/errors.parquet)")
    p.add_argument("--results", default="results", help="results folder (default: results)")
    p.add_argument(
        "--out",
        help="summary Parquet path (default: RESULTS/summary.parquet); the CSV, the "
        "findings and their provenance sidecars go beside it",
    )
    p.set_defaults(func=_cmd_collect)

    p = sub.add_parser(
        "diff",
        help="what differs between two result sets (two versions, or two back ends); "
        "exit 1 when they differ",
    )
    p.add_argument("a", help="a results folder (A)")
    p.add_argument("b", help="another results folder (B; the same folder with --backend-*)")
    p.add_argument("--backend-a", help="compare only this back end of A ...")
    p.add_argument("--backend-b", help="... with this back end of B (matched without it)")
    p.add_argument("--html", help="also write the differences as an HTML page here")
    p.add_argument("--limit", type=int, default=40, help="rows printed (default 40)")
    p.set_defaults(func=run_diff)

    p = sub.add_parser("report", help="render reports/ (HTML) from results/")
    p.add_argument("--results", default="results", help="results folder (default: results)")
    p.add_argument("--reports", default="reports", help="reports folder (default: reports)")
    p.add_argument("--cases", default="cases", help="case files, for titles and broken cases")
    which = p.add_mutually_exclusive_group()
    which.add_argument("--case", metavar="ID", help="render only reports/ID.html")
    which.add_argument("--index-only", action="store_true", help="render only reports/index.html")
    which.add_argument(
        "--repairs",
        action="store_true",
        help="render only reports/repairs.html (results/repairs/, the repairs target)",
    )
    which.add_argument(
        "--frameworks-only",
        action="store_true",
        help="render only reports/frameworks.html (the frameworks side by side)",
    )
    p.set_defaults(func=_cmd_report)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    words = list(sys.argv[1:] if argv is None else argv)
    if words and words[0] in crashes.SUPERVISED and crashes.ENV not in os.environ:
        # The work in a child process, again after a framework kills it (the crash is
        # the rows of what it was computing): harness.backends.crashes. The child parses
        # the arguments (a bad one exits 2 there, and so here); this process imports
        # nothing more (pandas alone is 0.6 s of every evaluation job).
        return crashes.supervise(words)
    from harness.results import ResultsError

    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except ResultsError as exc:
        # A corrupted or foreign table, a read-only folder, a full disk: one line.
        print(f"harness {args.command}: {exc}", file=sys.stderr)
        return 1
    except BrokenPipeError:  # the output's reader went away (| head)
        sys.stderr.close()
        return 0
