"""The generator's life cycle on a fake apiserver, a fake clock and a sleep that only advances it."""

from __future__ import annotations

import asyncio

from harness.drivers.kueuebaseline import figures, generating, plans, tabulating
from harness.load import arrivals, creating
from harness.scenarios import loading
from tests.unit.harness.faketime import AsyncFakeTime

ONE_QUEUE = ["queues.cohorts=[{name: c}]",
             "queues.cluster_queues=[{name: cq, cohort: c, resource_groups: [{covered_resources: [cpu], flavors: "
             "[{flavor: default, resources: [{name: cpu, nominal: 20}]}]}]}]",
             "queues.local_queues=[{name: lq, cluster_queue: cq}]",
             "load.mix=[{priority: 50, priority_class: small, cpu: '1', runtime_seconds: 0.2, per_second: 10, count: 2},"
             " {priority: 200, priority_class: large, cpu: '20', runtime_seconds: 1.0, per_second: 1, count: 1}]"]


class FakeApi:
    def __init__(self) -> None:
        self.calls: list[tuple[str, str, dict]] = []

    async def request(self, method, path, body=None, content_type="application/json", timeout=60.0):
        self.calls.append((method, path, body))
        return {}


def _admitted(name: str, admitted: bool = True, at: str = "2025-01-01T00:00:01Z") -> dict:
    status = "True" if admitted else "False"
    return {"metadata": {"name": name, "labels": {plans.CLASS_LABEL: "x"}, "creationTimestamp": "2025-01-01T00:00:00Z"},
            "status": {"admission": {"clusterQueue": "cq"} if admitted else None,
                       "conditions": [{"type": "QuotaReserved", "status": status, "lastTransitionTime": at},
                                      {"type": "Admitted", "status": status}]}}


def _generator():
    plan = arrivals.from_scenario(loading.load("kueue-baseline", ONE_QUEUE).scenario)
    clock, api = AsyncFakeTime(1000.0), FakeApi()
    gen = generating.Generator(api, plan, creating.Settings(max_seconds=60), clock=clock.clock,
                               say=lambda text: None, sleep=clock.sleep)
    gen.engine.result.start = clock.now
    return gen, clock, api


async def _settle(gen) -> None:
    for _ in range(100):  # bounded: every task here finishes in a few steps
        if not gen.engine.tasks:
            return
        await asyncio.gather(*list(gen.engine.tasks))


def test_creates_on_schedule_then_finishes_runtime_after_admission():
    async def scenario():
        gen, clock, api = _generator()
        await gen.engine.create_all()
        await _settle(gen)
        posts = [(path, body["metadata"]["name"]) for method, path, body in api.calls if method == "POST"]
        assert [name for _, name in posts] == ["small-lq-0", "small-lq-1", "large-lq-0"]
        assert all(path.endswith("/namespaces/kqbench-churn/workloads") for path, _ in posts)
        body = api.calls[0][2]
        assert body["spec"]["podSets"][0]["template"]["spec"]["containers"][0]["resources"]["requests"] == {"cpu": "1"}
        assert body["spec"]["priorityClassName"] == "small" and body["metadata"]["labels"][plans.CLASS_LABEL] == "small"
        assert clock.now - gen.engine.result.start == 1.0  # the large one is due at 1 s
        record = gen.outcome.records["small-lq-0"]
        assert 0.1 <= round(record.created - gen.engine.result.start, 6) <= 0.2  # when its POST returned
        clock.now = gen.engine.result.start + 3.0
        gen._on_event("MODIFIED", _admitted("small-lq-0"))
        await _settle(gen)
        patch = api.calls[-1]
        assert patch[0] == "PATCH" and "fieldManager=kqbench-kueue-baseline" in patch[1] and patch[1].split("?")[0].endswith("/status")
        assert [c["type"] for c in patch[2]["status"]["conditions"]] == ["Finished"]
        assert record.admitted == gen.engine.result.start + 3.0
        assert round(record.finished - record.admitted, 6) == 0.2
        assert gen.outcome.api_times["small-lq-0"][:2] == ["2025-01-01T00:00:00Z", "2025-01-01T00:00:01Z"]
    asyncio.run(scenario())


def test_eviction_disarms_the_finish_and_counts():
    async def scenario():
        gen, clock, api = _generator()
        await gen.engine.create_all()
        await _settle(gen)
        writes = len(api.calls)
        gen._on_event("MODIFIED", _admitted("large-lq-0"))
        gen._on_event("MODIFIED", _admitted("large-lq-0", admitted=False))  # evicted before its runtime is up
        await _settle(gen)
        record = gen.outcome.records["large-lq-0"]
        assert len(api.calls) == writes and record.finished is None and record.evictions == 1
        gen._on_event("MODIFIED", _admitted("large-lq-0", at="2025-01-01T00:00:09Z"))  # admitted again: runs its
        await _settle(gen)                                                                 # full runtime from here
        assert record.finished is not None and len(api.calls) == writes + 1
        # both reservations kept (an estimate read while it was queued again is scored against the second)
        assert gen.outcome.reservations["large-lq-0"] == ["2025-01-01T00:00:01Z", "2025-01-01T00:00:09Z"]
        assert gen.outcome.api_times["large-lq-0"][1] == "2025-01-01T00:00:01Z"
        assert not gen.engine.finished.is_set()  # the two small ones never got admitted
    asyncio.run(scenario())


