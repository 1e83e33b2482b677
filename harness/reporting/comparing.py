"""Compare two summaries against thresholds (pure but for reading the thresholds file).

Thresholds are data: each names a metric pattern, the smallest relative change in the bad direction
that matters, and why (the provenance comment in the YAML says where the number came from). A metric
regressed only when its change is beyond the threshold AND significant (`harness.stats.differences`);
beyond but not significant, or without enough samples for an interval, it is `inconclusive`.

Resolution: a change counts only by what rounding cannot explain. When both entries say their
resolution (`step`), the change nearest to none that their values +/- half a step allow is what
must be beyond the threshold; if it is not, the verdict is `inconclusive`, test `within resolution`
(with the entry's note: a ratio of small numbers says which parts). This is what keeps 3 ms / 5 ms
becoming 6 ms / 5 ms at 1 ms steps (0.6 -> 1.2, +100%) from being a regression.

Machines: a threshold rule says which kind of metric it judges (`kind`). A `count` (bytes of an
object, failed invariant checks) is what the code does, the same on any machine, so it is
judged against a baseline of any machine; a `timing` (latencies, rates, RSS, ratios of latencies) is
judged only against a baseline of the same machine (`machine_check`): across two machines its row is
`unchecked`, test `other machine`, and the CLI says which fingerprint fields differ.
"""

from __future__ import annotations

import fnmatch
import math
from dataclasses import asdict, dataclass
from enum import Enum
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from harness.errors import KqbenchError
from harness.results import machines, summaries
from harness.stats import differences

SCHEMA_VERSION = 1
VERDICTS_VERSION = 1
"""Of `kqbench compare --json` output (`document`)."""


class Kind(str, Enum):
    """What a metric measures, for which baselines may judge it."""

    COUNT = "count"
    """What the code does, the same on any machine: judged against a baseline of any machine."""
    TIMING = "timing"
    """Moves with the machine (CPU, cores, kernel): judged only against a baseline of the same machine."""


