"""The topology feed: Topologies and Nodes as the informers deliver them reach the core, and a TAS flavor
whose levels no node has is named in the log once."""

from __future__ import annotations

import logging

from scheduler.controller import topologyfeeding
from scheduler.core import kinds
from scheduler.core.decisions import Admit
from scheduler.core.queues import QueueManager
from scheduler.core.scheduling import run_cycle
from scheduler_builders import ClusterQueueBuilder, WorkloadBuilder


def _node(name: str, ready: bool = True, **labels: str) -> dict:
    return {"metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **labels}},
            "status": {"allocatable": {"cpu": "4", "pods": "10"},
                       "conditions": [{"type": "Ready", "status": "True" if ready else "False"}]}}


def _topology(*levels: str) -> dict:
    return {"metadata": {"name": "dc"}, "spec": {"levels": [{"nodeLabel": level} for level in levels]}}


def _feed():
    manager = QueueManager()
    manager.add_resource_flavor(kinds.ResourceFlavor("tas", topology_name="dc"))
    touched = []
    return manager, topologyfeeding.TopologyFeed(manager, None, "/topologies", lambda: touched.append(1)), touched


def test_listed_and_watched_nodes_reach_the_tree_and_a_node_not_ready_leaves_it():
    manager, feed, touched = _feed()
    feed._list_topologies([_topology("rack", "kubernetes.io/hostname")])
    feed._list_nodes([_node("a", rack="r1"), _node("b", rack="r1"), _node("c", ready=False, rack="r2")])
    assert sorted(manager.cache.topologies.tree("tas").leaves) == ["a", "b"]
    feed._node_event("MODIFIED", _node("a", ready=False, rack="r1"))
    feed._node_event("ADDED", _node("d", rack="r2"))
    feed._node_event("DELETED", _node("b", rack="r1"))
    assert sorted(manager.cache.topologies.tree("tas").leaves) == ["d"]
    # A relist drops what the watch missed.
    feed._list_nodes([_node("e", rack="r3")])
    assert sorted(manager.cache.topologies.tree("tas").leaves) == ["e"]
    assert touched


def test_a_flavor_whose_levels_no_node_has_is_logged_once(caplog):
    manager, feed, _ = _feed()
    with caplog.at_level(logging.WARNING, logger=topologyfeeding.__name__):
        feed._list_topologies([_topology("block", "kubernetes.io/hostname")])
        feed._list_nodes([_node("a", rack="r1")])
        feed._list_nodes([_node("a", rack="r1"), _node("b", rack="r1")])
    warnings = [r.getMessage() for r in caplog.records]
    assert warnings == ["ResourceFlavor tas: no Ready node has every level of Topology dc "
                        "(block, kubernetes.io/hostname)"]
    feed._topology_event("MODIFIED", _topology("rack", "kubernetes.io/hostname"))
    assert manager.cache.topologies.flavors_without_nodes() == []


def test_a_queue_with_a_tas_flavor_waits_for_the_first_node_list_rather_than_deciding_on_no_nodes():
    manager, feed, _ = _feed()
    manager.add_cluster_queue(ClusterQueueBuilder("cq").flavors(("tas", {"cpu": "10"})).obj())
    manager.add_local_queue(kinds.LocalQueue("ns", "lq", "cq"))
    feed._list_topologies([_topology("rack", "kubernetes.io/hostname")])
    manager.add_workload(WorkloadBuilder("w").request(2, "main", cpu="1").topology(required="rack").obj())
    assert run_cycle(manager, now=1) == []
    feed._list_nodes([_node("a", rack="r1")])
    [decision] = run_cycle(manager, now=2)
    assert isinstance(decision, Admit)
