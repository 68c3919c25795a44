"""The case selection the stage commands share (``run``, ``reference``, ``evaluate``,
``compare``): the case file and the narrowing options, checked and prepared into a
:class:`harness.stages.prepared.Prepared` before anything is written."""

from __future__ import annotations

import argparse
import sys

__all__ = [
    "add_selection",
    "check_selection",
    "csv_of",
    "each_case",
    "prepare_case",
    "study_json",
]


def csv_of(kind):
    def parse(text: str):
        items = [t.strip() for t in text.split(",") if t.strip()]
        return [kind(t) for t in items]

    return parse


def add_selection(p: argparse.ArgumentParser, many: bool = False) -> None:
    """The case file (with ``many``, one or more) and the narrowing options."""
    from harness.cases.schema import BACKENDS, DTYPES, METHODS, MODES

    if many:
        p.add_argument(
            "case",
            nargs="+",
            help="case files (cases/NAME.yaml), each in turn in this one process (the "
            "census's batches: a framework starts once for all of them)",
        )
    else:
        p.add_argument("case", help="the case file (cases/NAME.yaml)")
    p.add_argument(
        "--backends",
        type=csv_of(str),
        help=f"comma-separated subset of {','.join(BACKENDS)} (default: the study's, where "
        "installed)",
    )
    p.add_argument("--config", help="study configuration YAML (default: the built-in defaults)")
    p.add_argument("--results", default="results", help="results folder (default: results)")
    p.add_argument(
        "--dtypes", type=csv_of(str), help=f"comma-separated subset of {','.join(DTYPES)}"
    )
    p.add_argument(
        "--methods", type=csv_of(str), help=f"comma-separated subset of {','.join(METHODS)}"
    )
    p.add_argument("--modes", type=csv_of(str), help=f"comma-separated subset of {','.join(MODES)}")
    p.add_argument("--orders", type=csv_of(int), help="comma-separated orders, 0-4 (0: the value)")
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


def check_selection(args: argparse.Namespace) -> str | None:
    from harness.cases.schema import BACKENDS, DTYPES, MAX_ORDER, METHODS, MODES

    for name, allowed in (
        ("backends", BACKENDS),
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


def prepare_case(args: argparse.Namespace):
    """Validate selection, config and case before anything is written; None on failure."""
    from harness.cases.model import CaseError
    from harness.config import ConfigError, load_config
    from harness.stages.prepared import Selection, prepare

    problem = check_selection(args)
    if problem:
        print(f"harness {args.command}: {problem}", file=sys.stderr)
        return None
    try:
        overrides = study_json(args.study)
        if args.setting:
            overrides = {**(overrides or {}), "setting": args.setting}
        config = load_config(args.config, overrides)
        selection = Selection(
            args.dtypes, args.methods, args.modes, args.orders, args.points, args.backends
        )
        prep = prepare(args.case, config, selection)
    except (CaseError, ConfigError) as exc:
        print(exc, file=sys.stderr)
        return None
    except ValueError as exc:
        print(f"harness {args.command}: {exc}", file=sys.stderr)
        return None
    # Nothing asked is dropped without a word: what the settings leave out, and why.
    absent = [b for b in args.backends or () if b not in prep.backends]
    notes = [*prep.settings.left_out]
    if absent:
        notes.append(f"backends {', '.join(absent)}: not installed here (or not the case's)")
    for note in notes:
        print(f"harness {args.command}: {args.case}: left out: {note}", file=sys.stderr)
    empty = [k for k in ("dtypes", "methods", "modes") if not getattr(prep.settings, k)]
    if not prep.backends:
        empty.append("installed back ends")
    if empty or not (not prep.case.sampled or prep.case.partials):
        what = ", ".join(empty) or "orders"
        print(
            f"harness {args.command}: nothing to run: the selection leaves no {what} "
            f"for {args.case}",
            file=sys.stderr,
        )
        return None
    return prep


def study_json(text: str | None) -> dict | None:
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


def each_case(command):
    """``command`` run for each of the case files given, in this process: the worst exit
    status of them all. A case that fails says so and the next one runs; what the others
    wrote stays."""

    def run(args: argparse.Namespace) -> int:
        if isinstance(args.case, str):
            return command(args)
        worst = 0
        for path in args.case:
            one = argparse.Namespace(**{**vars(args), "case": path})
            try:
                status = command(one)
            except Exception as exc:  # noqa: BLE001 - one case's crash; the others still run
                print(
                    f"harness {args.command}: {path}: {type(exc).__name__}: {exc}", file=sys.stderr
                )
                status = 1
            worst = max(worst, status)
        return worst

    return run
