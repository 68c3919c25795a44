"""``harness repair CASE [IMPLEMENTATION ...]``: each implementation's candidate
repairs (:mod:`harness.repair`) judged by the study's stages and ranked, printed as a
table; ``--into NEW.yaml`` writes a copy of the case with the best repair added as
``IMPLEMENTATION_repaired``, so that ``harness run NEW.yaml`` proves it again; ``--code
DIR`` writes it as a module per framework (``IMPLEMENTATION_repaired_<framework>.py``),
each checked by ``harness.check`` against the judged values, bit for bit. Exit 0 when
every implementation asked got a repair (and its code computes what was judged), 1 when
one got none (or its code differs), 2 on bad input."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from harness.cli.output import EXIT_INVALID, Progress

__all__ = ["add_repair_commands"]


def _rewritable(case) -> list[str]:
    """The implementations a repair may rewrite: those written as expressions."""
    return [i.name for i in case.implementations if not i.registered and i.expression is not None]


def _cmd_repair(args: argparse.Namespace) -> int:
    import yaml

    from harness.cases.load import load_case
    from harness.cases.model import CaseError
    from harness.repair.prove import named_by_causes, repair
    from harness.results import atomic_write_text
    from harness.stages.prepared import Selection

    try:
        case = load_case(args.case)
    except CaseError as exc:
        print(exc, file=sys.stderr)
        return EXIT_INVALID
    if args.causes:
        names = [n for n in named_by_causes(args.causes, case.id) if n in _rewritable(case)]
    else:
        names = args.implementations or _rewritable(case)
    unknown = [n for n in names if n not in {i.name for i in case.implementations}]
    if unknown:
        print(f"{args.case}: no implementation {', '.join(unknown)}", file=sys.stderr)
        return EXIT_INVALID
    if args.into and len(names) != 1:
        print("--into takes one IMPLEMENTATION", file=sys.stderr)
        return EXIT_INVALID
    if args.code:
        Path(args.code).mkdir(parents=True, exist_ok=True)
    selection = Selection(
        dtypes=args.dtypes, methods=args.methods, modes=args.modes, backends=args.backends
    )
    limits = {"iterations": args.iterations, "max_nodes": args.max_nodes, "seconds": args.seconds}
    code, frames = 0, []
    for name in names:
        found = repair(
            args.case,
            name,
            selection=selection,
            results=Path(args.results) / name if args.results else None,
            per_part=args.per_part,
            progress=None if args.quiet else Progress(),
            symbolic=not args.no_symbolic,
            **limits,
        )
        print(f"\n{case.id}: {name} ({found.seconds:.1f} s)")
        for part, search in found.search.searches.items():
            print(
                f"  {part}: {search.iterations} iterations, {search.nodes} e-nodes, "
                f"{search.seconds:.2f} s, stopped by {search.stopped} (limits {search.limits})"
            )
        for why in found.search.skipped:
            print(f"  not searched: {why}")
        if not found.search.found:
            print("  no candidate: the saturation found no other form")
        print(found.table())
        frames.append(found.frame())
        best = found.best
        if best is None:
            print(f"no repair of {name}: no candidate is right wherever it was right and better")
            code = 1
            continue
        print(f"best: {best.name} ({best.part}: {best.form})")
        if args.into:
            data = yaml.safe_load(Path(args.case).read_text(encoding="utf-8"))
            text = yaml.safe_dump(found.case_with_repair(data), sort_keys=False, width=88)
            atomic_write_text(args.into, text)
            print(f"wrote {args.into} with {name}_repaired")
        if args.code and not _write_code(found, Path(args.code)):
            code = 1
    if args.table:
        _write_table(frames, args.table, case.id, limits)
        print(f"wrote {args.table} ({len(names)} implementations)")
        return 0  # the table says which got a repair
    return code


def _write_table(frames, path: str, case: str, limits: dict) -> None:
    import pandas as pd

    from harness.provenance import collect
    from harness.results import write_table

    columns = ["case", "implementation", "candidate", "kind", "judged", "right"]
    table = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=columns)
    write_table(table, path, collect(stage="repair", case=case, limits=limits))


def _write_code(found, folder: Path) -> bool:
    """The best repair of ``found`` as a module per framework in ``folder``, each checked
    bit for bit; ``False`` where one computes anything else."""
    from harness.backends.catalogue import TITLES
    from harness.results import atomic_write_text

    same = True
    for fw in found.frameworks:
        text = found.code(fw)
        if text is None:
            print(f"  {TITLES[fw]}: no code (the framework has no place for its rules)")
            continue
        path = folder / f"{found.implementation}_repaired_{fw}.py"
        atomic_write_text(path, text)
        checked = found.check_code(fw)
        if checked.same:
            verdict = f"checked by harness.check: {checked.compared} values bit for bit as judged"
        else:
            same = False
            verdict = (
                f"NOT the judged values: {checked.differ} of {checked.compared} differ, "
                f"{checked.missing} not computed; {checked.first}"
            )
        print(f"  wrote {path} ({TITLES[fw]}), {verdict}")
    return same


def add_repair_commands(sub) -> None:
    p = sub.add_parser(
        "repair",
        help="find, judge and rank stable rewrites of a case's failing implementations",
    )
    p.add_argument("case", help="the case file")
    p.add_argument("implementations", nargs="*", help="default: every expression implementation")
    p.add_argument("--into", help="write the case with the best repair added here")
    p.add_argument(
        "--causes",
        metavar="ROOT_CAUSES",
        help="repair the implementations this root-cause table's formula and rule causes name",
    )
    p.add_argument(
        "--table", metavar="OUT", help="write every alternative, judged, to this parquet table"
    )
    p.add_argument(
        "--code", metavar="DIR", help="write the best repair as a module per framework here"
    )
    p.add_argument("--results", help="keep the proof's tables here (default: a temporary folder)")
    p.add_argument("--backends", nargs="+", help="back ends (default: the case's)")
    p.add_argument("--dtypes", nargs="+")
    p.add_argument("--methods", nargs="+")
    p.add_argument("--modes", nargs="+")
    p.add_argument("--per-part", type=int, default=6, help="candidates per rewritten part")
    p.add_argument("--iterations", type=int, default=8, help="saturation iterations")
    p.add_argument("--max-nodes", type=int, default=20000, help="e-nodes at most")
    p.add_argument("--seconds", type=float, default=10.0, help="seconds of saturation at most")
    p.add_argument(
        "--no-symbolic",
        action="store_true",
        help="rewrites only: no custom rules from the function's own derivative",
    )
    p.add_argument("-q", "--quiet", action="store_true", help="no progress lines")
    p.set_defaults(func=_cmd_repair)
