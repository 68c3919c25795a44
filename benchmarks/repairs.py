"""Repairs of the default study's cases (issue 59's done-means), and how long each took.

For each (case, implementation): the original's judged values right, the best repair's
(or none), whether it is right everywhere, the seconds of the search, proof and ranking,
and each saturation's end. With ``--causes results/root_causes.parquet``: every
implementation a formula or rule root cause names (the ``repairs`` target's list),
counted as repaired everywhere, improved or not repaired.

    python benchmarks/repairs.py --backends torch            # the five of the issue
    python benchmarks/repairs.py --backends torch --causes results/root_causes.parquet

The study's own settings (quick: the cases' quick dtypes and orders) unless ``--dtypes``
narrows them.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

#: The issue's five: the ratio's explicit square, the naive softplus, the documented
#: custom gradient, the published nested rule, the logistic solution's exponential form.
PAIRS = (
    ("ratio", "explicit_square"),
    ("softplus", "naive"),
    ("softplus", "doc_custom_gradient"),
    ("nested_softplus", "seed004_rule"),
    ("logistic", "exponential_form"),
)


def main() -> int:
    from harness.repair.prove import named_by_causes, repair
    from harness.stages.prepared import Selection

    p = argparse.ArgumentParser()
    p.add_argument("--backends", nargs="+")
    p.add_argument("--dtypes", nargs="+")
    p.add_argument("--causes", help="every formula and rule root cause's implementations")
    p.add_argument("--per-part", type=int, default=6)
    args = p.parse_args()
    pairs = list(PAIRS)
    if args.causes:
        cases = sorted({c for c, _ in pairs} | {p.stem for p in (ROOT / "cases").glob("*.yaml")})
        from harness.cases.load import load_case

        def rewritable(case: str, impl: str) -> bool:
            loaded = load_case(ROOT / "cases" / f"{case}.yaml")
            if not hasattr(loaded, "implementation"):  # an experiment's case
                return False
            found = loaded.implementation(impl)
            return not found.registered and found.expression is not None

        pairs = [(c, i) for c in cases for i in named_by_causes(args.causes, c) if rewritable(c, i)]
    selection = Selection(backends=args.backends, dtypes=args.dtypes)
    print("| case | implementation | before | best | after | everywhere | s |")
    print("|---|---|---|---|---|---|---|")
    counts = {"everywhere": 0, "improved": 0, "none": 0}
    for case, impl in pairs:
        start = time.perf_counter()
        try:
            found = repair(ROOT / "cases" / f"{case}.yaml", impl, selection=selection,
                           per_part=args.per_part)  # fmt: skip
        except Exception as exc:  # noqa: BLE001 - said, the next one goes on
            print(f"| {case} | {impl} | error: {exc} | | | | |")
            continue
        seconds = time.perf_counter() - start
        o, b = found.original, found.best
        kind = "none" if b is None else "everywhere" if b.everywhere else "improved"
        counts[kind] += 1
        best = "" if b is None else f"{b.part}: `{b.form}`"
        after = "" if b is None else f"{b.right}/{b.judged}"
        print(
            f"| {case} | {impl} | {o.right}/{o.judged} | {best} | {after} | "
            f"{kind} | {seconds:.1f} |"
        )
        for part, search in found.search.searches.items():
            print(
                f"|  | {part} | {search.iterations} iterations, {search.nodes} e-nodes, "
                f"{search.seconds:.2f} s, {search.stopped} | | | | |",
                file=sys.stderr,
            )
    print(f"\n{counts}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
