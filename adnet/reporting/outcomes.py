"""What conversions are worth in a report, defined once for every report (a campaign's days, breakdowns, CSV, the
portal): the conversion rate, the cost per conversion and the return on ad spend (ROAS).

All three come from integers (counts, and G$ in the smallest unit) by integer arithmetic, so a figure is the same
wherever it is shown: ratios as decimal strings with ``RATIO_DECIMALS`` decimals, rounded down; a cost in the smallest
unit, rounded down. A ratio over nothing (no billed click, no spend, no valued conversion) is ``None``, never a
division by zero and never a made-up 0.

- conversion rate: attributed conversions per billed click;
- cost per conversion: spend (billed events and paid conversions) per attributed conversion;
- ROAS: the value advertisers reported for attributed conversions (``value`` of ``POST /api/conversions``) per G$
  spent; ``None`` when no attributed conversion carried a value or nothing was spent.
"""

from __future__ import annotations

RATIO_DECIMALS = 6
_SCALE = 10**RATIO_DECIMALS


def ratio_text(numerator: int, denominator: int) -> str | None:
    """``numerator / denominator`` as a decimal string with ``RATIO_DECIMALS`` decimals, rounded down (``"2.500000"``);
    None when ``denominator`` is 0."""
    if denominator <= 0:
        return None
    scaled = numerator * _SCALE // denominator
    return f"{scaled // _SCALE}.{scaled % _SCALE:0{RATIO_DECIMALS}d}"


def conversion_rate(conversions: int, billed_clicks: int) -> str | None:
    """Attributed conversions per billed click; None without billed clicks."""
    return ratio_text(conversions, billed_clicks)


def cost_per_conversion(spend: int, conversions: int) -> int:
    """Spend per attributed conversion in the smallest unit, rounded down; 0 without conversions."""
    return spend // conversions if conversions else 0


def roas(value: int, valued: int, spend: int) -> str | None:
    """The reported value of attributed conversions per unit spent; None when none of them (``valued``) carried a
    value, or nothing was spent."""
    return ratio_text(value, spend) if valued else None
