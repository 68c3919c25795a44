"""``reports/census.html``: the kernel census's summary (shares, root causes by kind and
framework, clean bills: :mod:`harness.report.census_summary`), a kernel x framework
matrix for each dtype and order (the share of judged values right, over the methods and
modes chosen in the page), where the frameworks disagree on a kernel which of them is
right, and the root causes of every failure. Filterable (dtype, order, autodiff only, a kernel's name) and
sortable (a click on a column's head) in the page; no request leaves it."""

from __future__ import annotations

import json

import pandas as pd

from harness.backends.catalogue import SPECS, TITLES
from harness.causes.repro_words import probe_words, script_words
from harness.numerics.floats import DTYPES
from harness.report.census_summary import census_summary
from harness.report.html import e, page

__all__ = ["census_page"]


_STYLE = """
<style>
table.causes code{word-break:break-all}
table.causes td:nth-child(3){max-width:16em}
table.causes td:last-child{min-width:36em}
table.causes pre{max-height:24em;overflow:auto;font-size:.8rem}
</style>
"""

_SCRIPT = """
<script>
(function () {
  var dtype = document.getElementById('c-dtype'), order = document.getElementById('c-order');
  var method = document.getElementById('c-method'), name = document.getElementById('c-name');
  function apply() {
    document.querySelectorAll('table.matrix').forEach(function (t) {
      t.hidden = !(t.dataset.dtype === dtype.value && t.dataset.order === order.value &&
                   t.dataset.methods === method.value);
      t.querySelectorAll('tbody tr').forEach(function (tr) {
        tr.hidden = name.value && tr.dataset.kernel.indexOf(name.value) < 0;
      });
    });
    document.querySelectorAll('table.causes tbody tr').forEach(function (tr) {
      tr.hidden = name.value && tr.dataset.kernel.indexOf(name.value) < 0;
    });
  }
  [dtype, order, method].forEach(function (s) { s.addEventListener('change', apply); });
  name.addEventListener('input', apply);
  document.querySelectorAll('table.matrix th, table.causes th').forEach(function (th) {
    th.addEventListener('click', function () {
      var table = th.closest('table'), body = table.tBodies[0];
      var column = th.cellIndex, up = th.dataset.up !== '1';
      th.dataset.up = up ? '1' : '0';
      Array.from(body.rows).sort(function (a, b) {
        var x = a.cells[column].dataset.sort || a.cells[column].textContent;
        var y = b.cells[column].dataset.sort || b.cells[column].textContent;
        var nx = parseFloat(x), ny = parseFloat(y);
        var c = (isNaN(nx) || isNaN(ny)) ? x.localeCompare(y) : nx - ny;
        return up ? c : -c;
      }).forEach(function (row) { body.appendChild(row); });
    });
  });
  apply();
})();
</script>
"""


def _colour(share: float) -> str:
    if share != share:  # NaN: nothing judged
        return "#eeeeee"
    if share >= 1.0:
        return "#c8e6c9"
    if share >= 0.99:
        return "#fff9c4"
    if share >= 0.9:
        return "#ffe0b2"
    return "#ffcdd2"


def _cell(row: pd.Series | None) -> str:
    if row is None:
        return '<td data-sort="-1" class="muted">not applicable</td>'
    share = float(row["share_right"])
    region, causes = str(row["stable_region"]), str(row["root_causes"])
    lines = [f"right in every method and mode on {region}"] if region else []
    lines += [f"root causes: {causes}"] if causes else []
    title = f' title="{e(chr(10).join(lines))}"' if lines else ""
    text = f"{share:.1%} of {int(row['judged'])}" if share == share else "-"
    return f'<td data-sort="{share:.6f}" style="background:{_colour(share)}"{title}>{e(text)}</td>'


def _agreement(cells: dict[str, pd.Series]) -> str:
    """Which frameworks are right everywhere here and which are not."""
    right = [TITLES[b] for b, r in cells.items() if r["share_right"] >= 1.0]
    wrong = [TITLES[b] for b, r in cells.items() if r["share_right"] < 1.0]
    if right and wrong:
        return f"right: {', '.join(right)}; not: {', '.join(wrong)}"
    return "all right" if right else ("none right" if wrong else "")


def _matrix(v: pd.DataFrame, dtype: str, order: int, methods: str, backends: list[str]) -> str:
    sel = v[(v["dtype"] == dtype) & (v["order"] == order)]
    head = "".join(f"<th>{e(TITLES[b])}</th>" for b in backends)
    rows = []
    for (case, partial), g in sel.groupby(["case", "partial"], sort=True):
        cells = {r["backend"]: r for _, r in g.iterrows()}
        kernel = f"{case.removeprefix('census_')}" + (f" ∂{partial}" if partial else "")
        tds = "".join(_cell(cells.get(b)) for b in backends)
        rows.append(
            f'<tr data-kernel="{e(kernel)}"><td>{e(kernel)}</td>{tds}'
            f"<td>{e(_agreement(cells))}</td></tr>"
        )
    return (
        f'<table class="matrix" data-dtype="{e(dtype)}" data-order="{order}" '
        f'data-methods="{methods}" hidden><thead><tr><th>kernel</th>{head}'
        f"<th>frameworks</th></tr></thead><tbody>{''.join(rows)}</tbody></table>"
    )


