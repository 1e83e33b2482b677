"""Kueue-shaped dicts (v1beta2, as the controller gets them from JSON) to core objects."""

import pytest

from scheduler.core import conversion, kinds
from scheduler.core.queues import QueueManager
from scheduler.core.scheduling import run_cycle
from scheduler.core.workloads import RequeuingTimestamp
from scheduler_builders import q


def _workload(**overrides):
    obj = {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "Workload",
        "metadata": {"name": "job-1", "namespace": "team", "uid": "u-1", "creationTimestamp": "2024-01-01T00:00:10Z"},
        "spec": {
            "queueName": "lq",
            "priority": 7,
            "podSets": [
                {
                    "name": "main",
                    "count": 3,
                    "template": {
                        "spec": {
                            "containers": [
                                {"resources": {"requests": {"cpu": "500m", "memory": "1Gi"}}},
                                {"resources": {"limits": {"cpu": "1"}}},
                            ],
                            "initContainers": [{"resources": {"requests": {"cpu": "2"}}}],
                            "nodeSelector": {"zone": "a"},
                        }
                    },
                }
            ],
        },
    }
    obj.update(overrides)
    return obj


def test_workload_from_dict():
    workload = conversion.workload_from_dict(_workload())
    assert (workload.key, workload.uid, workload.queue_name, workload.priority) == (("team", "job-1"), "u-1", "lq", 7)
    assert workload.creation_timestamp == 1704067210.0 == workload.queue_timestamp
    (pod_set,) = workload.pod_sets
    # containers sum to 1.5 cpu, the init container needs 2: the pod needs 2.
    assert dict(pod_set.requests) == {"cpu": q("2"), "memory": q("1Gi")}
    assert (pod_set.count, pod_set.node_selector) == (3, (("zone", "a"),))
    assert workload.active and not workload.finished and workload.admission is None


@pytest.mark.parametrize(
    ("reason", "policy", "queue_timestamp"),
    [
        ("PodsReadyTimeout", RequeuingTimestamp.EVICTION, 1704067300.0),
        ("PodsReadyTimeout", RequeuingTimestamp.CREATION, 1704067210.0),
        ("AdmissionCheck", RequeuingTimestamp.CREATION, 1704067300.0),
        ("Preempted", RequeuingTimestamp.EVICTION, 1704067210.0),
    ],
)
def test_requeued_workload_orders_by_policy(reason, policy, queue_timestamp):
    status = {
        "conditions": [
            {"type": "Evicted", "status": "True", "reason": reason, "lastTransitionTime": "2024-01-01T00:01:40Z"}
        ]
    }
    workload = conversion.WorkloadDecoder(requeuing=policy).decode(_workload(status=status))
    assert workload.queue_timestamp == queue_timestamp


def test_admitted_and_finished_workloads():
    admission = {
        "clusterQueue": "cq",
        "podSetAssignments": [
            {"name": "main", "flavors": {"cpu": "default"}, "resourceUsage": {"cpu": "6"}, "count": 3}
        ],
    }
    reserved = {"type": "QuotaReserved", "status": "True", "lastTransitionTime": "2024-01-01T00:00:20Z"}
    workload = conversion.workload_from_dict(_workload(status={"admission": admission, "conditions": [reserved]}))
    assert workload.admission.usage() == {("default", "cpu"): q("6")}
    assert workload.admitted_at == 1704067220.0
    assert conversion.admission_to_dict(workload.admission) == admission
    finished = {"conditions": [{"type": "Finished", "status": "True"}]}
    assert conversion.workload_from_dict(_workload(status=finished)).finished


def test_priority_class_reference_resolved_by_manager():
    spec = dict(_workload()["spec"])
    del spec["priority"]
    spec["priorityClassRef"] = {"group": "kueue.x-k8s.io", "kind": "WorkloadPriorityClass", "name": "high"}
    manager = QueueManager()
    manager.add_workload_priority_class(
        conversion.workload_priority_class_from_dict({"metadata": {"name": "high"}, "value": 1000})
    )
    manager.add_workload(conversion.workload_from_dict(_workload(spec=spec)))
    assert manager.workload(("team", "job-1")).priority == 1000


def test_cluster_queue_from_dict():
    cq = conversion.cluster_queue_from_dict(
        {
            "metadata": {"name": "cq"},
            "spec": {
                "cohortName": "co",
                "queueingStrategy": "StrictFIFO",
                "resourceGroups": [
                    {
                        "coveredResources": ["cpu", "memory"],
                        "flavors": [
                            {
                                "name": "default",
                                "resources": [
                                    {"name": "cpu", "nominalQuota": "9", "borrowingLimit": "1", "lendingLimit": "500m"},
                                    {"name": "memory", "nominalQuota": "36Gi"},
                                ],
                            }
                        ],
                    }
                ],
                "preemption": {"withinClusterQueue": "LowerPriority", "reclaimWithinCohort": "Any"},
                "flavorFungibility": {"whenCanBorrow": "TryNextFlavor", "whenCanPreempt": "Preempt"},
            },
        }
    )
    assert cq.cohort == "co" and cq.queueing_strategy is kinds.QueueingStrategy.STRICT_FIFO
    assert cq.quota(("default", "cpu")) == kinds.ResourceQuota("cpu", q("9"), q("1"), q("500m"))
    assert cq.quota(("default", "memory")).nominal == q("36Gi")
    assert cq.preemption == kinds.Preemption(kinds.PreemptionPolicy.LOWER_PRIORITY, kinds.PreemptionPolicy.ANY)
    assert cq.flavor_fungibility.when_can_borrow is kinds.FungibilityPolicy.TRY_NEXT_FLAVOR
    assert cq.flavor_fungibility.when_can_preempt is kinds.FungibilityPolicy.MAY_STOP_SEARCH


def test_end_to_end_from_dicts():
    manager = QueueManager()
    manager.add_resource_flavor(
        conversion.resource_flavor_from_dict({"metadata": {"name": "default"}, "spec": {"nodeLabels": {"zone": "a"}}})
    )
    manager.add_cluster_queue(
        conversion.cluster_queue_from_dict(
            {
                "metadata": {"name": "cq"},
                "spec": {
                    "namespaceSelector": {},
                    "resourceGroups": [
                        {
                            "coveredResources": ["cpu", "memory"],
                            "flavors": [
                                {
                                    "name": "default",
                                    "resources": [
                                        {"name": "cpu", "nominalQuota": 6},
                                        {"name": "memory", "nominalQuota": "8Gi"},
                                    ],
                                }
                            ],
                        }
                    ]
                },
            }
        )
    )
    manager.add_cohort(conversion.cohort_from_dict({"metadata": {"name": "co"}, "spec": {"parentName": "root"}}))
    manager.add_local_queue(
        conversion.local_queue_from_dict({"metadata": {"name": "lq", "namespace": "team"}, "spec": {"clusterQueue": "cq"}})
    )
    manager.add_workload(conversion.workload_from_dict(_workload()))
    (decision,) = run_cycle(manager, now=100)
    assert conversion.admission_to_dict(decision.admission)["podSetAssignments"][0]["resourceUsage"] == {
        "cpu": "6",
        "memory": "3221225472",
    }


def test_decoder_shares_identical_pod_sets():
    decoder = conversion.WorkloadDecoder()
    first = decoder.decode(_workload())
    second = decoder.decode(_workload(metadata={"name": "job-2", "namespace": "team", "uid": "u-2"}))
    assert first.pod_sets[0] is second.pod_sets[0]
    assert second.creation_timestamp == 0.0  # no creationTimestamp given
