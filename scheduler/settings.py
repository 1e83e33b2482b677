"""The scheduler process's settings, and the one record that carries them to the process.

`python -m scheduler --settings JSON` reads them whole (`from_record`); its one starter
(harness.implementations.reference) writes them with `to_record`. A setting is a field here and
nothing else on the way: `from_record(to_record(s)) == s` is tested for every field.
"""

from __future__ import annotations

import dataclasses
import inspect
import json
from dataclasses import dataclass, field
from typing import Literal

import click

from scheduler import listening
from scheduler.controller import controlling, estimating
from scheduler.core import kinds, podsready
from scheduler.core.parkedretries import REQUEUE_BATCH_SECONDS
from scheduler.publishing import strategies

BIND = listening.LOOPBACK
"""Every listener of the scheduler binds here: benchmark traffic stays on the loopback."""
AUTHORIZATIONS = ("delegate", "off")
_FINAL = kinds.FairSharingStrategy.LESS_THAN_OR_EQUAL_TO_FINAL_SHARE.value
_INITIAL = kinds.FairSharingStrategy.LESS_THAN_INITIAL_SHARE.value
FAIR_SHARING_STRATEGY_SETS = ((_FINAL,), (_INITIAL,), (_FINAL, _INITIAL))
"""The preemptionStrategies lists Kueue's Configuration accepts (pkg/config/validation.go), first the default."""
CLIENT_QPS, CLIENT_BURST = 50.0, 100
"""The default client-side write limit (requests/s, burst), Kueue's default clientConnection: every
starter that sets none (the reference scheduler, Kueue's manager, the benchmarks) takes it from here."""
MAX_MIN_CYCLE_SECONDS = 10.0
_PODS_READY = podsready.WaitForPodsReady()
"""Kueue's waitForPodsReady defaults (v1beta2 defaulting), the settings' defaults."""
"""A slower pace than this is no scheduler's we compare with (Kueue's cycles take milliseconds to a second)."""


EstimatorName = Literal[estimating.NAMES]  # type: ignore[valid-type]
"""`none` or one of scheduler.core.estimators' names."""
_CONTROLLER = controlling.ControllerSettings()


REFERENCE_ONLY = "reference_only"
"""The metadata key of a setting only the reference scheduler reads (see `reference_only`)."""


def reference_only(ge: float | None = None, le: float | None = None) -> dict:
    """Field metadata of a setting only the reference scheduler reads, which a scenario sets by its name,
    with its bounds (the scenario's validation and the process's). One that follows a Kueue default
    which changed between versions is also named in harness/versions.toml; the scenario's None then
    means the run's Kueue version's."""
    return {REFERENCE_ONLY: {name: value for name, value in (("ge", ge), ("le", le)) if value is not None}}


def named_for(reader, settings: "SchedulerSettings", **given) -> dict:
    """The keyword arguments of `reader` (a class or function) from the settings named as its parameters,
    `given` first: a setting reaches the part that reads it by its name, with no list to keep."""
    names = inspect.signature(reader).parameters
    return {**{f.name: getattr(settings, f.name) for f in dataclasses.fields(settings) if f.name in names}, **given}


