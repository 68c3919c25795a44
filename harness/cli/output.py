"""What the ``harness`` commands print while and after they work: progress, a case's
findings and counts, and ``harness diff``'s differences."""

from __future__ import annotations

import sys
from pathlib import Path

__all__ = ["EXIT_INVALID", "Progress", "no_findings", "print_summary", "run_diff"]

#: The exit status of every refused input (a case, a point, an option, a file).
EXIT_INVALID = 2


class Progress:
    """Progress while a stage works: a bar redrawn in place on a terminal; plain lines
    (at most one per tenth of the work) when the output is a log file."""

    def __init__(self, stream=None) -> None:
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty()
        self.shown: dict[str, int] = {}

    def __call__(self, stage: str, done: int, total: int) -> None:
        what = "combinations" if stage.startswith("evaluate") else "points"
        if self.tty:
            filled = int(24 * done / max(total, 1))
            bar = "#" * filled + "." * (24 - filled)
            end = "\n" if done == total else ""
            print(
                f"\r{stage:9} [{bar}] {done}/{total} {what}", end=end, file=self.stream, flush=True
            )
            return
        tenth = 10 * done // max(total, 1)
        if done == total or tenth > self.shown.get(stage, -1):
            self.shown[stage] = tenth
            print(f"{stage}: {done}/{total} {what}", file=self.stream, flush=True)

    def verdicts(self, backend: str, method: str, dtype: str, rows) -> None:
        """One line per mode as soon as a (method, dtype) is judged, before the case is
        done: how many of its values each outcome has (the sweep's points; the compare
        stage's table adds the edges' and states the findings)."""
        from harness.judge.compare import OUTCOMES

        if self.tty:
            print("\r\033[K", end="", file=self.stream)
        for mode, g in rows.groupby("mode", sort=False, observed=True):
            counts = g["outcome"].astype(str).value_counts()
            said = ", ".join(f"{int(counts[o])} {o}" for o in OUTCOMES if o in counts)
            print(f"judged {backend} {method} {mode} {dtype}: {said}", file=self.stream, flush=True)


def print_summary(prep, results: str | Path, table: bool = False) -> None:
    """The case's findings (unexpected first), a count of its values by outcome, and with
    ``table`` every combination's counts and worst point (from the tables the compare
    stage wrote beside ``errors.parquet``)."""
    import pandas as pd

    from harness.judge.case_tables import case_findings, case_summary
    from harness.judge.compare import OUTCOMES
    from harness.judge.findings_text import statements
    from harness.judge.summary import format_summary

    path = Path(results) / prep.case.id / "errors.parquet"
    summary = case_summary(path)
    if table:
        print(format_summary(summary) + "\n")
    stated = statements(case_findings(path), texts=20)
    if stated.empty:
        print(no_findings(prep.case.id, summary))
    else:
        unexpected = stated[stated["expected"] == "unexpected"]
        print(
            f"{prep.case.id}: {len(unexpected)} unexpected and "
            f"{len(stated) - len(unexpected)} expected findings"
        )
        for rank, text in enumerate(stated["text"].head(20), start=1):
            print(f"{rank:3}. {text}")
        if len(stated) > 20:
            print(f"     ... and {len(stated) - 20} more in {path.with_name('findings.parquet')}")
    counts = pd.Series({o: int(summary[o].sum()) for o in OUTCOMES}).sort_values(
        ascending=False, kind="stable"
    )
    total = ", ".join(f"{k} {v}" for k, v in counts.items() if v)
    broken = int(summary["expected_broken"].sum())
    print(
        f"\n{prep.case.id}: {int(summary['points'].sum())} values: {total}"
        + (f"; {broken} broke an expectation" if broken else "")
        + ("" if table else " (--table: every combination)")
    )


def no_findings(case_id: str, summary) -> str:
    """The line for a case without findings: only what was judged is called ok, and the
    values kept out of every verdict are counted apart, by why."""
    from harness.judge.compare import NOT_JUDGED

    aside = {o: int(summary[o].sum()) for o in NOT_JUDGED if o in summary}
    aside = {o: n for o, n in aside.items() if n}
    judged = int(summary["points"].sum()) - sum(aside.values())
    apart = ", ".join(f"{n} {o}" for o, n in aside.items())
    return f"{case_id}: no findings: the {judged} judged values are ok" + (
        f"; {apart} not judged." if apart else "."
    )


def run_diff(args) -> int:
    """Exit 0 when the two result sets agree, 1 when they differ (as diff(1))."""
    from harness.judge.diff import diff_results
    from harness.report.diff_page import diff_page
    from harness.results import atomic_write_text

    for folder in (args.a, args.b):
        if not list(Path(folder).glob("*/errors.parquet")):
            print(f"harness diff: no results/<case>/errors.parquet under {folder}", file=sys.stderr)
            return EXIT_INVALID
    diff = diff_results(args.a, args.b, args.backend_a, args.backend_b)
    c = diff.compared
    print(
        f"{c['cases']} case(s), {c['rows_a']} values in A and {c['rows_b']} in B: "
        f"{c['outcome_changed']} with another outcome, {c['value_changed_same_outcome']} "
        f"with another value only; {len(diff.domains)} stable domains and "
        f"{len(diff.findings)} findings differ"
    )
    for fact, (was, now) in diff.setting.items():
        print(f"made with another {fact}: A {was} | B {now}")
    if not diff.rows.empty:
        import pandas as pd

        with pd.option_context("display.width", 200, "display.max_columns", 20):
            print(diff.rows.head(args.limit).to_string(index=False))
        if len(diff.rows) > args.limit:
            print(f"... and {len(diff.rows) - args.limit} more rows (--html: all of them)")
    for side, text in diff.findings[["side", "text"]].head(args.limit).itertuples(index=False):
        print(f"only in {side.upper()}: {text}")
    if args.html:
        atomic_write_text(args.html, diff_page(diff, str(args.a), str(args.b)))
        print(f"1 page -> {args.html}")
    return 0 if diff.empty else 1
