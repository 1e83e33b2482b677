"""The nightly series as one PNG: a panel per metric, intervals as bars, change points marked."""

from __future__ import annotations

import io
from collections.abc import Sequence

from matplotlib.figure import Figure  # no pyplot: no backend to choose, no global figure state

from harness.reporting import trends

MAX_PANELS = 24
"""More panels than this make an unreadable image: the caller picks the series with change points first."""


def png(series: Sequence[trends.Series], found: Sequence[trends.Change], dates: Sequence[str]) -> bytes:
    """PNG bytes: each series against its nights, 95% intervals as error bars, change points as red lines."""
    shown = list(series)[:MAX_PANELS]
    fig = Figure(figsize=(9, 2.4 * max(len(shown), 1)))
    axes = fig.subplots(max(len(shown), 1), 1, squeeze=False)[:, 0]
    for ax, one in zip(axes, shown):
        values = [p.value for p in one.points]
        below = [p.value - p.low if p.low is not None else 0.0 for p in one.points]
        above = [p.high - p.value if p.high is not None else 0.0 for p in one.points]
        ax.errorbar(one.nights, values, yerr=[below, above], fmt="o-", markersize=3, linewidth=1, capsize=2)
        for change in (c for c in found if c.key == one.key):
            ax.axvline(change.night - 0.5, color="red", linestyle="--", linewidth=1)
            ax.annotate(f"{change.relative:+.0%} ({change.last_before[:7]}..{change.first_after[:7]})",
                        (change.night - 0.5, 1.0), xycoords=("data", "axes fraction"), fontsize=7, color="red",
                        ha="left", va="top")
        ax.set_title(one.key, fontsize=9, loc="left")
        ax.tick_params(labelsize=7)
    if not shown:
        axes[0].text(0.5, 0.5, "no series", ha="center", va="center", transform=axes[0].transAxes)
    ticks = list(range(len(dates)))
    step = max(1, len(ticks) // 10)
    axes[-1].set_xticks(ticks[::step], [d[:10] for d in dates][::step], rotation=30, fontsize=7)
    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=90)
    return buffer.getvalue()