def _scripts(cause: pd.Series) -> str:
    """Each framework's reproducer: what it prints against the truth, the script."""
    parts = []
    for backend, r in sorted(json.loads(cause["scripts"]).items()):
        name = TITLES.get(backend, backend)
        if not r["script"]:
            parts.append(
                f"<p>{e(name)}: {e(r['note'] or 'no script')} <code>{e(r['probe'])}</code></p>"
            )
            continue
        parts.append(
            f"<p>{e(name)}: {e(script_words(r))}</p><pre>{e(r['script'])}</pre>"
            f"<p>{e(probe_words(r))}: <code>{e(r['probe'])}</code></p>"
        )
    return "".join(parts)


def _cause_rows(causes: pd.DataFrame) -> str:
    rows = []
    for _, c in causes.iterrows():
        scripts = json.loads(c["scripts"])
        frameworks = ", ".join(TITLES.get(b, b) for b in str(c["frameworks"]).split(", "))
        shown = f"{int(c['reproduced'])} of {len(scripts)}" if scripts else "-"
        rows.append(
            f'<tr data-kernel="{e(c["primitive"])}"><td data-sort="{int(c["severity"])}">'
            f"{int(c['severity'])}</td><td>{e(c['kind'])}</td><td><code>{e(c['id'])}</code></td>"
            f"<td>{e(frameworks)}</td><td>{int(c['members'])}</td><td>{e(shown)}</td>"
            f"<td>{e(c['in_study'])}</td><td>{e(c['text'])}<details><summary>reproducers"
            f"</summary>{_scripts(c)}<p><code>harness bug-report {e(c['id'])} --results "
            f"results/census</code></p></details></td></tr>"
        )
    return "".join(rows)


def _causes_table(causes: pd.DataFrame, css: str) -> str:
    head = (
        "<th>severity</th><th>kind</th><th>root cause</th><th>frameworks</th><th>findings</th>"
        "<th>scripts printing it</th><th>also in the study</th><th>statement</th>"
    )
    return (
        f'<table class="{css}"><thead><tr>{head}</tr></thead>'
        f"<tbody>{_cause_rows(causes)}</tbody></table>"
    )


def _options(element: str, values, label: str) -> str:
    opts = "".join(f'<option value="{e(v)}">{e(t)}</option>' for v, t in values)
    return f'<label>{e(label)} <select id="{element}">{opts}</select></label> '


def census_page(
    atlas: pd.DataFrame,
    verdict,
    causes: pd.DataFrame | None = None,
    bills: pd.DataFrame | None = None,
) -> str:
    """The page from the atlas (:func:`harness.census.atlas.build_atlas`); ``verdict``
    is :func:`harness.census.atlas.verdicts`; ``causes`` the census's root causes with
    their reproducers (:func:`harness.census.causes.census_causes`), where collected;
    ``bills`` its clean bills (:func:`harness.census.bills.clean_bills`) for the
    summary."""
    from harness.census.causes import most_severe

    backends = [b for b in SPECS if b in set(atlas["backend"])]
    dtypes = sorted(set(atlas["dtype"]), key=DTYPES.index)
    orders = sorted(set(int(o) for o in atlas["order"]))
    views = {
        "all": verdict(atlas),
        "autodiff": verdict(atlas[atlas["method"] != "finite_difference"]),
    }
    tables = "".join(
        _matrix(v, d, o, name, backends)
        for name, v in views.items()
        for d in dtypes
        for o in orders
    )
    kernels = atlas["operator"].nunique()
    judged = int(atlas["judged"].sum())
    right = int(atlas["ok"].sum())
    refused = int(atlas["unsupported"].sum())
    refused_text = (
        f" {refused:,} values the frameworks refused to compute (unsupported: an exception "
        "of the framework's own refusing the transformation) are not judged."
        if refused
        else ""
    )
    root_ids = sorted({c for v in atlas["root_causes"] for c in str(v).split(", ") if c})
    controls = (
        _options("c-dtype", [(d, d) for d in dtypes], "dtype")
        + _options("c-order", [(str(o), f"order {o}") for o in orders], "order")
        + _options("c-method", [("autodiff", "autodiff methods"), ("all", "every method")], "")
        + '<label>kernel <input id="c-name" type="search" placeholder="softplus"></label>'
    )
    if causes is not None and len(causes):
        shared = int((causes["in_study"] != "").sum())
        top = most_severe(causes)
        listed = (
            f"<h2>The {len(top)} most severe root causes in the frameworks' own code</h2>"
            "<p>Kinds kernel, framework and mode, by severity and the findings they absorb; "
            "each framework's standalone script, run in its own process, and what it "
            f"printed.</p>{_causes_table(top, 'causes top')}"
            f"<h2>Every root cause ({len(causes)})</h2><p>{shared} shared with the study's "
            "cases (the same id: the same mechanism in a seed case).</p>"
            f"{_causes_table(causes, 'causes')}"
        )
    else:
        items = "".join(f"<li><code>{e(c)}</code></li>" for c in root_ids)
        listed = f"<h2>Root causes ({len(root_ids)})</h2><ul>{items}</ul>"
    body = (
        "<h1>Kernel census</h1>"
        f"<p>{kernels} kernels of the operator table in {len(backends)} frameworks' own "
        f"implementations, orders {orders[0]}-{orders[-1]}, in {', '.join(dtypes)}: "
        f"{right:,} of {judged:,} judged values right ({right / max(judged, 1):.2%})."
        f"{refused_text} A cell is the share of judged values right over the methods and modes run "
        "(its tooltip: where every method and mode is right, as exact floats of the dtype, "
        "and the root causes); a click on a column's head sorts by it.</p>"
        f"{census_summary(bills, causes) if bills is not None else ''}"
        f'<h2>Kernel by framework</h2><div class="controls">{controls}</div>{tables}'
        f"{listed}{_STYLE}{_SCRIPT}"
    )
    return page("Kernel census", body)
