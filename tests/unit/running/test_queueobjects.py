"""Queue objects of a scenario are Kueue-shaped and read back by the scheduler core's conversion."""

from __future__ import annotations

from harness.running import queueobjects
from harness.scenarios import loading
from scheduler.core import conversion


def test_kueue_baseline_objects():
    objects = queueobjects.manifests(loading.load("kueue-baseline").scenario.queues)
    kinds = [obj["kind"] for _, obj in objects]
    assert kinds.count("ClusterQueue") == 30 and kinds.count("LocalQueue") == 30 and kinds.count("Cohort") == 5
    assert kinds.index("ResourceFlavor") < kinds.index("ClusterQueue") < kinds.index("LocalQueue")
    cq = next(obj for _, obj in objects if obj["kind"] == "ClusterQueue")
    assert cq["spec"]["cohortName"] == "cohort-0"
    quota = cq["spec"]["resourceGroups"][0]["flavors"][0]["resources"][0]
    assert quota == {"name": "cpu", "nominalQuota": 20, "borrowingLimit": 100}


def test_paths_match_objects():
    for path, obj in queueobjects.manifests(loading.load("quick").scenario.queues):
        assert path.endswith("/" + obj["metadata"]["name"])
        if obj["kind"] == "LocalQueue":
            assert f"/namespaces/{obj['metadata']['namespace']}/" in path


def test_scheduler_core_reads_the_cluster_queues():
    objects = queueobjects.manifests(loading.load("quick").scenario.queues)
    cq = next(obj for _, obj in objects if obj["kind"] == "ClusterQueue")
    converted = conversion.cluster_queue_from_dict(cq)
    assert converted.name == "cq-0" and converted.cohort == "all"
