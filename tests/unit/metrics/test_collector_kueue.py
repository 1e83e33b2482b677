"""Real Kueue's /metrics in the run's tables as source `kueue`, next to the apiserver's."""

from __future__ import annotations

import ssl

from harness.implementations import contract
from harness.implementations.kueue import starting
from harness.metrics import catalog, collector, frames, scraping
from harness.running import adapters
from tests.unit.metrics import test_collector as base


def kueue_text(admitted: int, pending: int, waits: list[float]) -> str:
    """Kueue v0.17's exposition of the families kqbench reads (names, labels and bucket layout as it serves them)."""
    bounds = [2.0 ** k for k in range(-2, 14)]
    lines = [
        "# HELP kueue_admitted_workloads_total The total number of admitted workloads per 'cluster_queue'",
        "# TYPE kueue_admitted_workloads_total counter",
        f'kueue_admitted_workloads_total{{cluster_queue="cq",priority_class="",replica_role="standalone"}} {admitted}',
        "# TYPE kueue_pending_workloads gauge",
        f'kueue_pending_workloads{{cluster_queue="cq",replica_role="standalone",status="active"}} {pending}',
        'kueue_pending_workloads{cluster_queue="cq",replica_role="standalone",status="inadmissible"} 0',
        "# TYPE kueue_admission_wait_time_seconds histogram",
    ]
    labels = 'cluster_queue="cq",priority_class="",replica_role="standalone"'
    for bound in bounds:
        lines.append(f'kueue_admission_wait_time_seconds_bucket{{{labels},le="{bound:g}"}} {sum(w <= bound for w in waits)}')
    lines += [f'kueue_admission_wait_time_seconds_bucket{{{labels},le="+Inf"}} {len(waits)}',
              f"kueue_admission_wait_time_seconds_sum{{{labels}}} {sum(waits)}",
              f"kueue_admission_wait_time_seconds_count{{{labels}}} {len(waits)}",
              "# TYPE controller_runtime_reconcile_total counter",
              'controller_runtime_reconcile_total{controller="workload",result="success"} 12345']
    return "\n".join(lines) + "\n"


def test_kueues_admissions_pending_and_wait_become_per_phase_numbers_under_its_own_source():
    moments = iter([kueue_text(0, 500, []), kueue_text(40, 460, [1.0] * 39 + [100.0]),
                    kueue_text(40, 460, [1.0] * 39 + [100.0])])
    recorded = base.Recorded({catalog.APISERVER: ["before"] * 5, catalog.ETCD: ["before"] * 5})
    seen: list[scraping.Target] = []

    def fetch(target: scraping.Target, timeout: float) -> str:
        if target.source == catalog.KUEUE:
            seen.append(target)
            return next(moments)
        return recorded(target, timeout)

    clock = base.FakeClock()
    edges = collector._Edges(fetch=fetch, sample_processes=base._processes, read_sizes=lambda url, snapshot: iter([]),
                             clock=clock, wall_clock=lambda: 1.7e9)
    run = collector.Collector(base.CLUSTER, collector.CollectorSettings(interval_seconds=0, census_at_stop=False),
                              targets=list(base.TARGETS), edges=edges)
    run.watch_metrics(scraping.bearer_target(catalog.KUEUE, "https://127.0.0.1:5/metrics", "t0ken"))
    run.start("fill")
    clock.now += 10
    run.mark_phase("hold")
    clock.now += 10
    result = run.stop()

    fill = frames.pick(result.summary, source=catalog.KUEUE, phase="fill")
    assert frames.total(fill, metric="kueue_admitted_workloads_total", stat="delta") == 40
    assert frames.total(fill, metric="kueue_admitted_workloads_total", stat="rate") == 4.0
    assert frames.total(fill, metric="kueue_pending_workloads", stat="last", status="active") == 460
    assert frames.total(fill, metric="kueue_admission_wait_time_seconds", stat="p99") > 50
    assert frames.total(fill, metric="kueue_admission_wait_time_seconds", stat="p50") <= 1.0
    hold = frames.pick(result.summary, source=catalog.KUEUE, phase="hold")
    assert frames.total(hold, metric="kueue_admitted_workloads_total", stat="delta") == 0
    assert frames.pick(result.observations, source=catalog.KUEUE, metric="controller_runtime_reconcile_total").empty
    assert seen[0].headers == {"Authorization": "Bearer t0ken"} and seen[0].ssl_context.verify_mode == ssl.CERT_NONE


def test_each_implementation_names_its_own_metrics_source():
    process = starting.KueueProcess(process=None, ports=starting.manifests.Ports(1, 2, 3, 4), log_path=None,
                                    metrics_token="tok")
    endpoint = starting.SchedulerHandle(process, contract.ClientLimits(None, 100)).metrics_endpoint()
    assert endpoint == contract.MetricsEndpoint(catalog.KUEUE, "https://127.0.0.1:3/metrics", "tok")
    assert {f.source for f in catalog.FAMILIES} >= {catalog.SCHEDULER, catalog.KUEUE}


def test_the_runs_collector_scrapes_a_token_endpoint_over_tls_and_a_plain_one_without():
    class Spy:
        def __init__(self):
            self.targets = []

        def watch_metrics(self, target):
            self.targets.append(target)

    measurements = adapters.CollectorMeasurements.__new__(adapters.CollectorMeasurements)
    measurements._collector = Spy()
    measurements.watch_metrics(catalog.KUEUE, "https://127.0.0.1:3/metrics", "tok")
    measurements.watch_metrics(catalog.SCHEDULER, "http://127.0.0.1:4/metrics")
    kueue, ours = measurements._collector.targets
    assert kueue.headers["Authorization"] == "Bearer tok" and kueue.ssl_context is not None
    assert ours.headers == {} and ours.ssl_context is None
