"""Where a simulated node sits in a data centre: blocks of racks of hosts, as node labels (pure).

Topology-aware scheduling reads a node's place from labels named by a Topology object's levels. The
label keys are the ones Kueue's performance suite gives its TAS nodes
(test/performance/scheduler/configs/tas/generator.yaml), so a Topology written for that suite fits
these nodes; the lowest level is the node itself (``kubernetes.io/hostname``, which every node has).

Nodes fill racks in index order: node ``i`` is host ``i % hosts_per_rack`` of rack
``(i // hosts_per_rack) % racks_per_block`` of block ``i // (racks_per_block * hosts_per_rack)``;
the last block may be short. Rack values carry their block's, so a rack label alone names one rack.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from harness.errors import KqbenchError

BLOCK_LABEL = "cloud.provider.com/topology-block"
RACK_LABEL = "cloud.provider.com/topology-rack"
HOSTNAME_LABEL = "kubernetes.io/hostname"
LEVELS = (BLOCK_LABEL, RACK_LABEL, HOSTNAME_LABEL)
"""A Topology's spec.levels for these nodes, highest first."""

_SHAPE = re.compile(r"^\s*(\d+)\s*x\s*(\d+)\s*$")


class TopologyError(KqbenchError, ValueError):
    pass


@dataclass(frozen=True, slots=True)
class NodeTopology:
    racks_per_block: int = 10
    """Kueue's TAS suite: 10 racks in its one block."""
    hosts_per_rack: int = 64
    """Kueue's TAS suite: 64 nodes per rack."""

    def __post_init__(self) -> None:
        if self.racks_per_block < 1 or self.hosts_per_rack < 1:
            raise TopologyError(f"racks per block and hosts per rack must be >= 1 "
                                f"(got {self.racks_per_block}x{self.hosts_per_rack})")

    @property
    def hosts_per_block(self) -> int:
        return self.racks_per_block * self.hosts_per_rack

    def labels(self, index: int) -> dict[str, str]:
        """The block and rack labels of the index-th node (its hostname label is its name)."""
        block = index // self.hosts_per_block
        rack = (index // self.hosts_per_rack) % self.racks_per_block
        return {BLOCK_LABEL: f"block-{block}", RACK_LABEL: f"block-{block}-rack-{rack}"}

    def blocks(self, nodes: int) -> int:
        """How many blocks ``nodes`` nodes fill (the last one possibly short)."""
        return -(-nodes // self.hosts_per_block)


def parse(text: str) -> NodeTopology:
    """``RACKSxHOSTS`` (racks per block x hosts per rack), e.g. ``10x64``."""
    match = _SHAPE.match(text)
    if not match:
        raise TopologyError(f"topology {text!r}: give RACKSxHOSTS (racks per block x hosts per rack), e.g. 10x64")
    return NodeTopology(int(match.group(1)), int(match.group(2)))
