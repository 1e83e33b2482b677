"""Nightly series and their change points, dated to commit ranges (pure: nights in, findings out)."""

from __future__ import annotations

import fnmatch
from collections.abc import Sequence
from dataclasses import dataclass

from harness.errors import KqbenchError
from harness.results import history
from harness.stats import changepoints


@dataclass(frozen=True, slots=True)
class Series:
    key: str
    """summary key: `metric @ point`."""
    nights: tuple[int, ...]
    """Indices into the history's nights that measured this key (a missing night is skipped)."""
    points: tuple[history.Point, ...]


@dataclass(frozen=True, slots=True)
class Change:
    key: str
    night: int
    """Index of the first night at the new level."""
    date: str
    last_before: str
    first_after: str
    """Git shas: the commit range `last_before..first_after` holds the change."""
    before: float
    after: float

    @property
    def relative(self) -> float:
        return self.after / self.before - 1 if self.before else float("inf")


def metric_of(key: str) -> str:
    return key.split(" @ ", 1)[0]


def select(nights: Sequence[history.Night], patterns: Sequence[str]) -> list[str]:
    """Summary keys whose metric (or whole key) matches a pattern; all keys without patterns.

    An unknown pattern is a one-line error listing the metrics the history knows."""
    keys = sorted({key for night in nights for key in night.metrics})
    if not patterns:
        return keys
    chosen = []
    for pattern in patterns:
        matched = [k for k in keys if fnmatch.fnmatchcase(metric_of(k), pattern) or fnmatch.fnmatchcase(k, pattern)]
        if not matched:
            known = sorted({metric_of(k) for k in keys})
            raise KqbenchError(f"unknown metric {pattern!r}: the history knows {', '.join(known) or 'no metrics'}")
        chosen.extend(k for k in matched if k not in chosen)
    return chosen


def series(nights: Sequence[history.Night], key: str) -> Series:
    picked = [(i, night.metrics[key]) for i, night in enumerate(nights) if key in night.metrics]
    return Series(key, tuple(i for i, _ in picked), tuple(p for _, p in picked))


def changes(nights: Sequence[history.Night], one: Series) -> list[Change]:
    """The series' change points, each with the commits between the last night before it and its first night."""
    found = []
    for point in changepoints.detect([p.value for p in one.points]):
        first, last_before = one.nights[point.index], one.nights[point.index - 1]
        found.append(Change(one.key, first, nights[first].date, nights[last_before].git_sha, nights[first].git_sha,
                            point.before, point.after))
    return found


@dataclass(frozen=True, slots=True)
class Findings:
    """What the history says: every selected series, its change points, and the series worth plotting."""

    keys: list[str]
    found: list[Change]
    plotted: list[Series]


def findings(nights: Sequence[history.Night], patterns: Sequence[str] = ()) -> Findings:
    """Change points of the selected series; plotted are the named series, or without names the ones
    that changed (a plot of every flat metric hides the few that moved)."""
    keys = select(nights, patterns)
    all_series = [series(nights, key) for key in keys]
    found = [change for one in all_series for change in changes(nights, one)]
    with_changes = {c.key for c in found}
    plotted = all_series if patterns else [s for s in all_series if s.key in with_changes]
    return Findings(keys, found, plotted)


def describe(change: Change) -> str:
    """One line: where the series moved, by how much, and the commits to read."""
    return (f"{change.key}: from night {change.night} ({change.date[:10]}) {change.before:.4g} -> "
            f"{change.after:.4g} ({change.relative:+.1%}), commits {change.last_before[:12]}..{change.first_after[:12]}")
