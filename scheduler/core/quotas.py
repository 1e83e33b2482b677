"""Quota accounting through the cohort tree: what each node uses, and what a ClusterQueue may still use.

Ported from Kueue's resource-node model (pkg/cache/scheduler/resource_node.go). ClusterQueues and
Cohorts are the nodes of a forest: a ClusterQueue's parent is its ``cohort``, a Cohort's is its
``spec.parentName``; a name referenced but not created is an implicit Cohort without quota or parent.
Each node has

- ``subtree``: its own nominal quota plus what its children lend it (a child's subtree minus its
  ``local`` part); a ClusterQueue's subtree is its nominal quota;
- ``local``: ``subtree - lendingLimit`` (0 without a limit), kept for the node's own subtree;
- usage: a ClusterQueue's admitted usage; a Cohort's is what its children use past their ``local``.

A node may take its local quota that is unused plus what its parent has available, the latter
capped by its ``borrowingLimit`` (``available``). A Cohort whose parent chain loops is *cyclic*, as
is every Cohort whose chain reaches a loop; its ClusterQueues admit nothing (``in_cycle``), as in
Kueue (pkg/cache/scheduler/snapshot.go leaves them out of the snapshot).

The tree's shape and quotas are rebuilt lazily after a spec changes and shared, read-only, by
copies; usage is per copy, so a scheduling cycle can ``copy()`` the book and simulate admissions and
preemptions without touching the real one.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator, Mapping, Set as AbstractSet

from scheduler.core.kinds import ClusterQueue, Cohort, FlavorResource, ResourceGroup, ResourceQuota

Usage = dict[FlavorResource, int]


class Node:
    """One node of the cohort forest (Kueue's resourceNode with its hierarchy links). Read-only
    once built; usage lives in the ``QuotaBook`` that owns the tree."""

    __slots__ = ("name", "is_cq", "parent", "quotas", "subtree", "local", "child_cohorts", "child_cqs", "height",
                 "weight")

    def __init__(self, name: str, is_cq: bool, quotas: dict[FlavorResource, ResourceQuota], weight: float) -> None:
        self.name = name
        self.is_cq = is_cq
        self.parent: Node | None = None
        self.quotas = quotas
        self.subtree: dict[FlavorResource, int] = {}
        self.local: dict[FlavorResource, int] = {}
        self.child_cohorts: list[Node] = []
        self.child_cqs: list[Node] = []
        # getNodeHeight (classical/hierarchical_preemption.go): 1 for a Cohort of ClusterQueues only.
        self.height = 0
        self.weight = weight

    def path_to_root(self) -> Iterator[Node]:
        """The node's ancestors, parent first (Kueue's PathParentToRoot)."""
        node = self.parent
        while node is not None:
            yield node
            node = node.parent

    def root(self) -> Node:
        node = self
        while node.parent is not None:
            node = node.parent
        return node

    def subtree_queues(self) -> list[Node]:
        """Every ClusterQueue below this node (SubtreeClusterQueues); a ClusterQueue: itself."""
        if self.is_cq:
            return [self]
        out = list(self.child_cqs)
        for child in self.child_cohorts:
            out += child.subtree_queues()
        return out

    def __repr__(self) -> str:
        return f"Node({'cq' if self.is_cq else 'cohort'} {self.name})"


class _Tree:
    """The forest built from the specs: nodes by name, the cyclic cohorts, and what is derived from the
    shape alone (the queues of each tree, what each node could ever lend), computed once per shape."""

    __slots__ = ("cqs", "cohorts", "cyclic", "queues_under", "lendable")

    def __init__(self) -> None:
        self.cqs: dict[str, Node] = {}
        self.cohorts: dict[str, Node] = {}
        self.cyclic: set[str] = set()
        self.queues_under: dict[str, frozenset[str]] = {}
        self.lendable: dict[tuple[bool, str], dict[str, int]] = {}


class QuotaBook:
    """Specs of ClusterQueues and Cohorts, the tree they form, and the usage admitted into each queue."""

    def __init__(self) -> None:
        self.cluster_queues: dict[str, ClusterQueue] = {}
        self.cohorts: dict[str, Cohort] = {}
        # Admitted usage per ClusterQueue: the source of truth (kept for a queue that is gone, since
        # its admitted workloads still hold it if it comes back).
        self.usage: dict[str, Usage] = {}
        # Derived from the queues' usage when the tree is built, then kept in step.
        self._cohort_usage: dict[str, Usage] = {}
        self._tree: _Tree | None = None

    # -- specs ------------------------------------------------------------------
    def set_cluster_queue(self, cq: ClusterQueue) -> None:
        self.cluster_queues[cq.name] = cq
        self.usage.setdefault(cq.name, {})
        self._tree = None

    def remove_cluster_queue(self, name: str) -> None:
        # Usage stays: admitted workloads still hold it if the queue comes back.
        if self.cluster_queues.pop(name, None) is not None:
            self._tree = None

    def set_cohort(self, cohort: Cohort) -> None:
        self.cohorts[cohort.name] = cohort
        self._tree = None

    def remove_cohort(self, name: str) -> None:
        if self.cohorts.pop(name, None) is not None:
            self._tree = None

    # -- the tree -----------------------------------------------------------------
    def tree(self) -> _Tree:
        if self._tree is None:
            self._tree = self._build()
        return self._tree

    def cq_node(self, name: str) -> Node:
        return self.tree().cqs[name]

    def cohort_node(self, name: str) -> Node | None:
        return self.tree().cohorts.get(name)

    def in_cycle(self, cq_name: str) -> bool:
        """The queue's cohort chain loops: Kueue leaves it out of every snapshot (inactive)."""
        cq = self.cluster_queues.get(cq_name)
        return cq is not None and bool(cq.cohort) and cq.cohort in self.tree().cyclic

    def cohort_in_cycle(self, name: str) -> bool:
        """The Cohort's parent chain loops (or reaches a loop): Kueue's hierarchy.HasCycle."""
        return name in self.tree().cyclic

    def cohort_members(self, cohort: str) -> set[str]:
        """The ClusterQueues whose ``cohort`` is this one (its direct children)."""
        node = self.tree().cohorts.get(cohort)
        return {child.name for child in node.child_cqs} if node is not None else set()

    def neighbours(self, cq_name: str) -> AbstractSet[str]:
        """The queue and every queue of its cohort tree (under its root Cohort): Kueue requeues,
        reclaims and shares fairly within a whole tree."""
        tree = self.tree()
        node = tree.cqs.get(cq_name)
        if node is None or node.parent is None:
            return frozenset((cq_name,))
        root = node.root()
        queues = tree.queues_under.get(root.name)
        if queues is None:
            queues = tree.queues_under[root.name] = frozenset(n.name for n in root.subtree_queues())
        return queues

    def tree_queues(self, cohort: str) -> set[str]:
        """Every ClusterQueue of the tree ``cohort`` belongs to; for a cyclic Cohort, every queue of
        any cyclic Cohort (their trees have no root to tell them apart)."""
        tree = self.tree()
        if cohort in tree.cyclic:
            return {name for name, cq in self.cluster_queues.items() if cq.cohort in tree.cyclic}
        node = tree.cohorts.get(cohort)
        return {n.name for n in node.root().subtree_queues()} if node is not None else set()

    # -- usage ------------------------------------------------------------------
    def add_usage(self, cq_name: str, usage: Mapping[FlavorResource, int]) -> None:
        """Add usage to a queue; what it uses past its local quota counts in its parent (addUsage)."""
        book = self.usage.setdefault(cq_name, {})
        node = (self._tree or self.tree()).cqs.get(cq_name)
        cohorts = self._cohort_usage
        for fr, value in usage.items():
            # Iterative addUsage: on the hot path of every simulated admission and preemption.
            at, used = node, book
            while True:
                current = used.get(fr, 0)
                room = at.local.get(fr, 0) - current if at is not None else 0
                used[fr] = current + value
                if at is None or at.parent is None or value <= room:
                    break
                value -= max(0, room)
                at = at.parent
                used = cohorts[at.name]

    def remove_usage(self, cq_name: str, usage: Mapping[FlavorResource, int]) -> None:
        """Remove usage from a queue, and from its parents what it stored there (removeUsage)."""
        book = self.usage.setdefault(cq_name, {})
        node = (self._tree or self.tree()).cqs.get(cq_name)
        cohorts = self._cohort_usage
        for fr, value in usage.items():
            at, used = node, book
            while True:
                current = used.get(fr, 0)
                stored_in_parent = current - at.local.get(fr, 0) if at is not None else 0
                used[fr] = current - value
                if at is None or at.parent is None or stored_in_parent <= 0:
                    break
                value = min(value, stored_in_parent)
                at = at.parent
                used = cohorts[at.name]

    def used(self, cq_name: str, flavor_resource: FlavorResource) -> int:
        return self.usage.get(cq_name, {}).get(flavor_resource, 0)

    def node_usage(self, node: Node, fr: FlavorResource) -> int:
        return self._usage_of(node).get(fr, 0)

    def copy(self) -> QuotaBook:
        """A copy whose usage can change independently; specs and the tree are shared (immutable)."""
        tree = self.tree()
        clone = QuotaBook()
        clone.cluster_queues = self.cluster_queues
        clone.cohorts = self.cohorts
        clone._tree = tree
        clone.usage = {name: dict(usage) for name, usage in self.usage.items()}
        clone._cohort_usage = {name: dict(usage) for name, usage in self._cohort_usage.items()}
        return clone

    # -- quota arithmetic on ClusterQueues ------------------------------------------
    def nominal(self, cq_name: str, flavor_resource: FlavorResource) -> int:
        quota = self.cluster_queues[cq_name].quota(flavor_resource)
        return 0 if quota is None else quota.nominal

    def available(self, cq_name: str, flavor_resource: FlavorResource) -> int:
        """How much more of ``flavor_resource`` the queue can admit now, borrowing included; 0 when
        the tree is in debt (ClusterQueueSnapshot.Available)."""
        return max(0, self.node_available(self.cq_node(cq_name), flavor_resource))

    def potential_available(self, cq_name: str, flavor_resource: FlavorResource) -> int:
        """The most the queue could ever hold if nothing else were admitted anywhere."""
        return self.node_potential_available(self.cq_node(cq_name), flavor_resource)

    def is_borrowing(self, cq_name: str, flavor_resource: FlavorResource) -> bool:
        return self.used(cq_name, flavor_resource) > self.nominal(cq_name, flavor_resource)

    def borrowing_level(self, cq_name: str, flavor_resource: FlavorResource, value: int) -> int:
        """How far from the queue ``value`` more must come: 0 within its nominal quota, else the height
        of the smallest cohort subtree that holds it (see ``lowest_subtree_that_fits``)."""
        return self.lowest_subtree_that_fits(cq_name, flavor_resource, value)[0]

    def lowest_subtree_that_fits(self, cq_name: str, fr: FlavorResource, value: int) -> tuple[int, bool]:
        """Kueue's classical.FindHeightOfLowestSubtreeThatFits: the height of the smallest subtree
        whose quota holds ``value`` more (0 within the queue's nominal quota, the whole tree's when
        none does), and whether a Cohort above that subtree could still be reclaimed from."""
        node = self.cq_node(cq_name)
        has_parent = node.parent is not None
        if not has_parent or self.used(cq_name, fr) + value <= self.nominal(cq_name, fr):
            return 0, has_parent
        remaining = value - self.local_available(node, fr)
        for ancestor in node.path_to_root():
            if not self.node_borrowing_with(ancestor, fr, remaining):
                return ancestor.height, ancestor.parent is not None
            remaining -= self.local_available(ancestor, fr)
        return node.root().height, False

    def fits(self, cq_name: str, request: Mapping[FlavorResource, int], allow_borrowing: bool) -> bool:
        """Whether ``request`` fits now; without borrowing it must also stay within nominal."""
        for flavor_resource, milli in request.items():
            if milli <= 0:
                continue
            if not allow_borrowing and (
                self.used(cq_name, flavor_resource) + milli > self.nominal(cq_name, flavor_resource)
            ):
                return False
            if milli > self.available(cq_name, flavor_resource):
                return False
        return True

    # -- quota arithmetic on any node (resource_node.go) ----------------------------
    def local_available(self, node: Node, fr: FlavorResource) -> int:
        """Unused quota the node keeps for its own subtree (LocalAvailable)."""
        return max(0, node.local.get(fr, 0) - self._usage_of(node).get(fr, 0))

    def node_available(self, node: Node, fr: FlavorResource) -> int:
        """Kueue's available(): local room plus the parent's, capped by the borrowing limit; may be
        negative when the tree is in debt (quota shrank)."""
        usage = self._usage_of(node).get(fr, 0)
        if node.parent is None:
            return node.subtree.get(fr, 0) - usage
        parent_available = self.node_available(node.parent, fr)
        quota = node.quotas.get(fr)
        if quota is not None and quota.borrowing_limit is not None:
            local = node.local.get(fr, 0)
            stored_in_parent = node.subtree.get(fr, 0) - local
            used_in_parent = max(0, usage - local)
            parent_available = min(stored_in_parent - used_in_parent + quota.borrowing_limit, parent_available)
        return max(0, node.local.get(fr, 0) - usage) + parent_available

    def node_potential_available(self, node: Node, fr: FlavorResource) -> int:
        """Kueue's potentialAvailable(): the most the node could hold with no usage anywhere."""
        if node.parent is None:
            return node.subtree.get(fr, 0)
        available = node.local.get(fr, 0) + self.node_potential_available(node.parent, fr)
        quota = node.quotas.get(fr)
        if quota is not None and quota.borrowing_limit is not None:
            available = min(node.subtree.get(fr, 0) + quota.borrowing_limit, available)
        return available

    def lendable(self, node: Node) -> dict[str, int]:
        """calculateLendable (fair_sharing.go): per resource name, what ``node`` could ever hold over every
        flavor of its tree. It reads no usage, so it is computed once per tree shape."""
        tree = self.tree()
        key = (node.is_cq, node.name)
        found = tree.lendable.get(key)
        if found is None:
            found = {}
            for fr in node.root().subtree:
                found[fr[1]] = found.get(fr[1], 0) + self.node_potential_available(node, fr)
            tree.lendable[key] = found
        return found

    def node_borrowing_with(self, node: Node, fr: FlavorResource, value: int) -> bool:
        """``value`` more would take the node past its subtree quota (CohortSnapshot.BorrowingWith)."""
        return self._usage_of(node).get(fr, 0) + value > node.subtree.get(fr, 0)

    def within_nominal(self, node: Node, frs: Collection[FlavorResource]) -> bool:
        """The node uses no more than its subtree quota in any of ``frs`` (IsWithinNominalInResources)."""
        usage = self._usage_of(node)
        return all(usage.get(fr, 0) <= node.subtree.get(fr, 0) for fr in frs)

    def fits_in_quota(self, node: Node, requests: Mapping[FlavorResource, int]) -> tuple[bool, Usage]:
        """Whether ``requests`` fit in the node's subtree quota, and what is left for its parent once
        its local room is used (QuantitiesFitInQuota)."""
        usage = self._usage_of(node)
        fits = True
        remaining: Usage = {}
        for fr, value in requests.items():
            if usage.get(fr, 0) + value > node.subtree.get(fr, 0):
                fits = False
            remaining[fr] = max(0, value - self.local_available(node, fr))
        return fits, remaining

    # -- internals -----------------------------------------------------------------------
    def _usage_of(self, node: Node) -> Usage:
        if node.is_cq:
            return self.usage.setdefault(node.name, {})
        return self._cohort_usage.setdefault(node.name, {})

    def _build(self) -> _Tree:
        """The forest of the current specs, with subtree quotas and cohort usage (updateCohortResourceNode)."""
        tree = _Tree()

        def cohort(name: str) -> Node:
            node = tree.cohorts.get(name)
            if node is None:
                spec = self.cohorts.get(name)
                groups = spec.resource_groups if spec is not None else ()
                weight = spec.fair_weight if spec is not None else 1.0
                node = tree.cohorts[name] = Node(name, False, _quotas(groups), weight)
            return node

        for name in list(self.cohorts):
            cohort(name)
        for name, spec in self.cohorts.items():
            if spec.parent:
                parent = cohort(spec.parent)
                tree.cohorts[name].parent = parent
        tree.cyclic = _cyclic(tree.cohorts)
        for name, node in tree.cohorts.items():
            if node.parent is not None and name not in tree.cyclic:
                node.parent.child_cohorts.append(node)
        for name, spec in self.cluster_queues.items():
            node = tree.cqs[name] = Node(name, True, _quotas(spec.resource_groups), spec.fair_weight)
            node.subtree = {fr: quota.nominal for fr, quota in node.quotas.items()}
            node.local = _local(node)
            if spec.cohort:
                parent = cohort(spec.cohort)
                if spec.cohort in tree.cyclic:
                    continue  # out of every tree, as Kueue's snapshot leaves it out
                node.parent = parent
                parent.child_cqs.append(node)
        # Deterministic child order (Kueue's are sets): by name.
        for node in tree.cohorts.values():
            node.child_cohorts.sort(key=lambda n: n.name)
            node.child_cqs.sort(key=lambda n: n.name)
        self._cohort_usage = {}
        for node in tree.cohorts.values():
            if node.parent is None and node.name not in tree.cyclic:
                self._accumulate(node)
        return tree

    def _accumulate(self, node: Node) -> None:
        """Subtree quota, local quota, usage and height of a cohort from its children (post-order)."""
        subtree = {fr: quota.nominal for fr, quota in node.quotas.items()}
        usage: Usage = {}
        height = min(len(node.child_cohorts) + len(node.child_cqs), 1)
        for child in node.child_cohorts:
            self._accumulate(child)
            height = max(height, child.height + 1)
        for child in (*node.child_cohorts, *node.child_cqs):
            for fr, quota in child.subtree.items():
                subtree[fr] = subtree.get(fr, 0) + quota - child.local.get(fr, 0)
            for fr, used in self._usage_of(child).items():
                usage[fr] = usage.get(fr, 0) + max(0, used - child.local.get(fr, 0))
        node.subtree = subtree
        node.local = _local(node)
        node.height = height
        self._cohort_usage[node.name] = usage


