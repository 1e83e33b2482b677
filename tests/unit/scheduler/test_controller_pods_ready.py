"""The controller's side of waitForPodsReady: the timers it arms, and the writes that follow, each with Kueue's
reasons, messages and requeueState, replayed against a fake API answering with the objects it would hold
(pkg/controller/core/workload_controller.go reconcileNotReadyTimeout, triggerDeactivation, Reconcile's
active branch; pkg/controller/jobframework/reconciler.go generatePodsReadyCondition)."""

import asyncio
import copy

import pytest

from scheduler.controller import controlling, metering, podsreadiness, statuses
from scheduler.core import conversion, jobs, kinds, podsready
from scheduler.core.queues import QueueManager
from scheduler_builders import ClusterQueueBuilder
from tests.unit.scheduler.test_controller_execution_time import ADMITTED_AT, KEY, FakeApi, _admitted, _by_type
from tests.unit.scheduler.test_core_jobs import JobBuilder

SETTINGS = podsready.WaitForPodsReady(timeout_seconds=10, backoff_base_seconds=1, backoff_limit_count=2,
                                      block_admission=True)
MESSAGE = "Exceeded the PodsReady timeout team/w"


def _controller(api, now: list[float], settings=SETTINGS) -> controlling.Controller:
    manager = QueueManager()
    manager.add_resource_flavor(kinds.ResourceFlavor("default"))
    manager.add_cluster_queue(ClusterQueueBuilder("cq").flavors(("default", {"cpu": "4"})).obj())
    manager.add_local_queue(kinds.LocalQueue("team", "lq", "cq"))
    controller = controlling.Controller(api, manager, metering.SchedulerMetrics(), clock=lambda: now[0],
                                        pods_ready=settings)
    controller.readiness.draw = lambda: 0.0
    return controller


def _with(obj: dict, version: int, conditions=(), **status) -> dict:
    out = copy.deepcopy(obj)
    out["metadata"]["resourceVersion"] = str(version)
    out["status"]["conditions"] = [c for c in out["status"]["conditions"]
                                   if c["type"] not in {k["type"] for k in conditions}] + list(conditions)
    for name, value in status.items():
        if value is None:
            out["status"].pop(name, None)
        else:
            out["status"][name] = value
    return out


def _summary(conditions):
    return {t: (c["status"], c["reason"], c["message"]) for t, c in _by_type(conditions).items()}


def test_a_workload_not_ready_in_time_is_evicted_held_for_its_backoff_then_requeued():
    async def scenario():
        now = [ADMITTED_AT]
        api = FakeApi()
        controller = _controller(api, now)
        on_list, on_event = controller.informer_handlers()["workloads"]
        on_list([_admitted(5, max_seconds=0, accumulated=None)])
        assert controller.next_readiness_deadline() == ADMITTED_AT + 10
        assert controller.mark_not_ready(ADMITTED_AT + 9.9) == 0

        # 1. At the deadline: Evicted, requeueState and the release in one merge patch onto the object read.
        now[0] = ADMITTED_AT + 10
        evicted = _with(_admitted(6, max_seconds=0, accumulated=None), 6, admission=None)
        api.answers.append(evicted)
        assert controller.mark_not_ready(now[0]) == 1
        await controller.settle()
        method, path, body, content_type = api.requests[-1]
        assert content_type == "application/merge-patch+json" and "fieldManager=kqbench-scheduler-podsready" in path
        assert body["metadata"] == {"resourceVersion": "5"}
        assert body["status"]["admission"] is None
        assert body["status"]["requeueState"] == {"count": 1, "requeueAt": "2024-01-01T00:00:31Z"}
        assert _summary(body["status"]["conditions"]) == {
            "Evicted": ("True", "PodsReadyTimeout", MESSAGE),
            "QuotaReserved": ("False", "Pending", MESSAGE),
            "Admitted": ("False", "NoReservation", "The workload has no reservation"),
            "Requeued": ("False", "PodsReadyTimeout", MESSAGE),
        }

        # 2. Pending with Requeued=False: held, not a candidate, until requeueAt (1 s, the base).
        held = _with(evicted, 7, body["status"]["conditions"], requeueState=body["status"]["requeueState"])
        on_event("MODIFIED", held)
        assert controller.manager.cache.admitted(KEY) is None
        assert not controller.manager.has_work()
        assert controller.next_readiness_deadline() == ADMITTED_AT + 11
        assert controller.mark_not_ready(ADMITTED_AT + 10.5) == 0

        # 3. requeueAt passed: Requeued=True BackoffFinished and requeueAt removed; then it queues again.
        now[0] = ADMITTED_AT + 11
        finished = statuses.condition("Requeued", True, "BackoffFinished", "The workload backoff was finished", now[0])
        requeued = _with(held, 8, [finished], requeueState={"count": 1})
        api.answers.append(requeued)
        assert controller.mark_not_ready(now[0]) == 1
        await controller.settle()
        _, _, body, _ = api.requests[-1]
        assert body["status"]["requeueState"] == {"requeueAt": None}
        assert _summary(body["status"]["conditions"])["Requeued"] == (
            "True", "BackoffFinished", "The workload backoff was finished")
        assert controller.manager.has_work()
        # Queue order: the eviction's time (requeuingStrategy.timestamp Eviction).
        assert controller.manager._workloads[KEY].queue_timestamp == ADMITTED_AT + 10
        return len(api.requests)

    assert asyncio.run(scenario()) == 2


