"""Dominant resource share (DRS) of a ClusterQueue or Cohort, as Kueue's fair sharing computes it.

Ported from pkg/cache/scheduler/fair_sharing.go. A node that does not borrow (uses no more than its
subtree quota in every flavor and resource) has share 0; a borrowing node's share is, over resource
names, the largest ``borrowed * 1000 / lendable``, where ``lendable`` is what the node's parent could
ever give it (potentialAvailable over every flavor of the tree), divided by the node's
``fairSharing.weight``. A weight of 0 makes any borrowing rank after every weighted share. A root
(a node without parent) never borrows.

Floats as in Kueue (float64): the same integer ratios give the same doubles, so ties break the same.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from scheduler.core.kinds import FlavorResource
from scheduler.core.quotas import Node, QuotaBook

DEFAULT_WEIGHT = 1.0


@dataclass(slots=True, frozen=True)
class DRS:
    """Kueue's DRS: compare with ``compare``; lower is admitted first and preempted last."""

    weight: float
    ratio: float
    dominant_resource: str = ""
    borrowing: bool = False
    borrowed: frozenset[FlavorResource] = frozenset()

    @property
    def is_zero(self) -> bool:
        return self.ratio == 0

    @property
    def share(self) -> float:
        """PreciseWeightedShare: the ratio divided by the weight (infinite for weight 0)."""
        if self.is_zero:
            return 0.0
        if self.weight == 0:
            return math.inf
        return self.ratio / self.weight

    @property
    def zero_weight_borrows(self) -> bool:
        return self.weight == 0 and not self.is_zero

    def sort_key(self) -> tuple[int, float]:
        """``compare`` as a sort key: zero-weight borrowers after everyone, among themselves by ratio."""
        return (1, self.ratio) if self.zero_weight_borrows else (0, self.share)

    def borrowing_on(self, requested: Mapping[FlavorResource, int]) -> bool:
        """IsBorrowingOn: the node borrows one of the (flavor, resource)s requested."""
        return any(requested.get(fr, 0) > 0 for fr in self.borrowed)


NEGATIVE = DRS(DEFAULT_WEIGHT, -1.0)
"""NegativeDRS: below every real share, the start of a search for the largest."""


def compare(a: DRS, b: DRS) -> int:
    """CompareDRS: -1, 0 or 1. Zero-weight borrowers rank above everyone else, among themselves by
    their unweighted ratio."""
    if a.zero_weight_borrows and b.zero_weight_borrows:
        return _compare(a.ratio, b.ratio)
    if a.zero_weight_borrows:
        return 1
    if b.zero_weight_borrows:
        return -1
    return _compare(a.share, b.share)


def dominant_resource_share(book: QuotaBook, node: Node, request: Mapping[FlavorResource, int] | None = None) -> DRS:
    """The node's DRS with ``request`` added to its usage (dominantResourceShare)."""
    drs = DRS(node.weight, 0.0)
    if node.parent is None:
        return drs
    request = request or {}
    borrowing: dict[str, int] = {}
    borrowed: list[FlavorResource] = []
    for fr, quota in node.subtree.items():
        amount = request.get(fr, 0) + book.node_usage(node, fr) - quota
        if amount > 0:
            borrowing[fr[1]] = borrowing.get(fr[1], 0) + amount
            borrowed.append(fr)
    if not borrowing:
        return drs
    lendable = book.lendable(node.parent)
    ratio, dominant = 0.0, ""
    for resource, amount in borrowing.items():
        available = lendable.get(resource, 0)
        if available > 0:
            value = float(amount) * 1000.0 / float(available)
            # Alphabetical order makes the dominant resource deterministic.
            if value > ratio or (value == ratio and resource < dominant):
                ratio, dominant = value, resource
    return DRS(node.weight, ratio, dominant, True, frozenset(borrowed))


def _compare(a: float, b: float) -> int:
    return (a > b) - (a < b)
