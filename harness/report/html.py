"""HTML building blocks of the report pages: escaping, the page shell and its styles,
the outcome colours and their key, tables. Pages are self-contained: styles inline, no
font or image from anywhere else, and no script but inline ones: the index's filter of
its root causes (:mod:`harness.report.root_causes_list`) and the one that shows a long
table's rows (:data:`LAZY_SCRIPT`)."""

from __future__ import annotations

import html
import io
import json
import re
from collections.abc import Sequence

import numpy as np
import pandas as pd

from harness.judge.compare import OUTCOMES

__all__ = ["COLOURS", "MEANING", "SEVERITY", "e", "key", "page", "svg", "table"]

#: One colour per outcome, the key on every page.
COLOURS = {
    "ok": "#2e7d32",
    "inaccurate": "#f9a825",
    "wrong": "#c62828",
    "nan": "#6a1b9a",
    "inf": "#ef6c00",
    "zero": "#1565c0",
    "missing": "#8d6e63",
    "error": "#212121",
    "ref_unreliable": "#cfd8dc",
    "flushed": "#80cbc4",
    "not_applicable": "#f5f5f5",
}
MEANING = {
    "ok": "within tolerance of the rounded reference",
    "inaccurate": "finite, beyond tolerance, right sign and magnitude",
    "wrong": "finite, wrong sign or off by a factor of 2 or more",
    "nan": "NaN",
    "inf": "infinite where the rounded reference is finite",
    "zero": "0 where the rounded reference is not",
    "missing": "the framework returned no gradient (None)",
    "error": "the framework raised an exception",
    "ref_unreliable": "the reference did not verify here; not judged",
    "flushed": "what the platform's flush of subnormals gives (a platform effect, reported apart)",
    "not_applicable": "the framework cannot express this combination (the reason is kept)",
}
#: Most severe first: the colour of a matrix cell is its most severe outcome.
SEVERITY = (
    "error",
    "wrong",
    "nan",
    "inf",
    "zero",
    "missing",
    "inaccurate",
    "flushed",
    "ok",
    "ref_unreliable",
    "not_applicable",
)

CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:1.5rem auto;
max-width:1300px;padding:0 1rem;color:#212121;line-height:1.4}
h1{font-size:1.6rem}h2{font-size:1.25rem;margin-top:2rem;border-bottom:1px solid #ddd}
h3{font-size:1.05rem}table{border-collapse:collapse;font-size:.85rem;margin:.5rem 0}
th,td{border:1px solid #ddd;padding:.2rem .45rem;text-align:left;vertical-align:top}
th{background:#f5f5f5}td.num{text-align:right;font-variant-numeric:tabular-nums}
.key span{display:inline-block;margin:.15rem .6rem .15rem 0;font-size:.85rem}
.sw{display:inline-block;width:.9rem;height:.9rem;vertical-align:middle;margin-right:.25rem;
border:1px solid #999}.cell{color:#fff;text-align:center;font-size:.75rem;min-width:2.3rem}
.cell.light{color:#212121}.muted{color:#666}.big{font-size:1.6rem;font-weight:600}
.headline td{padding:.4rem .9rem}figure{margin:.5rem 0}figure svg{max-width:100%;height:auto}
code{background:#f5f5f5;padding:0 .2rem}details{margin:.4rem 0}
ol.findings{padding-left:1.6rem;font-size:.9rem}ol.findings li{margin:.2rem 0}
ol.findings li:target{background:#fff8e1}.stale{background:#ffebee;padding:.5rem;
border:1px solid #c62828}.pair{display:flex;gap:1rem;align-items:flex-start;flex-wrap:wrap}
.pair figure{flex:3 1 700px}.pair .side{flex:2 1 320px;max-width:560px}
.mark{font-weight:700;color:#c62828}
ol.rcs{padding-left:1.6rem;font-size:.9rem}ol.rcs li{margin:.5rem 0}
.kind{color:#fff;border-radius:.2rem;padding:0 .3rem;font-size:.8rem}
.filters{margin:.5rem 0;font-size:.9rem}.filters select{margin-right:.6rem}
pre{background:#f5f5f5;padding:.4rem;overflow-x:auto;font-size:.8rem}
"""


def e(text: object) -> str:
    """``text`` escaped for HTML (quotes too)."""
    return html.escape(str(text), quote=True)


def page(title: str, body: str) -> str:
    """A whole self-contained HTML page. Its figures are drawn before it is assembled, so
    the next page's figures are numbered from 0 again (:func:`svg`): a page's bytes do not
    depend on which pages one process drew before it."""
    _DRAWN[0] = 0
    _TABLES[0] = 0
    script = LAZY_SCRIPT if 'table data-rows="' in body else ""
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width,initial-scale=1">'
        f"<title>{e(title)}</title><style>{CSS}</style></head><body>\n{body}\n{script}</body></html>\n"
    )


def key() -> str:
    """The colour key of every outcome, with its meaning."""
    items = "".join(
        f'<span><i class="sw" style="background:{COLOURS[o]}"></i><b>{o}</b> '
        f'<span class="muted">{e(MEANING[o])}</span></span>'
        for o in OUTCOMES
    )
    return f'<div class="key">{items}</div>'


#: A table longer than this writes its rows once, as data, and shows them a page at a
#: time (:data:`LAZY_SCRIPT`): the page loads its first rows only when the table is
#: opened, the rest when asked for, and its filter and sorting work on every row.
LAZY_ROWS = 60

#: Fills, filters and sorts the tables whose rows are data (:func:`table`); one copy per
#: page, after its last table.
LAZY_SCRIPT = """<script>
(function () {
  var STEP = 60;
  document.querySelectorAll('table[data-rows]').forEach(function (t) {
    var data = JSON.parse(document.getElementById(t.dataset.rows).textContent);
    var num = JSON.parse(t.dataset.num), raw = JSON.parse(t.dataset.raw);
    var body = t.tBodies[0], box = t.previousElementSibling, more = t.nextElementSibling;
    var filter = box.querySelector('input'), count = box.querySelector('span');
    var rows = data, shown = 0, started = false;
    function fill(reset) {
      if (reset) { body.textContent = ''; shown = 0; }
      var frag = document.createDocumentFragment();
      rows.slice(shown, shown + STEP).forEach(function (r) {
        var tr = document.createElement('tr');
        r.forEach(function (v, i) {
          var td = document.createElement('td');
          if (num.indexOf(i) >= 0) td.className = 'num';
          if (raw.indexOf(i) >= 0) td.innerHTML = v; else td.textContent = v;
          tr.appendChild(td);
        });
        frag.appendChild(tr);
      });
      body.appendChild(frag);
      shown = Math.min(rows.length, shown + STEP);
      count.textContent = shown + ' of ' + rows.length + ' rows shown' +
        (rows.length < data.length ? ' (' + data.length + ' in all)' : '');
      more.hidden = shown >= rows.length;
      more.textContent = 'show ' + Math.min(STEP, rows.length - shown) + ' more';
    }
    function start() { if (!started) { started = true; fill(true); } }
    more.addEventListener('click', function () { fill(false); });
    filter.addEventListener('input', function () {
      var q = filter.value.toLowerCase();
      rows = q ? data.filter(function (r) { return r.join(' ').toLowerCase().indexOf(q) >= 0; }) : data;
      fill(true);
    });
    Array.prototype.forEach.call(t.tHead.rows[0].cells, function (th, i) {
      th.style.cursor = 'pointer';
      th.title = 'sort';
      th.addEventListener('click', function () {
        var up = th.dataset.up !== '1';
        th.dataset.up = up ? '1' : '0';
        var numeric = num.indexOf(i) >= 0;
        rows = rows.slice().sort(function (a, b) {
          var x = a[i], y = b[i], c;
          if (numeric) {
            var nx = parseFloat(x.replace(/,/g, '')), ny = parseFloat(y.replace(/,/g, ''));
            c = isNaN(nx) ? (isNaN(ny) ? 0 : 1) : isNaN(ny) ? -1 : nx - ny;
          } else c = x.localeCompare(y);
          return up ? c : -c;
        });
        fill(true);
      });
    });
    var fold = t.closest('details');
    if (fold && !fold.open) fold.addEventListener('toggle', start, {once: true});
    else start();
  });
})();
</script>"""

#: Tables written on the page being built: each lazy table's rows get their own id.
_TABLES = [0]


def _cell(v) -> str:
    if isinstance(v, float):
        return "" if np.isnan(v) else f"{v:.3g}"
    return str(v)


def table(frame: pd.DataFrame, numeric: Sequence[str] = (), raw: Sequence[str] = ()) -> str:
    """``frame`` as an HTML table (``numeric`` columns right-aligned; floats to 3 digits;
    ``raw`` columns hold HTML already escaped, links). Past :data:`LAZY_ROWS` rows, the
    rows are written once as data and shown on demand, with a filter and sorting
    (:data:`LAZY_SCRIPT`, which :func:`page` adds)."""
    head = "".join(f"<th>{e(c)}</th>" for c in frame.columns)
    if len(frame) > LAZY_ROWS:
        return _lazy_table(frame, head, numeric, raw)
    rows = []
    for rec in frame.itertuples(index=False):
        cells = []
        for c, v in zip(frame.columns, rec):
            v = _cell(v)
            cls = ' class="num"' if c in numeric else ""
            cells.append(f"<td{cls}>{v if c in raw else e(v)}</td>")
        rows.append("<tr>" + "".join(cells) + "</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"


def _lazy_table(frame: pd.DataFrame, head: str, numeric, raw) -> str:
    number, _TABLES[0] = _TABLES[0], _TABLES[0] + 1
    ident = f"rows-{number}"
    data = [[_cell(v) for v in rec] for rec in frame.itertuples(index=False)]
    # Inside a script element only "</" could end it early.
    blob = json.dumps(data, ensure_ascii=False, separators=(",", ":")).replace("</", "<\\/")
    cols = list(frame.columns)
    num = json.dumps([i for i, c in enumerate(cols) if c in numeric])
    html_cols = json.dumps([i for i, c in enumerate(cols) if c in raw])
    return (
        f'<div class="filters"><input type="search" placeholder="filter rows" '
        f'aria-label="filter rows"> <span class="muted">{len(data)} rows</span></div>'
        f'<table data-rows="{ident}" data-num="{num}" data-raw="{html_cols}">'
        f"<thead><tr>{head}</tr></thead><tbody></tbody></table>"
        f'<button type="button" hidden>show more</button>'
        f'<script type="application/json" id="{ident}">{blob}</script>'
    )


#: Figures drawn so far on the page being built: each figure's element ids are salted
#: with its number, so a page's ids are unique and the same on every run.
_DRAWN = [0]


def svg(fig) -> str:
    """A matplotlib figure as inline SVG (no metadata, ids from a fixed salt, so pages
    repeat byte for byte); closes the figure."""
    import matplotlib
    import matplotlib.pyplot as plt

    buf = io.StringIO()
    # No metadata block: it carries a render date (pages would differ run to run) and
    # RDF namespace addresses that look like links.
    # Fixed margins (see _grid in harness.report.figures), not bbox_inches="tight" or tight_layout: each of those
    # lays out every log axis's ticks again, most of a page's time.
    # matplotlib salts its element ids with a random UUID unless svg.hashsalt is set.
    number, _DRAWN[0] = _DRAWN[0], _DRAWN[0] + 1
    with matplotlib.rc_context({"svg.hashsalt": f"harness-figure-{number}"}):
        fig.savefig(
            buf,
            format="svg",
            dpi=110,
            metadata={"Date": None, "Creator": None, "Format": None, "Type": None},
        )
    plt.close(fig)
    text = buf.getvalue()
    text = re.sub(r"<metadata>.*?</metadata>", "", text, flags=re.S)
    return text[text.index("<svg") :]
