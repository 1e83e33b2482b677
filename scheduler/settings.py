"""The scheduler process's settings, and their one command-line form.

`python -m scheduler` parses its arguments with `command`; whoever starts the process (the
harness, by hand) writes them with `to_args`. Both sides use the option table below, so a setting
cannot reach one and not the other: `parse_args(to_args(s)) == s` is tested for every field.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import click

from scheduler.controller import controlling
from scheduler.core import kinds
from scheduler.publishing import strategies

BIND = "127.0.0.1"
"""Every listener of the scheduler binds here: benchmark traffic stays on the loopback."""
AUTHORIZATIONS = ("delegate", "off")
FAIR_SHARING_STRATEGY_SETS = (
    ("LessThanOrEqualToFinalShare",), ("LessThanInitialShare",), ("LessThanOrEqualToFinalShare", "LessThanInitialShare"),
)
"""The preemptionStrategies lists Kueue's Configuration accepts (pkg/config/validation.go), first the default."""
MAX_MIN_CYCLE_SECONDS = 10.0
"""A slower pace than this is no scheduler's we compare with (Kueue's cycles take milliseconds to a second)."""


@dataclass(frozen=True, slots=True)
class SchedulerSettings:
    kubeconfig: str
    strategy: str = strategies.AGGREGATED_INDEXED
    """How users learn positions: one of scheduler.publishing.strategies.STRATEGIES."""
    publish: strategies.PublishSettings = field(default_factory=strategies.PublishSettings)
    qps: float | None = 50.0
    """Client-side write QPS like Kueue's default (None: no client limit)."""
    burst: int = 100
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


def to_args(settings: SchedulerSettings) -> list[str]:
    """The `python -m scheduler` arguments that parse back into `settings`."""
    publish = settings.publish
    return ["--kubeconfig", settings.kubeconfig, "--strategy", settings.strategy,
            "--topn", str(publish.topn), "--topn-interval", repr(publish.topn_interval_seconds),
            "--single-object-interval", repr(publish.single_object_interval_seconds),
            "--status-min-interval", repr(publish.min_interval_seconds),
            *(["--no-client-limit"] if settings.qps is None else ["--qps", repr(settings.qps)]),
            "--burst", str(settings.burst), "--visibility-port", str(settings.visibility_port),
            "--metrics-port", str(settings.metrics_port), "--tls-cert", settings.tls_cert, "--tls-key", settings.tls_key,
            "--authorization", settings.authorization, "--max-unwritten", str(settings.max_unwritten),
            *([] if settings.page_cache else ["--no-page-cache"]),
            *(["--manage-jobs"] if settings.manage_jobs else []),
            *(["--fair-sharing"] if settings.fair_sharing else []),
            "--fair-sharing-strategies", ",".join(settings.fair_sharing_strategies),
            *(["--admission-fair-sharing"] if settings.admission_fair_sharing else []),
            "--usage-half-life-seconds", repr(settings.usage_half_life_seconds),
            "--usage-sampling-interval-seconds", repr(settings.usage_sampling_interval_seconds),
            "--resource-weights", resource_weights_text(settings.resource_weights),
            *(["--write-pending-reasons"] if settings.write_pending_reasons else []),
            "--min-cycle-seconds", repr(settings.min_cycle_seconds),
            "--parent-pid", str(settings.parent_pid)]