class Threshold(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    metric: str
    """fnmatch pattern on the metric name (e.g. `ratio.*`, `apiserver.write_qps*`; in fnmatch `[*]` matches a literal `*`)."""
    point: str = "*"
    """fnmatch pattern on the sweep point (e.g. `strategy=status-field*`): a design whose figure spreads more gets a rule of its own."""
    scenario: str = "*"
    """fnmatch pattern on the scenario's name (the new summary's, else the base's): a rule whose spread was measured
    on one scenario judges that one only (the same points and phases in another move by other amounts)."""
    max_regression: float = Field(ge=0)
    """Smallest relative change in the bad direction that matters (0.2 = 20 % worse); regressed also needs significance."""
    min_base: float = 0.0
    """Ignore the check when the base value is below this (tiny bases make relative changes noise)."""
    max_absolute: float | None = None
    """Largest allowed absolute change in the bad direction (for counts whose base is often 0); beyond it the
    metric has regressed whatever the samples (a failed check is counted, not estimated)."""
    required: bool = False
    """Fail when the metric is in the base but missing from the new run."""
    kind: Kind = Kind.TIMING
    """`count`: a machine-independent figure of what the code does (bytes of an object, failed checks), judged
    against a baseline of any machine. `timing`: a latency, rate or anything else that moves with the machine,
    judged only against a baseline of the same machine. The default, so a rule nobody classified never judges
    across machines."""
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
    """How the verdict was reached: `significant`, `not significant`, `too few samples`, `threshold only`,
    `within resolution`, `count beyond threshold`, `other machine` (a timing across machines, not judged)."""
    note: str = ""
    """Why a side needs care (a ratio of small numbers), from the summary entries."""


VERDICTS = ("regressed", "improved", "same", "inconclusive", "missing", "new", "unchecked")
OTHER_MACHINE = "other machine"
"""The test of a timing's row across two machines: shown, not judged."""
COUNT_BEYOND = "count beyond threshold"
"""The test of a count judged without an interval (a side of one run): its threshold decides."""


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


def resolved_change(b: summaries.Entry, n: summaries.Entry) -> float | None:
    """The relative change nearest to none that both values allow at their resolution (each +/- half a step).

    None when a side has no step or a base that rounding could make 0 or less."""
    if b.step is None or n.step is None or b.value <= 0 or n.value < 0:
        return None
    base_low, base_high = b.value - b.step / 2, b.value + b.step / 2
    if base_low <= 0:
        return None
    smallest = (max(0.0, n.value - n.step / 2)) / base_high - 1
    largest = (n.value + n.step / 2) / base_low - 1
    return min(max(0.0, smallest), largest)


def judge(rule: Threshold | None, b: summaries.Entry, n: summaries.Entry) -> tuple[str, str, differences.Difference]:
    """(verdict, how it was reached, the difference): beyond the threshold, beyond the resolution AND significant to
    count; a `count` rule with a side of one run (no interval) is decided by its threshold."""
    diff = differences.difference(_side(b), _side(n))
    if rule is not None and rule.max_absolute is not None and worse_by(n.value - b.value, n.better) > rule.max_absolute:
        # A count of failed checks is a fact of the run, not an estimate: one more than allowed is enough.
        return "regressed", "beyond max_absolute", diff
    beyond = _beyond(rule, b, n, diff.relative)
    if beyond is None:
        return "unchecked", "", diff
    if beyond == 0:
        return "same", "within threshold", diff
    named = "regressed" if beyond > 0 else "improved"
    resolved = resolved_change(b, n)
    if resolved is not None and abs(worse_by(resolved, n.better)) <= rule.max_regression:
        return "inconclusive", "within resolution", diff
    if b.n is None or n.n is None:
        # A version-1 summary has no intervals: the old gate's rule, said so in the output.
        return named, "threshold only", diff
    if diff.low is None:
        if rule.kind == Kind.COUNT:
            # A count moves between runs far less than its threshold (each rule's provenance says how much), so
            # beyond it one run is evidence enough, as one more failed check is (`max_absolute`).
            return named, COUNT_BEYOND, diff
        return "inconclusive", "too few samples", diff
    worse_direction = 1 if n.better == "lower" else -1
    if diff.direction == worse_direction * beyond:
        return named, "significant", diff
    return "inconclusive", "not significant", diff


def rule_for(thresholds: Thresholds, entry: summaries.Entry, scenario: str = "") -> Threshold | None:
    """The first threshold whose metric, point and scenario patterns all match the entry of a scenario's run."""
    return next((t for t in thresholds.thresholds
                 if fnmatch.fnmatchcase(entry.metric, t.metric) and fnmatch.fnmatchcase(entry.point, t.point)
                 and fnmatch.fnmatchcase(scenario, t.scenario)), None)


def compare(base: summaries.Summary, new: summaries.Summary, thresholds: Thresholds,
            other_machine: bool = False) -> list[Row]:
    """Every metric of either side with its verdict; with `other_machine` (the two ran on different machines)
    only `count` rules judge, and a timing's row is `unchecked`, test `other machine`."""
    rows = []
    scenario = new.scenario or base.scenario
    for key in sorted(set(base.entries) | set(new.entries)):
        b, n = base.entries.get(key), new.entries.get(key)
        entry = n or b
        rule = rule_for(thresholds, entry, scenario)
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
        if other_machine and rule is not None and rule.kind == Kind.TIMING:
            verdict, test = "unchecked", OTHER_MACHINE
        note = "; ".join(dict.fromkeys(f"{side} {e.note}" for side, e in (("base", b), ("new", n)) if e.note))
        rows.append(Row(key, entry.metric, entry.point, entry.unit, b.value, n.value, diff.relative, limit, verdict,
                        diff.low, diff.high, _interval(b), _interval(n), b.n, n.n, test, note))
    return rows


@dataclass(frozen=True, slots=True)
class MachineCheck:
    same: bool | None
    """True: one machine; False: two (compare judges only counts); None: a side records no fingerprint."""
    differences: tuple[str, ...] = ()
    """`field: base -> new` per fingerprint field that differs."""
    calibration: float | None = None
    """new / base calibration p50 (above 1: the new run's machine answered slower), when both have one."""


CALIBRATION_DRIFT = 1.5
"""A calibration this many times slower or faster on one machine is said in a note: absolute figures moved with it."""


def machine_check(base: summaries.Summary, new: summaries.Summary) -> MachineCheck:
    """Whether two summaries ran on one machine (by fingerprint), and how their calibrations compare."""
    drift = None
    if base.calibration is not None and new.calibration is not None and base.calibration.p50_ms > 0:
        drift = new.calibration.p50_ms / base.calibration.p50_ms
    if base.machine is None or new.machine is None:
        return MachineCheck(None, (), drift)
    found = tuple(machines.differences(base.machine, new.machine))
    return MachineCheck(not found, found, drift)


def counts(rows: list[Row]) -> dict[str, int]:
    """How many rows have each verdict, every verdict named (0 when none)."""
    return {verdict: sum(r.verdict == verdict for r in rows) for verdict in VERDICTS}


def document(rows: list[Row], base: str, new: str, thresholds: str) -> dict:
    """The comparison as data: what was compared, each verdict's count, every row (intervals as [low, high])."""
    return {"schema_version": VERDICTS_VERSION, "base": base, "new": new, "thresholds": thresholds,
            "counts": counts(rows), "passed": not failed(rows), "rows": [asdict(r) for r in rows]}


def unchecked_timings(rows: list[Row]) -> int:
    """How many rows are timings left unjudged because the two sides ran on different machines."""
    return sum(r.test == OTHER_MACHINE for r in rows)


def failed(rows: list[Row]) -> bool:
    return any(r.verdict == "regressed" for r in rows)


def threshold_only(rows: list[Row]) -> bool:
    """Some verdict rests on thresholds alone (a side is a version-1 summary without intervals)."""
    return any(r.test == "threshold only" for r in rows)
