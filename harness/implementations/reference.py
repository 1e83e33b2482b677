"""The reference scheduler (this project's, in Python) as an implementation under test.

`settings_for` is the one translation from a scenario's scheduler section to the process's
settings: every field of the section that names a scheduler setting goes through it (a unit test
walks the section's fields), and `python -m scheduler` reads it back from the same command line.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from harness import apiservice, schedulerproc
from harness.clusters import ports as portpicking
from harness.implementations import contract
from scheduler import settings as scheduler_settings
from scheduler.publishing import strategies

if TYPE_CHECKING:
    from harness.clusters import state
    from harness.scenarios import models

RUNNER_FIELDS = ("enabled", "implementation")
"""Fields of the scheduler section the runner reads itself."""
KUEUE_FIELDS = ("kueue_concurrency", "kueue_log_level", "kueue_version")
"""Fields only real Kueue reads (harness.implementations.kueue); every other one reaches our process."""


def settings_for(cluster: state.ClusterInfo, section: models.SchedulerSection, visibility_port: int,
                 metrics_port: int, files: apiservice.ServingFiles) -> scheduler_settings.SchedulerSettings:
    """The process's settings from the scenario's scheduler section (pure)."""
    publish = strategies.PublishSettings(min_interval_seconds=section.status_min_interval_seconds,
                                         single_object_interval_seconds=section.single_object_interval_seconds,
                                         topn=section.top_n, topn_interval_seconds=section.refresh_seconds)
    return scheduler_settings.SchedulerSettings(
        kubeconfig=cluster.kubeconfig, strategy=section.strategy, publish=publish,
        qps=None if section.no_client_limit else section.qps, burst=section.burst,
        visibility_port=visibility_port, metrics_port=metrics_port, tls_cert=str(files.cert), tls_key=str(files.key),
        authorization=section.authorization, max_unwritten=section.max_unwritten,
        page_cache=section.page_cache, manage_jobs=section.manage_jobs, fair_sharing=section.fair_sharing,
        fair_sharing_strategies=tuple(section.fair_sharing_strategies.split(",")),
        write_pending_reasons=section.write_pending_reasons, min_cycle_seconds=section.min_cycle_seconds)


@dataclass(frozen=True, slots=True)
class ReferenceScheduler:
    """The running process as a SchedulerHandle."""

    process: schedulerproc.SchedulerProcess

    def pid(self) -> int | None:
        return self.process.pid()

    def metrics_url(self) -> str | None:
        return self.process.metrics_url

    def metrics_endpoint(self) -> contract.MetricsEndpoint | None:
        return contract.MetricsEndpoint("scheduler", self.process.metrics_url)

    def alive(self) -> bool:
        return self.process.alive()

    def stop(self) -> None:
        self.process.stop()


def start(cluster: state.ClusterInfo, section: models.SchedulerSection, log_dir: Path) -> ReferenceScheduler:
    """CRDs, the APIService when the strategy serves the visibility API, then `python -m scheduler`."""
    visibility_port, metrics_port = portpicking.pick_free(2)
    files = schedulerproc.install(cluster, section.strategy, visibility_port)
    settings = settings_for(cluster, section, visibility_port, metrics_port, files)
    return ReferenceScheduler(schedulerproc.launch(settings, schedulerproc.log_path_of(cluster, log_dir)))


IMPLEMENTATION = contract.Implementation(name="reference", start=start, strategies=tuple(strategies.STRATEGIES),
                                         running=schedulerproc.running_on)
