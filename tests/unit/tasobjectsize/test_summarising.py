"""The TAS object-size tables and summary: one row per pod set, the largest admitted and the first refused,
ours / Kueue's per pod set both admitted; the phase's checks of the scenario."""

import pandas as pd
import pytest

from harness.drivers.tasobjectsize import measuring, summarising, tabulating
from harness.errors import KqbenchError
from harness.scenarios import loading, sections

SETTING = tabulating.Setting(implementation="reference", node_names="cloud", nodes=20_000, etcd_limit=262_144)
MODEL = {"v1beta2-compact": 34_000, "v1beta2-prefix-runs": 16_000, "domain-list": 90_000}


def measured(pods: int, seconds: float | None, stored: int, **fields) -> tabulating.Measured:
    hosts = pods if seconds is not None else 0
    return tabulating.Measured(pods, seconds, hosts, stored, stored + 24, **fields)


def table(*rows: tuple[str, str, tabulating.Measured]) -> dict[str, pd.DataFrame]:
    """The run's tables of these (case, implementation, measured) rows, `case` added as the runner does."""
    out: dict[str, list[pd.DataFrame]] = {}
    for case, implementation, one in rows:
        setting = tabulating.Setting(implementation, SETTING.node_names, SETTING.nodes, SETTING.etcd_limit)
        for name, frame in tabulating.frames("tas", setting, one, MODEL).items():
            out.setdefault(name, []).append(frame.assign(case=case))
    return {name: pd.concat(frames, ignore_index=True) for name, frames in out.items()}


REFUSED = measured(100_000, None, 900, conditions=[{"type": "QuotaReserved", "status": "False", "reason": "Pending",
                                                    "message": ""}],
                   writes={"500": 3.0}, watched_seconds=30.0, writes_watched={"500": 1.0})


def test_one_row_per_pod_set_with_its_writes_and_conditions_in_their_own_tables():
    frames = tabulating.frames("tas", SETTING, REFUSED, MODEL)
    [row] = frames[tabulating.TABLE].to_dict("records")
    assert (row["phase"], row["pods"]) == ("tas", 100_000) and not row["admitted"] and not row["quota_reserved"]
    assert (row["status_writes_refused"], row["status_writes_refused_watched"]) == (3.0, 1.0)
    assert pd.isna(row["etcd_bytes_per_host"]) and row["model_v1beta2_compact_bytes"] == 34_000
    assert frames[tabulating.WRITES_TABLE][["window", "code", "requests"]].values.tolist() == [
        ["until-bound", "500", 3.0], ["watched", "500", 1.0]]
    assert frames[tabulating.CONDITIONS_TABLE]["reason"].tolist() == ["Pending"]


def test_the_summary_names_the_largest_admitted_and_the_first_refused():
    tables = table(("ours", "reference", measured(1_000, 1.0, 20_000)), ("ours", "reference", measured(90_000, 3.0, 1_450_000)),
                   ("ours", "reference", REFUSED))
    metrics = {m.name: m for m in summarising.metrics(tables, "ours")}
    assert metrics["tas_object_size.largest_admitted_pods"].value == 90_000
    assert metrics["tas_object_size.first_not_admitted_pods"].value == 100_000
    assert metrics["tas_object_size.etcd_bytes_per_host"].value == pytest.approx(1_450_000 / 90_000)
    assert metrics["tas_object_size.status_writes_refused"].value == 3.0
    assert summarising.metrics(tables, "other") == [] and summarising.metrics({}, "ours") == []


def test_a_case_that_admitted_nothing_says_so_without_a_size():
    metrics = {m.name: m.value for m in summarising.metrics(table(("ours", "reference", REFUSED)), "ours")}
    assert metrics["tas_object_size.largest_admitted_pods"] == 0 and "tas_object_size.etcd_bytes_per_host" not in metrics


def test_ours_over_kueues_per_pod_set_both_admitted():
    tables = table(("implementation=reference,r0", "reference", measured(1_000, 1.0, 9_000)),
                   ("implementation=reference,r0", "reference", measured(100_000, 4.0, 713_853)),
                   ("implementation=kueue,r0", "kueue", measured(1_000, 9.0, 9_000)),
                   ("implementation=kueue,r0", "kueue", measured(100_000, 5.0, 714_426)))
    ratios = {m.name: m.value for m in summarising.metrics(tables, "implementation=reference,r0")
              if ".ratio_to_kueue." in m.name}
    assert ratios["tas_object_size.ratio_to_kueue.etcd_bytes.pods_100000"] == pytest.approx(713_853 / 714_426)
    assert ratios["tas_object_size.ratio_to_kueue.seconds_to_admission.pods_1000"] == pytest.approx(1 / 9)
    assert not [m for m in summarising.metrics(tables, "implementation=kueue,r0") if ".ratio_to_kueue." in m.name]


def test_a_pod_set_larger_than_the_cluster_is_refused_before_anything_starts():
    cluster = sections.ClusterSection(pools=[{"name": "kwok", "count": 100, "cpu": "1", "names": "cloud"}])
    assert measuring.nodes_of(cluster, 100).names == "cloud"
    with pytest.raises(KqbenchError, match="101 pods need 101 one-pod hosts; the cluster has 100 nodes"):
        measuring.nodes_of(cluster, 101)


def test_the_phase_finds_its_cluster_queue_or_names_the_missing_local_queue():
    queues = sections.QueuesSection(cluster_queues=[{"name": "cq", "resource_groups": [
        {"covered_resources": ["cpu"], "flavors": [{"flavor": "default", "resources": [{"name": "cpu", "nominal": 1}]}]}]}],
        local_queues=[{"name": "lq", "cluster_queue": "cq", "namespace": "kqbench-tas"}])
    assert measuring.cluster_queue_of(queues, "kqbench-tas", "lq") == "cq"
    with pytest.raises(KqbenchError, match="LocalQueue other/lq is not in"):
        measuring.cluster_queue_of(queues, "other", "lq")


def test_the_committed_scenario_is_100k_cloud_named_hosts_for_both_implementations():
    loaded = loading.load("results/tas/object-size.yaml")
    [pool] = loaded.scenario.cluster.node_pools()
    assert (pool.count, pool.cpu, pool.names, loaded.scenario.cluster.bulk) == (100_000, "1", "cloud", True)
    assert loaded.scenario.phases["tas"].pods == [1_000, 10_000, 50_000, 90_000, 100_000]
    assert [case.params for case in loaded.cases] == [{"scheduler.implementation": "reference"},
                                                      {"scheduler.implementation": "kueue"}]
    # etcd's flags reach the cluster it brings up
    scaled = loading.load("results/tas/object-size.yaml", ['cluster.etcd_args={max-request-bytes: "262144"}'])
    assert scaled.scenario.cluster.cluster_spec("t").etcd_args == (("max-request-bytes", "262144"),)