def _evicted(name: str) -> dict:
    """Kueue's view of a preempted bare Workload: Evicted, but still holding its quota."""
    obj = _admitted(name)
    obj["metadata"] |= {"namespace": "kqbench-churn", "resourceVersion": "42"}
    obj["status"]["conditions"].append({"type": "Evicted", "status": "True", "reason": "Preempted"})
    return obj


def test_an_evicted_workload_that_keeps_its_quota_is_released_as_kueues_runner_does():
    async def scenario():
        gen, clock, api = _generator()
        await gen.engine.create_all()
        await _settle(gen)
        writes = len(api.calls)
        gen._on_event("MODIFIED", _admitted("large-lq-0"))
        gen._on_event("MODIFIED", _evicted("large-lq-0"))
        gen._on_event("MODIFIED", _evicted("large-lq-0"))  # the same state again: one release in flight
        await _settle(gen)
        releases = [c for c in api.calls[writes:] if c[0] == "PATCH" and c[2].get("status", {}).get("admission", 1) is None]
        assert len(releases) == 1 and gen.outcome.evictions_released == 1
        method, path, body = releases[0]
        assert path.endswith("/namespaces/kqbench-churn/workloads/large-lq-0/status")
        assert body["metadata"]["resourceVersion"] == "42"
        states = {c["type"]: (c["status"], c.get("reason")) for c in body["status"]["conditions"]}
        assert states == {"QuotaReserved": ("False", "Pending"), "Admitted": ("False", "NoReservation"),
                          "Evicted": ("True", "Preempted")}
        gen._on_event("MODIFIED", _admitted("large-lq-0"))  # not evicted: nothing to release
        await _settle(gen)
        assert gen.outcome.evictions_released == 1
    asyncio.run(scenario())


def _preempted(name: str, message: str, when: str) -> dict:
    obj = _evicted(name)
    obj["status"]["conditions"][-1] |= {"lastTransitionTime": when, "message": message}
    obj["status"]["conditions"].append({"type": "Preempted", "status": "True", "reason": "InCohortReclamation",
                                        "message": message, "lastTransitionTime": when})
    return obj


def test_each_eviction_is_recorded_once_with_its_reason_and_preemptor():
    async def scenario():
        gen, clock, api = _generator()
        await gen.engine.create_all()
        await _settle(gen)
        large = _admitted("large-lq-0")
        large["metadata"]["uid"] = "u-large"
        gen._on_event("MODIFIED", large)
        kueue_says = "Preempted to accommodate a workload (UID: u-large, JobUID: UNKNOWN) due to reclamation within the cohort"
        gen._on_event("MODIFIED", _preempted("small-lq-0", kueue_says, "2025-01-01T00:00:02Z"))
        gen._on_event("MODIFIED", _preempted("small-lq-0", kueue_says, "2025-01-01T00:00:02Z"))  # the same eviction
        gen._on_event("MODIFIED", _preempted("small-lq-0", kueue_says, "2025-01-01T00:00:05Z"))  # a second one
        gen._on_event("MODIFIED", _preempted("small-lq-1", "Preempted to accommodate kqbench-churn/large-lq-0",
                                             "2025-01-01T00:00:05Z"))
        await _settle(gen)
        seen = [(e.victim, e.reason, e.preemptor) for e in gen.outcome.evictions]
        assert seen == [("small-lq-0", "InCohortReclamation", "large-lq-0")] * 2 \
            + [("small-lq-1", "InCohortReclamation", "large-lq-0")]
        frame = tabulating.evictions_frame(gen.outcome.evictions, gen.outcome.records, gen.engine.result.start)
        assert frame[["victim_class", "preemptor_class", "preemptor_cq"]].drop_duplicates().values.tolist() \
            == [["small", "large", "cq"]]
    asyncio.run(scenario())


def test_a_preemptor_the_message_does_not_name_is_left_empty():
    assert figures.preemptor_of("Preempted to accommodate a workload (UID: other, JobUID: x)", {"u": "a"}) == ""
    assert figures.preemptor_of("Evicted by the test runner", {}) == ""


def test_an_eviction_of_a_workload_already_finished_is_marked_so():
    async def scenario():
        gen, clock, api = _generator()
        await gen.engine.create_all()
        await _settle(gen)
        gen._on_event("MODIFIED", _admitted("small-lq-0"))
        await _settle(gen)  # its runtime elapses: the generator writes Finished
        assert gen.outcome.records["small-lq-0"].finished is not None
        clock.now += 1.0
        gen._on_event("MODIFIED", _preempted("small-lq-0", "Preempted to accommodate kqbench-churn/large-lq-0",
                                             "2025-01-01T00:00:09Z"))
        frame = tabulating.evictions_frame(gen.outcome.evictions, gen.outcome.records, gen.engine.result.start)
        assert frame["victim_had_finished"].tolist() == [True]
        assert gen.outcome.records["small-lq-0"].evictions == 0  # not counted: no quota was taken back
    asyncio.run(scenario())
