"""The chart of a leaderboard page, drawn on the server: the geometry of a horizontal bar chart (one bar per ranked
row, its mean over seeds, a whisker of one standard deviation either side) that the page's template writes as
inline SVG. No script and no image file: the chart shows wherever the page does, and its labels are escaped by the
template like every other value.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, TypeGuard

#: the chart's geometry in SVG user units: label column, bar area, value column, row height, top and bottom margins
LABEL_WIDTH, BAR_WIDTH, VALUE_WIDTH, ROW_HEIGHT, TOP, BOTTOM = 190.0, 420.0, 120.0, 24.0, 8.0, 30.0
#: characters of a model's name the label column holds
LABEL_CHARS = 28
TICKS = 5


def board_chart(rows: Sequence[Mapping[str, Any]], higher_is_better: bool = True) -> dict[str, Any] | None:
    """The chart of a board's ranked rows, in rank order, as the template draws it.

    Args:
        rows: the board's rows (the leaderboard contract's columns); rows without a finite mean (rejected ones)
            are left out.
        higher_is_better: the metric's direction, said in the chart's caption.

    Returns:
        ``{"width", "height", "metric", "caption", "bars", "ticks", "zero", "axis_y"}`` (each bar: ``label``,
        ``model``, ``value``, ``rank``, ``y``, ``x``, ``w``, ``end``, ``low``/``high`` of its whisker or None), or
        None when no row has a value to draw.
    """
    ranked = [row for row in rows if _finite(row.get("mean"))]
    if not ranked:
        return None
    lo, hi = _scale(ranked)
    metric = str(ranked[0].get("metric") or "")
    bars = [_bar(index, row, lo, hi) for index, row in enumerate(ranked)]
    height = TOP + ROW_HEIGHT * len(bars) + BOTTOM
    direction = "higher" if higher_is_better else "lower"
    return {"width": LABEL_WIDTH + BAR_WIDTH + VALUE_WIDTH, "height": height, "metric": metric,
            "caption": f"{metric} of each ranked row (mean over its seeds; the whisker spans one standard "
                       f"deviation); {direction} is better.",
            "bars": bars, "zero": _x(0.0, lo, hi), "axis_y": TOP + ROW_HEIGHT * len(bars),
            "ticks": [{"x": _x(value, lo, hi), "label": f"{value:.3g}"} for value in _ticks(lo, hi)]}


def _finite(value: Any) -> TypeGuard[float]:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _spread(row: Mapping[str, Any]) -> float:
    """A row's standard deviation, 0 where it has none (one seed)."""
    std = row.get("std")
    return float(std) if _finite(std) else 0.0


def _scale(rows: Sequence[Mapping[str, Any]]) -> tuple[float, float]:
    """The value range the bar area spans: zero and every mean and whisker end, widened where it would be empty."""
    ends = [0.0]
    for row in rows:
        mean, spread = float(row["mean"]), _spread(row)
        ends += [mean - spread, mean + spread]
    lo, hi = min(ends), max(ends)
    return (lo, hi) if hi > lo else (lo, lo + 1.0)


def _x(value: float, lo: float, hi: float) -> float:
    return round(LABEL_WIDTH + (value - lo) / (hi - lo) * BAR_WIDTH, 2)


def _bar(index: int, row: Mapping[str, Any], lo: float, hi: float) -> dict[str, Any]:
    mean, spread = float(row["mean"]), _spread(row)
    start, end = sorted((_x(0.0, lo, hi), _x(mean, lo, hi)))
    model = str(row.get("model") or "")
    label = model if len(model) <= LABEL_CHARS else model[:LABEL_CHARS - 1] + "\u2026"
    whisker = spread > 0
    return {"label": label, "model": model, "value": f"{mean:.4f}", "rank": row.get("rank"),
            "y": TOP + ROW_HEIGHT * index, "x": start, "w": max(end - start, 1.0),
            "low": _x(mean - spread, lo, hi) if whisker else None,
            "high": _x(mean + spread, lo, hi) if whisker else None,
            "end": _x(mean, lo, hi)}


def _ticks(lo: float, hi: float) -> list[float]:
    """About :data:`TICKS` round values between ``lo`` and ``hi`` (steps of 1, 2 or 5 times a power of ten)."""
    raw = (hi - lo) / TICKS
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    first = math.ceil(lo / step) * step
    return [round(first + i * step, 12) for i in range(int((hi - first) / step + 1e-9) + 1)]
