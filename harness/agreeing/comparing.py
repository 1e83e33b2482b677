"""Two runs of one case, compared at every settled point (pure).

A *decision* is what the agreement rate counts: for every Workload that has arrived, where it holds
quota after the epoch (ClusterQueue and flavor per pod set and resource, or nowhere), and for every
Workload either side evicted during the epoch, that it was evicted and why; and, for every Workload
either side gave a lifecycle mark (``LIFECYCLE_KINDS``), whether it is deactivated and why, how many
PodsReady timeouts requeued it, and its admission check states. Pending order (per
ClusterQueue and LocalQueue) and ClusterQueue usage are compared too and reported beside them:
they follow from the decisions, so they are not counted twice.

A *tie* is an epoch whose evictions differ only by a coin flip of Kueue's: it orders preemption
candidates by (evicted, in the preemptor's ClusterQueue, priority, quota reserved more recently,
UID), and the API keeps the reservation time in whole seconds while the UID is random per cluster,
so between candidates equal in all but the UID either may go (see ``_is_tie``). The candidates may
have held their quota since an earlier epoch or have been admitted in the tie's own epoch (Kueue's
cache keeps a new admission's exact time until the API's echo replaces it: a preemption that comes
after the echo sees one second for both). The coin may also decide whether a preemption happens at all:
Kueue takes candidates of another ClusterQueue only while that queue still borrows
(classical/candidate_generator.go ``candidateIsValid``), so when the first of two tied candidates to go
brings their queue back within its nominal quota, the second is no longer valid and the preemptor may
find no set where the other order found one (``_preempted_on_one_side``). From a tie on, a case's
decisions are set aside: counted neither agreeing nor disagreeing, their differences kept apart
(``Comparison.set_aside``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from harness.agreeing import cases
from harness.agreeing.decisions import Decisions


LIFECYCLE_KINDS = ("deactivation", "requeue", "checks")
"""Decisions of the Workload lifecycle, each counted for the Workloads either side marked (a Workload
neither deactivated, requeued nor checked is no decision of these kinds)."""
DECISION_KINDS = ("admission", "eviction", *LIFECYCLE_KINDS)
"""What the agreement rate counts; pending lists and usage follow from them."""
TIE = "tie-target"
"""The class of a tie's own evictions (``replaying`` names the same tie in one cycle so)."""


@dataclass(frozen=True)
class Difference:
    epoch: int
    kind: str
    """admission | eviction | deactivation | requeue | checks | pending | pending-local | usage"""
    subject: str
    a: object
    b: object

    @property
    def klass(self) -> str:
        """A coarse signature, so that many differences of one cause group together."""
        if self.kind == "admission":
            if self.a is None or self.b is None:
                return "admission: " + ("only b admits" if self.a is None else "only a admits")
            if self.a[0] != self.b[0]:  # type: ignore[index]
                return "admission: different ClusterQueue"
            return "admission: different flavors"
        if self.kind == "eviction":
            if self.a is None or self.b is None:
                return "eviction: " + ("only b evicts" if self.a is None else "only a evicts")
            return "eviction: different reason"
        if self.kind in LIFECYCLE_KINDS:
            if self.a is None or self.b is None:
                return f"{self.kind}: only {'b' if self.a is None else 'a'}"
            return f"{self.kind}: different"
        return self.kind


@dataclass(frozen=True)
class Tie:
    epoch: int
    a: tuple[str, ...]
    """Evicted by a and not by b in that epoch (or by the flipping preemptor on a and not on b)."""
    b: tuple[str, ...]

    def klass(self, difference: Difference) -> str:
        """``TIE`` for the tie's own evictions, the difference's class for what followed."""
        if difference.kind == "eviction" and difference.epoch == self.epoch:
            return TIE
        return difference.klass


@dataclass(frozen=True)
class Comparison:
    decisions: int = 0
    """Compared and counted: up to a tie, if there was one."""
    agreeing: int = 0
    orders: int = 0
    """Pending lists and usages compared (up to a tie)."""
    orders_agreeing: int = 0
    differences: tuple[Difference, ...] = field(default_factory=tuple)
    """Disagreements: differences before any tie."""
    tie: Tie | None = None
    set_aside: tuple[Difference, ...] = field(default_factory=tuple)
    """Differences from the tie's epoch on: neither agreeing nor disagreeing."""
    decisions_set_aside: int = 0
    """Decisions from the tie's epoch on, not counted in ``decisions``."""

    @property
    def agrees(self) -> bool:
        """Nothing differs before a tie (what follows a tie is not compared)."""
        return not self.differences

    @property
    def first_epoch(self) -> int | None:
        return min((d.epoch for d in self.differences), default=None)