@dataclass(frozen=True, slots=True)
class SchedulerSettings:
    kubeconfig: str
    strategy: str = strategies.AGGREGATED_INDEXED
    """How users learn positions: one of scheduler.publishing.strategies.STRATEGIES."""
    publish: strategies.PublishSettings = field(default_factory=strategies.PublishSettings)
    qps: float | None = CLIENT_QPS
    """Client-side write QPS like Kueue's default (None: no client limit)."""
    burst: int = CLIENT_BURST
    visibility_port: int = 0
    """0: no visibility server (the controller alone)."""
    metrics_port: int = 0
    """0: no /metrics, /healthz, /readyz."""
    tls_cert: str = ""
    tls_key: str = ""
    authorization: str = "delegate"
    """'delegate' (SubjectAccessReview per user and queue, cached) or 'off'."""
    max_unwritten: int = controlling.DEFAULT_MAX_UNWRITTEN
    """Admissions the cycle loop may decide ahead of their status writes."""
    page_cache: bool = True
    """Keep encoded visibility pages until their queue changes; False encodes every request's page,
    as Kueue does (the arm that tells what the cache buys)."""
    manage_jobs: bool = False
    """Queue batch/v1 Jobs labelled with a LocalQueue through Workloads, as Kueue's job integration
    does (watches those Jobs; off by default: scenarios of bare Workloads need no Job watch)."""
    parent_pid: int = 0
    """Stop once this process is no longer our parent (the starter is gone, SIGKILL included; see
    scheduler.parentwatching); 0: no watch. The harness sets its own pid when it starts us."""
    fair_sharing: bool = False
    """Kueue's Configuration `fairSharing`: order each cycle by dominant resource share and preempt
    between queues by the strategies below (off: Kueue's classical order and preemption)."""
    fair_sharing_strategies: tuple[str, ...] = FAIR_SHARING_STRATEGY_SETS[2]
    """fairSharing.preemptionStrategies, one of the lists Kueue accepts (its default: both)."""
    admission_fair_sharing: bool = False
    """Kueue's Configuration `admissionFairSharing`: in a ClusterQueue whose admissionScope asks for it,
    pending workloads go by their LocalQueue's decayed usage first (core.admissionfairsharing)."""
    usage_half_life_seconds: float = kinds.ADMISSION_FAIR_SHARING_OFF.usage_half_life_seconds
    """admissionFairSharing.usageHalfLifeTime (Kueue's zero value: usage forgotten at every sample)."""
    usage_sampling_interval_seconds: float = kinds.ADMISSION_FAIR_SHARING_OFF.usage_sampling_interval_seconds
    """admissionFairSharing.usageSamplingInterval (Kueue's default: 5 min)."""
    resource_weights: tuple[tuple[str, float], ...] = ()
    """admissionFairSharing.resourceWeights as (resource, weight) pairs (unlisted: 1)."""
    wait_for_pods_ready: bool = False
    """Kueue's Configuration `waitForPodsReady`: evict an admitted Workload whose pods are not ready in time,
    requeue it after a backoff, deactivate it past the limit (scheduler.core.podsready). The harness passes
    the scenario's choice, or the run's Kueue version's (on from v0.19)."""
    wait_for_pods_ready_timeout_seconds: float = _PODS_READY.timeout_seconds
    """waitForPodsReady.timeout: from Admitted to PodsReady (Kueue's DefaultWaitForPodsReadyTimeout, 30 min)."""
    wait_for_pods_ready_block_admission: bool = _PODS_READY.block_admission
    """waitForPodsReady.blockAdmission: no admission while a Workload holding quota is not PodsReady."""
    wait_for_pods_ready_requeuing_timestamp: str = _PODS_READY.requeuing_timestamp.value
    """waitForPodsReady.requeuingStrategy.timestamp: Eviction (Kueue's default) or Creation."""
    wait_for_pods_ready_backoff_limit_count: int | None = _PODS_READY.backoff_limit_count
    """waitForPodsReady.requeuingStrategy.backoffLimitCount: evictions before deactivation (None: no limit)."""
    wait_for_pods_ready_backoff_base_seconds: int = _PODS_READY.backoff_base_seconds
    """waitForPodsReady.requeuingStrategy.backoffBaseSeconds (Kueue's DefaultRequeuingBackoffBaseSeconds, 60)."""
    wait_for_pods_ready_backoff_max_seconds: int = _PODS_READY.backoff_max_seconds
    """waitForPodsReady.requeuingStrategy.backoffMaxSeconds (Kueue's default 3600; 0: no cap)."""
    wait_for_pods_ready_recovery_timeout_seconds: float | None = _PODS_READY.recovery_timeout_seconds
    """waitForPodsReady.recoveryTimeout (None: the timeout, Kueue's defaulting; 0: none)."""
    # -- the settings only the reference scheduler reads: a scenario's `scheduler:` section sets each by its
    # name (harness.implementations.reference makes its fields from these), and the part of the scheduler
    # that reads one takes it by its name (`named_for`): adding one is its line here and its use.
    min_cycle_seconds: float = field(default=0.0, metadata=reference_only(ge=0, le=MAX_MIN_CYCLE_SECONDS))
    """Each scheduling cycle takes at least this long. Runs the same decisions at another scheduler's pace
    (e.g. Kueue's measured cycle time at that size) to tell a difference of decisions from one of pace;
    0: as fast as it can (its design)."""
    requeue_batch_seconds: float = field(default=REQUEUE_BATCH_SECONDS,
                                         metadata=reference_only(ge=0, le=MAX_MIN_CYCLE_SECONDS))
    """How long after a release of quota the parked Workloads of its cohort come back (Kueue's
    requeueBatchPeriod, 1 s). Another value tells how much the eviction count of a run depends on how
    often parked heads are tried again."""
    write_pending_reasons: bool = field(default=False, metadata=reference_only())
    """Write why on every head a cycle turns away, one write after another before the next cycle, as Kueue
    does (true: Kueue's pace at Kueue's write cost; false: the reference scheduler's design, which writes
    nothing to a Workload that merely waits)."""
    hold_evicted_quota: bool = field(default=False, metadata=reference_only())
    """An eviction leaves the Workload's quota held until something else releases it (a job's controller;
    for bare Workloads the kueue-baseline generator and the agreement runner), as Kueue does (false: the
    eviction write clears the reservation at once, the reference scheduler's design)."""
    preserve_scan_progress: bool = field(default=False, metadata=reference_only())
    """Kueue's FlavorFungibilityPreserveScanProgress (beta, on by default from Kueue v0.19): a head skipped
    because another took its quota keeps its flavor search, and a search one cycle old outlives a change of
    allocatable quota (off: Kueue v0.17's reset)."""
    preemption_ignores_pods: bool = field(default=False, metadata=reference_only())
    """Kueue v0.19's preemption search reads the preemptor's request without the `pods` resource (v0.17's
    flavor assignment wrote `pods` into the request it shared with the search; v0.19 copies it first,
    pkg/scheduler/flavorassigner/flavorassigner.go assignFlavors): which targets it takes and the reason it
    gives them follow (off: Kueue v0.17's)."""
    scheduling_equivalence_hashing: bool = field(default=False, metadata=reference_only())
    """Kueue's SchedulingEquivalenceHashing (beta, on by default from Kueue v0.18): a BestEffortFIFO head set
    aside as inadmissible (no fit, or no preemption candidates) sets aside every pending Workload of the same
    shape (priority and pod sets) with it, and those that arrive until the queue's next retry (off: Kueue
    v0.17's one at a time)."""
    tas_recompute_in_cycle: bool = field(default=False, metadata=reference_only())
    """Kueue's TASRecomputeAssignmentWithinSchedulingCycle (beta, on by default from Kueue v0.19): a head whose
    quota fits but whose nodes an earlier entry of the cycle took is placed again in the same cycle (off:
    Kueue v0.17's skip, "Workload no longer fits after processing another workload")."""
    tas_hostname_prefix_encoding: bool = field(default=False, metadata=reference_only())
    """Kueue's TASAssignmentsEncodingByHostnamePrefix (beta, on by default from Kueue v0.19): a topology
    assignment written as a slice per run of hosts sharing a name prefix when that is smaller (off: Kueue
    v0.17's one compact slice)."""
    queue_status_workers: int = field(default=controlling.ControllerSettings().queue_status_workers,
                                      metadata=reference_only(ge=1, le=100))
    """ClusterQueue and LocalQueue status writes in flight at once, apart from the decisions' writes
    (Kueue ships 5 workers for each of its two queue controllers, its groupKindConcurrency)."""
    log_cycles: bool = field(default=False, metadata=reference_only())
    """Log every decision of every cycle, one line each, to read beside Kueue's cycle log
    (`kueue_log_level: 3`), and each preempting head's cohort as the cycle left it; costs time per cycle,
    so never for headline figures."""
    estimator: EstimatorName = field(default=_CONTROLLER.estimator, metadata=reference_only())
    """Serve expected admission times with this estimator (moving-average, rate or simulator; docs/eta.md) as
    extra fields of the visibility API's pending-workload entries and as /metrics histograms; none: no estimates,
    the entries are Kueue's alone."""
    estimate_refresh_seconds: float = field(default=_CONTROLLER.estimate_refresh_seconds,
                                            metadata=reference_only(ge=0.1, le=3600))
    """How often the estimates are computed again from a fresh snapshot: 10 s keeps them younger than a person
    takes to look again, and the simulator's default budget (a CPU second) at most a tenth of a core."""
    estimate_max_cpu_seconds: float = field(default=_CONTROLLER.estimate_max_cpu_seconds,
                                            metadata=reference_only(ge=0.01, le=60))
    """The simulator's CPU seconds per refresh (its own thread's); past them, Workloads it did not reach are
    served their previous estimate with its age."""
    estimate_max_cycles: int = field(default=_CONTROLLER.estimate_max_cycles, metadata=reference_only(ge=1, le=10_000_000))
    """The simulator's scheduling cycles per refresh: keeps a forecast finite whatever the CPU clock says (a queue
    of n pending Workloads needs n cycles at the least)."""

    def __post_init__(self) -> None:
        if tuple(self.fair_sharing_strategies) not in FAIR_SHARING_STRATEGY_SETS:
            raise ValueError(f"fair sharing strategies {','.join(self.fair_sharing_strategies)} are not a list Kueue "
                             f"accepts: {' | '.join(','.join(s) for s in FAIR_SHARING_STRATEGY_SETS)}")
        self.core_admission_fair_sharing()
        self.core_wait_for_pods_ready()
        strategies.get(self.strategy)
        if self.authorization not in AUTHORIZATIONS:
            raise ValueError(f"authorization {self.authorization!r} is unknown: use delegate or off")
        for setting in dataclasses.fields(self):
            bounds = setting.metadata.get(REFERENCE_ONLY) or {}
            value = getattr(self, setting.name)
            if bounds and not bounds.get("ge", value) <= value <= bounds.get("le", value):
                raise ValueError(f"{setting.name} must be between {bounds['ge']:g} and {bounds['le']:g} (got {value})")
        if self.max_unwritten < 1:
            raise ValueError(f"max_unwritten must be >= 1 (got {self.max_unwritten})")
        if self.visibility_port and strategies.get(self.strategy).visibility_api and not (self.tls_cert and self.tls_key):
            raise ValueError("the visibility server needs tls_cert and tls_key")

    def core_fair_sharing(self) -> kinds.FairSharing:
        """The core's view of the fair-sharing settings."""
        return kinds.FairSharing(self.fair_sharing,
                                 tuple(kinds.FairSharingStrategy(s) for s in self.fair_sharing_strategies))


    def core_admission_fair_sharing(self) -> kinds.AdmissionFairSharing:
        """The core's view of the admission-fair-sharing settings (ValueError as Kueue's validation)."""
        return kinds.AdmissionFairSharing(self.admission_fair_sharing, self.usage_half_life_seconds,
                                          self.usage_sampling_interval_seconds, tuple(self.resource_weights))

    def core_wait_for_pods_ready(self) -> podsready.WaitForPodsReady:
        """The core's view of the waitForPodsReady settings (ValueError as Kueue's validation)."""
        return wait_for_pods_ready_of(self, bool(self.wait_for_pods_ready))


