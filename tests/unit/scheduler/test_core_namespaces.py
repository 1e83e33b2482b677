"""ClusterQueue namespaceSelector: a queue admits only from the namespaces it selects.

Kueue: the selector is metav1.LabelSelectorAsSelector (null selects nothing, {} everything); a head
from another namespace is turned away in nominate (pkg/scheduler/scheduler.go) and kept inadmissible
in either strategy (pkg/cache/queue/cluster_queue.go RequeueIfNotPresent, NamespaceMismatch) until a
label change selects its namespace (clusterqueue_controller.go cqNamespaceHandler.Update).
"""

import pytest

from scheduler.core import conversion, kinds
from scheduler.core.decisions import NAMESPACE_MISMATCH, NAMESPACE_MISMATCH_MESSAGE, Park, Wait
from scheduler.core.queuestatus import queue_statuses
from scheduler.core.scheduling import decide_cycle, run_cycle
from scheduler_builders import ClusterQueueBuilder, WorkloadBuilder, admit, manager_with

TEAM_A = {"matchLabels": {"team": "a"}}


def _summary(decisions):
    return [(type(d).__name__, d.workload.name) for d in decisions]


@pytest.mark.parametrize(("selector", "labels", "selected"), [
    (None, {}, False),  # null (or absent) selects nothing
    (None, {"team": "a"}, False),
    ({}, {}, True),  # {} selects everything
    ({"matchLabels": {}, "matchExpressions": []}, {"team": "a"}, True),
    (TEAM_A, {"team": "a", "other": "x"}, True),
    (TEAM_A, {"team": "b"}, False),
    (TEAM_A, {}, False),
    ({"matchExpressions": [{"key": "team", "operator": "In", "values": ["a", "b"]}]}, {"team": "b"}, True),
    ({"matchExpressions": [{"key": "team", "operator": "In", "values": ["a", "b"]}]}, {}, False),
    ({"matchExpressions": [{"key": "team", "operator": "NotIn", "values": ["a"]}]}, {}, True),
    ({"matchExpressions": [{"key": "team", "operator": "NotIn", "values": ["a"]}]}, {"team": "a"}, False),
    ({"matchExpressions": [{"key": "team", "operator": "NotIn", "values": ["a"]}]}, {"team": "c"}, True),
    ({"matchExpressions": [{"key": "team", "operator": "Exists"}]}, {"team": ""}, True),
    ({"matchExpressions": [{"key": "team", "operator": "Exists"}]}, {}, False),
    ({"matchExpressions": [{"key": "team", "operator": "DoesNotExist"}]}, {}, True),
    ({"matchExpressions": [{"key": "team", "operator": "DoesNotExist"}]}, {"team": "a"}, False),
    # matchLabels and matchExpressions are ANDed
    ({"matchLabels": {"team": "a"}, "matchExpressions": [{"key": "tier", "operator": "Exists"}]}, {"team": "a"}, False),
    ({"matchLabels": {"team": "a"}, "matchExpressions": [{"key": "tier", "operator": "Exists"}]},
     {"team": "a", "tier": "1"}, True),
    # what LabelSelectorAsSelector refuses (Kueue's webhook too) selects nothing
    ({"matchExpressions": [{"key": "team", "operator": "In", "values": []}]}, {"team": "a"}, False),
    ({"matchExpressions": [{"key": "team", "operator": "Exists", "values": ["a"]}]}, {"team": "a"}, False),
    ({"matchExpressions": [{"key": "team", "operator": "Gt", "values": ["1"]}]}, {"team": "2"}, False),
])
def test_selector_semantics(selector, labels, selected):
    assert conversion.label_selector_from_dict(selector).matches(labels) is selected


@pytest.mark.parametrize(("spec", "expected"), [
    ({}, kinds.NOTHING),
    ({"namespaceSelector": None}, kinds.NOTHING),
    ({"namespaceSelector": {}}, kinds.EVERYTHING),
])
def test_a_cluster_queue_without_a_selector_selects_no_namespace(spec, expected):
    cq = conversion.cluster_queue_from_dict({"metadata": {"name": "cq"}, "spec": spec})
    assert cq.namespace_selector == expected


