"""The reference scheduler (this project's, in Python) as an implementation under test.

`fields_of` is the one translation from a scenario's scheduler section to the process's settings:
every field of the section that names a scheduler setting goes through it (a unit test walks the
section's fields: the shared ones and `ReferenceFields`, those only this scheduler reads), and `python -m scheduler` reads it back from the same command line. `start` and
`restart` (a capacity search's new scheduler behind the same /metrics port) both go through
harness.schedulerproc.start, as the tests and benchmarks do.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import Field, model_validator

from harness import apiservice, kubeconfig, schedulerproc
from harness.implementations import contract, names
from harness.scenarios import base, sections
from harness.toolchain import versions
from scheduler import settings as scheduler_settings
from scheduler.publishing import strategies

if TYPE_CHECKING:
    from harness.clusters import state

NAME = names.REFERENCE
RUNNER_FIELDS = ("enabled", "implementation")
"""Fields of the scheduler section the runner reads itself; every other one but another implementation's
own reaches our process."""
_PROCESS = scheduler_settings.SchedulerSettings(kubeconfig="")


class ReferenceFields(base.Model):
    """The scenario's scheduler fields only the reference scheduler reads (the section is assembled from them)."""

    min_cycle_seconds: float = Field(_PROCESS.min_cycle_seconds, ge=0, le=scheduler_settings.MAX_MIN_CYCLE_SECONDS)
    """Reference scheduler only: each scheduling cycle takes at least this long. Runs the same decisions
    at another scheduler's pace (e.g. Kueue's measured cycle time at that size) to tell a difference of
    decisions from one of pace; 0: as fast as it can (its design)."""
    requeue_batch_seconds: float = Field(_PROCESS.requeue_batch_seconds, ge=0,
                                         le=scheduler_settings.MAX_MIN_CYCLE_SECONDS)
    """Reference scheduler only: how long after a release of quota the parked Workloads of its cohort come
    back (Kueue's requeueBatchPeriod, 1 s). Another value tells how much the eviction count of a run
    depends on how often parked heads are tried again."""
    write_pending_reasons: bool = _PROCESS.write_pending_reasons
    """Reference scheduler only: write why on every head a cycle turns away, one write after another
    before the next cycle, as Kueue does (true: Kueue's pace at Kueue's write cost; false: the reference
    scheduler's design, which writes nothing to a Workload that merely waits)."""

    hold_evicted_quota: bool = _PROCESS.hold_evicted_quota
    """Reference scheduler only: an eviction leaves the Workload's quota held until something else releases
    it (a job's controller; for bare Workloads the kueue-baseline generator and the agreement runner), as
    Kueue does (false: the eviction write clears the reservation at once, the reference scheduler's design)."""

    preserve_scan_progress: bool | None = None
    """Reference scheduler only: Kueue's FlavorFungibilityPreserveScanProgress (a head skipped for contention
    goes on with its next flavor). None: as the run's Kueue version decides (scheduler.kueue_version, its
    default in harness/versions.toml: on from v0.19)."""

    preemption_ignores_pods: bool | None = None
    """Reference scheduler only: Kueue v0.19's preemption search, which reads the preemptor's request
    without the `pods` resource. None: as the run's Kueue version decides (on from v0.19)."""

    scheduling_equivalence_hashing: bool | None = None
    """Reference scheduler only: Kueue's SchedulingEquivalenceHashing (a BestEffortFIFO head set aside as
    inadmissible sets aside every pending Workload of its shape). None: as the run's Kueue version decides
    (on from v0.18)."""

    tas_recompute_in_cycle: bool | None = None
    """Reference scheduler only: Kueue's TASRecomputeAssignmentWithinSchedulingCycle (a head whose nodes an
    earlier entry of the cycle took is placed again in that cycle). None: as the run's Kueue version decides
    (on from v0.19)."""

    tas_hostname_prefix_encoding: bool | None = None
    """Reference scheduler only: Kueue's TASAssignmentsEncodingByHostnamePrefix (topology assignments written a
    slice per run of hosts sharing a name prefix when smaller). None: as the run's Kueue version decides (on
    from v0.19)."""

    log_cycles: bool = _PROCESS.log_cycles
    """Reference scheduler only: log every decision of every cycle, one line each, to read beside Kueue's
    cycle log (`kueue_log_level: 3`), and each preempting head's cohort as the cycle left it; costs time per
    cycle, so never for headline figures."""

    @model_validator(mode="before")
    @classmethod
    def _client_limits_are_its_own_defaults(cls, data: Any) -> Any:
        # Another implementation's shipped limits are its own business (Kueue reads them from its module).
        if isinstance(data, dict) and data.get("implementation", NAME) == NAME:
            data = {**data, "qps": _PROCESS.qps if data.get("qps") is None else data["qps"],
                    "burst": _PROCESS.burst if data.get("burst") is None else data["burst"]}
        return data