def test_the_timeout_past_the_backoff_limit_deactivates_instead():
    async def scenario():
        now = [ADMITTED_AT + 10]
        api = FakeApi()
        controller = _controller(api, now)
        on_list, _ = controller.informer_handlers()["workloads"]
        third = _with(_admitted(5, max_seconds=0, accumulated=None), 5, requeueState={"count": 2})
        on_list([third])
        api.answers.append(third)
        assert controller.mark_not_ready(now[0]) == 1
        await controller.settle()
        _, _, body, _ = api.requests[-1]
        assert "requeueState" not in body["status"] and "admission" not in body["status"]
        assert _summary(body["status"]["conditions"])["DeactivationTarget"] == (
            "True", "RequeuingLimitExceeded", "exceeding the maximum number of re-queuing retries")

    asyncio.run(scenario())


def test_no_timer_when_ready_or_off_and_the_recovery_timeout_from_pods_ready_turning_false():
    now = [ADMITTED_AT]
    ready = statuses.condition("PodsReady", True, "Started", "r", ADMITTED_AT + 3)
    controller = _controller(FakeApi(), now)
    on_list, on_event = controller.informer_handlers()["workloads"]
    on_list([_with(_admitted(5, max_seconds=0, accumulated=None), 5, [ready])])
    assert controller.next_readiness_deadline() is None and not controller.readiness.blocks_admission()
    lost = statuses.condition("PodsReady", False, "WaitForRecovery", "r", ADMITTED_AT + 30)
    on_event("MODIFIED", _with(_admitted(6, max_seconds=0, accumulated=None), 6, [lost]))
    assert controller.next_readiness_deadline() == ADMITTED_AT + 40  # recoveryTimeout defaults to the timeout
    off = _controller(FakeApi(), now, podsready.OFF)
    off.informer_handlers()["workloads"][0]([_admitted(5, max_seconds=0, accumulated=None)])
    assert off.next_readiness_deadline() is None and not off.readiness.blocks_admission()


def test_block_admission_admits_nothing_while_an_admitted_workload_is_not_ready():
    now = [ADMITTED_AT]
    controller = _controller(FakeApi(), now)
    on_list, on_event = controller.informer_handlers()["workloads"]
    pending = _admitted(3, max_seconds=0, accumulated=None)
    pending["metadata"].update(name="p", uid="u-p")
    pending["status"] = {}
    on_list([_admitted(5, max_seconds=0, accumulated=None), pending])
    assert controller.readiness.blocks_admission()
    assert controller.manager.has_work()
    with pytest.raises(RuntimeError):  # no loop: nothing may be written (a write would need one)
        asyncio.get_running_loop()
    decisions = controller.run_cycle()
    assert [type(d).__name__ for d in decisions] == ["Admit"]
    assert controller.manager.cache.admitted(("team", "p")) is None, "the admission was taken back"
    ready = statuses.condition("PodsReady", True, "Started", "r", ADMITTED_AT + 1)
    on_event("MODIFIED", _with(_admitted(6, max_seconds=0, accumulated=None), 6, [ready]))
    assert not controller.readiness.blocks_admission()