def test_namespace_from_dict():
    ns = conversion.namespace_from_dict({"metadata": {"name": "team-a", "labels": {"team": "a"}}})
    assert ns == kinds.Namespace("team-a", {"team": "a"})
    assert conversion.namespace_from_dict({"metadata": {"name": "bare"}}).labels == {}


def _two_namespaces(cq: kinds.ClusterQueue):
    """cq's LocalQueue "lq" in "ns" (team a) and in "other" (unlabelled)."""
    manager = manager_with(cq)
    manager.add_local_queue(kinds.LocalQueue("other", "lq", cq.name))
    manager.add_namespace(kinds.Namespace("ns", {"team": "a"}))
    manager.add_namespace(kinds.Namespace("other"))
    return manager


@pytest.mark.parametrize("strict", [False, True])
def test_a_head_from_an_unselected_namespace_is_parked_and_does_not_block(strict):
    builder = ClusterQueueBuilder("cq").flavors(("default", {"cpu": "4"})).namespaces(TEAM_A)
    manager = _two_namespaces((builder.strict_fifo() if strict else builder).obj())
    manager.add_workload(WorkloadBuilder("w-out", namespace="other").created(1).obj())
    manager.add_workload(WorkloadBuilder("w-in").created(2).obj())
    (park,) = run_cycle(manager, now=10)
    assert park == Park(manager.workload(("other", "w-out")), "cq", NAMESPACE_MISMATCH_MESSAGE, NAMESPACE_MISMATCH)
    assert _summary(run_cycle(manager, now=11)) == [("Admit", "w-in")]
    assert not manager.has_work()
    # Still pending: listed, counted, first in the queue (Kueue lists its inadmissible workloads too).
    assert [i.name for i in manager.pending_lists.summary_for_cluster_queue("cq")] == ["w-out"]
    assert queue_statuses(manager)[0]["cq"].pending == 1


def test_a_release_of_quota_returns_what_did_not_fit_but_not_what_is_not_selected():
    manager = _two_namespaces(ClusterQueueBuilder("cq").flavors(("default", {"cpu": "2"})).namespaces(TEAM_A).obj())
    admit(manager, WorkloadBuilder("running").request(cpu="2").obj(), "cq")
    manager.add_workload(WorkloadBuilder("w-out", namespace="other").created(1).obj())
    manager.add_workload(WorkloadBuilder("w-fit").created(2).obj())
    assert _summary(run_cycle(manager, now=10)) == [("Park", "w-out")]
    assert _summary(run_cycle(manager, now=11)) == [("Park", "w-fit")]
    manager.mark_finished(("ns", "running"))
    assert manager.pending_lists.is_parked(("other", "w-out")) and not manager.pending_lists.is_parked(("ns", "w-fit"))
    assert _summary(run_cycle(manager, now=12)) == [("Admit", "w-fit")]


def _parked_in_a_cohort():
    """a selects team a, b every namespace, in one cohort: a parks w-out (namespace), b parks
    b-waiting (no quota left: b-runner borrows a's)."""
    a = ClusterQueueBuilder("a").flavors(("default", {"cpu": "1"})).cohort("co").namespaces(TEAM_A).obj()
    b = ClusterQueueBuilder("b").flavors(("default", {"cpu": "1"})).cohort("co").obj()
    manager = manager_with(a, b, local_queues={"la": "a", "lb": "b"})
    manager.add_local_queue(kinds.LocalQueue("other", "la", "a"))
    manager.add_namespace(kinds.Namespace("other"))
    admit(manager, WorkloadBuilder("b-runner").queue("lb").request(cpu="2").obj(), "b")
    manager.add_workload(WorkloadBuilder("w-out", namespace="other").queue("la").obj())
    manager.add_workload(WorkloadBuilder("b-waiting").queue("lb").obj())
    assert sorted(_summary(run_cycle(manager, now=10))) == [("Park", "b-waiting"), ("Park", "w-out")]
    return manager


