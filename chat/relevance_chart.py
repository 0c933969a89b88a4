"""A small inline SVG of chunk relevance along a document, with the cited segment marked
(the plot of the RSE notes: x = chunk index, y = relevance to the query). No JS, no CDN."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from django.utils.safestring import SafeString, mark_safe

WIDTH, HEIGHT = 640, 170
LEFT, RIGHT, TOP, BOTTOM = 34, 8, 10, 26


def relevance_svg(similarity: Sequence[float | None], *, selected: tuple[int, int],
                  retrieved: Mapping[int, float] | None = None) -> SafeString:
    """Bars: similarity of each chunk to the query (0–1); dots: the relevance retrieval gave the
    chunks it returned; shaded band: the chunk range [start, end) of the cited segment.

    Only numbers go into the markup (each passed through int()/float()), so it needs no escaping.
    """
    n = max(len(similarity), 1)
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    step = plot_w / n
    start, end = int(selected[0]), int(selected[1])

    def x(i: float) -> float:
        return LEFT + i * step

    def y(value: float) -> float:
        return TOP + plot_h * (1 - min(max(float(value), 0.0), 1.0))

    parts = [f'<rect class="band" x="{x(start):.1f}" y="{TOP}" width="{max(step * (end - start), 1.0):.1f}" '
             f'height="{plot_h}"><title>cited segment: chunks {start}–{end - 1}</title></rect>']
    for value in (0.0, 0.5, 1.0):
        parts.append(f'<line class="grid" x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{y(value):.1f}" y2="{y(value):.1f}">'
                     f'</line><text class="tick" x="{LEFT - 4}" y="{y(value) + 4:.1f}" text-anchor="end">'
                     f"{value:g}</text>")
    bar_w = max(step * 0.8, 0.6)
    for i, raw in enumerate(similarity):
        value = float(raw or 0.0)
        selected_class = " selected" if start <= i < end else ""
        parts.append(f'<rect class="bar{selected_class}" x="{x(i) + (step - bar_w) / 2:.1f}" y="{y(value):.1f}" '
                     f'width="{bar_w:.2f}" height="{TOP + plot_h - y(value):.1f}">'
                     f"<title>chunk {i}: similarity {value:.2f}</title></rect>")
    for i, raw in sorted((retrieved or {}).items()):
        i, value = int(i), float(raw)
        if 0 <= i < n:
            parts.append(f'<circle class="hit" cx="{x(i) + step / 2:.1f}" cy="{y(value):.1f}" r="3">'
                         f"<title>chunk {i}: retrieval relevance {value:.2f}</title></circle>")
    parts.append(f'<text class="tick" x="{LEFT}" y="{HEIGHT - 8}">chunk 0</text>'
                 f'<text class="tick" x="{WIDTH - RIGHT}" y="{HEIGHT - 8}" text-anchor="end">chunk {n - 1}</text>')
    label = f"Relevance of each of the {n} chunks; chunks {start} to {end - 1} are cited"
    return mark_safe(  # noqa: S308 — numbers only, see the docstring
        f'<svg class="relevance-chart" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" aria-label="{label}">'
        f'{"".join(parts)}</svg>')
