"""When the next timed lifecycle step of a batch is due, read from the Workloads themselves (pure).

Execution limits, PodsReady timeouts, backoffs and check rules act on a clock, not on an event the tester
makes. So that decisions are still read at a point where nothing is left to happen, an epoch does not end
at its first settled point: while some step is due later, the runner waits until it has passed (plus a
margin), lets the decisions settle again, and asks once more (``running``). Every time comes from the
objects (condition transition times, ``requeueAt``, whole seconds as the API keeps them), never from when
the tester happened to see a change, so both implementations are waited for alike.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from harness.agreeing import lifecycles
from harness.workloads import checkrules
from scheduler.core import conditions, conversion


def stamp_seconds(stamp: str | None) -> float | None:
    """An API time (RFC 3339) as POSIX seconds, the core's reading (conversion); None when absent or unreadable."""
    if not stamp:
        return None
    try:
        return conversion.parse_timestamp(stamp)
    except ValueError:
        return None


def _since(obj: Mapping, kind: str) -> float | None:
    """When a condition turned True (None if it is not True)."""
    condition = conditions.condition(obj, kind)
    if condition is None or condition.get("status") != "True":
        return None
    return stamp_seconds(condition.get("lastTransitionTime"))


def dues(obj: Mapping, settings: lifecycles.WaitForPodsReady | None) -> list[float]:
    """Every time at which a scheduler or the check controller will act on this Workload by itself."""
    if (obj.get("spec") or {}).get("active", True) is False or conditions.is_true(obj, "Finished"):
        return []
    status = obj.get("status") or {}
    out = []
    if at := stamp_seconds((status.get("requeueState") or {}).get("requeueAt")):
        out.append(at)  # the end of a backoff (PodsReady timeout, or a check's Retry)
    evicted = conditions.is_true(obj, "Evicted")
    admitted = _since(obj, "Admitted")
    limit = (obj.get("spec") or {}).get("maximumExecutionTimeSeconds")
    if admitted is not None and not evicted and limit is not None:
        out.append(admitted + limit - int(status.get("accumulatedPastExecutionTimeSeconds") or 0))
    if admitted is not None and not evicted and settings is not None and not conditions.is_true(obj, "PodsReady"):
        out.append(admitted + settings.timeoutSeconds)
    reserved = _since(obj, "QuotaReserved")
    for state in status.get("admissionChecks") or ():
        since = stamp_seconds(state.get("lastTransitionTime"))
        if state.get("state") == checkrules.RETRY and since is not None:
            out.append(since + int(state.get("requeueAfterSeconds") or 0))
        if state.get("state") == "Pending" and reserved is not None and not evicted:
            rule = _rule(obj)
            if rule is not None and rule.ready_after_seconds:
                out.append(reserved + rule.ready_after_seconds)
    return out


PREEMPTED = "Preempted"


def lifecycle_evictions_since(workloads: Iterable[Mapping], since: float) -> dict[str, list[int]]:
    """Workloads evicted by a lifecycle step (any reason but a preemption) at ``since`` or later, by the
    Evicted condition's whole-second time: reason -> seconds after ``since`` of each (whole seconds)."""
    found: dict[str, list[int]] = {}
    for obj in workloads:
        evicted = conditions.condition(obj, "Evicted")
        if evicted is None or evicted.get("status") != "True" or evicted.get("reason") == PREEMPTED:
            continue
        at = stamp_seconds(evicted.get("lastTransitionTime"))
        if at is not None and at >= int(since):
            found.setdefault(evicted.get("reason") or "", []).append(int(at - int(since)))
    return found


def describe_early(found: Mapping[str, list[int]]) -> str:
    """`12 (PodsReadyTimeout 12, 44-46 s after the opening)`: what ``lifecycle_evictions_since`` found."""
    after = [s for seconds in found.values() for s in seconds]
    reasons = ", ".join(f"{reason} {len(seconds)}" for reason, seconds in sorted(found.items()))
    return f"{len(after)} ({reasons}, {min(after)}-{max(after)} s after the opening)"


def awaits_check(obj: Mapping) -> bool:
    """Holding quota, not evicted, and some admission check still Pending: the check controller has a verdict
    to give (kqbench's controller gives every check one, ready, retry or reject)."""
    if (obj.get("spec") or {}).get("active", True) is False or conditions.is_true(obj, "Finished"):
        return False
    if not conditions.is_true(obj, "QuotaReserved") or conditions.is_true(obj, "Evicted"):
        return False
    return any(state.get("state") == "Pending" for state in (obj.get("status") or {}).get("admissionChecks") or ())


def _rule(obj: Mapping) -> checkrules.Rule | None:
    text = ((obj.get("metadata") or {}).get("annotations") or {}).get(checkrules.RULE_ANNOTATION)
    try:
        return checkrules.parse(text)
    except checkrules.BadRule:
        return None


def next_due(workloads: Iterable[Mapping], settings_by_prefix: Mapping[str, lifecycles.WaitForPodsReady | None],
             now: float, horizon: float) -> float | None:
    """The earliest time after ``now`` (and within ``horizon`` seconds of it) at which a Workload of a case
    in ``settings_by_prefix`` (prefix -> its waitForPodsReady) has a timed step due; None when none has."""
    found = []
    for obj in workloads:
        prefix = ((obj.get("metadata") or {}).get("namespace") or "").split("-", 1)[0]
        if prefix not in settings_by_prefix:
            continue
        found += [t for t in dues(obj, settings_by_prefix[prefix]) if now < t <= now + horizon]
    return min(found, default=None)
