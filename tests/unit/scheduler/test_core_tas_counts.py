"""The counts kept per pod shape (and slicing) give every placement Kueue's full count gives, as workloads
and nodes come and go."""

from __future__ import annotations

from hypothesis import given, settings, strategies as st

from scheduler.core import kinds, placing
from scheduler.core.domaintrees import DomainTree
from scheduler.core.kinds import Taint, Toleration
from scheduler.core.topologystate import TopologyState
from scheduler.core.topologies import HOSTNAME_LABEL, Node, Topology, TopologyRequest

LEVELS = ("block", "rack", HOSTNAME_LABEL)
GPU_TAINT = Taint("gpu", "yes", "NoSchedule")


@st.composite
def trees(draw) -> DomainTree:
    """Up to 3 blocks x 3 racks x 4 hosts of 1-8 cpu and 2-10 pods, some tainted, some of zone b."""
    nodes = []
    for b in range(draw(st.integers(1, 3))):
        for r in range(draw(st.integers(1, 3))):
            for h in range(draw(st.integers(1, 4))):
                name = f"b{b}-r{r}-h{h}"
                labels = {"block": f"b{b}", "rack": f"r{r}", HOSTNAME_LABEL: name,
                          "zone": draw(st.sampled_from(["a", "b"]))}
                allocatable = {"cpu": draw(st.integers(1, 8)) * 1000, "pods": draw(st.integers(2, 10)) * 1000}
                taints = (GPU_TAINT,) if draw(st.integers(0, 5)) == 0 else ()
                nodes.append(Node(name, labels, allocatable, taints))
    lowest = draw(st.sampled_from([HOSTNAME_LABEL, "rack"]))
    levels = LEVELS if lowest == HOSTNAME_LABEL else LEVELS[:2]
    return DomainTree(Topology("dc", levels), nodes)


requests = st.builds(
    lambda slices, size, cpu, kind, level, slice_level, selector, tolerate: placing.PlacementRequest(
        "main", {"cpu": cpu * 500}, slices * size,
        None if kind == "implied" else TopologyRequest(
            required=level if kind == "required" else None, preferred=level if kind == "preferred" else None,
            unconstrained=True if kind == "unconstrained" else None,
            slice_required=slice_level if size > 1 or kind == "slices" else None,
            slice_size=size if size > 1 or kind == "slices" else None),
        implied=kind == "implied", node_selector=(("zone", "a"),) if selector else (),
        tolerations=(Toleration("gpu", "Exists"),) if tolerate else ()),
    st.integers(1, 6), st.sampled_from([1, 1, 2, 3]), st.integers(1, 4),
    st.sampled_from(["required", "preferred", "unconstrained", "implied", "slices"]),
    st.sampled_from(["block", "rack", HOSTNAME_LABEL]), st.sampled_from(["block", "rack", HOSTNAME_LABEL]),
    st.booleans(), st.booleans())


@settings(max_examples=150, deadline=None)
@given(trees(), st.lists(st.tuples(requests, requests, st.booleans()), min_size=1, max_size=8))
def test_kept_counts_place_as_the_full_count_does(tree, steps):
    admitted = []
    for step, (first, second, finish_oldest) in enumerate(steps):
        kept = placing.place_pod_sets(tree, [first, second])
        assert kept == placing.place_pod_sets(tree, [first, second], full_count=True)
        empty = placing.place_pod_sets(tree, [first, second], simulate_empty=True)
        assert empty == placing.place_pod_sets(tree, [first, second], simulate_empty=True, full_count=True)
        if all(p.assignment is not None for p in kept):
            key = ("ns", f"w{step}")
            domains = [(tree.leaf_id(d.values), dict(r.per_pod), d.count)
                       for p, r in zip(kept, (first, second)) for d in p.assignment.domains]
            tree.usage.add_workload(key, domains)
            admitted.append(key)
        if finish_oldest and admitted:
            tree.usage.remove_workload(admitted.pop(0))


node_ops = st.lists(st.tuples(
    st.sampled_from(["add", "remove", "change"]), st.integers(0, 11), st.integers(0, 2), st.integers(0, 2),
    st.integers(1, 6), st.booleans()), min_size=1, max_size=12)


@settings(max_examples=100, deadline=None)
@given(node_ops, st.lists(requests, min_size=1, max_size=3), st.sampled_from([HOSTNAME_LABEL, "rack"]))
def test_nodes_coming_and_going_update_the_tree_and_its_counts_in_place(ops, shapes, lowest):
    """A tree kept through node events places as a tree built anew from the nodes there are then."""
    levels = LEVELS if lowest == HOSTNAME_LABEL else LEVELS[:2]
    state = TopologyState()
    state.set_topology(Topology("dc", levels))
    state.set_flavor(kinds.ResourceFlavor("tas", topology_name="dc"))
    for step, (op, host, block, rack, cpu, tainted) in enumerate(ops):
        name = f"h{host}"
        if op == "remove":
            state.set_node(name, None)
        elif op == "add" and name in state.nodes:
            continue
        else:
            labels = {"block": f"b{block}", "rack": f"r{rack}", HOSTNAME_LABEL: name, "zone": "a"}
            state.set_node(name, Node(name, labels, {"cpu": cpu * 1000, "pods": 8000},
                                      (GPU_TAINT,) if tainted else ()))
        tree = state.tree("tas")
        if not tree.leaves:
            continue
        fresh = DomainTree(tree.topology, state.nodes.values(), usage=tree.usage)
        for request in shapes:
            kept = placing.place_pod_sets(tree, [request])
            assert kept == placing.place_pod_sets(fresh, [request], full_count=True)
            if kept[0].assignment is not None and step % 2:
                tree.usage.add_workload(("ns", f"w{step}"), [
                    (tree.leaf_id(d.values), dict(request.per_pod), d.count) for d in kept[0].assignment.domains])
