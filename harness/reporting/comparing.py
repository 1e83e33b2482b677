"""Compare two summaries against thresholds (pure but for reading the thresholds file).

Thresholds are data: each names a metric pattern, the worst allowed relative change in the bad
direction, and why (the provenance comment in the YAML says where the number came from).
Noise-aware by construction: summaries hold medians of repeats, and the within-run ratios are the
entries a gate should lean on.
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

SCHEMA_VERSION = 1


class Threshold(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    metric: str
    """fnmatch pattern on the metric name (e.g. `ratio.*`, `apiserver.write_qps[*]`)."""
    max_regression: float = Field(ge=0)
    """Largest allowed relative change in the bad direction (0.2 = 20 % worse)."""
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
    """ok | regressed | improved | missing | new | unchecked."""


def worse_by(change: float, better: str) -> float:
    """How much worse a relative change is (negative: better)."""
    return change if better == "lower" else -change


def compare(base: summaries.Summary, new: summaries.Summary, thresholds: Thresholds) -> list[Row]:
    rows = []
    for key in sorted(set(base.entries) | set(new.entries)):
        b, n = base.entries.get(key), new.entries.get(key)
        entry = n or b
        rule = next((t for t in thresholds.thresholds if fnmatch.fnmatchcase(entry.metric, t.metric)), None)
        limit = rule.max_regression if rule else None
        if b is None:
            rows.append(Row(key, entry.metric, entry.point, entry.unit, None, n.value, None, limit, "new"))
            continue
        if n is None:
            verdict = "regressed" if rule and rule.required else "missing"
            rows.append(Row(key, entry.metric, entry.point, entry.unit, b.value, None, None, limit, verdict))
            continue
        change = None if b.value == 0 else n.value / b.value - 1.0
        if rule is not None and rule.max_absolute is not None and worse_by(n.value - b.value, entry.better) > rule.max_absolute:
            verdict = "regressed"
        elif change is None or not math.isfinite(change):
            verdict = "unchecked" if rule is None or rule.max_absolute is None else "ok"
        elif rule is None or abs(b.value) < rule.min_base:
            verdict = "unchecked"
        elif worse_by(change, entry.better) > rule.max_regression:
            verdict = "regressed"
        elif worse_by(change, entry.better) < -rule.max_regression:
            verdict = "improved"
        else:
            verdict = "ok"
        rows.append(Row(key, entry.metric, entry.point, entry.unit, b.value, n.value, change, limit, verdict))
    return rows


def failed(rows: list[Row]) -> bool:
    return any(r.verdict == "regressed" for r in rows)