@pytest.mark.parametrize(("labels", "unparked"), [
    ({"unrelated": "x"}, False),  # no queue selects it now that did not before: nothing is retried
    ({"team": "b"}, False),
    ({"team": "a"}, True),  # a selects it now: a's cohort is retried (Kueue requeues the root cohort)
])
def test_a_label_change_that_selects_the_namespace_unparks_the_cohort(labels, unparked):
    manager = _parked_in_a_cohort()
    manager.update_namespace(kinds.Namespace("other", labels))
    assert not manager.pending_lists.is_parked(("other", "w-out")) is unparked
    assert not manager.pending_lists.is_parked(("ns", "b-waiting")) is unparked


def test_a_selected_namespace_is_admitted_once_its_label_arrives():
    manager = _two_namespaces(ClusterQueueBuilder("cq").flavors(("default", {"cpu": "4"})).namespaces(TEAM_A).obj())
    manager.add_workload(WorkloadBuilder("w-out", namespace="other").obj())
    assert _summary(run_cycle(manager, now=10)) == [("Park", "w-out")]
    assert decide_cycle(manager) == []
    manager.update_namespace(kinds.Namespace("other", {"team": "a"}))
    assert _summary(run_cycle(manager, now=11)) == [("Admit", "w-out")]


def test_a_changed_selector_retries_the_queue():
    cq = ClusterQueueBuilder("cq").flavors(("default", {"cpu": "4"})).namespaces(TEAM_A)
    manager = _two_namespaces(cq.obj())
    manager.add_workload(WorkloadBuilder("w-out", namespace="other").obj())
    run_cycle(manager, now=10)
    manager.update_cluster_queue(cq.namespaces({}).obj())
    assert _summary(run_cycle(manager, now=11)) == [("Admit", "w-out")]


def test_a_blocked_strict_head_whose_namespace_is_no_longer_selected_gives_way():
    manager = _two_namespaces(
        ClusterQueueBuilder("cq").flavors(("default", {"cpu": "2"})).namespaces(TEAM_A).strict_fifo().obj())
    manager.add_local_queue(kinds.LocalQueue("ns2", "lq", "cq"))
    manager.add_namespace(kinds.Namespace("ns2", {"team": "a"}))
    admit(manager, WorkloadBuilder("running").request(cpu="1").obj(), "cq")
    manager.add_workload(WorkloadBuilder("big").created(1).request(cpu="2").obj())
    manager.add_workload(WorkloadBuilder("small", namespace="ns2").created(2).request(cpu="1").obj())
    (wait,) = run_cycle(manager, now=10)
    assert isinstance(wait, Wait) and wait.blocks and not manager.has_work()
    # Kueue retries a StrictFIFO head every cycle: once its namespace is not selected, it is turned away.
    manager.update_namespace(kinds.Namespace("ns", {"team": "b"}))
    assert _summary(run_cycle(manager, now=11)) == [("Park", "big")]
    assert _summary(run_cycle(manager, now=12)) == [("Admit", "small")]


@pytest.mark.parametrize(("selector", "admitted"), [(None, False), ({}, True)])
def test_null_admits_no_namespace_and_empty_every_one_even_one_not_seen_yet(selector, admitted):
    manager = manager_with(ClusterQueueBuilder("cq").flavors(("default", {"cpu": "4"})).namespaces(selector).obj())
    manager.add_workload(WorkloadBuilder("w").obj())  # its namespace "ns" was never added
    assert _summary(run_cycle(manager, now=10)) == [("Admit" if admitted else "Park", "w")]


def test_a_deleted_namespace_is_forgotten():
    manager = _two_namespaces(ClusterQueueBuilder("cq").flavors(("default", {"cpu": "4"})).namespaces(TEAM_A).obj())
    manager.delete_namespace("ns")
    manager.add_workload(WorkloadBuilder("w").obj())
    assert _summary(run_cycle(manager, now=10)) == [("Park", "w")]
