"""Markdown tables and the number formats README tables use (pure)."""

from __future__ import annotations

import math


def table(header: list[str], rows: list[list[str]]) -> str:
    """A pipe table: the header, its rule, one line per row (no trailing newline)."""
    def line(cells: list[str]) -> str:
        return "|" + "|".join(f" {cell} " if cell else " " for cell in cells) + "|"

    return "\n".join([line(header), "|" + "|".join("---" for _ in header) + "|", *(line(row) for row in rows)])


def number(value: float | None, digits: int = 0) -> str:
    """1,725 / 63.9 / 0.99: thousands separated, `digits` decimals; n/a when missing."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    return f"{value:,.{digits}f}"


def duration(value: float | None, digits: int | None = None) -> str:
    """Seconds as a reader wants them: 7 µs below a millisecond, 0.48 s below a second, 36.0 s above
    (`digits` fixes the decimals of seconds instead)."""
    if value is None or math.isnan(value):
        return "n/a"
    if digits is None and 0 < value < 0.001:
        return f"{value * 1e6:.0f} µs"
    if digits is None:
        digits = 2 if value < 1 else 1
    return f"{number(value, digits)} s"


def durations(*values: float | None) -> str:
    """0.13 / 0.94 s; units written once when all are seconds, else each its own (7 µs / 0.48 s)."""
    parts = [duration(v) for v in values]
    if all(p.endswith(" s") for p in parts):
        return " / ".join(p[:-2] for p in parts) + " s"
    return " / ".join(parts)


def ratio(value: float | None) -> str:
    """0.55 / 1.82; two significant digits below 0.1 (0.003), where two decimals would say 0.00."""
    if value is None or math.isnan(value):
        return "n/a"
    return f"{value:.2g}" if abs(value) < 0.1 else f"{value:,.2f}"
