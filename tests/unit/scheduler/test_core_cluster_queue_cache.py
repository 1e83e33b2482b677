"""The cache of ClusterQueues and admitted workloads (Kueue's pkg/cache/scheduler): an admitted
workload holds its admission's usage in its queue until it is released, and a ClusterQueue admits
only while it is not stopped and knows every flavor it names."""

import dataclasses

from scheduler.core import kinds
from scheduler.core.clusterqueuecache import ClusterQueueCache
from scheduler.core.workloads import Admission, PodSetAssignment
from scheduler_builders import ClusterQueueBuilder, WorkloadBuilder, q

CPU = ("default", "cpu")


def _cache() -> ClusterQueueCache:
    cache = ClusterQueueCache({}, kinds.ADMISSION_FAIR_SHARING_OFF)
    cache.quotas.set_cluster_queue(ClusterQueueBuilder("cq").flavors(("default", {"cpu": "4"})).obj())
    return cache


def _admitted(name: str, cpu: str):
    workload = WorkloadBuilder(name).request(cpu=cpu).obj()
    usage = {"cpu": q(cpu)}
    assignment = PodSetAssignment("main", {"cpu": "default"}, usage, 1)
    return dataclasses.replace(workload, admission=Admission("cq", (assignment,)))


def test_an_admitted_workload_holds_its_usage_until_it_is_released():
    cache = _cache()
    first, second = _admitted("a", "1"), _admitted("b", "2")
    cache.record(first, "cq", evicting=False)
    cache.record(second, "cq", evicting=False)
    assert cache.quotas.used("cq", CPU) == q("3")
    assert {r.workload.name for r in cache.admitted_in(["cq"])} == {"a", "b"}
    released = cache.release(first)
    assert released is not None and released.usage == {CPU: q("1")}
    assert cache.quotas.used("cq", CPU) == q("2") and cache.admitted(first.key) is None
    assert cache.release(first) is None  # released once


def test_a_chosen_target_keeps_its_quota_while_it_is_evicted():
    cache = _cache()
    target = _admitted("a", "1")
    cache.record(target, "cq", evicting=False)
    cache.mark_evicting(target.key)
    echoed = dataclasses.replace(target, admitted_at=7.0)
    cache.replace_workload(echoed)
    record = cache.admitted(target.key)
    assert record is not None and record.evicting and record.workload is echoed
    assert cache.quotas.used("cq", CPU) == q("1")


def test_a_cluster_queue_admits_while_it_knows_every_flavor_it_names():
    cache = _cache()
    assert cache.admitting("cq") is None
    cache.set_flavor(kinds.ResourceFlavor("default"))
    assert cache.admitting("cq") is cache.quotas.cluster_queues["cq"]
    assert cache.remove_flavor("default") == ["cq"]
    assert cache.admitting("cq") is None