def wait_for_pods_ready_of(fields, enable: bool) -> podsready.WaitForPodsReady:
    """Kueue's waitForPodsReady from anything with the `wait_for_pods_ready_*` fields of SchedulerSettings (the
    scenario's scheduler section has the same): the one mapping both implementations' settings go through."""
    return podsready.WaitForPodsReady(
        enable=enable, timeout_seconds=fields.wait_for_pods_ready_timeout_seconds,
        block_admission=fields.wait_for_pods_ready_block_admission,
        requeuing_timestamp=fields.wait_for_pods_ready_requeuing_timestamp,
        backoff_limit_count=fields.wait_for_pods_ready_backoff_limit_count,
        backoff_base_seconds=fields.wait_for_pods_ready_backoff_base_seconds,
        backoff_max_seconds=fields.wait_for_pods_ready_backoff_max_seconds,
        recovery_timeout_seconds=fields.wait_for_pods_ready_recovery_timeout_seconds)


RECORD_FLAG = "--settings"
"""The child's one option: its whole SchedulerSettings as one JSON record (`to_record`)."""


def to_record(settings: SchedulerSettings) -> str:
    """The settings as the one JSON record `python -m scheduler --settings` reads back (`from_record`)."""
    return json.dumps(dataclasses.asdict(settings), sort_keys=True, separators=(",", ":"))


