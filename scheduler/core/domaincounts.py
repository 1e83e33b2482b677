"""How many pods of one shape fit in every domain of a tree, kept as usage changes.

Kueue v0.17.0 counts, for every pod set it places, the pods that fit on every node of the flavor and
adds them up the tree (tas_flavor_snapshot.go ``fillInCounts``): each placement costs the cluster's
nodes. Here the counts for a pod *shape* (per-pod requests, nodeSelector, tolerations) are kept per
tree: computed once, then only the leaves whose usage changed since (``DomainUsage.log``) are counted
again and their difference carried to their ancestors. A placement then reads the domains of the level
it searches and the children of those it chose, and the usage of the workload's earlier pod sets is
applied to their leaves for the time of one placement and taken back.

The counts are the same numbers Kueue's full count gives (tests hold the two side by side), including
the nodes a no-fit message names as excluded. Counts on empty nodes (does a pod set fit once every
admitted workload is gone?) are kept the same way and never change. Slices of several pods are kept per
(slice level, size) asked for, moved with the counts.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from sortedcontainers import SortedList

from scheduler.core.domaintrees import Domain, DomainTree, Leaf, add_into, count_in
from scheduler.core.kinds import Taint, Toleration

SHAPES_PER_TREE = 16
"""Pod shapes whose counts a tree keeps, the least recently used going first: a shape is per-pod requests,
nodeSelector and tolerations (Kueue's TAS suite has 3); one with a host-level ranking holds 18 MB at 100k
nodes (tracemalloc)."""

def untolerated(taints: tuple[Taint, ...], tolerations: tuple[Toleration, ...]) -> Taint | None:
    """The first NoSchedule/NoExecute taint no toleration matches (FindMatchingUntoleratedTaint)."""
    for taint in taints:
        if taint.effect in ("NoSchedule", "NoExecute") and not any(t.tolerates(taint) for t in tolerations):
            return taint
    return None


def taint_text(taint: Taint) -> str:
    """core/v1 Taint.ToString."""
    text = f"{taint.key}={taint.value}" if taint.value else taint.key
    return f"{text}:{taint.effect}" if taint.effect else text


class ShapeCounts:
    """Pods of one shape that fit per domain of ``tree``, with the per-leaf reasons a no-fit message counts."""

    def __init__(self, tree: DomainTree, per_pod: Mapping[str, int], node_selector: tuple[tuple[str, str], ...],
                 tolerations: tuple[Toleration, ...], empty: bool = False) -> None:
        self.tree = tree
        self.per_pod = dict(per_pod)
        # Counted on empty nodes (Kueue's simulateEmpty): admitted usage never changes them.
        self.empty = empty
        self.count: dict[Domain, int] = {}
        # The resource that ran out, for the leaves where none fits.
        self.limiting: dict[Leaf, str] = {}
        # Leaves with no room, by the resource that ran out (eligible leaves only).
        self.full_by_resource: dict[str, int] = {}
        # Leaves the pods cannot use, with why: a taint's text, or "" for the nodeSelector.
        self.excluded: dict[Leaf, str] = {}
        self.node_selector, self.tolerations = node_selector, tolerations
        self.by_node_selector = 0
        self.by_taint: dict[str, int] = {}
        # Slices per domain by (slice level, slice size), for the slicings placement asked for.
        self.slices: dict[tuple[int, int], dict[Domain, int]] = {}
        # Per level asked for, its domains as (count, values, id), sorted: BestFit's and LeastFreeCapacity's
        # single domain found by bisection instead of a sort of the level.
        self.ranked: dict[int, SortedList] = {}
        self.position = 0
        for leaf in tree.leaves.values():
            self._exclude(leaf)
        self._count_all()

    def _exclude(self, leaf: Leaf) -> bool:
        """Whether the pods cannot go to this leaf at all (recorded if so); only a leaf that is a node is
        looked at, as in Kueue."""
        if not self.tree.lowest_is_node:
            return False
        node = leaf.node
        assert node is not None
        taint = untolerated(node.taints, self.tolerations)
        if taint is not None:
            text = taint_text(taint)
            self.by_taint[text] = self.by_taint.get(text, 0) + 1
            self.excluded[leaf] = text
        elif any(node.labels.get(k) != v for k, v in self.node_selector):
            self.by_node_selector += 1
            self.excluded[leaf] = ""
        return leaf in self.excluded

    def node_added(self, leaf: Leaf, created: list[Domain]) -> None:
        """A node joined ``leaf``; ``created``: the domains made for it, leaf first."""
        for domain in created:
            self._enter(domain)
        if (created and created[0] is leaf and self._exclude(leaf)) or leaf in self.excluded:
            return
        self._recount(leaf, None)

    def node_removed(self, leaf: Leaf, removed: list[Domain]) -> None:
        """A node left ``leaf``; ``removed``: the domains left empty, leaf first (then the leaf is gone)."""
        if not removed:
            if leaf not in self.excluded:
                self._recount(leaf, None)
            return
        reason = self.excluded.pop(leaf, None)
        if reason == "":
            self.by_node_selector -= 1
        elif reason is not None:
            self.by_taint[reason] -= 1
            if not self.by_taint[reason]:
                del self.by_taint[reason]
        else:
            old = self.count[leaf]
            self.count[leaf] = 0
            limiting = self.limiting.pop(leaf, "")
            if limiting:
                self.full_by_resource[limiting] -= 1
            if old:
                self._carry(leaf, -old)
        for domain in removed:
            self._leave(domain)

    def _enter(self, domain: Domain) -> None:
        depth = len(domain.values) - 1
        self.count[domain] = 0
        if depth in self.ranked:
            self.ranked[depth].add((0, domain.values, domain.id))
        for (level, _), kept in self.slices.items():
            if depth <= level:
                kept[domain] = 0

    def _leave(self, domain: Domain) -> None:
        depth = len(domain.values) - 1
        if depth in self.ranked:
            self.ranked[depth].remove((self.count[domain], domain.values, domain.id))
        del self.count[domain]
        for kept in self.slices.values():
            kept.pop(domain, None)

    def _count_all(self) -> None:
        tree = self.tree
        self.position = tree.usage.log_end
        for level in tree.per_level:
            for domain in level.values():
                self.count[domain] = 0
        for leaf in tree.leaves.values():
            if leaf not in self.excluded:
                self._recount(leaf, None, carry=False)
        last = len(tree.levels) - 1
        for depth in range(last - 1, -1, -1):
            for domain in tree.per_level[depth].values():
                self.count[domain] = sum(self.count[c] for c in domain.children)

    def _recount(self, leaf: Leaf, extra: Mapping[str, int] | None, carry: bool = True) -> None:
        """Count one leaf again (less ``extra`` usage), and carry the difference up the tree."""
        left = self.tree.remaining(leaf, self.empty)
        if extra:
            add_into(left, extra, -1)
        new, limiting = count_in(self.per_pod, left)
        old = self.count.get(leaf, 0)
        old_limiting = self.limiting.pop(leaf, "")
        if old_limiting:
            self.full_by_resource[old_limiting] -= 1
        if new == 0 and limiting:
            self.full_by_resource[limiting] = self.full_by_resource.get(limiting, 0) + 1
            self.limiting[leaf] = limiting
        self.count[leaf] = new
        if carry and new != old:
            self._carry(leaf, new - old)

    def _rerank(self, domain: Domain, depth: int, old: int, new: int) -> None:
        ranked = self.ranked.get(depth)
        if ranked is not None:
            ranked.remove((old, domain.values, domain.id))
            ranked.add((new, domain.values, domain.id))

    def _carry(self, leaf: Leaf, delta: int) -> None:
        """A leaf's count moved by ``delta`` (already in): its ancestors' counts, and the slice counts of
        every kept slicing, move too (at the slice level by what the division makes of it)."""
        count = self.count
        slice_moves = dict.fromkeys(self.slices, 0)
        domain: Domain | None = leaf
        depth = len(self.tree.levels) - 1
        while domain is not None:
            if domain is not leaf:
                count[domain] += delta
            if self.ranked:
                self._rerank(domain, depth, count[domain] - delta, count[domain])
            for (level, size), kept in self.slices.items():
                if depth == level:
                    move = _div(count[domain], size) - _div(count[domain] - delta, size)
                    kept[domain] += move
                    slice_moves[(level, size)] = move
                elif depth < level and slice_moves[(level, size)]:
                    kept[domain] += slice_moves[(level, size)]
            domain = domain.parent
            depth -= 1

    def ranking(self, level: int) -> SortedList:
        """The level's domains as (pods that fit, values, id), ascending (kept from now on)."""
        ranked = self.ranked.get(level)
        if ranked is None:
            ranked = self.ranked[level] = SortedList(
                (self.count[d], d.values, d.id) for d in self.tree.per_level[level].values())
        return ranked

    def slicing(self, level: int, size: int) -> dict[Domain, int]:
        """Slices of ``size`` pods that fit per domain at and above the slice ``level`` (kept from now on)."""
        kept = self.slices.get((level, size))
        if kept is None:
            kept = self.slices[(level, size)] = {}
            for domain in self.tree.per_level[level].values():
                kept[domain] = _div(self.count[domain], size)
            for depth in range(level - 1, -1, -1):
                for domain in self.tree.per_level[depth].values():
                    kept[domain] = sum(kept[c] for c in domain.children)
        return kept

    def refresh(self) -> None:
        """Count again the leaves whose usage changed since the last look."""
        usage = self.tree.usage
        if self.empty:
            return
        if self.position < usage.log_start:
            for leaf in self.tree.leaves.values():
                if leaf not in self.excluded:
                    self._recount(leaf, None)
        else:
            for leaf_id in set(usage.log[self.position - usage.log_start:]):
                leaf = self.tree.leaves.get(leaf_id)
                if leaf is not None and leaf not in self.excluded:
                    self._recount(leaf, None)
        self.position = usage.log_end

    def assume(self, assumed: Mapping[str, Mapping[str, int]]) -> list[Leaf]:
        """Take ``assumed`` usage (per leaf id) off for one placement; returns the leaves to give it back to."""
        changed = []
        for leaf_id, extra in assumed.items():
            leaf = self.tree.leaves.get(leaf_id)
            if leaf is not None and leaf not in self.excluded:
                self._recount(leaf, extra)
                changed.append(leaf)
        return changed

    def give_back(self, leaves: Iterable[Leaf]) -> None:
        for leaf in leaves:
            self._recount(leaf, None)

    def load(self, domains: Iterable[Domain], slice_level: int, slice_size: int) -> None:
        """Put the counts where placement reads them; below the slice level a domain holds no slices, and
        with no leader to place, what fits beside one is what fits."""
        count = self.count
        if slice_size == 1 and slice_level == len(self.tree.levels) - 1:
            for domain in domains:
                domain.state = domain.slice_state = domain.state_with_leader = domain.slice_state_with_leader = \
                    count[domain]
                domain.leader_state = 0
            return
        kept = self.slicing(slice_level, slice_size)
        for domain in domains:
            domain.state = domain.state_with_leader = count[domain]
            domain.slice_state = domain.slice_state_with_leader = kept.get(domain, 0)
            domain.leader_state = 0


def _div(a: int, b: int) -> int:
    """Go's integer division (towards zero): a count may be negative on an overdrawn node."""
    return a // b if a >= 0 else -(-a // b)


def for_shape(tree: DomainTree, per_pod: Mapping[str, int], node_selector: tuple[tuple[str, str], ...],
              tolerations: tuple[Toleration, ...], empty: bool = False) -> ShapeCounts:
    """The tree's counts for this shape, up to date with its usage (``empty``: on empty nodes)."""
    key = (tuple(sorted(per_pod.items())), node_selector, tolerations, empty)
    shapes = tree.shapes
    counts = shapes.pop(key, None)
    if counts is None:
        if len(shapes) >= SHAPES_PER_TREE:
            del shapes[next(iter(shapes))]
        counts = ShapeCounts(tree, per_pod, node_selector, tolerations, empty)
    else:
        counts.refresh()
    shapes[key] = counts  # most recently used last
    return counts
