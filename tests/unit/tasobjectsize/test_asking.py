"""The TAS object-size phase's pure parts: the Workload it asks for, what its status and kube-apiserver's
metrics say, and its phase model."""

import pytest

from harness.drivers.tasobjectsize import asking, counting, phases
from harness.nodes import topologies


def test_the_workload_asks_for_one_one_cpu_pod_per_host_preferring_a_block():
    body = asking.workload(1_000, "kqbench-tas", "lq", "1", topologies.BLOCK_LABEL)
    assert body["metadata"] == {"name": "pods-1000", "namespace": "kqbench-tas"} and body["spec"]["queueName"] == "lq"
    pod_set = body["spec"]["podSets"][0]
    assert pod_set["count"] == 1_000 and pod_set["topologyRequest"] == {"preferred": "cloud.provider.com/topology-block"}
    assert pod_set["template"]["spec"]["containers"][0]["resources"]["requests"] == {"cpu": "1"}


def test_hosts_are_counted_from_every_slice_of_every_pod_set():
    admission = {"podSetAssignments": [{"topologyAssignment": {"slices": [{"domainCount": 3}, {"domainCount": 2}]}},
                                       {"name": "no-tas"}]}
    assert asking.hosts_in(admission) == 5 and asking.hosts_in({}) == 0


def test_conditions_keep_what_the_api_shows_and_nothing_else():
    status = {"conditions": [{"type": "QuotaReserved", "status": "True", "reason": "QuotaReserved",
                              "message": "Quota reserved", "lastTransitionTime": "2026-12-01T00:00:00Z"},
                             {"type": "Admitted", "status": "False"}]}
    assert asking.conditions(status) == [
        {"type": "QuotaReserved", "status": "True", "reason": "QuotaReserved", "message": "Quota reserved"},
        {"type": "Admitted", "status": "False", "reason": "", "message": ""}]
    assert asking.conditions({}) == []


METRICS = """\
# TYPE apiserver_request_total counter
apiserver_request_total{code="200",resource="workloads",subresource="status",verb="PUT"} 4
apiserver_request_total{code="200",resource="workloads",subresource="status",verb="APPLY"} 1
apiserver_request_total{code="500",resource="workloads",subresource="status",verb="PUT"} 7
apiserver_request_total{code="200",resource="workloads",subresource="status",verb="GET"} 90
apiserver_request_total{code="201",resource="workloads",subresource="",verb="POST"} 3
apiserver_request_total{code="500",resource="nodes",subresource="status",verb="PATCH"} 2
"""


def test_status_writes_are_counted_by_code_reads_and_other_resources_left_out():
    assert counting.write_codes(METRICS, "workloads", "status") == {"200": 5.0, "500": 7.0}
    assert counting.write_codes(METRICS, "workloads") == {"201": 3.0}


@pytest.mark.parametrize("after, before, grown", [
    ({"200": 5.0, "500": 7.0}, {"200": 5.0, "500": 4.0}, {"500": 3.0}),
    ({"200": 1.0}, {}, {"200": 1.0}),
    ({"200": 1.0}, {"200": 1.0}, {}),
])
def test_growth_leaves_out_codes_that_did_not_grow(after, before, grown):
    assert counting.grown(after, before) == grown


def test_refused_writes_are_the_server_errors():
    assert counting.refused({"200": 5.0, "409": 1.0, "500": 3.0, "504": 1.0}) == 4.0 and counting.refused({}) == 0


def test_pod_sets_run_smallest_first_and_once_each():
    assert phases.ObjectSizePhase(pods=[20_000, 2_000, 20_000]).pods == [2_000, 20_000]
    with pytest.raises(ValueError):
        phases.ObjectSizePhase(pods=[])
