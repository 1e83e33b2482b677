"""The controller's side of spec.maximumExecutionTimeSeconds: the deadline it arms, and the writes that follow,
each with Kueue's reasons and messages, replayed against a fake API answering with the objects it would hold.

Kueue's order (pkg/controller/core/workload_controller.go): DeactivationTarget=True and the accumulated time
cleared (reconcileMaxExecutionTime), then spec.active=false (the active branch of Reconcile), then the
eviction (the inactive branch, reason DeactivatedDueTo<cause>); the reference scheduler's eviction also
releases the admission, as a Job's reconciler would, adding the seconds it was admitted."""

import asyncio
import copy

from scheduler.controller import controlling, deadlines, metering, statuses
from scheduler.core import conversion, kinds
from scheduler.core.queues import QueueManager
from scheduler.kube import client as kube
from scheduler_builders import ClusterQueueBuilder

KEY = ("team", "w")
ADMITTED_AT = 1_704_067_220.0  # 2024-01-01T00:00:20Z
ADMISSION = {"clusterQueue": "cq", "podSetAssignments": [
    {"name": "main", "flavors": {"cpu": "default"}, "resourceUsage": {"cpu": "2"}, "count": 1}]}
RESERVED = [{"type": "QuotaReserved", "status": "True", "reason": "QuotaReserved", "message": "m",
             "lastTransitionTime": "2024-01-01T00:00:20Z"},
            {"type": "Admitted", "status": "True", "reason": "Admitted", "message": "The workload is admitted",
             "lastTransitionTime": "2024-01-01T00:00:20Z"}]


def _admitted(version: int, max_seconds: int = 5, accumulated: int | None = 2) -> dict:
    status = {"admission": ADMISSION, "conditions": copy.deepcopy(RESERVED)}
    if accumulated is not None:
        status["accumulatedPastExecutionTimeSeconds"] = accumulated
    return {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Workload",
            "metadata": {"name": "w", "namespace": "team", "uid": "u-w", "resourceVersion": str(version),
                         "creationTimestamp": "2024-01-01T00:00:10Z"},
            "spec": {"queueName": "lq", "maximumExecutionTimeSeconds": max_seconds,
                     "podSets": [{"name": "main", "count": 1, "template": {"spec": {
                         "containers": [{"resources": {"requests": {"cpu": "2"}}}]}}}]},
            "status": status}


