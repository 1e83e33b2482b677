"""Kueue's baseline in process at a chosen pace (pure): the reference core decides, a clock stands in
for the cluster, and the pace is what a real run would give it.

Why: two schedulers that take the same decision on the same state (`kqbench replay`) can still
evict very differently in a run, because how often a head is tried, and how stale the quota it
sees, decide whether it preempts or finds room. Here the decisions are fixed (the core) and the pace
is the variable, so a sweep shows how much of a difference in evictions the pace alone makes.

The pace of one run:
- a cycle costs `cycle_seconds`, plus `write_seconds` for each head it turned away whose reason
  changed, written one after another before the next cycle (Kueue's requeueAndUpdate; 0 for the
  reference scheduler, which writes nothing to a waiting head); after a cycle that admitted nothing
  the next waits 1 ms doubling to 10 ms (Kueue's loop);
- an admission reaches the job (the generator's timer starts) `start_seconds` after its cycle, a
  finish reaches the scheduler `finish_seconds` after the run time ends, and an eviction releases its
  quota `release_seconds` after the cycle that chose it (Kueue leaves that to the job's controller).
"""

from __future__ import annotations

import heapq
import itertools
import random
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

from harness.agreeing import simulating
from harness.drivers.kueuebaseline import generating
from harness.load import arrivals
from harness.scenarios import queueobjects, sections
from scheduler.controller.controlling import ControllerSettings, next_slow_down
from scheduler.core import conversion, scheduling
from scheduler.core.decisions import Admit, Park, Preempt
from scheduler.core.queues import QueueManager

START = 1_700_000_000.0
"""The simulated clock's origin (POSIX seconds), so that creation times are real-looking timestamps."""
MAX_CYCLES = 200_000


@dataclass(frozen=True, slots=True)
class Pace:
    cycle_seconds: float = 0.003
    profile: tuple[tuple[float, float], ...] = ()
    """(seconds, share) pairs: each cycle lasts one of these, drawn by share with a fixed seed, instead of
    `cycle_seconds` (a measured scheduler's spread of cycle times; see `profile_of`)."""
    write_seconds: float = 0.0
    start_seconds: float = 0.02
    finish_seconds: float = 0.02
    release_seconds: float = 0.0


@dataclass(slots=True)
class Outcome:
    pace: Pace
    wall_seconds: float = 0.0
    cycles: int = 0
    admissions: int = 0
    evictions: int = 0
    pending_writes: int = 0
    finished: int = 0
    evictions_by_class: dict[str, int] = field(default_factory=dict)
    heads: int = 0
    """Heads the cycles decided on, whatever they decided (a cycle log's lines)."""
    preempting_heads: int = 0
    parked_heads: int = 0
    """Heads set aside as not fitting, until a release of quota brings them back."""
    complete: bool = False


def profile_of(buckets: dict[float, float]) -> tuple[tuple[float, float], ...]:
    """A pace profile from a cumulative histogram of cycle durations (upper bound -> count, Prometheus
    style, +Inf left out): each bucket's share at its midpoint."""
    out, low, below = [], 0.0, 0.0
    for bound in sorted(buckets):
        count = buckets[bound]
        if count > below:
            out.append(((low + bound) / 2, count - below))
        low, below = bound, count
    total = sum(share for _, share in out)
    return tuple((seconds, share / total) for seconds, share in out)


def run(scenario: sections.ScenarioFields, pace: Pace, bound_seconds: float = 900.0,
        settings: Mapping[str, bool] | None = None) -> Outcome:
    """Create on the scenario's schedule, decide with the core at ``pace``, until every Workload
    finished or ``bound_seconds`` of simulated time passed; ``settings``: the core's Kueue-version
    settings (harness.toolchain.versions.reference_settings; none: Kueue v0.17's)."""
    plan = arrivals.from_scenario(scenario)
    manager = simulating.manager_with([obj for _, obj in queueobjects.manifests(scenario.queues)], **(settings or {}))
    manager.requeue_batch_seconds = 1.0
    return _Run(manager, plan, pace).until(bound_seconds)


