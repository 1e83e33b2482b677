"""Queue objects of a scenario are Kueue-shaped and read back by the scheduler core's conversion."""

from __future__ import annotations

import pytest

from harness.scenarios import loading, queueobjects
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


WEIGHTED = """\
name: weighted
queues:
  flavors: [{name: default}]
  cohorts: [{name: top, fair_sharing_weight: 2.5}]
  cluster_queues:
    - name: cq
      cohort: top
      fair_sharing_weight: 0
      admission_mode: UsageBasedAdmissionFairSharing
      resource_groups:
        - covered_resources: [cpu]
          flavors: [{flavor: default, resources: [{name: cpu, nominal: 4}]}]
  local_queues: [{name: lq, cluster_queue: cq, fair_sharing_weight: 0.5}]
phases:
  churn: {seconds: 5}
"""


def test_fair_sharing_weights_and_admission_mode_reach_the_objects_and_read_back(tmp_path):
    path = tmp_path / "weighted.yaml"
    path.write_text(WEIGHTED)
    objects = [obj for _, obj in queueobjects.manifests(loading.load(str(path)).scenario.queues)]
    cohort = next(o for o in objects if o["kind"] == "Cohort")
    assert conversion.cohort_from_dict(cohort).fair_weight == 2.5
    cq = conversion.cluster_queue_from_dict(next(o for o in objects if o["kind"] == "ClusterQueue"))
    assert cq.fair_weight == 0.0 and cq.usage_based_admission
    lq = conversion.local_queue_from_dict(next(o for o in objects if o["kind"] == "LocalQueue"))
    assert lq.fair_weight == 0.5
    plain = [obj for _, obj in queueobjects.manifests(loading.load("tiny").scenario.queues)]
    assert not any("fairSharing" in o.get("spec", {}) or "admissionScope" in o.get("spec", {}) for o in plain)
    path.write_text(WEIGHTED.replace("fair_sharing_weight: 0\n", "fair_sharing_weight: -1\n"))
    with pytest.raises(loading.ScenarioError, match="fair_sharing_weight"):
        loading.load(str(path))
