"""Default implementations of the runner's hooks over the real pieces.

- scheduler: the implementation the scenario names (harness.implementations.registry).
- measurements: harness.metrics.collector.Collector.
- phases: the drivers of harness.drivers.registry.
Each is small on purpose: the piece owns its behaviour, the adapter only translates settings.
"""

from __future__ import annotations

from pathlib import Path

from harness.clusters import state
from harness.errors import KqbenchError
from harness.drivers import contract, registry
from harness.implementations import registry as implementations
from harness.kube import apiservice, kubeconfig
from harness.running import calibrating, hooks
from harness.scenarios import models, queueobjects, sections

# -- scheduler ------------------------------------------------------------------------------


def start_scheduler(cluster: state.ClusterInfo, scheduler: models.SchedulerSection, log_dir: Path) -> hooks.SchedulerHandle:
    return implementations.get(scheduler.implementation).start(cluster, scheduler, log_dir)


def restart_scheduler(cluster: state.ClusterInfo, scheduler: models.SchedulerSection, log_dir: Path,
                      metrics_port: int) -> hooks.SchedulerHandle:
    restart = implementations.get(scheduler.implementation).restart
    if restart is None:
        raise KqbenchError(f"scheduler implementation {scheduler.implementation} cannot be restarted by a phase: "
                           f"use one that can ({', '.join(n for n, i in implementations.implementations().items() if i.restart)})")
    return restart(cluster, scheduler, log_dir, metrics_port)


def install_queues(cluster: state.ClusterInfo, queues: sections.QueuesSection) -> None:
    """The scenario's queue objects, on the CRDs the scheduler's starter installed (the reference
    scheduler's when none are there yet: Kueue's and ours must not be mixed on one cluster)."""
    creds = kubeconfig.load(cluster.kubeconfig)
    if apiservice.installed_implementation(creds) is None:
        apiservice.install_crds(creds)
    queueobjects.install(cluster, queues)


# -- measurements ---------------------------------------------------------------------------


class CollectorMeasurements:
    """harness.metrics' collector behind the Measurements protocol."""

    def __init__(self, cluster: state.ClusterInfo, measurements: sections.MeasurementsSection) -> None:
        from harness.metrics import collector

        settings = collector.CollectorSettings(interval_seconds=measurements.scrape_interval_seconds,
                                               census_at_stop=measurements.census)
        self._collector = collector.Collector(cluster, settings)

    def start(self, phase: str) -> None:
        self._collector.start(phase)

    def watch_process(self, component: str, pid: int) -> None:
        self._collector.watch_process(component, pid)

    def watch_metrics(self, source: str, url: str, bearer_token: str = "") -> None:
        from harness.metrics import scraping

        self._collector.watch_metrics(scraping.bearer_target(source, url, bearer_token) if bearer_token
                                      else scraping.Target(source, url))

    def mark_phase(self, name: str) -> None:
        self._collector.mark_phase(name)

    def stop(self) -> hooks.Measured:
        frames = self._collector.stop()
        return hooks.Measured(frames.tables(), frames.meta)


def invariant_checker(cluster: state.ClusterInfo) -> hooks.InvariantChecker:
    from harness.invariants import reading

    return reading.checker_for(cluster)


def fault_injector(context: contract.PhaseContext, planned: list, check) -> hooks.FaultSession:
    from harness.faults import running as faultrunning
    from scheduler.api import groups
    from scheduler.publishing import strategies

    positions = None
    cluster_queues = [obj["metadata"]["name"] for _, obj in queueobjects.manifests(context.scenario.queues)
                      if obj["kind"] == "ClusterQueue"]
    if cluster_queues and strategies.get(context.scenario.scheduler.strategy).visibility_api:
        positions = f"{groups.VISIBILITY_PATH}/clusterqueues/{cluster_queues[0]}/pendingworkloads?limit=1"
    targets = faultrunning.Targets(context.cluster, context.scheduler, context.out_dir, positions,
                                   context.watch_process, check, context.say)
    return faultrunning.Injector(context.phase_name, planned, targets)


def default_hooks() -> hooks.Hooks:
    return hooks.Hooks(scheduler=start_scheduler, restart_scheduler=restart_scheduler, measurements=CollectorMeasurements, drivers=registry.drivers(),
                       install_queues=install_queues, invariants=invariant_checker, faults=fault_injector,
                       calibrate=calibrating.measure)


def bare_hooks() -> hooks.Hooks:
    """The cluster, the scheduler, its queueing API and the phases only: no calibration, measurements,
    invariant checks or faults, for runs whose phase reads what it compares itself and whose timing the
    others' load would shift (the differential tester's batches)."""
    return hooks.Hooks(scheduler=start_scheduler, restart_scheduler=restart_scheduler, drivers=registry.drivers(),
                       install_queues=install_queues,
                       notes=["no calibration, measurements, invariant checks or faults: the phases read what they compare"])


def hooks_for(scenario: models.Scenario) -> hooks.Hooks:
    """default_hooks, without scheduler and queue objects when the scenario turns the scheduler off."""
    if scenario.scheduler.enabled:
        return default_hooks()
    return hooks.Hooks(measurements=CollectorMeasurements, drivers=registry.drivers(), calibrate=calibrating.measure,
                       notes=["scheduler.enabled is false: no reference scheduler, no queue objects"])