def compare(case: cases.Case, a: Sequence[Decisions], b: Sequence[Decisions]) -> Comparison:
    """Every settled point both runs reached; a run that stopped early is compared up to there."""
    priorities = {w.name: w.priority for w in case.workloads()}
    counted = Comparison()
    tie: Tie | None = None
    set_aside: list[Difference] = []
    decisions_set_aside = 0
    arrived: list[str] = []
    for epoch, (da, db) in enumerate(zip(a, b, strict=False)):
        arrived += [w.name for w in case.epochs[epoch].arrive] if epoch < len(case.epochs) else []
        found = _compare_epoch(epoch, arrived, da, db)
        if tie is None:
            before_a, before_b = (a[epoch - 1], b[epoch - 1]) if epoch else (Decisions(), Decisions())
            tie = _is_tie(epoch, da, db, before_a, before_b, priorities)
        if tie is not None:
            set_aside += found.differences
            decisions_set_aside += found.decisions
            continue
        counted = Comparison(counted.decisions + found.decisions, counted.agreeing + found.agreeing,
                             counted.orders + found.orders, counted.orders_agreeing + found.orders_agreeing,
                             counted.differences + found.differences)
    return Comparison(counted.decisions, counted.agreeing, counted.orders, counted.orders_agreeing,
                      counted.differences, tie, tuple(set_aside), decisions_set_aside)


def _compare_epoch(epoch: int, arrived: list[str], da: Decisions, db: Decisions) -> Comparison:
    decisions = agreeing = orders = orders_agreeing = 0
    differences: list[Difference] = []
    for name in arrived:
        decisions += 1
        left, right = da.admitted.get(name), db.admitted.get(name)
        if left == right:
            agreeing += 1
        else:
            differences.append(Difference(epoch, "admission", name, left, right))
    evicted_a, evicted_b = dict(da.evicted), dict(db.evicted)
    for name in sorted(evicted_a.keys() | evicted_b.keys()):
        decisions += 1
        if evicted_a.get(name) == evicted_b.get(name):
            agreeing += 1
        else:
            differences.append(Difference(epoch, "eviction", name, evicted_a.get(name), evicted_b.get(name)))
    for kind, left_map, right_map in (("deactivation", da.deactivated, db.deactivated),
                                      ("requeue", da.requeues, db.requeues), ("checks", da.checks, db.checks)):
        for name in sorted(left_map.keys() | right_map.keys()):
            decisions += 1
            if left_map.get(name) == right_map.get(name):
                agreeing += 1
            else:
                differences.append(Difference(epoch, kind, name, left_map.get(name), right_map.get(name)))
    for kind, left_map, right_map in (("pending", da.pending, db.pending),
                                      ("pending-local", da.pending_local, db.pending_local),
                                      ("usage", da.usage, db.usage)):
        for key in sorted(left_map.keys() | right_map.keys()):
            orders += 1
            left, right = left_map.get(key, ()), right_map.get(key, ())
            if left == right:
                orders_agreeing += 1
            else:
                differences.append(Difference(epoch, kind, key, left, right))
    return Comparison(decisions, agreeing, orders, orders_agreeing, tuple(differences))


