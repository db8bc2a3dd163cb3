"""Charts drawn on the server as SVG: daily (or hourly) earnings, spend or revenue, and the tallies of units'
answers, with no chart library and no script.

The SVG uses presentation attributes and CSS classes only (the portal's CSP allows no inline style) and scales with
its container through its viewBox; ``static/portal.css`` sizes its text by the width the page has, so its labels
stay readable on a phone. The tick labels sit inside the plot, above their lines, so no label length can run off
it. Every day is a focusable bar whose value shows on hover and on focus (and is its accessible name); the caption
names the date range and the totals. Amounts stay integers in the smallest unit; the axis ticks are "nice" integers
(1, 2 or 5 times a power of ten), so their decimal labels are short and exact. Days that are all zero are said in
words, never drawn on an axis of a few smallest units.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import date, datetime

from markupsafe import Markup, escape

from adnet.core.amounts import Token, to_decimal_string

WIDTH = 720
HEIGHT = 260
LEFT = 8
RIGHT = 8
TOP = 34  # room for the top tick's label, above its line
BOTTOM = 40  # room for the day labels
DAY_BASELINE = HEIGHT - 10
TICKS = 4


def nice_ceiling(value: int) -> int:
    """The smallest of 1, 2 or 5 times a power of ten that is at least ``value`` (at least 1)."""
    scale = 1
    while True:
        for step in (1, 2, 5):
            if step * scale >= value:
                return step * scale
        scale *= 10


def earnings_chart(days: Sequence[tuple[date, int]], *, symbol: str = Token.GS, title: str = "Earnings",
                   empty: str = "Nothing to show for these days yet.", ident: str = "chart",
                   text: Callable[[int], str] = to_decimal_string, zone: str | None = None) -> Markup:
    """A bar chart of ``(day, amount)`` pairs (oldest first, amounts in the smallest unit) as the content of a
    ``<figure>``: inline SVG and a caption with the date range, or the ``empty`` sentence when every amount is
    zero. ``text`` writes an amount (for a count: ``str``, with a ``symbol`` such as "conversions"); ``ident``
    makes the chart's title and description ids unique on a page of several charts. With ``zone`` (an IANA name),
    the pairs are hours instead, their starts already in that zone, and the chart says so."""
    top_value = max((amount for _, amount in days), default=0)
    total = sum(amount for _, amount in days)
    unit = "hour" if zone else "day"
    caption = (f"{_day(days[0][0])} to {_day(days[-1][0])}, {days[-1][0].year} "
               f"({f'hours in {zone}' if zone else 'UTC days'}): total "
               f"{text(total)} {symbol}, highest {unit} {text(top_value)} {symbol}."
               if days else f"No {unit}s to show.")
    if not top_value:
        return Markup(f'<p class="chart-empty">{escape(empty)}</p>'  # noqa: S704 - escaped
                      f'<figcaption class="chart-caption">{escape(caption)}</figcaption>')
    axis_max = nice_ceiling(-(-top_value // TICKS)) * TICKS
    plot_width, plot_height = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    slot = plot_width / len(days)
    description = (f"{len(days)} {unit}s from {_stamp(days[0][0])} to {_stamp(days[-1][0])}; total "
                   f"{text(total)} {symbol}; highest {unit} {text(top_value)} {symbol}.")
    parts = [
        f'<svg class="chart daily-chart" viewBox="0 0 {WIDTH} {HEIGHT}" role="group" '
        f'aria-labelledby="{escape(ident)}-title {escape(ident)}-desc" xmlns="http://www.w3.org/2000/svg">',
        f'<title id="{escape(ident)}-title">{escape(title)}</title>'
        f'<desc id="{escape(ident)}-desc">{escape(description)}</desc>',
    ]
    for tick in range(TICKS + 1):
        value = axis_max * tick // TICKS
        y = TOP + plot_height - plot_height * tick / TICKS
        parts.append(f'<line class="chart-grid" x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{y:.1f}" y2="{y:.1f}"/>')
        if tick:  # the baseline is zero; a label there would sit on the first bars
            parts.append(f'<text class="chart-label chart-tick" x="{LEFT + 2}" y="{y - 6:.1f}" text-anchor="start">'
                         f'{escape(text(value))} {escape(symbol)}</text>')
    for index, (day, amount) in enumerate(days):
        height = plot_height * amount / axis_max
        x = LEFT + index * slot
        named = f"{escape(_stamp(day))}: {escape(text(amount))} {escape(symbol)}"
        tip_x, anchor = _anchored(index, len(days), x, slot)
        parts.append(
            f'<g class="chart-day" tabindex="0" role="img" aria-label="{named}"><title>{named}</title>'
            f'<rect class="chart-hit" x="{x:.1f}" y="{TOP}" width="{slot:.1f}" height="{plot_height}"/>'
            f'<rect class="chart-bar" x="{x + slot * 0.15:.1f}" y="{TOP + plot_height - height:.1f}" '
            f'width="{slot * 0.7:.1f}" height="{height:.1f}"/>'
            f'<text class="chart-label chart-tip" x="{tip_x:.1f}" y="{max(TOP + plot_height - height - 8, 24):.1f}" '
            f'text-anchor="{anchor}">{escape(_day(day))}: {escape(text(amount))} {escape(symbol)}'
            f'</text></g>')
    for index, x, anchor in _day_labels(len(days), slot):
        parts.append(f'<text class="chart-label" x="{x:.1f}" y="{DAY_BASELINE}" text-anchor="{anchor}">'
                     f'{escape(_day(days[index][0]))}</text>')
    parts.append("</svg>")
    parts.append(f'<figcaption class="chart-caption">{escape(caption)}</figcaption>')
    return Markup("".join(parts))  # noqa: S704 - every interpolated text above is escaped


def _day(day: date) -> str:
    """A bar's short label: ``Nov 28``, or ``Nov 28 17:00`` for an hour."""
    return day.strftime("%b %d %H:%M" if isinstance(day, datetime) else "%b %d")