@pytest.mark.parametrize(("admitted", "ready", "current", "expected"), [
    (False, 0, None, ("False", "WaitForStart")),
    (True, 0, None, ("False", "WaitForStart")),
    (True, 2, ("False", "WaitForStart"), ("True", "Started")),
    (True, 1, ("True", "Started"), ("False", "WaitForRecovery")),
    (True, 1, ("False", "WaitForRecovery"), ("False", "WaitForRecovery")),
    (True, 2, ("False", "WaitForRecovery"), ("True", "Recovered")),
    (True, 2, ("True", "Recovered"), ("True", "Recovered")),
    (True, 0, ("False", "PodsReady"), ("False", "WaitForStart")),  # the old reason
])
def test_the_pods_ready_condition_follows_the_jobs_ready_and_succeeded_pods(admitted, ready, current, expected):
    job = jobs.job_from_dict(JobBuilder("j").obj())
    job = jobs.Job(**{**{f: getattr(job, f) for f in job.__slots__}, "pod_count": 2, "ready_pods": ready})
    workload = conversion.workload_from_dict(_admitted(5, max_seconds=0, accumulated=None))
    if not admitted:
        workload = conversion.workload_from_dict(_with(_admitted(5), 5, admission=None))
    condition = podsready.PodsReadyCondition(*current, 0.0) if current else None
    assert jobs.pods_ready_condition(job, workload, condition)[:2] == expected
    step = jobs.next_step(job, workload, {}, True, condition)
    if condition is not None and (condition.status, condition.reason) == expected:
        assert not isinstance(step, jobs.SetPodsReady)
    else:
        assert isinstance(step, jobs.SetPodsReady) and (step.status, step.reason) == expected
    assert not isinstance(jobs.next_step(job, workload, {}), jobs.SetPodsReady), "off: never written"


def test_a_jobs_ready_pods_are_ready_succeeded_and_uncounted_succeeded():
    obj = JobBuilder("j").obj()
    obj["status"] = {"ready": 1, "succeeded": 2, "uncountedTerminatedPods": {"succeeded": ["a"], "failed": ["b"]}}
    assert jobs.job_from_dict(obj).ready_pods == 4
    assert podsreadiness.pods_ready_of([]) is None


def test_a_workload_deactivated_past_the_limit_loses_its_target_and_requeue_state_as_kueue_clears_them():
    from scheduler.controller import podsreadiness
    from scheduler.core.conversion import WorkloadDecoder

    obj = {"metadata": {"name": "w", "namespace": "ns", "resourceVersion": "7", "uid": "u"},
           "spec": {"queueName": "lq", "active": False, "podSets": []},
           "status": {"requeueState": {"count": 2},
                      "conditions": [{"type": "Evicted", "status": "True",
                                      "reason": "DeactivatedDueToRequeuingLimitExceeded"},
                                     {"type": "DeactivationTarget", "status": "True", "reason": "RequeuingLimitExceeded",
                                      "message": "exceeding the maximum number of re-queuing retries"}]}}
    workload = WorkloadDecoder().decode(obj)
    assert podsreadiness.needs_tidy(workload, obj)
    patch = podsreadiness.tidy_patch(obj)
    assert patch["status"]["requeueState"] is None
    assert [c["type"] for c in patch["status"]["conditions"]] == ["Evicted"]
    assert patch["metadata"]["resourceVersion"] == "7"
    # an exceeded maximum execution time keeps its target (Kueue sets it again while the admission stands)
    kept = {**obj, "status": {"conditions": [obj["status"]["conditions"][0],
                                             {"type": "DeactivationTarget", "status": "True",
                                              "reason": "MaximumExecutionTimeExceeded"}]}}
    assert not podsreadiness.needs_tidy(WorkloadDecoder().decode(kept), kept)