def _is_tie(epoch: int, da: Decisions, db: Decisions, before_a: Decisions, before_b: Decisions,
            priorities: dict[str, int]) -> Tie | None:
    """The epoch's evictions differ only among Workloads with one priority that each side held in one
    ClusterQueue, reserved in one second; as many on each side, for the same reasons. Or one preemptor
    evicted as many on each side and its victims differ only so (``_flipped_by_one_preemptor``). Else
    None (and None when a side has no reservation times: old runs).

    Both sides must see the tie: a side that reserved them in different seconds had an order to
    follow. From the tie on, the rest of the case is set aside rather than compared with the tied
    names swapped: the two evictees are equal only in what Kueue sorts candidates by, not in what
    they request or where they queue, so after the flip the two clusters free different quota and
    requeue different Workloads, and a swap would compare states neither run reached from a common
    one (calling the flip's consequences disagreements, or hiding a real one behind the swap). The
    decisions set aside are counted, so the cost of this rule shows in every summary.
    """
    evicted_a, evicted_b = dict(da.evicted), dict(db.evicted)
    if any(evicted_a[n] != evicted_b[n] for n in evicted_a.keys() & evicted_b.keys()):
        return None  # the same Workload evicted for different reasons: no coin decides that
    flipped = (_flipped_by_one_preemptor(da, db, before_a, before_b, priorities)
               or _preempted_on_one_side(da, db, before_a, before_b, priorities))
    if flipped is not None:
        return Tie(epoch, *flipped)
    only_a = sorted(evicted_a.keys() - evicted_b.keys())
    only_b = sorted(evicted_b.keys() - evicted_a.keys())
    if not only_a or sorted(evicted_a[n] for n in only_a) != sorted(evicted_b[n] for n in only_b):
        return None
    names = only_a + only_b
    if not _tied(names, ((da, before_a), (db, before_b)), priorities):
        return None
    return Tie(epoch, tuple(only_a), tuple(only_b))


def _flipped_by_one_preemptor(da: Decisions, db: Decisions, before_a: Decisions, before_b: Decisions,
                              priorities: dict[str, int]) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    """A preemptor that evicted as many Workloads on each side, for the same reasons, differing only in
    tied ones: (its victims on a only, on b only). What follows in the epoch may differ in number (a
    second preemptor needs a victim the first left on one side only), so the evictions as a whole
    need not pair up."""
    reasons_a, reasons_b = dict(da.evicted), dict(db.evicted)
    for preemptor in sorted(set(da.evicted_by.values()) & set(db.evicted_by.values())):
        victims_a = {n for n, p in da.evicted_by.items() if p == preemptor}
        victims_b = {n for n, p in db.evicted_by.items() if p == preemptor}
        if victims_a == victims_b or len(victims_a) != len(victims_b):
            continue
        if sorted(reasons_a[n] for n in victims_a) != sorted(reasons_b[n] for n in victims_b):
            continue
        if _tied(sorted(victims_a ^ victims_b), ((da, before_a), (db, before_b)), priorities):
            return tuple(sorted(victims_a - victims_b)), tuple(sorted(victims_b - victims_a))
    return None


def _preempted_on_one_side(da: Decisions, db: Decisions, before_a: Decisions, before_b: Decisions,
                           priorities: dict[str, int]) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    """A preemptor that evicted two or more Workloads on one side and nothing on the other, its victims
    tied with each other on both sides and evicted by no one on the other: (its victims on a, on b), one of
    them empty. Which tied candidate Kueue tries first is the UID's coin, and the first one gone can take
    their queue back within nominal, which makes the rest invalid candidates, so the same state may give
    a preemption or none."""
    sides = ((da, before_a), (db, before_b))
    for now, other in ((da, db), (db, da)):
        for preemptor in sorted(set(now.evicted_by.values()) - set(other.evicted_by.values())):
            victims = sorted(n for n, p in now.evicted_by.items() if p == preemptor)
            if len(victims) < 2 or set(victims) & dict(other.evicted).keys():
                continue
            if _tied(victims, sides, priorities):
                return (tuple(victims), ()) if now is da else ((), tuple(victims))
    return None


def _tied(names: list[str], sides, priorities: dict[str, int]) -> bool:
    """One priority, and on every side one ClusterQueue and one reservation second, for all of ``names``."""
    if any(n not in priorities for n in names) or len({priorities[n] for n in names}) != 1:
        return False
    for now, before in sides:
        held = {_held(n, now, before) for n in names}
        if None in held or len(held) != 1:
            return False
    return True


def _held(name: str, now: Decisions, before: Decisions) -> tuple[str, str] | None:
    """(ClusterQueue, reservation time) of a tie's candidate on one side: what it held when this side
    evicted it, else its admission at the settled point before, else (admitted in this epoch and kept)
    at the settled point after."""
    if name in now.evicted_reserved:
        return now.evicted_reserved[name]
    for point in (before, now):
        if name in point.admitted and point.reserved.get(name):
            return point.admitted[name][0], point.reserved[name]
    return None


def describe(difference: Difference, a: str = "a", b: str = "b") -> str:
    """One line: `epoch 1 admission w03: reference ('cq1', ...) / kueue None`."""
    return f"epoch {difference.epoch} {difference.kind} {difference.subject}: {a} {difference.a!r} / {b} {difference.b!r}"
