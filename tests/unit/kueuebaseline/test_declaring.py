"""Declared and real runtimes of kueue-baseline's Workloads, and the pending-Workload reader's entries."""

from __future__ import annotations

import asyncio
import statistics

import aiohttp
import pytest

from harness.drivers.kueuebaseline import declaring, generating, plans, reading, tabulating
from harness.errors import KqbenchError
from harness.load import arrivals, creating
from harness.scenarios import loading
from scheduler.controller import estimating
from tests.unit.harness.faketime import AsyncFakeTime

QUEUES = ["queues.cohorts=[{name: c}]",
          "queues.cluster_queues=[{name: cq, cohort: c, resource_groups: [{covered_resources: [cpu], flavors: "
          "[{flavor: default, resources: [{name: cpu, nominal: 20}]}]}]}]",
          "queues.local_queues=[{name: lq, cluster_queue: cq}]"]
TWO_CLASSES = ("load.mix=[{priority: 50, priority_class: small, cpu: '1', runtime_seconds: 10, per_second: 10, count: %d%s},"
               " {priority: 200, priority_class: large, cpu: '20', runtime_seconds: 4, per_second: 1, count: 2%s}]")


def scenario(small: str = "", large: str = "", count: int = 3, phase: str = ""):
    sets = [*QUEUES, TWO_CLASSES % (count, small, large)] + ([phase] if phase else [])
    return loading.load("kueue-baseline", sets).scenario


def draw(small: str = "", large: str = "", count: int = 3, declare: bool = True, seed: int = 1):
    s = scenario(small, large, count)
    return declaring.draw(arrivals.from_scenario(s), s.load.mix, declare, seed)


def test_fixed_runtimes_declared_by_their_class_factor():
    runtimes = draw(small=", declared_runtime_factor: 2.0")
    assert runtimes["small-lq-0"] == declaring.Runtime(10.0, 20.0)
    assert runtimes["large-lq-1"] == declaring.Runtime(4.0, 4.0)  # the default factor: the truth
    assert len(runtimes) == 5


def test_declare_runtime_off_declares_nothing():
    assert {r.declared_seconds for r in draw(declare=False).values()} == {None}


def test_lognormal_runtimes_are_the_seeds_and_keep_the_classes_mean():
    mix = ", runtime_distribution: lognormal, runtime_sigma: 1.0, declared_runtime_factor: 0.5"
    runtimes = draw(small=mix, count=2000)
    again, other = draw(small=mix, count=2000), draw(small=mix, count=2000, seed=2)
    assert runtimes == again and runtimes != other
    small = [r for name, r in runtimes.items() if name.startswith("small")]
    assert {r.declared_seconds for r in small} == {5.0}  # the class's mean x the factor, not the draw
    reals = [r.real_seconds for r in small]
    # 2,000 draws of a lognormal of mean 10 and sigma 1 (this seed's; the spread of such a mean is about 0.3)
    assert 8.5 < statistics.fmean(reals) < 11.5 and max(reals) > 40 and min(reals) < 2
    assert {r.real_seconds for name, r in runtimes.items() if name.startswith("large")} == {4.0}


def test_mix_fields_are_checked():
    with pytest.raises(KqbenchError, match="runtime_distribution"):
        scenario(small=", runtime_distribution: pareto")
    with pytest.raises(KqbenchError, match="declared_runtime_factor"):
        scenario(small=", declared_runtime_factor: 0")


def test_the_phase_fields_default_to_declaring_and_reading_nothing():
    phase = next(iter(scenario().phases.values()))
    assert (phase.declare_runtime, phase.runtime_seed, phase.estimates_every_seconds) == (True, 1, None)
    phase = next(iter(scenario(phase="phases.churn.estimates_every_seconds=2").phases.values()))
    assert phase.estimates_every_seconds == 2.0


def _creation(name: str = "small-lq-0") -> arrivals.Creation:
    return {c.name: c for c in arrivals.schedule(arrivals.from_scenario(scenario()))}[name]


