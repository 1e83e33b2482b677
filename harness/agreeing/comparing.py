"""Two runs of one case, compared at every settled point (pure).

A *decision* is what the agreement rate counts: for every Workload that has arrived, where it holds
quota after the epoch (ClusterQueue and flavor per pod set and resource, or nowhere), and for every
Workload either side evicted during the epoch, that it was evicted and why. Pending order (per
ClusterQueue and LocalQueue) and ClusterQueue usage are compared too and reported beside them:
they follow from the decisions, so they are not counted twice.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from harness.agreeing import cases
from harness.agreeing.decisions import Decisions


DECISION_KINDS = ("admission", "eviction")
"""What the agreement rate counts; pending lists and usage follow from them."""


@dataclass(frozen=True)
class Difference:
    epoch: int
    kind: str
    """admission | eviction | pending | pending-local | usage"""
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
        return self.kind


@dataclass(frozen=True)
class Comparison:
    decisions: int = 0
    agreeing: int = 0
    orders: int = 0
    """Pending lists and usages compared."""
    orders_agreeing: int = 0
    differences: tuple[Difference, ...] = field(default_factory=tuple)

    @property
    def agrees(self) -> bool:
        return not self.differences

    @property
    def first_epoch(self) -> int | None:
        return min((d.epoch for d in self.differences), default=None)


def compare(case: cases.Case, a: Sequence[Decisions], b: Sequence[Decisions]) -> Comparison:
    """Every settled point both runs reached; a run that stopped early is compared up to there."""
    decisions = agreeing = orders = orders_agreeing = 0
    differences: list[Difference] = []
    arrived: list[str] = []
    for epoch, (da, db) in enumerate(zip(a, b, strict=False)):
        arrived += [w.name for w in case.epochs[epoch].arrive] if epoch < len(case.epochs) else []
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


def describe(difference: Difference, a: str = "a", b: str = "b") -> str:
    """One line: `epoch 1 admission w03: reference ('cq1', ...) / kueue None`."""
    return f"epoch {difference.epoch} {difference.kind} {difference.subject}: {a} {difference.a!r} / {b} {difference.b!r}"
