"""Nodes with a topology: block and rack labels by index, on both ways nodes are made, from the CLI and scenarios."""

from __future__ import annotations

import collections

import pytest
from click.testing import CliRunner

from harness.cli import cluster
from harness.clusters import kwokconfig, spec as specs
from harness.nodes import pools, storing, topologies
from harness.scenarios import loading


def test_nodes_fill_racks_then_blocks_in_index_order():
    shape = topologies.NodeTopology(racks_per_block=2, hosts_per_rack=3)
    pool = pools.NodePool(count=13, topology=shape)
    places = [(labels[topologies.BLOCK_LABEL], labels[topologies.RACK_LABEL])
              for labels in (pool.manifest(i)["metadata"]["labels"] for i in range(pool.count))]
    assert places[:7] == [("block-0", "block-0-rack-0")] * 3 + [("block-0", "block-0-rack-1")] * 3 + [
        ("block-1", "block-1-rack-0")]
    per_rack = collections.Counter(rack for _, rack in places)
    assert max(per_rack.values()) == 3 and per_rack["block-2-rack-0"] == 1  # the last block is short
    assert shape.blocks(13) == 3 and shape.blocks(12) == 2


def test_every_level_is_a_label_of_every_node_and_the_lowest_is_its_name():
    pool = pools.NodePool(name="tas", count=4, topology=topologies.NodeTopology(1, 2))
    for index in range(pool.count):
        labels = pool.manifest(index)["metadata"]["labels"]
        assert set(topologies.LEVELS) <= set(labels)
        assert labels[topologies.HOSTNAME_LABEL] == pool.node_name(index)


def test_a_pool_without_topology_has_no_level_labels_and_its_own_labels_win():
    assert topologies.RACK_LABEL not in pools.NodePool().manifest(0)["metadata"]["labels"]
    pool = pools.NodePool(topology=topologies.NodeTopology(), labels={topologies.RACK_LABEL: "mine"})
    assert pool.manifest(0)["metadata"]["labels"][topologies.RACK_LABEL] == "mine"


def test_bulk_loaded_nodes_carry_the_same_levels():
    pool = pools.NodePool(count=5, topology=topologies.NodeTopology(2, 2))
    stored = storing.stored_node(pool, 4, uid="u", created="2026-01-01T00:00:00Z", taint_not_ready=False)
    assert stored["metadata"]["labels"][topologies.RACK_LABEL] == "block-1-rack-0"


@pytest.mark.parametrize("text, shape", [("10x64", (10, 64)), (" 1 x 2 ", (1, 2))])
def test_shapes_parse(text, shape):
    parsed = topologies.parse(text)
    assert (parsed.racks_per_block, parsed.hosts_per_rack) == shape


@pytest.mark.parametrize("text", ["10", "0x4", "4x0", "axb", "1x2x3"])
def test_bad_shapes_are_refused(text):
    with pytest.raises(topologies.TopologyError):
        topologies.parse(text)


def test_cluster_up_refuses_a_bad_topology_before_starting_anything():
    result = CliRunner().invoke(cluster.group, ["up", "--name", "never-started", "--topology", "ten"])
    assert result.exit_code == 2
    assert "RACKSxHOSTS" in result.output


SCENARIO = """\
name: t
cluster:
  nodes: 6
  topology: {racks_per_block: 1, hosts_per_rack: 4}
queues:
  cluster_queues:
    - name: cq
      resource_groups:
        - covered_resources: [cpu]
          flavors:
            - flavor: default
              resources:
                - {name: cpu, nominal: 10}
  local_queues:
    - {name: lq, cluster_queue: cq}
phases:
  fill: {pending: 1}
"""


def test_a_scenarios_cluster_topology_reaches_its_nodes():
    [pool] = loading.parse(SCENARIO, "t.yaml").scenario.cluster.node_pools()
    assert pool.topology == topologies.NodeTopology(1, 4)
    assert pool.manifest(5)["metadata"]["labels"][topologies.BLOCK_LABEL] == "block-1"


def test_a_topology_beside_pools_is_refused():
    text = SCENARIO.replace("  nodes: 6\n", "  pools: [{name: a, count: 2}]\n")
    with pytest.raises(loading.ScenarioError, match="each pool its own topology"):
        loading.parse(text, "t.yaml")


def test_nodes_with_a_topology_get_no_not_ready_taint_that_nothing_would_lift():
    spec = loading.parse(SCENARIO, "t.yaml").scenario.cluster.cluster_spec("x")
    assert spec.schedulable_nodes and not kwokconfig.taints_new_nodes(spec)
    plain = loading.parse(SCENARIO.replace("  topology: {racks_per_block: 1, hosts_per_rack: 4}\n", ""), "t.yaml")
    assert kwokconfig.taints_new_nodes(plain.scenario.cluster.cluster_spec("x"))
    # With heartbeats the node-lifecycle controller lifts it, as in a real cluster.
    assert kwokconfig.taints_new_nodes(specs.ClusterSpec(name="x", schedulable_nodes=True,
                                                         heartbeats=specs.Heartbeats(enabled=True)))