def test_the_body_declares_the_runtime_and_labels_the_real_one():
    body = generating.workload_body(_creation(), declaring.Runtime(12.3456, 20.0))
    assert body["metadata"]["annotations"][estimating.RUNTIME_ANNOTATION] == "20"
    assert body["metadata"]["labels"][plans.RUNTIME_LABEL] == "12346"
    undeclared = generating.workload_body(_creation(), declaring.Runtime(12.0, None))
    assert estimating.RUNTIME_ANNOTATION not in undeclared["metadata"].get("annotations", {})
    # without a runtime of its own: the class's, declared as it is
    plain = generating.workload_body(_creation())
    assert estimating.declared_runtime(plain) == 10.0 and plain["metadata"]["labels"][plans.RUNTIME_LABEL] == "10000"


class Api:
    """Records requests; GETs of pendingworkloads answer from `pending` by limit and offset, or fail."""

    def __init__(self, pending: dict[str, list[dict]], failing: tuple[str, ...] = ()) -> None:
        self.pending = pending
        self.failing = failing
        self.calls: list[tuple[str, str, dict | None]] = []

    async def request(self, method, path, body=None, content_type="application/json", timeout=60.0):
        self.calls.append((method, path, body))
        return {}

    async def get(self, path: str, timeout: float = 60.0) -> dict:
        self.calls.append(("GET", path, None))
        queue = path.split("/clusterqueues/")[1].split("/")[0]
        if queue in self.failing:
            raise aiohttp.ClientConnectionError("refused")
        query = dict(part.split("=") for part in path.split("?")[1].split("&"))
        offset, limit = int(query["offset"]), int(query["limit"])
        return {"items": self.pending.get(queue, [])[offset:offset + limit]}


def item(name: str, position: int, estimated: str | None = "2026-01-01T00:01:40Z", reason: str = "") -> dict:
    out = {"metadata": {"name": name, "namespace": "ns"}, "positionInClusterQueue": position, "estimator": "simulator",
           "estimateSnapshotTime": "2026-01-01T00:00:10Z", "estimateAgeSeconds": 0.5}
    if estimated:
        out["estimatedAdmissionTime"] = estimated
    else:
        out["estimateReason"] = reason
    return out


def test_an_entry_is_read_from_the_visibility_item():
    [timed, untimed] = reading.entries_of([item("w", 0), item("x", 1, None, "beyond budget")], 3, 1000.0, "cq")
    base = 1767225600.0  # 2026-01-01T00:00:00Z
    assert (timed.read, timed.read_at, timed.workload, timed.namespace, timed.position) == (3, 1000.0, "w", "ns", 0)
    assert (timed.estimated_at, timed.snapshot_at, timed.age_seconds) == (base + 100, base + 10, 0.5)
    assert (untimed.estimated_at, untimed.reason) == (None, "beyond budget")
    [kueues] = reading.entries_of([{"metadata": {"name": "k", "namespace": "ns"}, "positionInClusterQueue": 0}], 0, 0.0, "cq")
    assert (kueues.estimator, kueues.estimated_at, kueues.snapshot_at) == ("", None, None)


def test_the_reader_reads_every_page_of_every_queue_each_round_and_is_bounded():
    async def scenario():
        time = AsyncFakeTime(1000.0)
        api = Api({"cq-a": [item(f"a{i}", i) for i in range(5)], "cq-b": [item("b0", 0)]}, failing=("cq-c",))
        reader = reading.Reader(api, ["cq-a", "cq-b", "cq-c", "cq-a"], 2.0, time.clock, time.sleep, page_limit=2)
        await reader.run(max_seconds=5.0)
        return reader, api
    reader, api = asyncio.run(scenario())
    assert reader.reads == 3  # at 0, 2 and 4 s of a 5 s bound
    offsets = [path.split("offset=")[1] for _, path, _ in api.calls if "/cq-a/" in path]
    assert offsets == ["0", "2", "4"] * 3  # pages of 2 until a short one
    assert len(reader.entries) == 3 * 6 and reader.failures == 3 and "refused" in reader.first_failure
    assert [e.workload for e in reader.entries if e.read == 1] == ["a0", "a1", "a2", "a3", "a4", "b0"]
    # every page that answered is kept with its size (a failed GET is counted, not a page)
    first = [(p.cluster_queue, p.offset, p.entries) for p in reader.pages if p.read == 0]
    assert first == [("cq-a", 0, 2), ("cq-a", 2, 2), ("cq-a", 4, 1), ("cq-b", 0, 1)]
    assert all(p.json_bytes > 0 and p.seconds >= 0 for p in reader.pages)


