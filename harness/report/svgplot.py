"""A small SVG plotting kit for the report's charts, written by hand instead of by
matplotlib: a chart is a grid of panels, each with an x scale (linear, log or symlog, as
the swept input needs), filled runs and lines in whole pixels.

Why not matplotlib: its SVG drew every point as a shape and every tick label as glyph
outlines, and rasterised the heavy layers into embedded images; one case page was 16 MB
and took 17 s to load in Chromium, and drawing it took 46 s. Here a run of equal outcome
along the input is one rectangle (one path per colour per panel), a line keeps only the
vertices that move it by a pixel, and text is text, so the detail stays and the page
shrinks a hundredfold. Everything is deterministic: the same tables draw the same bytes.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

from harness.report.html import e

__all__ = ["Chart", "Panel", "Scale", "polyline_points", "runs"]

FONT = "font-family:system-ui,sans-serif"


def runs(codes: np.ndarray) -> list[tuple[int, int, float]]:
    """``(start, stop, code)`` for each run of equal, non-NaN codes (``stop`` exclusive)."""
    out: list[tuple[int, int, float]] = []
    n = len(codes)
    i = 0
    while i < n:
        c = codes[i]
        if np.isnan(c):
            i += 1
            continue
        j = i + 1
        while j < n and codes[j] == c:
            j += 1
        out.append((i, j, float(c)))
        i = j
    return out


class Scale:
    """The x axis of a panel: ``linear``, ``log`` (every value positive) or ``symlog``
    (values of both signs; linear within the smallest magnitude), mapping data to pixels
    in ``[lo, hi]``."""

    def __init__(self, xs: np.ndarray, lo: float, hi: float, domain=None):
        xs = np.asarray(xs, dtype=float)
        xs = xs[np.isfinite(xs)]
        nonzero = np.abs(xs[xs != 0])
        if len(xs) and (xs > 0).all():
            self.kind = "log"
        elif len(nonzero) and (xs < 0).any():
            self.kind = "symlog"
        else:
            self.kind = "linear"
        self.thresh = float(nonzero.min()) if len(nonzero) else 1.0
        first, last = domain if domain is not None else (xs.min(), xs.max()) if len(xs) else (0, 1)
        self.t0, self.t1 = self._t(float(first)), self._t(float(last))
        if self.t1 == self.t0:
            self.t0, self.t1 = self.t0 - 1, self.t1 + 1
        self.lo, self.hi = lo, hi

    def _t(self, x):
        x = np.asarray(x, dtype=float)
        if self.kind == "log":
            return np.log10(x)
        if self.kind == "symlog":
            a = np.abs(x) / self.thresh
            return np.sign(x) * np.where(a >= 1, 1 + np.log10(np.maximum(a, 1)), a)
        return x

    def __call__(self, x):
        return self.lo + (self._t(x) - self.t0) / (self.t1 - self.t0) * (self.hi - self.lo)

    def ticks(self) -> list[tuple[float, str]]:
        """At most about four labelled decades per sign (log, symlog), or five round
        values (linear)."""
        if self.kind == "linear":
            span = self.t1 - self.t0
            step = 10 ** np.floor(np.log10(span / 4))
            for m in (1, 2, 5, 10):
                if span / (step * m) <= 5:
                    step *= m
                    break
            first = np.ceil(self.t0 / step) * step
            values = np.arange(first, self.t1 + step * 1e-9, step)
            return [(float(v), f"{v:.3g}") for v in values]
        if self.kind == "log":
            lo, hi = 10**self.t0, 10**self.t1
        else:  # symlog: the decades from the linear part's edge to the farther end
            lo, hi = self.thresh, self.thresh * 10 ** (max(abs(self.t0), abs(self.t1)) - 1)
        decades = np.arange(np.floor(np.log10(lo)), np.ceil(np.log10(hi)) + 1)
        step = max(1, int(np.ceil(len(decades) / 4)))
        chosen = decades[::-step][::-1]
        out = []
        signs = (-1, 1) if self.kind == "symlog" else (1,)
        for sign in signs:
            for d in chosen[::sign]:
                v = sign * 10.0**d
                p = float(self(v))
                if min(self.lo, self.hi) - 0.5 <= p <= max(self.lo, self.hi) + 0.5:
                    out.append((v, f"{'-' if sign < 0 else ''}1e{int(d)}"))
        return out


def _simplify(points: np.ndarray, tolerance: float) -> np.ndarray:
    """Douglas-Peucker: the vertices of ``points`` (``n x 2``) that keep the line within
    ``tolerance`` pixels of every dropped one. Long spans are measured in numpy, short
    ones (most of a noisy line's) in plain Python, cheaper there than a numpy call."""
    n = len(points)
    if n < 3:
        return points
    keep = np.zeros(n, dtype=bool)
    keep[0] = keep[-1] = True
    xs, ys = points[:, 0].tolist(), points[:, 1].tolist()
    stack = [(0, n - 1)]
    while stack:
        a, b = stack.pop()
        if b - a < 2:
            continue
        dx, dy = xs[b] - xs[a], ys[b] - ys[a]
        length = (dx * dx + dy * dy) ** 0.5
        if b - a > 48:
            rel = points[a + 1 : b] - points[a]
            if length == 0:
                dist = np.hypot(rel[:, 0], rel[:, 1])
            else:
                dist = np.abs(dx * rel[:, 1] - dy * rel[:, 0]) / length
            k = int(np.argmax(dist))
            far, m = float(dist[k]), a + 1 + k
        else:
            far, m = -1.0, a
            for i in range(a + 1, b):
                rx, ry = xs[i] - xs[a], ys[i] - ys[a]
                d = abs(dx * ry - dy * rx) / length if length else (rx * rx + ry * ry) ** 0.5
                if d > far:
                    far, m = d, i
        if far > tolerance:
            keep[m] = True
            stack += [(a, m), (m, b)]
    return points[keep]


def polyline_points(
    px: np.ndarray, py: np.ndarray, tolerance: float = 0.75
) -> list[list[tuple[int, int]]]:
    """A line through ``(px, py)`` in whole pixels, cut where ``py`` is NaN, keeping only
    the vertices that move it by more than ``tolerance`` pixels (Douglas-Peucker): what
    the eye sees at the chart's size, in a fraction of the vertices."""
    px, py = np.asarray(px, dtype=float), np.asarray(py, dtype=float)
    finite = np.isfinite(py) & np.isfinite(px)
    segments: list[list[tuple[int, int]]] = []
    # The runs of finite values, each its own segment.
    edges = np.flatnonzero(np.diff(np.concatenate([[0], finite.astype(int), [0]])))
    for start, stop in zip(edges[::2], edges[1::2]):
        pts = np.rint(np.column_stack([px[start:stop], py[start:stop]]))
        pts = pts[np.concatenate([[True], np.any(np.diff(pts, axis=0) != 0, axis=1)])]
        pts = _simplify(pts, tolerance).astype(int)
        segments.append([(int(x), int(y)) for x, y in pts])
    return segments


def _path(segments: Iterable[Sequence[tuple[int, int]]]) -> str:
    """Segments as one path's data, each vertex after the first relative to the last
    (``l3 -2``: a few characters a vertex)."""
    parts = []
    for seg in segments:
        (x0, y0), rest = seg[0], seg[1:]
        if not rest:
            rest = [(x0 + 1, y0)]  # a lone point, a pixel long
        steps, (px, py) = [], (x0, y0)
        for x, y in rest:
            steps.append(f"{x - px} {y - py}")
            px, py = x, y
        parts.append(f"M{x0} {y0}l" + " ".join(steps))
    return "".join(parts).replace(" -", "-")


@dataclass
class Panel:
    """One panel: its box in pixels and its x scale; shapes are added in pixels."""

    x: float
    y: float
    w: float
    h: float
    scale: Scale
    parts: list[str] = field(default_factory=list)

    def y_of(self, value, lo: float, hi: float):
        """``value`` in ``[lo, hi]`` as a pixel row (``lo`` at the bottom)."""
        return self.y + self.h - (np.asarray(value, dtype=float) - lo) / (hi - lo) * self.h

    def fill(self, colour: str, boxes: Sequence[tuple[float, float, float, float]], title=""):
        """Boxes ``(x0, x1, y0, y1)`` in pixels, one path of one colour."""
        if not boxes:
            return
        d = "".join(
            f"M{int(round(x0))} {int(round(y0))}H{max(int(round(x1)), int(round(x0)) + 1)}"
            f"V{int(round(y1))}H{int(round(x0))}z"
            for x0, x1, y0, y1 in boxes
        )
        tip = f"<title>{e(title)}</title>" if title else ""
        self.parts.append(
            f'<path fill="{colour}" shape-rendering="crispEdges" d="{d}">{tip}</path>'
        )

    def line(self, colour: str, segments, dash: str = "", width: float = 1.1, title: str = ""):
        d = _path(segments)
        if not d:
            return
        style = f' stroke-dasharray="{dash}"' if dash else ""
        tip = f"<title>{e(title)}</title>" if title else ""
        self.parts.append(
            f'<path fill="none" stroke="{colour}" stroke-width="{width}"{style} d="{d}">'
            f"{tip}</path>"
        )

    def area(self, colour: str, px, low, high, opacity: float = 0.18):
        """The shade between two lines over the same ``px`` (pixels), cut at NaN."""
        ok = np.isfinite(low) & np.isfinite(high)
        edges = np.flatnonzero(np.diff(np.concatenate([[0], ok.astype(int), [0]])))
        d = []
        for start, stop in zip(edges[::2], edges[1::2]):
            # A shade needs less detail than a line: within two pixels.
            up = polyline_points(px[start:stop], high[start:stop], 2.0)
            down = polyline_points(px[start:stop][::-1], low[start:stop][::-1], 2.0)
            if up and down:
                d.append(_path([up[0] + down[0]]) + "z")
        if d:
            self.parts.append(f'<path fill="{colour}" fill-opacity="{opacity}" d="{"".join(d)}"/>')

    def vline(self, px: float, colour: str, dash: str = "4 2"):
        x = int(round(px))
        self.parts.append(
            f'<path stroke="{colour}" stroke-dasharray="{dash}" d="M{x} {int(self.y)}'
            f'V{int(self.y + self.h)}"/>'
        )

    def hline(self, py: float, colour: str, width: float = 1):
        y = int(round(py))
        self.parts.append(
            f'<path stroke="{colour}" stroke-width="{width}" d="M{int(self.x)} {y}'
            f'H{int(self.x + self.w)}"/>'
        )


class Chart:
    """A grid of panels with a title, a legend line and labels, drawn as one SVG."""

    def __init__(self, width: float, height: float):
        self.width, self.height = width, height
        self.items: list[str] = []
        self.panels: list[Panel] = []

    def text(self, x, y, s, size=11, anchor="start", rotate=False, fill="#212121"):
        r = f' transform="rotate(-90 {x:.0f} {y:.0f})"' if rotate else ""
        self.items.append(
            f'<text x="{x:.0f}" y="{y:.0f}" font-size="{size}" text-anchor="{anchor}"'
            f' fill="{fill}"{r}>{e(s)}</text>'
        )

    def raw(self, markup: str):
        self.items.append(markup)

    def panel(self, x, y, w, h, scale_xs, title="", xlabel="", domain=None) -> Panel:
        p = Panel(x, y, w, h, Scale(scale_xs, x, x + w, domain))
        self.panels.append(p)
        if title:
            self.text(x + w / 2, y - 5, title, size=10, anchor="middle")
        if xlabel:
            self.text(x + w / 2, y + h + 28, xlabel, size=9, anchor="middle")
        return p

    def svg(self) -> str:
        body = []
        for p in self.panels:
            marks = p.scale.ticks()
            ticks = "".join(
                f'<path stroke="#ccc" d="M{int(round(p.scale(v)))} {int(p.y)}V{int(p.y + p.h)}"/>'
                for v, _ in marks
            )
            labels = "".join(
                f'<text x="{p.scale(v):.0f}" y="{p.y + p.h + 13:.0f}" font-size="8" '
                f'text-anchor="middle">{e(s)}</text>'
                for v, s in marks
            )
            body.append(
                f"<g>{ticks}{''.join(p.parts)}"
                f'<rect x="{p.x:.0f}" y="{p.y:.0f}" width="{p.w:.0f}" height="{p.h:.0f}" '
                f'fill="none" stroke="#666"/>{labels}</g>'
            )
        return (
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{self.width:.0f}" '
            f'height="{self.height:.0f}" viewBox="0 0 {self.width:.0f} {self.height:.0f}" '
            f'style="{FONT}">' + "".join(body) + "".join(self.items) + "</svg>"
        )
