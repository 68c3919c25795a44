"""Issue-57 page benchmark: every page of a report folder, its size and how long headless
Chromium (Debian's) takes to make it ready.

Usage: python benchmarks/pages.py [REPORTS=reports] [--rounds 3]

Per page: bytes on disk, elements in the DOM once loaded, and the median over the rounds
of the seconds from navigation to the load event (a fresh tab each time; every figure is
inline SVG, so the load event is when the page is drawn and can be used). Beside them, the
same for an empty page: the browser's own floor. Targets: every page <= 2 MB and ready in
<= 2 s.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"]
LIMIT_BYTES, LIMIT_SECONDS = 2_000_000, 2.0


def measure(browser, path: Path, rounds: int) -> tuple[float, int]:
    seconds, elements = [], 0
    for _ in range(rounds):
        tab = browser.new_page(viewport={"width": 1300, "height": 900})
        start = time.perf_counter()
        tab.goto(path.as_uri(), wait_until="load")
        seconds.append(time.perf_counter() - start)
        elements = tab.evaluate("document.getElementsByTagName('*').length")
        tab.close()
    return statistics.median(seconds), elements


def main() -> int:
    from playwright.sync_api import sync_playwright

    ap = argparse.ArgumentParser()
    ap.add_argument("reports", nargs="?", default="reports")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    pages = sorted(Path(args.reports).resolve().glob("*.html"))
    if not pages:
        print(f"no pages in {args.reports}", file=sys.stderr)
        return 2
    chromium = shutil.which("chromium") or "/usr/bin/chromium"
    failed = 0
    with tempfile.TemporaryDirectory() as where, sync_playwright() as p:
        empty = Path(where) / "empty.html"
        empty.write_text("<!DOCTYPE html><title>empty</title>")
        browser = p.chromium.launch(executable_path=chromium, args=FLAGS)
        floor, _ = measure(browser, empty, args.rounds)
        print(f"{'page':28s} {'bytes':>11s} {'elements':>9s} {'ready s':>8s}")
        print(f"{'(empty page)':28s} {0:>11,d} {'':>9s} {floor:8.3f}")
        for path in pages:
            ready, elements = measure(browser, path, args.rounds)
            size = path.stat().st_size
            over = size > LIMIT_BYTES or ready > LIMIT_SECONDS
            failed += over
            print(
                f"{path.name:28s} {size:>11,d} {elements:>9,d} {ready:8.3f}"
                + ("  OVER" if over else "")
            )
        browser.close()
    total = sum(p.stat().st_size for p in pages)
    print(f"{len(pages)} pages, {total:,d} bytes; {failed} over 2 MB or 2 s")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