class FakeApi:
    """Answers each PATCH with the next object the test queued; records what was asked."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, str, dict, str]] = []
        self.answers: list[dict] = []

    async def request(self, method, path, body=None, content_type="application/json", timeout=60.0):
        self.requests.append((method, path, body, content_type))
        return self.answers.pop(0)


def _by_type(conditions):
    return {c["type"]: c for c in conditions}


def _controller(api, now: list[float]) -> controlling.Controller:
    """A controller over one 2-CPU ClusterQueue and its LocalQueue team/lq, on the clock now[0]."""
    manager = QueueManager()
    manager.add_resource_flavor(kinds.ResourceFlavor("default"))
    manager.add_cluster_queue(ClusterQueueBuilder("cq").flavors(("default", {"cpu": "2"})).obj())
    manager.add_local_queue(kinds.LocalQueue("team", "lq", "cq"))
    return controlling.Controller(api, manager, metering.SchedulerMetrics(), clock=lambda: now[0])


def test_an_exceeded_limit_is_targeted_then_deactivated_then_evicted_with_kueues_reasons():
    async def scenario():
        now = [ADMITTED_AT]
        api = FakeApi()
        controller = _controller(api, now)
        on_list, on_event = controller.informer_handlers()["workloads"]
        on_list([_admitted(5)])
        # 5 s allowed, 2 used before: due 3 s after this admission.
        assert controller.next_execution_deadline() == ADMITTED_AT + 3
        assert controller.mark_exceeded(ADMITTED_AT + 2.9) == 0
        now[0] = ADMITTED_AT + 3.4

        # 1. DeactivationTarget=True and the accumulated time removed, onto the object read.
        targeted = _admitted(6, accumulated=None)
        targeted["status"]["conditions"].append(statuses.deactivation_target(
            ("MaximumExecutionTimeExceeded", "exceeding the maximum execution time"), now[0]))
        api.answers.append(targeted)
        assert controller.mark_exceeded(now[0]) == 1
        await controller.settle()
        method, path, body, content_type = api.requests[-1]
        assert (method, content_type) == ("PATCH", "application/merge-patch+json")
        assert path == ("/apis/kueue.x-k8s.io/v1beta2/namespaces/team/workloads/w/status"
                        "?fieldManager=kqbench-scheduler-execution-time")
        assert body["metadata"] == {"resourceVersion": "5"}
        assert body["status"]["accumulatedPastExecutionTimeSeconds"] is None
        target = _by_type(body["status"]["conditions"])["DeactivationTarget"]
        assert (target["status"], target["reason"], target["message"]) == (
            "True", "MaximumExecutionTimeExceeded", "exceeding the maximum execution time")
        assert set(_by_type(body["status"]["conditions"])) == {"QuotaReserved", "Admitted", "DeactivationTarget"}
        assert controller.next_execution_deadline() is None, "written once"

        # 2. The watch brings it: spec.active=false, onto that version, not on the status.
        stopped = copy.deepcopy(targeted)
        stopped["metadata"]["resourceVersion"] = "7"
        stopped["spec"]["active"] = False
        api.answers.append(stopped)
        on_event("MODIFIED", targeted)
        await controller.settle()
        method, path, body, content_type = api.requests[-1]
        assert path == "/apis/kueue.x-k8s.io/v1beta2/namespaces/team/workloads/w?fieldManager=kqbench-scheduler"
        assert body == {"metadata": {"resourceVersion": "6"}, "spec": {"active": False}}
        assert content_type == "application/merge-patch+json"

        # 3. Inactive: its quota is back at once, and the eviction names the cause.
        now[0] = ADMITTED_AT + 3.9
        evicted = copy.deepcopy(stopped)
        evicted["metadata"]["resourceVersion"] = "8"
        del evicted["status"]["admission"]
        api.answers.append(evicted)
        on_event("MODIFIED", stopped)
        assert controller.manager.cache.admitted(KEY) is None
        await controller.settle()
        method, path, body, content_type = api.requests[-1]
        assert content_type == "application/apply-patch+yaml" and "fieldManager=kqbench-scheduler&" in path
        conditions = {t: (c["status"], c["reason"], c["message"])
                      for t, c in _by_type(body["status"]["conditions"]).items()}
        cause = "The workload is deactivated due to exceeding the maximum execution time"
        assert conditions == {
            "Evicted": ("True", "DeactivatedDueToMaximumExecutionTimeExceeded", cause),
            "QuotaReserved": ("False", "Pending", cause),
            "Admitted": ("False", "NoReservation", "The workload has no reservation"),
            "Requeued": ("False", "DeactivatedDueToMaximumExecutionTimeExceeded", cause),
            "DeactivationTarget": ("True", "MaximumExecutionTimeExceeded", "exceeding the maximum execution time"),
        }
        assert "admission" not in body["status"]
        # Admitted from :20 to :23.9: 3 whole seconds, counted from the cleared value.
        assert body["status"]["accumulatedPastExecutionTimeSeconds"] == 3
        return len(api.requests)

    assert asyncio.run(scenario()) == 3


def test_a_deadline_already_past_at_startup_fires_in_the_first_pass():
    async def scenario():
        api = FakeApi()
        controller = controlling.Controller(api, QueueManager(), metering.SchedulerMetrics(),
                                            clock=lambda: ADMITTED_AT + 100)
        on_list, _ = controller.informer_handlers()["workloads"]
        on_list([_admitted(5, accumulated=None)])
        assert controller.next_execution_deadline() == ADMITTED_AT + 5
        api.answers.append(_admitted(6, accumulated=None))
        started = controller.mark_exceeded(ADMITTED_AT + 100)
        await controller.settle()
        return started

    assert asyncio.run(scenario()) == 1


def test_no_deadline_without_a_limit_or_once_inactive():
    async def scenario():
        controller = controlling.Controller(None, QueueManager(), metering.SchedulerMetrics())
        on_list, on_event = controller.informer_handlers()["workloads"]
        unlimited = _admitted(5)
        del unlimited["spec"]["maximumExecutionTimeSeconds"]
        on_list([unlimited])
        assert controller.next_execution_deadline() is None
        inactive = _admitted(6)
        inactive["spec"]["active"] = False
        on_event("MODIFIED", _admitted(6))
        assert controller.next_execution_deadline() is not None
        controller._status_writes_in_flight.add(KEY)  # no eviction write from this test
        on_event("MODIFIED", {**inactive, "metadata": {**inactive["metadata"], "resourceVersion": "7"}})
        return controller.next_execution_deadline()

    assert asyncio.run(scenario()) is None


def test_an_admission_carries_the_accumulated_time_and_a_preemption_adds_to_it():
    workload = conversion.workload_from_dict(_admitted(5, accumulated=2))
    admitted = statuses.admission_status(workload, workload.admission, ADMITTED_AT)
    assert admitted["status"]["accumulatedPastExecutionTimeSeconds"] == 2, "omitted, apply would remove it"
    preemptor = conversion.workload_from_dict(_admitted(5))
    released = statuses.preemption_status(workload, preemptor, ADMITTED_AT + 10.5)
    assert released["status"]["accumulatedPastExecutionTimeSeconds"] == 12
    held = statuses.preemption_status(workload, preemptor, ADMITTED_AT + 10.5, hold=True)
    assert "accumulatedPastExecutionTimeSeconds" not in held["status"], "still admitted: nothing to add"


def test_deadlines_come_earliest_first_and_a_rearmed_key_only_at_its_new_time():
    armed: deadlines.Deadlines[str] = deadlines.Deadlines()
    assert armed.arm(("ns", "a"), 30.0, "a@30")
    assert armed.arm(("ns", "b"), 10.0, "b@10")
    assert not armed.arm(("ns", "b"), 10.0, "b@10 again"), "same deadline: nothing to wake for"
    assert armed.arm(("ns", "a"), 20.0, "a@20")
    armed.disarm(("ns", "b"))
    assert armed.next_due() == 20.0
    assert armed.pop_due(25.0) == ["a@20"]
    assert armed.next_due() is None and ("ns", "a") not in armed


class RefusingApi:
    async def request(self, method, path, body=None, content_type="application/json", timeout=60.0):
        raise kube.ApiError(500, b"{}", f"{method} {path}")


def test_a_failed_target_write_is_tried_again_unless_a_newer_object_came():
    async def scenario():
        now = ADMITTED_AT + 10
        controller = controlling.Controller(RefusingApi(), QueueManager(), metering.SchedulerMetrics(),
                                            clock=lambda: now)
        on_list, on_event = controller.informer_handlers()["workloads"]
        on_list([_admitted(5)])
        assert controller.mark_exceeded(now) == 1
        await controller.settle()
        retried = controller.next_execution_deadline()
        # A newer object (a position written meanwhile) arms it at its own deadline, not the retry's.
        on_event("MODIFIED", _admitted(6))
        return retried, controller.next_execution_deadline()

    retried, rearmed = asyncio.run(scenario())
    assert retried == ADMITTED_AT + 10 + controlling.EXECUTION_RETRY_SECONDS
    assert rearmed == ADMITTED_AT + 3


class GatedApi(FakeApi):
    """A FakeApi whose answers wait for the test to open the gate: the watch can run ahead of a response."""

    def __init__(self) -> None:
        super().__init__()
        self.gate = asyncio.Event()

    async def request(self, method, path, body=None, content_type="application/json", timeout=60.0):
        self.requests.append((method, path, body, content_type))
        await self.gate.wait()
        return self.answers.pop(0)


def test_the_watch_bringing_the_target_before_the_writes_response_still_deactivates():
    async def scenario():
        now = [ADMITTED_AT]
        api = GatedApi()
        controller = _controller(api, now)
        on_list, on_event = controller.informer_handlers()["workloads"]
        on_list([_admitted(5)])
        now[0] = ADMITTED_AT + 3.4
        targeted = _admitted(6, accumulated=None)
        targeted["status"]["conditions"].append(statuses.deactivation_target(
            ("MaximumExecutionTimeExceeded", "exceeding the maximum execution time"), now[0]))
        stopped = copy.deepcopy(targeted)
        stopped["metadata"]["resourceVersion"] = "7"
        stopped["spec"]["active"] = False
        api.answers += [targeted, stopped]
        assert controller.mark_exceeded(now[0]) == 1
        await asyncio.sleep(0)  # the target write is in flight, waiting for its answer
        on_event("MODIFIED", targeted)  # ...and the watch brings its result first
        assert len(api.requests) == 1, "no second write while the first is in flight"
        api.gate.set()
        await controller.settle()
        method, path, body, _ = api.requests[-1]
        assert path == "/apis/kueue.x-k8s.io/v1beta2/namespaces/team/workloads/w?fieldManager=kqbench-scheduler"
        assert body == {"metadata": {"resourceVersion": "6"}, "spec": {"active": False}}

    asyncio.run(scenario())