def _quotas(groups: Iterable[ResourceGroup]) -> dict[FlavorResource, ResourceQuota]:
    return {(fq.name, quota.name): quota for group in groups for fq in group.flavors for quota in fq.resources}


def _local(node: Node) -> dict[FlavorResource, int]:
    """localQuota: the part of the subtree quota its lending limit keeps from the parent."""
    local = {}
    for fr, quota in node.quotas.items():
        if quota.lending_limit is not None:
            local[fr] = max(0, node.subtree.get(fr, 0) - quota.lending_limit)
    return local


def _cyclic(cohorts: Mapping[str, Node]) -> set[str]:
    """Cohorts whose parent chain loops or reaches a loop (hierarchy.HasCycle)."""
    cyclic: set[str] = set()
    fine: set[str] = set()
    for name in cohorts:
        path: list[str] = []
        seen: set[str] = set()
        node: Node | None = cohorts[name]
        verdict = False
        while node is not None:
            if node.name in fine:
                break
            if node.name in cyclic or node.name in seen:
                verdict = True
                break
            seen.add(node.name)
            path.append(node.name)
            node = node.parent
        (cyclic if verdict else fine).update(path)
    return cyclic


def sum_usage(usages: Iterable[Mapping[FlavorResource, int]]) -> Usage:
    """Add several usage maps together."""
    total: Usage = {}
    for usage in usages:
        for flavor_resource, milli in usage.items():
            total[flavor_resource] = total.get(flavor_resource, 0) + milli
    return total