def _options(function):
    defaults, publish = SchedulerSettings(kubeconfig=""), strategies.PublishSettings()
    options = [
        click.option("--kubeconfig", required=True, help="Kubeconfig of the cluster to schedule on."),
        click.option("--strategy", default=defaults.strategy, show_default=True,
                     type=click.Choice(list(strategies.STRATEGIES)), help="How users learn their queue position."),
        click.option("--topn", type=int, default=publish.topn, show_default=True,
                     help="cq-status-topn: head size (1-4000)."),
        click.option("--topn-interval", type=float, default=publish.topn_interval_seconds, show_default=True,
                     help="cq-status-topn: refresh seconds."),
        click.option("--single-object-interval", type=float, default=publish.single_object_interval_seconds,
                     show_default=True, help="single-object: rewrite at most every this many seconds."),
        click.option("--status-min-interval", type=float, default=publish.min_interval_seconds, show_default=True,
                     help="status-field: recompute positions at most every this many seconds."),
        click.option("--qps", type=float, default=defaults.qps, show_default=True,
                     help="Client write QPS (Kueue's default)."),
        click.option("--burst", type=int, default=defaults.burst, show_default=True, help="Client write burst."),
        click.option("--no-client-limit", is_flag=True, help="No client-side QPS limit on writes."),
        click.option("--visibility-port", type=int, default=0,
                     help=f"HTTPS port of the visibility API on {BIND} (0: off)."),
        click.option("--metrics-port", type=int, default=0, help=f"HTTP port of /metrics on {BIND} (0: off)."),
        click.option("--tls-cert", default="", help="Serving certificate of the visibility API."),
        click.option("--tls-key", default="", help="Its key."),
        click.option("--authorization", type=click.Choice(AUTHORIZATIONS), default=defaults.authorization,
                     show_default=True, help="delegate (SubjectAccessReview) | off"),
        click.option("--max-unwritten", type=int, default=defaults.max_unwritten, show_default=True,
                     help="Admissions decided ahead of their status writes before the cycle loop waits."),
        click.option("--no-page-cache", is_flag=True,
                     help="Encode every visibility page per request (no cache of unchanged pages)."),
        click.option("--manage-jobs", is_flag=True,
                     help="Queue suspended batch/v1 Jobs that carry kueue.x-k8s.io/queue-name through Workloads."),
        click.option("--fair-sharing", is_flag=True,
                     help="Kueue's fairSharing: order by dominant resource share, preempt by the strategies."),
        click.option("--fair-sharing-strategies", default=",".join(defaults.fair_sharing_strategies), show_default=True,
                     help="Kueue's fairSharing.preemptionStrategies, comma-separated."),
        click.option("--admission-fair-sharing", is_flag=True,
                     help="Kueue's admissionFairSharing: order by LocalQueue usage where a ClusterQueue asks for it."),
        click.option("--usage-half-life-seconds", type=float, default=defaults.usage_half_life_seconds,
                     show_default=True, help="admissionFairSharing.usageHalfLifeTime."),
        click.option("--usage-sampling-interval-seconds", type=float,
                     default=defaults.usage_sampling_interval_seconds, show_default=True,
                     help="admissionFairSharing.usageSamplingInterval."),
        click.option("--resource-weights", default="", help="admissionFairSharing.resourceWeights, RESOURCE=WEIGHT,..."),
        click.option("--min-cycle-seconds", type=float, default=defaults.min_cycle_seconds, show_default=True,
                     help="Each scheduling cycle takes at least this long (another scheduler's pace; 0: as fast as "
                          "it can)."),
        click.option("--write-pending-reasons", is_flag=True,
                     help="Write QuotaReserved=False with the reason on every head a cycle turns away, one write "
                          "after another before the next cycle, as Kueue does (default: only for a namespace "
                          "mismatch or an inactive ClusterQueue)."),
        click.option("--parent-pid", type=int, default=0,
                     help="Stop once this process is no longer the parent (its starter died); 0: no watch."),
    ]
    for option in reversed(options):
        function = option(function)
    return function


def from_options(kubeconfig: str, strategy: str, topn: int, topn_interval: float, single_object_interval: float,
                 status_min_interval: float, qps: float, burst: int, no_client_limit: bool, visibility_port: int,
                 metrics_port: int, tls_cert: str, tls_key: str, authorization: str,
                 max_unwritten: int, no_page_cache: bool = False, manage_jobs: bool = False,
                 parent_pid: int = 0, fair_sharing: bool = False,
                 fair_sharing_strategies: str = ",".join(FAIR_SHARING_STRATEGY_SETS[2]),
                 write_pending_reasons: bool = False, min_cycle_seconds: float = 0.0,
                 admission_fair_sharing: bool = False, usage_half_life_seconds: float = 0.0,
                 usage_sampling_interval_seconds: float = 300.0, resource_weights: str = "") -> SchedulerSettings:
    """The settings of parsed options; ValueError names what is wrong."""
    return SchedulerSettings(
        kubeconfig=kubeconfig, strategy=strategy,
        publish=strategies.PublishSettings(min_interval_seconds=status_min_interval,
                                           single_object_interval_seconds=single_object_interval,
                                           topn=topn, topn_interval_seconds=topn_interval),
        qps=None if no_client_limit else qps, burst=burst, visibility_port=visibility_port, metrics_port=metrics_port,
        tls_cert=tls_cert, tls_key=tls_key, authorization=authorization, max_unwritten=max_unwritten,
        page_cache=not no_page_cache, manage_jobs=manage_jobs, parent_pid=parent_pid, fair_sharing=fair_sharing,
        fair_sharing_strategies=tuple(s for s in fair_sharing_strategies.split(",") if s),
        write_pending_reasons=write_pending_reasons, min_cycle_seconds=min_cycle_seconds,
        admission_fair_sharing=admission_fair_sharing, usage_half_life_seconds=usage_half_life_seconds,
        usage_sampling_interval_seconds=usage_sampling_interval_seconds,
        resource_weights=resource_weights_of(resource_weights))


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
