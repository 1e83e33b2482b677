"""Kueue's scheduling cycles as its own log tells them (pure): what it held, which heads it
tried, and what it decided for each.

Kueue writes one JSON line per event; at `--zap-log-level=3` its scheduler logs every cycle:
"Snapshot taken" (the cache is read here), "Workload evaluated for admission" per head (with
the status and the reason it stayed pending), "Workload successfully admitted and assigned
flavors", and "Preempted" per target it evicts. Its workload reconciler logs every Workload event
with the status its cache gives it (pending / assumed / admitted / finished). Replaying those
lines gives, for each cycle, the quota holders Kueue saw and the heads it decided on, which is
what a differential replay puts to another scheduler.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

LOG_LEVEL = 3
"""The `--zap-log-level` at which the scheduler logs its cycles."""
PENDING_PREEMPTION = "Pending the preemption of"
"""In a head's reason: its targets were evicted in an earlier cycle and still hold their quota."""
HOLDING = ("admitted", "assumed")
READ = frozenset({"Workload create event", "Workload update event", "Workload assumed in the cache", "Snapshot taken",
                  "Workload evaluated for admission", "Workload successfully admitted and assigned flavors",
                  "Preempted"})
"""The messages the reader takes; every other line is passed over."""
FIELDS = ("ts", "msg", "schedulingCycle", "workload", "clusterQueue", "status", "prevStatus", "reason",
          "preemptingWorkload", "targetWorkload")
"""The fields of those lines it reads."""


@dataclass(frozen=True, slots=True)
class Holding:
    """A Workload holding quota when a cycle took its snapshot."""

    cluster_queue: str
    since: float
    """When Kueue assumed (or was seen to admit) it, POSIX seconds."""
    evicted: bool
    """Kueue issued its eviction; the quota is still held until the Workload is released."""


@dataclass(frozen=True, slots=True)
class Outcome:
    kind: str
    """admit | preempt | pending-preemption | other (stays pending: no fit, no candidates, skipped)."""
    targets: tuple[str, ...] = ()
    reason: str = ""


@dataclass(slots=True)
class Cycle:
    number: int
    at: float
    holding: dict[str, Holding]
    heads: list[str] = field(default_factory=list)
    outcomes: dict[str, Outcome] = field(default_factory=dict)


def timestamp(text: str) -> float:
    """Kueue's `ts` (RFC 3339 with nanoseconds) -> POSIX seconds."""
    whole, _, fraction = text.rstrip("Z").partition(".")
    seconds = dt.datetime.fromisoformat(whole).replace(tzinfo=dt.timezone.utc).timestamp()
    return seconds + (float(f"0.{fraction}") if fraction else 0.0)


def _name(value) -> str:
    return value.get("name", "") if isinstance(value, dict) else str(value or "")


@dataclass(slots=True)
class _Reader:
    created: dict[str, float] = field(default_factory=dict)
    holding: dict[str, Holding] = field(default_factory=dict)
    cycles: dict[int, Cycle] = field(default_factory=dict)

    def take(self, entry: dict) -> None:
        msg, number = entry.get("msg"), entry.get("schedulingCycle")
        name = _name(entry.get("workload"))
        if msg == "Workload create event":
            self.created[name] = timestamp(entry["ts"])
        elif msg == "Workload update event":
            self._update(name, entry)
        elif msg == "Workload assumed in the cache":
            self.holding[name] = Holding(_name(entry.get("clusterQueue")), timestamp(entry["ts"]), False)
        elif msg == "Snapshot taken" and number is not None:
            self.cycles[number] = Cycle(number, timestamp(entry["ts"]), dict(self.holding))
        elif number in self.cycles:
            self._decision(self.cycles[number], msg, name, entry)

    def _update(self, name: str, entry: dict) -> None:
        status, before, held = entry.get("status"), entry.get("prevStatus"), self.holding.get(name)
        if status in HOLDING:
            if held is None:
                self.holding[name] = Holding(_name(entry.get("clusterQueue")), timestamp(entry["ts"]), False)
        elif held is not None and (status == "finished" or (status == "pending" and before in HOLDING)):
            # released after its eviction, or done; a pending -> pending event is an older write
            # arriving after the scheduler assumed the Workload, and the cache keeps the assumption
            del self.holding[name]

    def _decision(self, cycle: Cycle, msg: str, name: str, entry: dict) -> None:
        if msg == "Workload evaluated for admission":
            cycle.heads.append(name)
            reason = entry.get("reason", "") or ""
            kind = "pending-preemption" if PENDING_PREEMPTION in reason else "other"
            # logged last in the cycle: an admission or preemption already recorded stands
            cycle.outcomes.setdefault(name, Outcome(kind, reason=reason))
        elif msg == "Workload successfully admitted and assigned flavors":
            cycle.outcomes[name] = Outcome("admit")
        elif msg == "Preempted":
            preemptor, target = _name(entry.get("preemptingWorkload")), _name(entry.get("targetWorkload"))
            previous = cycle.outcomes.get(preemptor)
            targets = previous.targets if previous is not None and previous.kind == "preempt" else ()
            cycle.outcomes[preemptor] = Outcome("preempt", targets + (target,))
            held = self.holding.get(target)
            if held is not None:
                self.holding[target] = Holding(held.cluster_queue, held.since, True)


def entries(lines: Iterable[str]) -> Iterator[dict]:
    """The log lines the reader takes, as dicts of the fields it reads. Lines that are not JSON
    (the command line the harness writes first, one cut short when the process stopped) are passed over."""
    for line in lines:
        if not line.startswith("{"):
            continue
        try:
            entry = json.loads(line)
        except json.JSONDecodeError:
            continue
        if entry.get("msg") in READ:
            yield {k: entry[k] for k in FIELDS if k in entry}


def read(lines: Iterable[str], keep: Callable[[dict], None] | None = None) -> tuple[list[Cycle], dict[str, float]]:
    """Every cycle the log shows (in order) and each Workload's creation time as Kueue saw it;
    ``keep`` gets every entry read (to store the trimmed log beside a result)."""
    reader = _Reader()
    for entry in entries(lines):
        if keep is not None:
            keep(entry)
        reader.take(entry)
    return [reader.cycles[n] for n in sorted(reader.cycles)], reader.created
