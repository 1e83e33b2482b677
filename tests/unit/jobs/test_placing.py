"""Whether each Job that asked for one rack ran in one, from its pods' nodes."""

from __future__ import annotations

import pandas as pd

from harness.drivers.jobs import placing, plans, recording, reporting, tabulating
from harness.nodes import pools, topologies
from harness.scenarios import loading

POOL = pools.NodePool(name="tas", count=8, topology=topologies.NodeTopology(racks_per_block=2, hosts_per_rack=2))


def test_the_nodes_levels_are_known_from_the_pool_without_the_cluster():
    levels = placing.node_levels([POOL, pools.NodePool(name="plain", count=3)])
    assert len(levels) == 8, "a pool without a topology has no levels"
    third = POOL.node_name(2)
    assert levels[third] == {topologies.BLOCK_LABEL: "block-0", topologies.RACK_LABEL: "block-0-rack-1",
                             topologies.HOSTNAME_LABEL: third}


def test_only_classes_that_require_a_level_are_judged():
    scenario = loading.load("jobs", [
        "load.mix=[{pods: 2, cpu: '1', runtime_seconds: 1, per_second: 1, count: 1, "
        "topology: {required: cloud.provider.com/topology-rack}}, "
        "{pods: 2, cpu: '1', runtime_seconds: 1, per_second: 1, count: 1, topology: {preferred: x}}]"]).scenario
    assert list(placing.required_levels(plans.from_scenario(scenario)).values()) == [topologies.RACK_LABEL]


def _job(name: str, job_class: str = "c", pods: int = 2) -> recording.JobRecord:
    return recording.JobRecord("ns", name, job_class, "cq", pods)


def _pod(job: str, node: int | None) -> recording.PodRecord:
    return recording.PodRecord(job=("ns", job), created=0.0, node=None if node is None else POOL.node_name(node))


def test_a_job_is_kept_when_its_pods_share_the_level_and_judged_once_all_are_bound():
    jobs = [_job("one-rack"), _job("two-racks"), _job("unbound"), _job("short", pods=3), _job("free", "other")]
    pods = [_pod("one-rack", 0), _pod("one-rack", 1), _pod("two-racks", 1), _pod("two-racks", 2),
            _pod("unbound", 0), _pod("unbound", None), _pod("short", 0), _pod("short", 1),
            _pod("free", 0), _pod("free", 7)]
    kept = placing.kept_by_class(jobs, pods, {"c": topologies.RACK_LABEL}, placing.node_levels([POOL]))
    assert kept == {"c": placing.Kept(judged=2, in_one_domain=1)}
    by_block = placing.kept_by_class(jobs, pods, {"c": topologies.BLOCK_LABEL}, placing.node_levels([POOL]))
    assert by_block["c"].in_one_domain == 2, "racks 0 and 1 are both in block 0"
    rows = tabulating.placement_rows(kept)
    assert {(r["metric"], r["value"], r["job_class"]) for r in rows} == {
        ("topology_jobs_judged", 2.0, "c"), ("topology_jobs_in_one_domain", 1.0, "c")}


def test_the_report_shows_per_case_and_class_how_many_ran_in_one_domain():
    rows = tabulating.placement_rows({"rack-8": placing.Kept(judged=10, in_one_domain=9)})
    frame = pd.DataFrame(rows).assign(case="ours,r0")
    table = reporting.placement_table(frame)
    assert table.to_dict(orient="records") == [{"case": "ours,r0", "job_class": "rack-8",
                                                "Jobs with every pod bound": 10.0, "in one domain": 9.0}]
    assert reporting.placement_table(frame.assign(metric="wall_seconds")).empty
