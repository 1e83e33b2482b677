"""Default implementations of the runner's hooks over the real pieces.

- scheduler: harness.schedulerproc (CRDs, APIService, `python -m scheduler`).
- measurements: harness.metrics.collector.Collector.
- load: loadtests.running (Locust in a child process group).
Each is small on purpose: the piece owns its behaviour, the adapter only translates settings.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from harness import aggregation, kubeconfig
from harness.clusters import state
from harness.running import hooks, loadresults, queueobjects
from harness.scenarios import models

# -- scheduler ------------------------------------------------------------------------------


@dataclasses.dataclass(slots=True)
class _SchedulerProcessHandle:
    process: object

    def pid(self) -> int | None:
        return self.process.process.pid

    def metrics_url(self) -> str | None:
        return self.process.metrics_url

    def stop(self) -> None:
        self.process.stop()


def start_scheduler(cluster: state.ClusterInfo, scheduler: models.SchedulerSection, log_dir: Path) -> hooks.SchedulerHandle:
    if scheduler.implementation == "kueue":
        from harness.implementations.kueue import starting

        return starting.start_scheduler(cluster, scheduler, log_dir)
    from harness import schedulerproc

    qps = None if scheduler.no_client_limit else scheduler.qps
    process = schedulerproc.start(cluster, strategy=scheduler.strategy, qps=qps, burst=scheduler.burst,
                                  log_dir=log_dir)
    return _SchedulerProcessHandle(process)


def install_queues(cluster: state.ClusterInfo, queues: models.QueuesSection) -> None:
    """The scenario's queue objects, on the CRDs the scheduler's starter installed (the reference
    scheduler's when none are there yet: Kueue's and ours must not be mixed on one cluster)."""
    creds = kubeconfig.load(cluster.kubeconfig)
    if aggregation.installed_implementation(creds) is None:
        aggregation.install_crds(creds)
    queueobjects.install(cluster, queues)


# -- measurements ---------------------------------------------------------------------------


class CollectorMeasurements:
    """harness.metrics' collector behind the Measurements protocol."""

    def __init__(self, cluster: state.ClusterInfo, measurements: models.MeasurementsSection) -> None:
        from harness.metrics import collector

        settings = collector.CollectorSettings(interval_seconds=measurements.scrape_interval_seconds,
                                               census_at_stop=measurements.census)
        self._collector = collector.Collector(cluster, settings)

    def start(self, phase: str) -> None:
        self._collector.start(phase)

    def watch_process(self, component: str, pid: int) -> None:
        self._collector.watch_process(component, pid)

    def watch_metrics(self, source: str, url: str) -> None:
        from harness.metrics import scraping

        self._collector.watch_metrics(scraping.Target(source, url))

    def mark_phase(self, name: str) -> None:
        self._collector.mark_phase(name)

    def stop(self) -> hooks.Tables:
        return self._collector.stop().tables()


# -- load -------------------------------------------------------------------------------------

_USER_CLASSES = {"churn": "WorkloadChurn", "querier": "PositionQuerier", "bystander": "Bystander",
                 "listwatch": "Lister"}
_QUERY_MODE = {"aggregated-indexed": "visibility-cq", "aggregated-snapshot": "visibility-cq",
               "status-field": "workload-status", "cq-status-topn": "cq-status", "single-object": "single-object"}


