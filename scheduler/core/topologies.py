"""Topology-aware scheduling's kinds: a Topology, the nodes it spans, a pod set's request, an assignment.

As in ``kueue.x-k8s.io/v1beta2`` (apis/kueue/v1beta2/topology_types.go, workload_types.go) reduced to
what placement reads. A ResourceFlavor with ``topologyName`` is a *TAS flavor*: its pod sets are placed
on the domains (blocks, racks, hosts...) of the nodes its ``nodeLabels`` select. Quantities are
milli-units (``quantities``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from scheduler.core.kinds import Taint

HOSTNAME_LABEL = "kubernetes.io/hostname"

# A leaf domain's id: its level values joined by commas (Kueue's utiltas.DomainID), or the hostname
# alone when the lowest level is the node.
DomainId = str


@dataclass(slots=True, frozen=True)
class Topology:
    """A Topology object: ``levels`` are node label keys, highest first."""

    name: str
    levels: tuple[str, ...]

    @property
    def lowest_is_node(self) -> bool:
        """Kueue's isLowestLevelNode: leaves are single nodes, so node selectors and taints apply."""
        return bool(self.levels) and self.levels[-1] == HOSTNAME_LABEL


@dataclass(slots=True, frozen=True)
class Node:
    """What placement reads of a Ready, schedulable Node (Kueue's nodeInfo)."""

    name: str
    labels: dict[str, str]
    allocatable: dict[str, int]
    taints: tuple[Taint, ...] = ()


@dataclass(slots=True, frozen=True)
class TopologyRequest:
    """A pod set's ``topologyRequest`` (or the pod template annotations Kueue reads into it)."""

    required: str | None = None
    preferred: str | None = None
    # None when absent: a present ``false`` still makes the request explicit (Kueue reads the pointer).
    unconstrained: bool | None = None
    # podSetSliceRequiredTopology / podSetSliceSize: pods in groups of ``slice_size`` per such domain.
    slice_required: str | None = None
    slice_size: int | None = None
    # podSetGroupName: pod sets placed together (leader and workers); not modelled, each is placed alone.
    group: str | None = None

    @property
    def slice_only(self) -> bool:
        """Kueue's isSliceTopologyOnlyRequest."""
        return self.required is None and self.preferred is None and self.slice_required is not None

    @property
    def explicit(self) -> bool:
        """Kueue's IsExplicitlyRequestingTAS: some field of the request is set."""
        return any(v is not None for v in (self.required, self.preferred, self.unconstrained, self.slice_required,
                                           self.slice_size))


@dataclass(slots=True, frozen=True)
class DomainAssignment:
    """``count`` pods in the domain named by ``values`` (one per assigned level)."""

    values: tuple[str, ...]
    count: int


@dataclass(slots=True, frozen=True)
class TopologyAssignment:
    """Kueue's internal TopologyAssignment: levels and domains, domains sorted by their values."""

    levels: tuple[str, ...]
    domains: tuple[DomainAssignment, ...] = field(default=())

    @property
    def pods(self) -> int:
        return sum(d.count for d in self.domains)
