"""A bulk backlog's plan and its keeper's bookkeeping (harness.workloads.backlog): spread over the
LocalQueues beneath the churn, and every admitted backlog Workload due once its runtime has passed."""

from __future__ import annotations

import pytest

from harness.workloads import backlog, storing
from loadtests import settings as ls
from loadtests.workloads import Phase

MIX = (ls.WorkloadKind(weight=3, priority=50, cpu="1", runtime_seconds=20),
       ls.WorkloadKind(weight=1, priority=200, cpu="4", runtime_seconds=40))


def test_the_backlog_is_the_commonest_kind_one_priority_below_the_churn():
    shape = backlog.kind(MIX)
    assert (shape.cpu, shape.runtime_seconds, shape.priority) == ("1", 20, 49)
    with pytest.raises(ValueError, match="churn mix"):
        backlog.kind(())


def test_the_backlog_is_spread_evenly_over_the_local_queues():
    batches = backlog.batches(10, "ns", ("lq-0", "lq-1", "lq-2"), MIX)
    assert [(b.queue, b.count) for b in batches] == [("lq-0", 4), ("lq-1", 3), ("lq-2", 3)]
    assert all(b.namespace == "ns" and b.prefix == f"backlog-{b.queue}" and not storing.problems(b) for b in batches)
    assert [b.queue for b in backlog.batches(1, "ns", ("lq-0", "lq-1"), MIX)] == ["lq-0"]
    assert backlog.batches(0, "ns", ("lq-0",), MIX) == []
    manifest = batches[0].manifest(0)
    assert storing.BULK_LABEL in manifest["metadata"]["labels"] and manifest["spec"]["priority"] == 49
    assert "kqbench.io/churn-user" not in manifest["metadata"]["labels"]  # no churn user owns it


def test_an_admitted_workload_is_due_once_its_runtime_has_passed():
    ledger = backlog.Ledger()
    ledger.observed("a", Phase.PENDING, 20.0, None, now=0.0)
    ledger.observed("b", Phase.ADMITTED, 20.0, 0.0, now=0.0)
    ledger.observed("c", Phase.ADMITTED, 20.0, 15.0, now=0.0)  # admitted 15 s before the keeper saw it
    ledger.observed("b", Phase.ADMITTED, 20.0, 0.0, now=10.0)  # a later event changes nothing
    assert ledger.due(4.0) == []
    assert ledger.due(5.0) == ["c"]
    assert ledger.due(19.0) == []
    assert ledger.due(20.0) == ["b"]
    assert ledger.due(100.0) == []  # each handed out once


def test_a_failed_finish_is_due_again_and_a_deleted_one_never():
    ledger = backlog.Ledger()
    ledger.observed("a", Phase.ADMITTED, 1.0, 0.0, now=0.0)
    ledger.observed("b", Phase.ADMITTED, 1.0, 0.0, now=0.0)
    ledger.gone("b")
    assert ledger.due(2.0) == ["a"]
    ledger.retry("a", 7.0)
    assert ledger.due(6.0) == [] and ledger.due(7.0) == ["a"]
    ledger.done("a")
    assert ledger.finished == 1 and ledger.due_at == {}


def test_a_replacement_keeps_the_queue_shape_and_backlog_label_and_nothing_of_the_finished_one():
    finished = {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Workload",
                "metadata": {"name": "backlog-lq-0-0000001", "namespace": "ns", "uid": "u", "resourceVersion": "9",
                             "labels": {backlog.SELECTOR: "backlog-lq-0"}},
                "spec": {"queueName": "lq-0", "priority": 49, "active": True, "podSets": [{"name": "main", "count": 1}]},
                "status": {"conditions": [{"type": "Finished", "status": "True"}]}}
    body = backlog.replacement(finished, "backlog-refill-abc-00000001")
    assert body["metadata"] == {"name": "backlog-refill-abc-00000001", "namespace": "ns",
                                "labels": {backlog.SELECTOR: "backlog-lq-0"}}
    assert body["spec"] == {**finished["spec"], "active": True}
    assert "status" not in body
