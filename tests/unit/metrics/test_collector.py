"""The collector's start/mark_phase/stop contract, on recorded text, a fake clock and no thread."""

from __future__ import annotations

import pytest

from harness.clusters import state
from harness.errors import KqbenchError
from harness.metrics import catalog, collector, frames, scraping, summarising
from tests.unit.metrics import recorded

TARGETS = [scraping.Target(catalog.APISERVER, "https://127.0.0.1:1/metrics"),
           scraping.Target(catalog.ETCD, "http://127.0.0.1:2/metrics")]
CLUSTER = state.ClusterInfo(name="unit", backend="kwok", kubeconfig="unused", apiserver_url="https://127.0.0.1:1",
                            etcd_url="http://127.0.0.1:2", pids={"etcd": 11, "kube-apiserver": 12},
                            versions={"kubernetes": "v1.35.4", "etcd": "v3.6.16"})


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Recorded:
    """Answers each scrape with the next recorded moment (or an error) per source."""

    def __init__(self, moments: dict[str, list[str]]) -> None:
        self.moments = {source: list(items) for source, items in moments.items()}

    def __call__(self, target: scraping.Target, timeout: float) -> str:
        moment = self.moments[target.source].pop(0)
        if moment.startswith("error"):
            raise KqbenchError(f"{target.source} {moment}")
        component = recorded.APISERVER if target.source == catalog.APISERVER else recorded.ETCD
        return recorded.text(component, moment)


def _processes(pids, t):
    return [summarising.ProcessSample(t, component, pid, 1000 + int(t), t / 10) for component, pid in pids.items()]


def make(moments, census=None, clock=None) -> collector.Collector:
    edges = collector._Edges(fetch=Recorded(moments), sample_processes=_processes,
                             read_sizes=lambda url, snapshot: iter(census or []), clock=clock or FakeClock(),
                             wall_clock=lambda: 1.7e9)
    settings = collector.CollectorSettings(interval_seconds=0, census_at_stop=census is not None)
    return collector.Collector(CLUSTER, settings, targets=TARGETS, edges=edges)


def test_phases_deltas_processes_and_census():
    clock = FakeClock()
    run = make({catalog.APISERVER: ["before", "before", "after"], catalog.ETCD: ["before", "before", "after"]},
               census=recorded.registry_sizes(), clock=clock)
    run.start("idle")
    clock.now += 5
    run.mark_phase("churn")
    clock.now += 10
    run.watch_process("scheduler", 99)
    result = run.stop()

    assert result.meta["phases"] == [{"name": "idle", "start": 0.0, "end": 5.0}, {"name": "churn", "start": 5.0, "end": 15.0}]
    post = dict(recorded.request("POST", "201", "resource")[1])
    assert frames.total(result.summary, metric="apiserver_request_total", stat="delta", phase="churn", **post) == 21.0
    assert frames.total(result.summary, metric="apiserver_request_total", stat="delta", phase="idle", **post) == 0.0
    assert set(frames.pick(result.observations, source="process")["labels"].map(lambda s: s.split('"')[3])) == {
        "etcd", "kube-apiserver", "scheduler"}
    assert frames.total(result.summary, source="process", metric="cpu_seconds", stat="delta", phase="churn",
                        component="etcd") == pytest.approx(1.0)
    assert not result.slo.empty and set(result.slo["phase"]) == {"churn"}
    assert result.census.loc[result.census["resource"] == "configmaps", "count"].item() == 17
    assert result.meta["census"]["flagged"] == [["/registry/probe.kqbench.io/blobs/rec/near", 1100391]]
    assert set(result.tables()) == {"observations", "summary", "slo", "census", "names", "scrapes"}


def test_names_record_the_exposed_name_or_its_absence():
    run = make({catalog.APISERVER: ["before", "after"], catalog.ETCD: ["before", "after"]})
    run.start()
    names = run.stop().names.set_index("family")
    assert names.loc["apiserver_request_sli_duration_seconds", "exposed_as"] == "apiserver_request_sli_duration_seconds"
    assert names.loc["apiserver_flowcontrol_rejected_requests_total", "exposed_as"] == ""
    assert names.loc["apiserver_request_total", "server_version"] == "v1.35.4"
    assert names.loc["etcd_mvcc_put_total", "server_version"] == "v3.6.16"


def test_a_failed_etcd_scrape_is_recorded_and_the_run_goes_on():
    run = make({catalog.APISERVER: ["before", "after"], catalog.ETCD: ["before", "error: connection refused"]})
    run.start()
    result = run.stop()
    errors = result.scrapes[result.scrapes["error"] != ""]
    assert list(errors["source"]) == ["etcd"]
    assert frames.pick(result.summary, source="etcd").empty  # one good scrape: no delta to report
    assert not frames.pick(result.summary, source="apiserver").empty


@pytest.mark.parametrize("calls, message", [
    (["stop"], r"stop\(\) needs a started collector"),
    (["mark:x"], "needs a started collector"),
    (["start", "start"], "collector already running"),
    (["start", "mark:a", "mark:a"], "already used"),
    (["start", "mark:start"], "already used"),
])
def test_misuse_is_one_clear_error(calls, message):
    run = make({catalog.APISERVER: ["before"] * 5, catalog.ETCD: ["before"] * 5})
    with pytest.raises(KqbenchError, match=message):
        for call in calls:
            if call.startswith("mark:"):
                run.mark_phase(call[5:])
            else:
                getattr(run, call)()


def test_start_fails_when_the_apiserver_does_not_answer():
    run = make({catalog.APISERVER: ["error: 403 forbidden"], catalog.ETCD: ["before"]})
    with pytest.raises(KqbenchError, match="cannot collect metrics: apiserver error: 403"):
        run.start()


def test_process_cpu_is_read_at_the_instant_it_is_stamped_with():
    """Both cores busy is 2.0 cores over a short phase however long the scrapes at its boundaries take (a
    busy apiserver answers /metrics in seconds): CPU read after them but stamped with the boundary made
    results/tas/scaled-100k's 0.29 s setup phase 3.76 cores of kube-apiserver on 2."""
    clock = FakeClock()
    scrape_seconds = {catalog.APISERVER: [0.27, 1.03], catalog.ETCD: [0.02, 0.04]}
    answer = Recorded({catalog.APISERVER: ["before", "after"], catalog.ETCD: ["before", "after"]})

    def slow_fetch(target, timeout):
        clock.now += scrape_seconds[target.source].pop(0)
        return answer(target, timeout)

    def busy(pids, t):  # CPU seconds as the kernel counts them: two cores' worth per second, now
        return [summarising.ProcessSample(t, component, pid, 0, 2.0 * clock.now) for component, pid in pids.items()]

    edges = collector._Edges(fetch=slow_fetch, sample_processes=busy, read_sizes=lambda url, snapshot: iter([]),
                             clock=clock, wall_clock=lambda: 1.7e9)
    run = collector.Collector(CLUSTER, collector.CollectorSettings(interval_seconds=0, census_at_stop=False),
                              targets=TARGETS, edges=edges)
    run.start("setup")
    clock.now += 0.3
    result = run.stop()
    cores = frames.pick(result.summary, source="process", metric="cpu_seconds", stat="rate", phase="setup")
    assert list(cores["value"]) == pytest.approx([2.0, 2.0])
