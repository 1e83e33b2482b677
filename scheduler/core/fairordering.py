"""The order in which a cycle walks its entries when fair sharing is on (Kueue's fairSharingIterator,
pkg/scheduler/fair_sharing_iterator.go).

A queue without a cohort goes as it comes. In a cohort tree each next entry wins a tournament run from
the root: at every Cohort the best of its child Cohorts' winners and its child queues' entries, each
measured by the share of the child on its path with the entry's own request added, as the walk left
the quotas when the previous winner was taken. Better is, with Kueue v0.17.0's default gates
(FairSharingPrioritizeNonBorrowing, PrioritySortingWithinCohort): not borrowing on what it requests,
lower share, higher priority, earlier queue-order timestamp; then the uid, where Kueue keeps whichever
its unordered sets list first.

Kueue recomputes every entry's share at every level for every pop. The walk only ever changes the
usage of the queue whose entry it just took, so only the Cohorts on that queue's path can have a new
winner: those are run again, the others keep theirs, and an entry's share at its own queue's level,
which no other queue's admission moves, is measured once. Same winners, without the quadratic cost.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Generic, TypeVar

from scheduler.core import fairsharing
from scheduler.core.quotas import Node, QuotaBook, Usage
from scheduler.core.workloads import OrderKey

T = TypeVar("T")
View = Callable[[T], tuple[str, Usage, OrderKey]]
"""An entry's ClusterQueue name, its request, and its queue order key."""
_Key = tuple[bool, tuple[int, float], OrderKey]


def fair_sharing_order(entries: list[T], quotas: QuotaBook, view: View) -> Iterator[T]:
    """The entries one at a time; the caller may change the usage of the last one's queue before
    asking for the next."""
    trees: dict[str, list[T]] = {}
    for entry in entries:
        node = quotas.cq_node(view(entry)[0])
        trees.setdefault(node.root().name if node.parent is not None else "", []).append(entry)
    # Trees share no quota, so their order does not matter (Kueue's is a map's); queues alone first.
    for root_name in sorted(trees):
        group = trees[root_name]
        if not root_name:
            yield from sorted(group, key=lambda e: view(e)[2])
        else:
            yield from _Tournament(quotas, quotas.cq_node(view(group[0])[0]).root(), group, view).run()


class _Tournament(Generic[T]):
    """runTournament over one cohort tree, kept up to date pop after pop."""

    def __init__(self, quotas: QuotaBook, root: Node, entries: list[T], view: View) -> None:
        self.quotas, self.root, self.view = quotas, root, view
        self.by_queue = {view(e)[0]: e for e in entries}
        self.winners: dict[str, tuple[T, Node] | None] = {}
        # An entry's key at its own queue's parent: no other queue's admission changes it.
        self.own_keys: dict[str, _Key] = {}
        self._settle(root)

    def run(self) -> Iterator[T]:
        while self.by_queue:
            found = self.winners[self.root.name]
            assert found is not None
            winner, queue = found
            del self.by_queue[queue.name]
            yield winner
            for cohort in queue.path_to_root():
                self.winners[cohort.name] = self._best(cohort)

    def _settle(self, cohort: Node) -> None:
        for child in cohort.child_cohorts:
            self._settle(child)
        self.winners[cohort.name] = self._best(cohort)

    def _best(self, cohort: Node) -> tuple[T, Node] | None:
        best: tuple[T, Node] | None = None
        best_key: _Key | None = None
        for child in cohort.child_cohorts:
            found = self.winners.get(child.name)
            if found is not None:
                key = self._key(child, *found)
                if best_key is None or key < best_key:
                    best, best_key = found, key
        for child in cohort.child_cqs:
            entry = self.by_queue.get(child.name)
            if entry is None:
                continue
            key = self.own_keys.get(child.name)
            if key is None:
                key = self.own_keys[child.name] = self._key(child, entry, child)
            if best_key is None or key < best_key:
                best, best_key = (entry, child), key
        return best

    def _key(self, node: Node, entry: T, queue: Node) -> _Key:
        """entryComparer.less as a sort key: the share of ``node`` (the child on the entry's path) with
        the entry's request added to its queue (computeDRS)."""
        _, request, order = self.view(entry)
        if node is queue:
            drs = fairsharing.dominant_resource_share(self.quotas, node, request)
        else:
            self.quotas.add_usage(queue.name, request)
            try:
                drs = fairsharing.dominant_resource_share(self.quotas, node)
            finally:
                self.quotas.remove_usage(queue.name, request)
        return drs.borrowing_on(request), drs.sort_key(), order
