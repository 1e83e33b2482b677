"""pyperf micro-benchmarks of topology-aware placement (scheduler.core.placing) against nodes and pod-set size.

Run on a quiet machine:

    .venv/bin/python benchmarks/micro/bench_tas_placement.py --fast \
        -o results/benchmarks/tas/bench_tas_placement.json

Nodes are laid out as the harness lays out KWOK nodes (harness.nodes.topologies: racks of 64 hosts,
16 racks per block, 96 cpu each); a quarter of the hosts are busy, so placement has to look past
full nodes. Each benchmark places one pod set of 1-cpu pods with a required rack on a tree built once
per worker, so the figure is the placement alone, two ways: reading the counts kept per pod shape
(``domaincounts``, what the scheduler does) and counting every node as Kueue v0.17.0 does
(``full_count``). Kueue also rebuilds the tree every cycle (not measured here); this tree is kept.
"""

from __future__ import annotations

import time

import pyperf

from harness.nodes import topologies as nodetopologies
from scheduler.core import placing
from scheduler.core.domaintrees import DomainTree
from scheduler.core.topologies import Node, Topology, TopologyRequest

NODES = {"1k": 1_000, "10k": 10_000, "100k": 100_000}
POD_SETS = {"8": 8, "64": 64, "512": 512}
SHAPE = nodetopologies.NodeTopology(racks_per_block=16, hosts_per_rack=64)
TOPOLOGY = Topology("dc", nodetopologies.LEVELS)
_trees: dict[int, DomainTree] = {}


def tree(nodes: int) -> DomainTree:
    """A tree of ``nodes`` hosts of 96 cpu, every fourth one full (built once per worker)."""
    if nodes not in _trees:
        _trees.clear()
        hosts = []
        for index in range(nodes):
            name = f"kwok-{index:06d}"
            labels = {**SHAPE.labels(index), nodetopologies.HOSTNAME_LABEL: name}
            hosts.append(Node(name, labels, {"cpu": 96_000, "memory": 256 * 2**30 * 1000, "pods": 110_000}))
        built = DomainTree(TOPOLOGY, hosts)
        built.usage.add_workload("busy", [(h.name, {"cpu": 96_000}, 1) for h in hosts[::4]])
        _trees[nodes] = built
    return _trees[nodes]


def bench_place(loops: int, nodes: int, pods: int, full_count: bool) -> float:
    request = placing.PlacementRequest("main", {"cpu": 1000}, pods, TopologyRequest(required=nodetopologies.RACK_LABEL))
    built = tree(nodes)
    placing.place(built, request)  # the kept counts of this shape exist from here on
    start = time.perf_counter()
    for _ in range(loops):
        placing.place(built, request, full_count=full_count)
    return time.perf_counter() - start


def main() -> None:
    runner = pyperf.Runner()
    for node_label, nodes in NODES.items():
        for pods_label, pods in POD_SETS.items():
            for mode, full in (("kept-counts", False), ("full-count", True)):
                runner.bench_time_func(f"tas-place-required-rack-{node_label}-nodes-{pods_label}-pods-{mode}",
                                       bench_place, nodes, pods, full)


if __name__ == "__main__":
    main()