class _Run:
    def __init__(self, manager: QueueManager, plan: arrivals.Plan, pace: Pace) -> None:
        self.manager, self.pace = manager, pace
        self.outcome = Outcome(pace)
        self.total = plan.total
        self.events: list[tuple[float, int, str, object]] = []
        self._order = itertools.count()
        self.classes: dict[str, arrivals.WorkloadClass] = {}
        self.epoch: dict[tuple[str, str], int] = {}  # admission epoch each running Workload's timer is for
        self.said: dict[tuple[str, str], str] = {}  # the reason last written on each Workload
        self.releasing: set[tuple[str, str]] = set()
        self._random = random.Random(0)
        for creation in arrivals.schedule(plan):
            self.classes[creation.name] = creation.workload_class
            self._at(creation.at, "create", creation)

    def _at(self, t: float, kind: str, payload: object) -> None:
        heapq.heappush(self.events, (t, next(self._order), kind, payload))

    def _due(self, now: float) -> Iterator[tuple[str, object]]:
        while self.events and self.events[0][0] <= now:
            _, _, kind, payload = heapq.heappop(self.events)
            yield kind, payload

    def until(self, bound: float) -> Outcome:
        now, slow_down = 0.0, 0.0
        for _ in range(MAX_CYCLES):
            self._apply(now)
            if self.outcome.finished == self.total or now > bound:
                break
            self.manager.retry_parked(START + now)
            decisions = scheduling.run_cycle(self.manager, START + now) if self.manager.has_work() else []
            if not decisions:
                now = self._idle_until(now)
                continue
            self.outcome.cycles += 1
            writes = self._decided(decisions, now)
            now += self._cycle_seconds() + writes * self.pace.write_seconds
            admitted = any(isinstance(d, Admit) for d in decisions)
            slow_down = 0.0 if admitted else next_slow_down(slow_down, ControllerSettings().slow_down_seconds)
            now += slow_down
        self.outcome.wall_seconds = now
        self.outcome.complete = self.outcome.finished == self.total
        return self.outcome

    def _cycle_seconds(self) -> float:
        if not self.pace.profile:
            return self.pace.cycle_seconds
        seconds, shares = zip(*self.pace.profile)
        return self._random.choices(seconds, shares)[0]

    def _idle_until(self, now: float) -> float:
        """Nothing to try: on to the next event or batched retry."""
        self.manager.retry_parked(START + now)
        due = self.manager.next_retry_at()
        nexts = [t for t in (self.events[0][0] if self.events else None,
                             None if due is None else due - START) if t is not None]
        return max(now, min(nexts)) if nexts else now + 1.0

    def _decided(self, decisions: list, now: float) -> int:
        """Start what each decision starts; how many pending reasons a Kueue-paced cycle writes."""
        end = now + self.pace.cycle_seconds
        writes = 0
        for decision in decisions:
            key = decision.workload.key
            self.outcome.heads += 1
            self.outcome.parked_heads += isinstance(decision, Park)
            self.outcome.preempting_heads += isinstance(decision, Preempt)
            if isinstance(decision, Admit):
                self.outcome.admissions += 1
                epoch = self.epoch.get(key, 0) + 1
                self.epoch[key] = epoch
                runtime = self.classes[decision.workload.name].runtime_seconds
                self._at(end + self.pace.start_seconds + runtime + self.pace.finish_seconds, "finish", (key, epoch))
                continue
            message = decision.message
            if isinstance(decision, Preempt):
                started = [t for t in decision.to_evict() if t.workload.key not in self.releasing]
                for target in started:
                    self.releasing.add(target.workload.key)
                    self.epoch[target.workload.key] = self.epoch.get(target.workload.key, 0) + 1  # its timer is void
                    self._at(end + self.pace.release_seconds, "release", target.workload.key)
                    cls = self.classes[target.workload.name].name
                    self.outcome.evictions_by_class[cls] = self.outcome.evictions_by_class.get(cls, 0) + 1
                self.outcome.evictions += len(started)
                if started:
                    message += f". Pending the preemption of {len(started)} workload(s)"
            if self.pace.write_seconds and self.said.get(key) != message:
                self.said[key] = message
                writes += 1
        self.outcome.pending_writes += writes
        return writes

    def _apply(self, now: float) -> None:
        for kind, payload in self._due(now):
            if kind == "create":
                creation: arrivals.Creation = payload  # type: ignore[assignment]
                body = generating.workload_body(creation)
                body["spec"]["priority"] = creation.workload_class.priority
                body["metadata"].update(uid=f"uid-{creation.name}",
                                        creationTimestamp=conversion.format_timestamp(START + creation.at))
                self.manager.add_workload(conversion.workload_from_dict(body))
            elif kind == "finish":
                key, epoch = payload  # type: ignore[misc]
                if self.epoch.get(key) == epoch and self.manager.admitted(key) is not None:
                    self.manager.mark_finished(key)
                    self.said.pop(key, None)
                    self.outcome.finished += 1
            elif kind == "release":
                key = payload
                self.releasing.discard(key)  # type: ignore[arg-type]
                self.manager.mark_evicted(key, "Preempted", START + now)  # type: ignore[arg-type]
