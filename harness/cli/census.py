"""``harness census-cases`` (the census's case files from the operator table) and
``harness census`` (its atlas: the table and ``reports/census.html``)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from harness.cli.output import EXIT_INVALID

__all__ = ["add_census_commands"]


def _cmd_cases(args: argparse.Namespace) -> int:
    from harness.cases.schema import DTYPES
    from harness.census.cases import chosen_kernels, write_cases

    unknown = [d for d in args.dtypes if d not in DTYPES]
    if unknown or not args.dtypes or args.per_sign < 4:
        what = f"unknown dtype {unknown[0]!r}" if unknown else "--per-sign must be at least 4"
        print(f"harness census-cases: {what if args.dtypes else 'no dtypes'}", file=sys.stderr)
        return EXIT_INVALID
    try:
        kernels = chosen_kernels(args.kernels)
    except ValueError as exc:
        print(f"harness census-cases: --kernels: {exc}", file=sys.stderr)
        return EXIT_INVALID
    paths = write_cases(args.out, args.dtypes, args.per_sign, kernels)
    print(f"{len(paths)} census case files in {args.out}")
    return 0


def _cmd_thresholds(args: argparse.Namespace) -> int:
    from harness.cases.schema import DTYPES
    from harness.census.thresholds import TABLE, write_table
    from harness.operators import OPERATORS

    found = write_table(OPERATORS, DTYPES, Path(args.out) if args.out else TABLE)
    count = sum(len(v) for per in found.values() for v in per.values())
    print(
        f"{count} thresholds of {len(next(iter(found.values())))} operators in {len(found)} dtypes"
    )
    return 0


def _cmd_atlas(args: argparse.Namespace) -> int:
    from harness.results import ResultsError
    from harness.stages.census import write_atlas

    try:
        study = Path(args.study) if args.study else None
        table = write_atlas(Path(args.results), Path(args.cases), Path(args.reports), study)
    except (ResultsError, FileNotFoundError) as exc:
        print(f"harness census: {exc}", file=sys.stderr)
        return EXIT_INVALID
    kernels = table["operator"].nunique() if len(table) else 0
    print(f"census: {kernels} kernels, {len(table)} rows -> {args.reports}/census.html")
    return 0


def add_census_commands(sub) -> None:
    from harness.cases.schema import DTYPES

    p = sub.add_parser(
        "census-cases", help="write the kernel census's case files from the operator table"
    )
    p.add_argument("--out", default="census/cases")
    p.add_argument(
        "--dtypes",
        type=lambda s: [d for d in s.split(",") if d],
        default=list(DTYPES),
        help=f"comma-separated subset of {','.join(DTYPES)}",
    )
    p.add_argument(
        "--per-sign", type=int, default=48, help="log-spaced magnitudes per sign and dtype"
    )
    p.add_argument(
        "--kernels",
        default=None,
        help="comma-separated operators (default: every one the census checks)",
    )
    p.set_defaults(func=_cmd_cases)

    p = sub.add_parser(
        "census-thresholds",
        help="compute where each kernel's value and derivatives cross the dtypes' limits "
        "(the table the census's case files sample)",
    )
    p.add_argument("--out", default=None, help="default: harness/census/thresholds.json")
    p.set_defaults(func=_cmd_thresholds)

    p = sub.add_parser("census", help="the census's atlas from its results (table and page)")
    p.add_argument("--results", default="results/census")
    p.add_argument("--cases", default="census/cases")
    p.add_argument("--reports", default="reports")
    p.add_argument(
        "--study",
        default=None,
        help="the study's results folder: its root causes shared with the census are named",
    )
    p.set_defaults(func=_cmd_atlas)