def test_the_reader_stops_at_its_entry_bound():
    async def scenario():
        time = AsyncFakeTime(0.0)
        reader = reading.Reader(Api({"cq": [item(f"w{i}", i) for i in range(3)]}), ["cq"], 1.0, time.clock, time.sleep,
                                max_entries=5)
        await reader.run(max_seconds=100.0)
        return reader
    reader = asyncio.run(scenario())
    assert reader.truncated and reader.reads == 2 and len(reader.entries) == 6


def test_the_generator_finishes_each_workload_its_own_runtime_after_admission():
    async def scenario():
        s = scenario_with_one_small()
        plan = arrivals.from_scenario(s)
        runtimes = {"small-lq-0": declaring.Runtime(2.5, 10.0)}
        time, api = AsyncFakeTime(1000.0), Api({})
        gen = generating.Generator(api, plan, creating.Settings(max_seconds=60), clock=time.clock, say=lambda text: None,
                                   sleep=time.sleep, runtimes=runtimes)
        gen.engine.result.start = time.now
        await gen.engine.create_all()
        time.now += 1.0
        gen._on_event("MODIFIED", {"metadata": {"name": "small-lq-0", "labels": {plans.CLASS_LABEL: "small"}},
                                   "status": {"admission": {"clusterQueue": "cq"},
                                              "conditions": [{"type": "QuotaReserved", "status": "True",
                                                              "lastTransitionTime": "2026-01-01T00:00:01Z"},
                                                             {"type": "Admitted", "status": "True"}]}})
        for _ in range(100):
            if not gen.engine.tasks:
                break
            await asyncio.gather(*list(gen.engine.tasks))
        return gen, api
    gen, api = asyncio.run(scenario())
    post = next(body for method, _, body in api.calls if method == "POST")
    assert post["metadata"]["annotations"][estimating.RUNTIME_ANNOTATION] == "10"
    record = gen.outcome.records["small-lq-0"]
    assert round(record.finished - record.admitted, 6) == 2.5  # its own runtime, not its class's 10 s
    frame = tabulating.workloads_frame(gen.outcome.records, gen.outcome.api_times, gen.engine.result.start, gen.outcome.runtimes)
    row = frame.set_index("name").loc["small-lq-0"]
    assert (row["runtime_s"], row["declared_runtime_s"]) == (2.5, 10.0)
    assert row["quota_reserved_s"] == pytest.approx(1767225601.0 - 1000.0)


def scenario_with_one_small():
    return loading.load("kueue-baseline", [*QUEUES, "load.mix=[{priority: 50, priority_class: small, cpu: '1', "
                                                    "runtime_seconds: 10, per_second: 10, count: 1}]"]).scenario


def test_the_estimates_table_is_on_the_generation_axis():
    entries = reading.entries_of([item("w", 0), item("x", 1, None, "no runtime declared")], 0, 1767225605.0, "cq")
    frame = tabulating.estimates_frame(entries, start=1767225600.0)
    assert list(frame.columns) == tabulating.ESTIMATES_COLUMNS
    assert frame["read_s"].tolist() == [5.0, 5.0] and frame["estimated_s"].tolist()[0] == 100.0
    assert frame["estimated_s"].isna().tolist() == [False, True] and frame["snapshot_s"].tolist() == [10.0, 10.0]
    assert tabulating.estimates_frame([], 0.0)["estimated_s"].dtype == "float64"
