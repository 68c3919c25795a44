"""The root causes on the report pages (:mod:`harness.causes.roots`): framework bugs a
maintainer should hear about first (``kernel``, ``mode``, ``method``, ``framework``), then
problems in the cases' own code with the fix the study shows (``formula``, ``rule``),
then the platform's flush amplified into a failure (``platform``), then the expected ones; each with its scope, worst point, links to its findings on the
case pages and its reproducers (a standalone script per framework, the probe command).
Filters by framework, case, kind, outcome and dtype work in the page itself: a small
inline script, nothing fetched. The combinations a framework does not offer have their
own table."""

from __future__ import annotations

import json

import pandas as pd

from harness.backends.catalogue import TITLES
from harness.causes.classify import CASE_KINDS, FRAMEWORK_KINDS
from harness.causes.repro_words import probe_words, script_words
from harness.report.html import e
from harness.report.html import table as html_table

__all__ = ["FILTER_SCRIPT", "KIND_COLOURS", "root_causes_section", "unsupported_section"]

#: Each kind's colour (every kind of harness.causes.classify.KINDS but those tabled apart).
KIND_COLOURS = {
    "kernel": "#c62828",
    "mode": "#6a1b9a",
    "method": "#ef6c00",
    "framework": "#1565c0",
    "kink": "#00838f",
    "formula": "#2e7d32",
    "rule": "#8d6e63",
    "platform": "#546e7a",
}
_FILTERS = ("frameworks", "cases", "kind", "outcome", "dtypes")

#: Shows the root causes whose data attributes hold every selected value.
FILTER_SCRIPT = """
<script>
(function () {
  var boxes = document.querySelectorAll('select[data-filter]');
  function apply() {
    var shown = 0, items = document.querySelectorAll('li.rc');
    items.forEach(function (li) {
      var ok = true;
      boxes.forEach(function (box) {
        var want = box.value;
        if (want && (' ' + li.getAttribute('data-' + box.dataset.filter) + ' ').indexOf(' ' + want + ' ') < 0) ok = false;
      });
      li.hidden = !ok;
      if (ok) shown += 1;
    });
    document.getElementById('rc-shown').textContent = shown + ' of ' + items.length + ' root causes shown';
  }
  boxes.forEach(function (box) { box.addEventListener('change', apply); });
  apply();
})();
</script>
"""


def _words(text: str) -> list[str]:
    return [t for t in str(text).split(", ") if t]


def _item(r: dict, reproducers: dict[str, dict], link_case: bool, index_links: bool) -> str:
    data = {
        "frameworks": " ".join(_words(r["frameworks"])),
        "cases": " ".join(_words(r["cases"])),
        "kind": r["kind"],
        "outcome": r["outcome"],
        "dtypes": " ".join(_words(r["dtypes"])),
    }
    attrs = " ".join(f'data-{k}="{e(v)}"' for k, v in data.items())
    chip = f'<span class="kind" style="background:{KIND_COLOURS.get(r["kind"], "#666")}">{e(r["kind"])}</span>'
    links = []
    for ref in json.loads(r["findings"]):
        case, fid = ref.split(":", 1)
        links.append(f'<a href="{e(case)}.html#{e(fid)}">{e(ref)}</a>' if link_case else e(ref))
    findings = f"<details><summary>its {len(links)} findings</summary>{', '.join(links)}</details>"
    repro = []
    for backend, rep in reproducers.items():
        name = TITLES.get(backend, backend)
        if rep.get("script"):
            repro.append(
                f"<p><b>{e(name)}</b>: {e(script_words(rep))}</p><pre>{e(rep['script'])}</pre>"
            )
        else:
            repro.append(f"<p><b>{e(name)}</b>: {e(rep.get('note', ''))}</p>")
        repro.append(f"<p>{e(probe_words(rep))}:</p>")
        repro.append(f"<pre>{e(rep['probe'])}</pre>")
    reproduce = (
        f"<details><summary>reproduce ({', '.join(TITLES.get(b, b) for b in reproducers)})"
        f'</summary>{"".join(repro)}<p class="muted">harness bug-report {e(r["id"])}</p></details>'
        if reproducers
        else ""
    )
    scope = (
        f' <a href="index.html#{e(r["id"])}">whole scope and reproducers</a>' if index_links else ""
    )
    return (
        f'<li class="rc" id="{e(r["id"])}" {attrs}>{chip} <code>{e(r["id"])}</code>{scope} '
        f'<span class="muted">severity {int(r["severity"])}: {e(r["severity_label"])}; '
        f"{int(r['members'])} findings; {e(r['expected'])}</span><br>{e(r['text'])}"
        f"{findings}{reproduce}</li>"
    )


def _select(name: str, values: list[str]) -> str:
    options = "".join(f'<option value="{e(v)}">{e(TITLES.get(v, v))}</option>' for v in values)
    return f'<label>{e(name)} <select data-filter="{e(name)}"><option value="">all</option>{options}</select></label> '


def root_causes_section(
    roots: pd.DataFrame,
    reproducers: dict[str, pd.DataFrame] | None = None,
    link_case: bool = True,
    filters: bool = True,
    index_links: bool = False,
) -> str:
    """The root causes grouped as the module's docstring says, with filters (``filters``),
    links to the case pages (``link_case``) and to each one's place on the index
    (``index_links``, from a case page)."""
    if roots is None or roots.empty:
        return '<p class="muted">No root causes.</p>'
    by_id: dict[str, dict[str, dict]] = {}
    for backend, table in (reproducers or {}).items():
        for rec in table.to_dict("records"):
            by_id.setdefault(rec["root_cause"], {})[backend] = rec
    groups = (
        ("Framework bugs", lambda r: r["expected"] != "expected" and r["kind"] in FRAMEWORK_KINDS),
        ("The cases' own code", lambda r: r["expected"] != "expected" and r["kind"] in CASE_KINDS),
        ("The platform", lambda r: r["expected"] != "expected" and r["kind"] == "platform"),
        ("Expected", lambda r: r["expected"] == "expected"),
    )
    records = roots.to_dict("records")
    parts = []
    if filters:
        values = {f: sorted({v for r in records for v in _words(str(r[f]))}) for f in _FILTERS}
        parts.append(
            '<div class="filters">'
            + "".join(_select(f, values[f]) for f in _FILTERS)
            + '<span id="rc-shown" class="muted"></span></div>'
        )
    for heading, belongs in groups:
        mine = [r for r in records if belongs(r)]
        if not mine:
            continue
        items = "".join(_item(r, by_id.get(r["id"], {}), link_case, index_links) for r in mine)
        parts.append(f'<h3>{e(heading)} ({len(mine)})</h3><ol class="rcs">{items}</ol>')
    return "".join(parts) + (FILTER_SCRIPT if filters else "")


def unsupported_section(unsupported: pd.DataFrame | None) -> str:
    """What a framework cannot express, one row per (framework, exception)."""
    if unsupported is None or unsupported.empty:
        return '<p class="muted">Every combination was offered.</p>'
    shown = unsupported.assign(findings=[len(json.loads(f)) for f in unsupported["findings"]])
    columns = ["framework", "what", "exception", "cases", "implementations", "dtypes", "orders"]
    return html_table(shown[[*columns, "findings", "expected"]], numeric=("findings",))