def load_plan(cluster: state.ClusterInfo, scenario: models.Scenario, phase_name: str, phase: models.Phase):
    """The Locust run plan of one phase (None when the phase drives no load) — pure but for the kubeconfig read."""
    from loadtests import settings as ls

    creds = kubeconfig.load(cluster.kubeconfig)
    load = scenario.load
    users = dict(load.users)
    if phase.kind == "fill":
        users = {"churn": max(1, users["churn"])}
        run_time = min(phase.timeout_seconds, phase.pending / load.rates.create_per_second + 10.0)
        pending = phase.pending
    elif phase.kind == "churn":
        run_time, pending = phase.seconds, _fill_target(scenario)
    elif phase.kind == "query":
        users = {"querier": max(1, users["querier"]), "bystander": users["bystander"]}
        run_time, pending = phase.seconds, _fill_target(scenario)
    else:
        return None  # TODO(issue 8): drain waits for pending == 0 once the scheduler reports it
    weights = {_USER_CLASSES[k]: v for k, v in users.items() if v > 0}
    if not weights:
        return None
    local_queues = tuple(name for lq in scenario.queues.local_queues for _, name, _ in lq.expanded()) or ("lq-0",)
    namespace = next((ns for lq in scenario.queues.local_queues for ns, _, _ in lq.expanded()), "kqbench-churn")
    mix = tuple(ls.WorkloadKind(weight=m.weight, priority=m.priority, pods=m.pods, cpu=m.cpu, memory=m.memory,
                                runtime_seconds=m.runtime_seconds) for m in load.mix)
    cq = (scenario.queues.cluster_queue_names() or ["cq-0"])[0]
    settings = ls.LoadSettings(
        target=ls.Target(server=creds.server, ca_file=creds.ca_file, cert_file=creds.cert_file,
                         key_file=creds.key_file, token=creds.token, insecure=creds.insecure),
        churn=ls.ChurnSettings(namespace=namespace, local_queues=local_queues,
                               create_per_second=load.rates.create_per_second, pending_target=max(1, pending),
                               mix=mix).per_user(users.get("churn", 1)),
        query=ls.QuerySettings(mode=_QUERY_MODE[scenario.scheduler.strategy], cluster_queue=cq, namespace=namespace,
                               local_queue=local_queues[0], per_second=load.rates.query_per_second,
                               limit=getattr(phase, "limit", 100), max_offset=getattr(phase, "max_offset", 0)),
        bystander=ls.BystanderSettings(per_second=load.rates.bystander_per_second),
    )
    total = sum(weights.values())
    return ls.RunPlan(settings=settings, locustfile=_locustfile(), user_weights=weights, users=total,
                      spawn_rate=max(1.0, float(total)), run_time=float(run_time), workers=load.workers)


def _fill_target(scenario: models.Scenario) -> int:
    fills = [p.pending for p in scenario.phases.values() if p.kind == "fill"]
    return fills[-1] if fills else 50


def _locustfile() -> str:
    from loadtests import running

    return running.BUILTIN_LOCUSTFILE


def run_load(cluster: state.ClusterInfo, scenario: models.Scenario, phase_name: str, phase: models.Phase,
             out_dir: Path) -> hooks.Tables:
    from harness.watchcache import listing

    if listing.handles(phase):  # populate / list phases of the watch-cache scenarios (issue 9)
        return listing.run_phase(cluster, scenario, phase_name, phase, out_dir)
    from harness.kueuebaseline import generating as kueuebaseline, plans as kueueplans

    if kueueplans.handles(scenario, phase):  # Kueue's fixed-count perf run, not open-ended churn
        return kueuebaseline.run_phase(cluster, scenario, phase_name, phase, out_dir)
    plan = load_plan(cluster, scenario, phase_name, phase)
    if plan is None:
        return {}
    return loadresults.phase_tables(loadresults.run_load(plan, out_dir), phase_name)


def default_hooks() -> hooks.Hooks:
    return hooks.Hooks(scheduler=start_scheduler, measurements=CollectorMeasurements, load=run_load,
                       install_queues=install_queues)


def hooks_for(scenario: models.Scenario) -> hooks.Hooks:
    """default_hooks, without scheduler and queue objects when the scenario turns the scheduler off."""
    if scenario.scheduler.enabled:
        return default_hooks()
    return hooks.Hooks(measurements=CollectorMeasurements, load=run_load,
                       notes=["scheduler.enabled is false: no reference scheduler, no queue objects"])