def _stamp(day: date) -> str:
    """A bar's full name: ``2026-11-28``, or ``2026-11-28 17:00`` for an hour."""
    return day.strftime("%Y-%m-%d %H:%M") if isinstance(day, datetime) else day.isoformat()


def _anchored(index: int, count: int, x: float, slot: float) -> tuple[float, str]:
    """Where a bar's value is written: from its left edge in the first fifth of the chart, to its right edge in the
    last fifth, centred over it otherwise, so that no value runs off the chart."""
    if index < count / 5:
        return x + slot * 0.15, "start"
    if index >= count * 4 / 5:
        return x + slot * 0.85, "end"
    return x + slot / 2, "middle"


def _day_labels(count: int, slot: float) -> list[tuple[int, float, str]]:
    """Where the first, middle and last days are named: the first starts at its bar's left edge and the last ends
    at its bar's right edge, so neither runs off the chart; the middle one is centred under its bar."""
    if count == 0:
        return []
    labels = {count // 2: (LEFT + (count // 2) * slot + slot / 2, "middle")}
    labels[0] = (LEFT + slot * 0.15, "start")
    labels[count - 1] = (LEFT + (count - 1) * slot + slot * 0.85, "end")
    return [(index, x, anchor) for index, (x, anchor) in sorted(labels.items())]


# Answers to polls, feedback and surveys ----------------------------------------------------------------------------

TALLY_WIDTH = 480
TALLY_ROW = 28
TALLY_LABEL = 160
TALLY_COUNT = 56


def tally_chart(rows: Sequence[tuple[str, int]], *, ident: str, title: str) -> Markup:
    """A horizontal bar per ``(label, count)`` (an option's votes, a rating's count) as inline SVG, each bar as long
    as its share of the largest count; ``ident`` makes the chart's title and description ids unique on the page."""
    top_count = max((count for _, count in rows), default=0)
    total = sum(count for _, count in rows)
    height = TALLY_ROW * max(len(rows), 1) + 8
    bar_space = TALLY_WIDTH - TALLY_LABEL - TALLY_COUNT
    description = ("; ".join(f"{label}: {count}" for label, count in rows) + f". {total} in all."
                   if total else "No answers yet.")
    parts = [
        f'<svg class="chart tally-chart" viewBox="0 0 {TALLY_WIDTH} {height}" role="img" '
        f'aria-labelledby="{escape(ident)}-title {escape(ident)}-desc" xmlns="http://www.w3.org/2000/svg">',
        f'<title id="{escape(ident)}-title">{escape(title)}</title>'
        f'<desc id="{escape(ident)}-desc">{escape(description)}</desc>',
    ]
    for index, (label, count) in enumerate(rows):
        y = 4 + index * TALLY_ROW
        width = bar_space * count / top_count if top_count else 0
        shown = label if len(label) <= 24 else label[:23] + "\u2026"
        parts.append(f'<text class="chart-label" x="{TALLY_LABEL - 8}" y="{y + 18}" text-anchor="end">'
                     f'{escape(shown)}</text>')
        parts.append(f'<rect class="chart-bar" x="{TALLY_LABEL}" y="{y + 4}" width="{width:.1f}" '
                     f'height="{TALLY_ROW - 8}"><title>{escape(label)}: {count}</title></rect>')
        parts.append(f'<text class="chart-label" x="{TALLY_LABEL + width + 6:.1f}" y="{y + 18}">{count}</text>')
    parts.append("</svg>")
    return Markup("".join(parts))  # noqa: S704 - every interpolated text above is escaped
