"""The page of ``harness diff``: what differs between two result sets
(:mod:`harness.judge.diff`)."""

from __future__ import annotations

from harness.judge.diff import ResultsDiff
from harness.report.html import e, page, table

__all__ = ["diff_page"]


def diff_page(diff: ResultsDiff, a: str, b: str, limit: int = 2000) -> str:
    """The whole page: counts, then the changed rows (first ``limit``), stable domains
    and findings."""
    c = diff.compared
    head = (
        f"<h1>Differences: {e(a)} → {e(b)}</h1>"
        f"<p>{c['cases']} case(s); {c['rows_a']:,} values in A, {c['rows_b']:,} in B; "
        f"<b>{c['outcome_changed']:,}</b> with another outcome, "
        f"{c['value_changed_same_outcome']:,} with another value and the same outcome; "
        f"{len(diff.domains)} stable domain(s) and {len(diff.findings)} finding(s) differ.</p>"
    )
    if diff.setting:
        head += (
            "<p>Made with another "
            + "; ".join(
                f"{e(fact)} (A: {e(was)}, B: {e(now)})" for fact, (was, now) in diff.setting.items()
            )
            + ".</p>"
        )
    if diff.empty:
        return page("harness diff", head + "<p>No differences.</p>")
    rows = diff.rows.head(limit)
    more = (
        f'<p class="muted">{len(diff.rows) - limit:,} more rows not shown.</p>'
        if len(diff.rows) > limit
        else ""
    )
    body = (
        head
        + "<h2>Values whose outcome differs</h2>"
        + (table(rows, ["value_a", "value_b"]) if not rows.empty else "<p>None.</p>")
        + more
        + "<h2>Stable domains that differ</h2>"
        + (table(diff.domains) if not diff.domains.empty else "<p>None.</p>")
        + "<h2>Findings on one side only</h2>"
        + (table(diff.findings) if not diff.findings.empty else "<p>None.</p>")
    )
    return page("harness diff", body)