def fields_of(section: sections.SchedulerFields) -> dict:
    """The process's settings (SchedulerSettings fields) from the scenario's scheduler section (and, for the
    Kueue defaults the reference scheduler follows, harness/versions.toml)."""
    publish = strategies.PublishSettings(min_interval_seconds=section.status_min_interval_seconds,
                                         single_object_interval_seconds=section.single_object_interval_seconds,
                                         topn=section.top_n, topn_interval_seconds=section.refresh_seconds)
    return dict(strategy=section.strategy, publish=publish, qps=None if section.no_client_limit else section.qps,
                burst=section.burst, authorization=section.authorization, max_unwritten=section.max_unwritten,
                page_cache=section.page_cache, manage_jobs=section.manage_jobs, fair_sharing=section.fair_sharing,
                fair_sharing_strategies=tuple(section.fair_sharing_strategies.split(",")),
                min_cycle_seconds=section.min_cycle_seconds, requeue_batch_seconds=section.requeue_batch_seconds,
                write_pending_reasons=section.write_pending_reasons,
                hold_evicted_quota=section.hold_evicted_quota,
                preserve_scan_progress=_as_kueue(section.preserve_scan_progress, "preserve_scan_progress",
                                                 section.kueue_version),
                preemption_ignores_pods=_as_kueue(section.preemption_ignores_pods, "preemption_ignores_pods",
                                                  section.kueue_version),
                scheduling_equivalence_hashing=_as_kueue(section.scheduling_equivalence_hashing,
                                                         "scheduling_equivalence_hashing", section.kueue_version),
                tas_recompute_in_cycle=_as_kueue(section.tas_recompute_in_cycle, "tas_recompute_in_cycle",
                                                 section.kueue_version),
                tas_hostname_prefix_encoding=_as_kueue(section.tas_hostname_prefix_encoding,
                                                       "tas_hostname_prefix_encoding", section.kueue_version),
                log_cycles=section.log_cycles, admission_fair_sharing=section.admission_fair_sharing,
                usage_half_life_seconds=section.usage_half_life_seconds,
                usage_sampling_interval_seconds=section.usage_sampling_interval_seconds,
                resource_weights=tuple(section.resource_weights.items()))


def _as_kueue(value: bool | None, setting: str, kueue_version: str | None) -> bool:
    """A setting given in the scenario, else the one that decides as the run's Kueue version does."""
    return versions.reference_settings(kueue_version)[setting] if value is None else value


@dataclass(frozen=True, slots=True)
class ReferenceScheduler:
    """The running process as a SchedulerHandle."""

    process: schedulerproc.SchedulerProcess
    client_limits: contract.ClientLimits

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


def start(cluster: state.ClusterInfo, section: sections.SchedulerFields, log_dir: Path,
          metrics_port: int = 0) -> ReferenceScheduler:
    """CRDs, the APIService when the strategy serves the visibility API, then `python -m scheduler`
    (`metrics_port` 0: a free one)."""
    fields = fields_of(section)
    return ReferenceScheduler(schedulerproc.start(cluster, log_dir, metrics_port=metrics_port, **fields),
                              contract.ClientLimits(fields["qps"], fields["burst"]))


def restart(cluster: state.ClusterInfo, section: sections.SchedulerFields, log_dir: Path,
            metrics_port: int) -> ReferenceScheduler:
    """start() on the /metrics port the run's collector scrapes; for the visibility strategies, once
    kube-apiserver reaches the new visibility port (registered anew)."""
    handle = start(cluster, section, log_dir, metrics_port)
    if strategies.get(section.strategy).visibility_api:
        try:
            apiservice.wait_available(kubeconfig.load(cluster.kubeconfig))
        except BaseException:
            handle.stop()
            raise
    return handle


IMPLEMENTATION = contract.Implementation(name=NAME, start=start, strategies=tuple(strategies.STRATEGIES),
                                         running=schedulerproc.running_on, scheduler_fields=ReferenceFields)
