"""The scheduler process's settings, and their one command-line form.

`python -m scheduler` parses its arguments with `command`; whoever starts the process (the
harness, by hand) writes them with `to_args`. Both sides are made from one option table (`_OPTIONS`:
each setting's flag, place and help, once), so a setting cannot reach one and not the other:
`parse_args(to_args(s)) == s` is tested for every field.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import click

from scheduler import listening
from scheduler.controller import controlling
from scheduler.core import kinds
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
"""A slower pace than this is no scheduler's we compare with (Kueue's cycles take milliseconds to a second)."""


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
    min_cycle_seconds: float = 0.0
    """Each cycle takes at least this long (controlling.ControllerSettings.min_cycle_seconds)."""
    requeue_batch_seconds: float = REQUEUE_BATCH_SECONDS
    """How long after a release of quota the parked workloads of its cohort come back (Kueue's
    requeueBatchPeriod, 1 s; parkedretries.ParkedRetries.batch_seconds)."""
    hold_evicted_quota: bool = False
    """An eviction leaves the quota held until someone else releases it, as Kueue leaves a bare Workload
    (controlling.ControllerSettings.hold_evicted_quota)."""
    preserve_scan_progress: bool = False
    """Kueue's FlavorFungibilityPreserveScanProgress (beta, on by default from Kueue v0.19): a head skipped
    because another took its quota keeps its flavor search, and a search one cycle old outlives a change of
    allocatable quota (off: Kueue v0.17's reset)."""
    preemption_ignores_pods: bool = False
    """Kueue v0.19's preemption search reads the preemptor's request without the `pods` resource (v0.17's
    flavor assignment wrote `pods` into the request it shared with the search; v0.19 copies it first,
    pkg/scheduler/flavorassigner/flavorassigner.go assignFlavors): which targets it takes and the reason it
    gives them follow (off: Kueue v0.17's)."""
    scheduling_equivalence_hashing: bool = False
    """Kueue's SchedulingEquivalenceHashing (beta, on by default from Kueue v0.18): a BestEffortFIFO head set
    aside as inadmissible (no fit, or no preemption candidates) sets aside every pending Workload of the same
    shape (priority and pod sets) with it, and those that arrive until the queue's next retry (off: Kueue
    v0.17's one at a time)."""
    tas_recompute_in_cycle: bool = False
    """Kueue's TASRecomputeAssignmentWithinSchedulingCycle (beta, on by default from Kueue v0.19): a head whose
    quota fits but whose nodes an earlier entry of the cycle took is placed again in the same cycle (off:
    Kueue v0.17's skip, "Workload no longer fits after processing another workload")."""
    tas_hostname_prefix_encoding: bool = False
    """Kueue's TASAssignmentsEncodingByHostnamePrefix (beta, on by default from Kueue v0.19): a topology
    assignment written as a slice per run of hosts sharing a name prefix when that is smaller (off: Kueue
    v0.17's one compact slice)."""
    log_cycles: bool = False
    """Log every decision of every cycle, one line each (controlling.ControllerSettings.log_cycles)."""
    write_pending_reasons: bool = False
    """Write why on every head a cycle turns away, before the next cycle, as Kueue does
    (controlling.ControllerSettings.write_pending_reasons): Kueue's pace, at Kueue's write cost."""

    def __post_init__(self) -> None:
        if tuple(self.fair_sharing_strategies) not in FAIR_SHARING_STRATEGY_SETS:
            raise ValueError(f"fair sharing strategies {','.join(self.fair_sharing_strategies)} are not a list Kueue "
                             f"accepts: {' | '.join(','.join(s) for s in FAIR_SHARING_STRATEGY_SETS)}")
        self.core_admission_fair_sharing()
        strategies.get(self.strategy)
        if self.authorization not in AUTHORIZATIONS:
            raise ValueError(f"authorization {self.authorization!r} is unknown: use delegate or off")
        if not 0 <= self.min_cycle_seconds <= MAX_MIN_CYCLE_SECONDS:
            raise ValueError(f"--min-cycle-seconds must be between 0 and {MAX_MIN_CYCLE_SECONDS:g} "
                             f"(got {self.min_cycle_seconds})")
        if not 0 <= self.requeue_batch_seconds <= MAX_MIN_CYCLE_SECONDS:
            raise ValueError(f"--requeue-batch-seconds must be between 0 and {MAX_MIN_CYCLE_SECONDS:g} "
                             f"(got {self.requeue_batch_seconds})")
        if self.max_unwritten < 1:
            raise ValueError(f"--max-unwritten must be >= 1 (got {self.max_unwritten})")
        if self.visibility_port and strategies.get(self.strategy).visibility_api and not (self.tls_cert and self.tls_key):
            raise ValueError("the visibility server needs --tls-cert and --tls-key")

    def core_fair_sharing(self) -> kinds.FairSharing:
        """The core's view of the fair-sharing settings."""
        return kinds.FairSharing(self.fair_sharing,
                                 tuple(kinds.FairSharingStrategy(s) for s in self.fair_sharing_strategies))


    def core_admission_fair_sharing(self) -> kinds.AdmissionFairSharing:
        """The core's view of the admission-fair-sharing settings (ValueError as Kueue's validation)."""
        return kinds.AdmissionFairSharing(self.admission_fair_sharing, self.usage_half_life_seconds,
                                          self.usage_sampling_interval_seconds, tuple(self.resource_weights))


def resource_weights_of(text: str) -> tuple[tuple[str, float], ...]:
    """``cpu=0,nvidia.com/gpu=2`` as (resource, weight) pairs; ValueError names a bad item."""
    pairs = []
    for item in filter(None, (part.strip() for part in text.split(","))):
        resource, sep, weight = item.partition("=")
        try:
            pairs.append((resource.strip(), float(weight)))
        except ValueError:
            sep = ""
        if not sep or not resource.strip():
            raise ValueError(f"resource weight {item!r}: use RESOURCE=WEIGHT, e.g. nvidia.com/gpu=2")
    return tuple(pairs)


def resource_weights_text(weights: tuple[tuple[str, float], ...]) -> str:
    """The inverse of resource_weights_of."""
    return ",".join(f"{resource}={weight!r}" for resource, weight in weights)


@dataclass(frozen=True, slots=True)
class _Option:
    """One setting's command-line form: written by `to_args`, declared to click and read back from it."""

    flag: str
    path: str
    """Where the setting lives ("publish.topn": a field of the nested PublishSettings)."""
    help: str
    kind: object = str
    """A click type for `flag VALUE`; bool: `flag` alone sets the setting to `when_given`."""
    when_given: bool = True
    to_text: Callable[[object], str] = str
    of_text: Callable[[str], object] = lambda value: value
    none_flag: str = ""
    """A flag that stands for None (which `flag VALUE` cannot say), with its help."""
    none_help: str = ""
    required: bool = False

    @property
    def name(self) -> str:
        return self.flag.removeprefix("--").replace("-", "_")


def _strategies_of(text: str) -> tuple[str, ...]:
    return tuple(s for s in text.split(",") if s)


_OPTIONS = (
    _Option("--kubeconfig", "kubeconfig", "Kubeconfig of the cluster to schedule on.", required=True),
    _Option("--strategy", "strategy", "How users learn their queue position.", click.Choice(list(strategies.STRATEGIES))),
    _Option("--topn", "publish.topn", f"cq-status-topn: head size (1-{strategies.MAX_TOPN}).", int),
    _Option("--topn-interval", "publish.topn_interval_seconds", "cq-status-topn: refresh seconds.", float, to_text=repr),
    _Option("--single-object-interval", "publish.single_object_interval_seconds",
            "single-object: rewrite at most every this many seconds.", float, to_text=repr),
    _Option("--status-min-interval", "publish.min_interval_seconds",
            "status-field: recompute positions at most every this many seconds.", float, to_text=repr),
    _Option("--qps", "qps", "Client write QPS (Kueue's default).", float, to_text=repr, none_flag="--no-client-limit",
            none_help="No client-side QPS limit on writes."),
    _Option("--burst", "burst", "Client write burst.", int),
    _Option("--visibility-port", "visibility_port", f"HTTPS port of the visibility API on {BIND} (0: off).", int),
    _Option("--metrics-port", "metrics_port", f"HTTP port of /metrics on {BIND} (0: off).", int),
    _Option("--tls-cert", "tls_cert", "Serving certificate of the visibility API."),
    _Option("--tls-key", "tls_key", "Its key."),
    _Option("--authorization", "authorization", "delegate (SubjectAccessReview) | off", click.Choice(AUTHORIZATIONS)),
    _Option("--max-unwritten", "max_unwritten",
            "Admissions decided ahead of their status writes before the cycle loop waits.", int),
    _Option("--no-page-cache", "page_cache", "Encode every visibility page per request (no cache of unchanged pages).",
            bool, when_given=False),
    _Option("--manage-jobs", "manage_jobs",
            "Queue suspended batch/v1 Jobs that carry kueue.x-k8s.io/queue-name through Workloads.", bool),
    _Option("--fair-sharing", "fair_sharing",
            "Kueue's fairSharing: order by dominant resource share, preempt by the strategies.", bool),
    _Option("--fair-sharing-strategies", "fair_sharing_strategies",
            "Kueue's fairSharing.preemptionStrategies, comma-separated.", to_text=",".join, of_text=_strategies_of),
    _Option("--admission-fair-sharing", "admission_fair_sharing",
            "Kueue's admissionFairSharing: order by LocalQueue usage where a ClusterQueue asks for it.", bool),
    _Option("--usage-half-life-seconds", "usage_half_life_seconds", "admissionFairSharing.usageHalfLifeTime.", float,
            to_text=repr),
    _Option("--usage-sampling-interval-seconds", "usage_sampling_interval_seconds",
            "admissionFairSharing.usageSamplingInterval.", float, to_text=repr),
    _Option("--resource-weights", "resource_weights", "admissionFairSharing.resourceWeights, RESOURCE=WEIGHT,...",
            to_text=resource_weights_text, of_text=resource_weights_of),
    _Option("--write-pending-reasons", "write_pending_reasons",
            "Write QuotaReserved=False with the reason on every head a cycle turns away, one write after another "
            "before the next cycle, as Kueue does (default: only for a namespace mismatch or an inactive "
            "ClusterQueue).", bool),
    _Option("--hold-evicted-quota", "hold_evicted_quota",
            "An eviction marks the Workload Evicted and leaves its admission and quota until someone else "
            "releases them (a job's controller), as Kueue leaves a bare Workload (default: the eviction write "
            "clears the reservation itself).", bool),
    _Option("--preserve-scan-progress", "preserve_scan_progress",
            "Kueue's FlavorFungibilityPreserveScanProgress (on from Kueue v0.19): a head skipped for contention goes "
            "on with the next flavor, and a flavor search one cycle old outlives a quota change.", bool),
    _Option("--preemption-ignores-pods", "preemption_ignores_pods",
            "Kueue v0.19's preemption search: the preemptor's request without the pods resource.", bool),
    _Option("--scheduling-equivalence-hashing", "scheduling_equivalence_hashing",
            "Kueue's SchedulingEquivalenceHashing (on from Kueue v0.18): a BestEffortFIFO head set aside as "
            "inadmissible sets aside every pending Workload of its shape until the next retry.", bool),
    _Option("--tas-recompute-in-cycle", "tas_recompute_in_cycle",
            "Kueue's TASRecomputeAssignmentWithinSchedulingCycle (on from Kueue v0.19): a head whose nodes an "
            "earlier entry of the cycle took is placed again in that cycle.", bool),
    _Option("--tas-hostname-prefix-encoding", "tas_hostname_prefix_encoding",
            "Kueue's TASAssignmentsEncodingByHostnamePrefix (on from Kueue v0.19): topology assignments written "
            "a slice per run of hosts sharing a name prefix when that is smaller.", bool),
    _Option("--log-cycles", "log_cycles", "Log every decision of every scheduling cycle (one INFO line each).", bool),
    _Option("--min-cycle-seconds", "min_cycle_seconds",
            "Each scheduling cycle takes at least this long (another scheduler's pace; 0: as fast as it can).", float,
            to_text=repr),
    _Option("--requeue-batch-seconds", "requeue_batch_seconds",
            "How long after a release of quota the parked workloads of its cohort come back (Kueue's 1 s batch).",
            float, to_text=repr),
    _Option("--parent-pid", "parent_pid", "Stop once this process is no longer the parent (its starter died); 0: no watch.",
            int),
)
"""Every setting's one command-line form (a unit test walks the settings: none is left out)."""


def flag_of(setting: str) -> str:
    """The command-line flag of a SchedulerSettings field (ValueError for one that has none)."""
    for option in _OPTIONS:
        if option.path == setting:
            return option.flag
    raise ValueError(f"no scheduler setting {setting!r}")


def _get(settings: SchedulerSettings, path: str):
    value: object = settings
    for part in path.split("."):
        value = getattr(value, part)
    return value


def to_args(settings: SchedulerSettings) -> list[str]:
    """The `python -m scheduler` arguments that parse back into `settings`."""
    args: list[str] = []
    for option in _OPTIONS:
        value = _get(settings, option.path)
        if option.kind is bool:
            args += [option.flag] if value == option.when_given else []
        elif value is None and option.none_flag:
            args.append(option.none_flag)
        else:
            args += [option.flag, option.to_text(value)]
    return args


def _options(function):
    defaults = SchedulerSettings(kubeconfig="")
    declared = []
    for option in _OPTIONS:
        if option.kind is bool:
            declared.append(click.option(option.flag, option.name, is_flag=True, help=option.help))
            continue
        if option.none_flag:
            declared.append(click.option(option.none_flag, is_flag=True, help=option.none_help))
        if option.required:
            declared.append(click.option(option.flag, option.name, type=option.kind, required=True, help=option.help))
            continue
        default = _get(defaults, option.path)
        text = default if default is None or option.kind is not str else option.to_text(default)
        declared.append(click.option(option.flag, option.name, type=option.kind, default=text, show_default=bool(text),
                                     help=option.help))
    for made in reversed(declared):
        function = made(function)
    return function


def from_options(**options) -> SchedulerSettings:
    """The settings of parsed options; ValueError names what is wrong."""
    fields: dict[str, dict] = {"": {}, "publish": {}}
    for option in _OPTIONS:
        given = options[option.name]
        if option.kind is bool:
            value = option.when_given if given else not option.when_given
        elif option.none_flag and options[option.none_flag.removeprefix("--").replace("-", "_")]:
            value = None
        else:
            value = option.of_text(given) if option.kind is str else given
        group, _, name = option.path.rpartition(".")
        fields[group][name] = value
    return SchedulerSettings(**fields[""], publish=strategies.PublishSettings(**fields["publish"]))


def command(run):
    """The click command of `python -m scheduler`: parses, then calls run(settings)."""

    @click.command(context_settings={"help_option_names": ["-h", "--help"]})
    @_options
    def main(**options) -> None:
        """Run the reference scheduler: controller, visibility API and /metrics."""
        try:
            settings = from_options(**options)
        except ValueError as error:
            raise click.UsageError(str(error)) from None
        run(settings)

    return main


def parse_args(args: list[str]) -> SchedulerSettings:
    """What `python -m scheduler ARGS` would run with (for tests and callers that check a command line)."""
    parsed: list[SchedulerSettings] = []
    command(parsed.append).main(args, prog_name="scheduler", standalone_mode=False)
    return parsed[0]
