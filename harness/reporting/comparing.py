"""Compare two summaries against thresholds (pure but for reading the thresholds file).

Thresholds are data: each names a metric pattern, the smallest relative change in the bad direction
that matters, and why (the provenance comment in the YAML says where the number came from). A metric
regressed only when its change is beyond the threshold AND significant (`harness.stats.differences`);
beyond but not significant, or without enough samples for an interval, it is `inconclusive`.
"""

from __future__ import annotations

import fnmatch
import math
from dataclasses import dataclass
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from harness.errors import KqbenchError
from harness.results import summaries
from harness.stats import differences

SCHEMA_VERSION = 1


class Threshold(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    metric: str
    """fnmatch pattern on the metric name (e.g. `ratio.*`, `apiserver.write_qps*`; in fnmatch `[*]` matches a literal `*`)."""
    max_regression: float = Field(ge=0)
    """Smallest relative change in the bad direction that matters (0.2 = 20 % worse); regressed also needs significance."""
    min_base: float = 0.0
    """Ignore the check when the base value is below this (tiny bases make relative changes noise)."""
    max_absolute: float | None = None
    """Largest allowed absolute change in the bad direction (for counts whose base is often 0)."""
    required: bool = False
    """Fail when the metric is in the base but missing from the new run."""
    why: str = ""


class Thresholds(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    schema_version: int
    thresholds: list[Threshold] = []


def load_thresholds(path: Path) -> Thresholds:
    path = Path(path)
    if not path.is_file():
        raise KqbenchError(f"thresholds file {path} does not exist")
    try:
        data = yaml.safe_load(path.read_text())
    except yaml.YAMLError as error:
        raise KqbenchError(f"{path}: not valid YAML: {getattr(error, 'problem', error)}") from None
    if not isinstance(data, dict):
        raise KqbenchError(f"{path}: expected a mapping with schema_version and thresholds")
    from harness.results import runs

    runs.check_version(data, SCHEMA_VERSION, str(path))
    try:
        return Thresholds.model_validate(data)
    except ValidationError as error:
        first = error.errors()[0]
        raise KqbenchError(f"{path}: {'.'.join(map(str, first['loc']))}: {first['msg']}") from None


@dataclass(frozen=True, slots=True)
class Row:
    key: str
    metric: str
    point: str
    unit: str
    base: float | None
    new: float | None
    change: float | None
    """Relative change new/base - 1 (None when either side is missing or base is 0)."""
    limit: float | None
    verdict: str
    """regressed | improved | same | inconclusive | missing | new | unchecked."""
    change_low: float | None = None
    change_high: float | None = None
    """95% interval of `change` (of new - base when base is 0); None without intervals on both sides."""
    base_interval: tuple[float, float] | None = None
    new_interval: tuple[float, float] | None = None
    base_n: int | None = None
    new_n: int | None = None
    test: str = ""
    """How the verdict was reached: `significant`, `not significant`, `too few samples`, `threshold only`."""


VERDICTS = ("regressed", "improved", "same", "inconclusive", "missing", "new", "unchecked")


def worse_by(change: float, better: str) -> float:
    """How much worse a relative change is (negative: better)."""
    return change if better == "lower" else -change


def _side(entry: summaries.Entry) -> differences.Side:
    return differences.Side(entry.value, entry.low, entry.high)


def _interval(entry: summaries.Entry) -> tuple[float, float] | None:
    return None if entry.low is None or entry.high is None else (entry.low, entry.high)


def _beyond(rule: Threshold | None, b: summaries.Entry, n: summaries.Entry, change: float | None) -> int | None:
    """+1 worse than the threshold allows, -1 better by more than it, 0 within it, None not checked."""
    if rule is not None and rule.max_absolute is not None:
        worse = worse_by(n.value - b.value, n.better)
        if worse > rule.max_absolute:
            return 1
        if change is None or not math.isfinite(change):
            return -1 if -worse > rule.max_absolute else 0
    if rule is None or change is None or not math.isfinite(change) or abs(b.value) < rule.min_base:
        return None
    worse = worse_by(change, n.better)
    return 1 if worse > rule.max_regression else -1 if worse < -rule.max_regression else 0


def judge(rule: Threshold | None, b: summaries.Entry, n: summaries.Entry) -> tuple[str, str, differences.Difference]:
    """(verdict, how it was reached, the difference): beyond the threshold AND significant to count."""
    diff = differences.difference(_side(b), _side(n))
    beyond = _beyond(rule, b, n, diff.relative)
    if beyond is None:
        return "unchecked", "", diff
    if beyond == 0:
        return "same", "within threshold", diff
    named = "regressed" if beyond > 0 else "improved"
    if b.n is None or n.n is None:
        # A version-1 summary has no intervals: the old gate's rule, said so in the output.
        return named, "threshold only", diff
    if diff.low is None:
        return "inconclusive", "too few samples", diff
    worse_direction = 1 if n.better == "lower" else -1
    if diff.direction == worse_direction * beyond:
        return named, "significant", diff
    return "inconclusive", "not significant", diff


def compare(base: summaries.Summary, new: summaries.Summary, thresholds: Thresholds) -> list[Row]:
    rows = []
    for key in sorted(set(base.entries) | set(new.entries)):
        b, n = base.entries.get(key), new.entries.get(key)
        entry = n or b
        rule = next((t for t in thresholds.thresholds if fnmatch.fnmatchcase(entry.metric, t.metric)), None)
        limit = rule.max_regression if rule else None
        if b is None:
            rows.append(Row(key, entry.metric, entry.point, entry.unit, None, n.value, None, limit, "new",
                            new_interval=_interval(n), new_n=n.n))
            continue
        if n is None:
            verdict = "regressed" if rule and rule.required else "missing"
            rows.append(Row(key, entry.metric, entry.point, entry.unit, b.value, None, None, limit, verdict,
                            base_interval=_interval(b), base_n=b.n))
            continue
        verdict, test, diff = judge(rule, b, n)
        rows.append(Row(key, entry.metric, entry.point, entry.unit, b.value, n.value, diff.relative, limit, verdict,
                        diff.low, diff.high, _interval(b), _interval(n), b.n, n.n, test))
    return rows


def failed(rows: list[Row]) -> bool:
    return any(r.verdict == "regressed" for r in rows)


def threshold_only(rows: list[Row]) -> bool:
    """Some verdict rests on thresholds alone (a side is a version-1 summary without intervals)."""
    return any(r.test == "threshold only" for r in rows)