def from_record(text: str) -> SchedulerSettings:
    """The settings of a record written by `to_record`; ValueError names what is wrong."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise ValueError(f"the settings record is not JSON ({error}): write it with scheduler.settings.to_record") from None
    if not isinstance(data, dict):
        raise ValueError("the settings record is not a JSON object: write it with scheduler.settings.to_record")
    known = {f.name for f in dataclasses.fields(SchedulerSettings)}
    unknown = sorted(set(data) - known)
    if unknown:
        raise ValueError(f"the settings record names no setting {', '.join(unknown)} "
                         f"(settings: {', '.join(sorted(known))})")
    if "kubeconfig" not in data:
        raise ValueError("the settings record has no kubeconfig: name the cluster to schedule on")
    publish = strategies.PublishSettings(**data.pop("publish", {}))
    # JSON has lists where the settings keep tuples (hashable, frozen)
    for name in ("fair_sharing_strategies", "resource_weights"):
        if name in data:
            data[name] = tuple(tuple(item) if isinstance(item, list) else item for item in data[name])
    return SchedulerSettings(**data, publish=publish)


def command(run):
    """The click command of `python -m scheduler`: reads the one record, then calls run(settings)."""

    @click.command(context_settings={"help_option_names": ["-h", "--help"]})
    @click.option(RECORD_FLAG, "record", required=True, metavar="JSON",
                  help="Every setting as one JSON record (scheduler.settings.to_record). By hand, start the "
                       "scheduler with `kqbench scheduler run`, whose options are a scenario's scheduler section.")
    def main(record: str) -> None:
        """Run the reference scheduler: controller, visibility API and /metrics."""
        try:
            settings = from_record(record)
        except (TypeError, ValueError) as error:
            raise click.UsageError(str(error)) from None
        run(settings)

    return main
