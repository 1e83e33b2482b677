"""The churn user's decisions: what to do next with its Workloads, given the time. Pure.

One ledger per churn user. The user asks `next_action(now)`, performs it against the apiserver and
reports back (`created`, `observed`, `finished`, `deleted`). Time is passed in, never read, so the
whole life cycle (pending -> admitted -> runtime -> Finished -> deleted) is tested without sleeping.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass, field

from loadtests import settings as load_settings
from loadtests.workloads import Phase


@dataclass(frozen=True, slots=True)
class Create:
    name: str
    queue: str
    kind: load_settings.WorkloadKind


@dataclass(frozen=True, slots=True)
class Finish:
    name: str


@dataclass(frozen=True, slots=True)
class Delete:
    name: str


@dataclass(frozen=True, slots=True)
class Refresh:
    """LIST this user's Workloads to learn which were admitted."""


@dataclass(frozen=True, slots=True)
class Wait:
    seconds: float


Action = Create | Finish | Delete | Refresh | Wait


@dataclass(slots=True)
class Tracked:
    name: str
    runtime_seconds: float
    """How long it runs once admitted (its kind's, or the annotation of an adopted Workload)."""
    created_at: float
    phase: Phase = Phase.PENDING
    admitted_at: float | None = None
    finishing: bool = False
    """A Finish was handed out and not yet confirmed: don't hand it out twice."""


@dataclass(slots=True)
class ChurnLedger:
    """The Workloads one churn user owns and the pacing of its creations."""

    settings: load_settings.ChurnSettings
    owner: str
    """Labels the user's Workloads; one user at a time holds it, and the next phase's user of the same slot
    takes over what the last one left (users never touch each other's Workloads)."""
    rng: random.Random = field(default_factory=random.Random)
    tracked: dict[str, Tracked] = field(default_factory=dict)
    next_create_at: float | None = None
    last_refresh_at: float | None = None
    serial: int = 0
    prefix: str = ""
    """Starts the names it creates (unique per user and process; default: the owner)."""

    @property
    def pending(self) -> int:
        return sum(1 for t in self.tracked.values() if t.phase is Phase.PENDING)

    def count(self, phase: Phase) -> int:
        return sum(1 for t in self.tracked.values() if t.phase is phase)

    def next_action(self, now: float) -> Action:
        """Deletes first (they free etcd), then due finishes, a due refresh (the very first action is one),
        a paced create, else wait."""
        for t in self.tracked.values():
            if t.phase is Phase.FINISHED:
                return Delete(t.name)
        waits: list[float] = []
        for t in self.tracked.values():
            if t.phase is Phase.ADMITTED and not t.finishing:
                due = (now if t.admitted_at is None else t.admitted_at) + t.runtime_seconds
                if due <= now:
                    t.finishing = True
                    return Finish(t.name)
                waits.append(due - now)
        # The first LIST comes before any create: it finds what an earlier phase's user of this owner left.
        if self.last_refresh_at is None or (self.tracked and now - self.last_refresh_at >= self.settings.refresh_seconds):
            self.last_refresh_at = now
            return Refresh()
        if self.tracked and self.last_refresh_at is not None:
            waits.append(self.last_refresh_at + self.settings.refresh_seconds - now)
        if self.pending < self.settings.pending_target and self.settings.create_per_second > 0:
            if self.next_create_at is None or self.next_create_at <= now:
                interval = 1.0 / self.settings.create_per_second
                # Pacing from the schedule, not from `now`, keeps the long-run rate exact despite jitter.
                self.next_create_at = max(self.next_create_at or now, now - interval) + interval
                return self._create()
            waits.append(self.next_create_at - now)
        return Wait(max(0.0, min(waits)) if waits else self.settings.refresh_seconds)

    def _create(self) -> Create:
        self.serial += 1
        kinds = self.settings.mix
        kind = self.rng.choices(kinds, weights=[k.weight for k in kinds])[0]
        queue = self.rng.choice(self.settings.local_queues)
        return Create(name=f"{self.prefix or self.owner}-{self.serial}", queue=queue, kind=kind)

    def created(self, action: Create, now: float) -> None:
        self.tracked[action.name] = Tracked(action.name, action.kind.runtime_seconds, created_at=now)

    def create_failed(self, action: Create) -> None:
        """Nothing to track; the pacing slot is spent so a failing apiserver is not hammered."""

    def observed(self, phases: dict[str, Phase], now: float, runtimes: Mapping[str, float] | None = None,
                 admitted_ago: Mapping[str, float] | None = None) -> None:
        """Apply a LIST of this owner's Workloads: new admissions start their runtime clock, and Workloads a
        user of an earlier phase left behind are taken over (runtime from `runtimes`, else the mix's longest;
        admitted `admitted_ago` seconds before, by their Admitted condition), so that what it admitted still
        finishes on time and its pending ones count toward the depth."""
        for name, seen in phases.items():
            if name not in self.tracked:
                runtime = (runtimes or {}).get(name, max(k.runtime_seconds for k in self.settings.mix))
                since = now - max(0.0, (admitted_ago or {}).get(name, 0.0))
                self.tracked[name] = Tracked(name, runtime, created_at=now, phase=seen,
                                             admitted_at=since if seen is Phase.ADMITTED else None)
        for name, t in list(self.tracked.items()):
            seen = phases.get(name)
            if seen is None:
                if now - t.created_at > self.settings.refresh_seconds:
                    del self.tracked[name]  # deleted by someone else (or never stored): stop tracking
                continue
            if seen is Phase.ADMITTED and t.phase is Phase.PENDING:
                t.phase, t.admitted_at = Phase.ADMITTED, now
            elif seen is Phase.FINISHED:
                t.phase = Phase.FINISHED

    def finished(self, name: str, ok: bool) -> None:
        t = self.tracked.get(name)
        if t is None:
            return
        t.finishing = False
        if ok:
            t.phase = Phase.FINISHED

    def deleted(self, name: str) -> None:
        self.tracked.pop(name, None)


BACK_OFF_FIRST, BACK_OFF_MAX = 0.1, 2.0


def should_back_off(status: int) -> bool:
    """No answer (0), throttled (429) or a server error: the apiserver is away or overloaded."""
    return status == 0 or status == 429 or status >= 500


def back_off_seconds(failed_in_a_row: int) -> float:
    """The pause before the next action after that many failed requests in a row (doubling, capped),
    as client-go backs off: without it a churn user sent ~300,000 refused PATCHes in the 5 s a
    kube-apiserver was down."""
    return min(BACK_OFF_FIRST * 2 ** max(0, failed_in_a_row - 1), BACK_OFF_MAX)
