"""`kqbench scheduler install|run`: the scheduler under test on a cluster, by hand.

`run` starts it exactly as a scenario run does: its options are the scenario's `scheduler:` section,
handed to the implementation's starter (harness.implementations).
"""

from __future__ import annotations

import time
import typing
from pathlib import Path

import click
import pydantic

from harness import apiservice, kubeconfig, schedulerproc
from harness.clusters import state
from harness.errors import KqbenchError
from harness.implementations import registry as implementations
from harness.scenarios import models
from scheduler import settings as scheduler_settings

_DEFAULTS = models.SchedulerSection()


@click.group("scheduler")
def group() -> None:
    """Install the Kueue CRDs and visibility APIService, or run the scheduler under test until Ctrl-C."""


def _cluster(name: str | None, kubeconfig_path: str | None) -> state.ClusterInfo:
    if kubeconfig_path:
        creds = kubeconfig.load(kubeconfig_path)
        return state.ClusterInfo(name=name or "external", backend="existing", kubeconfig=kubeconfig_path,
                                 apiserver_url=creds.server)
    return state.load(name or "kqbench")


@group.command("install")
@click.option("--name", default=None, help="A cluster started by `kqbench cluster up` (default: kqbench).")
@click.option("--kubeconfig", "kubeconfig_path", default=None, help="Or any cluster's kubeconfig.")
@click.option("--visibility-port", type=int, default=0, help="Port the visibility server will listen on.")
def install(name, kubeconfig_path, visibility_port) -> None:
    """Apply the Kueue CRDs and register the visibility APIService (pointing at 127.0.0.1:PORT)."""
    info = _cluster(name, kubeconfig_path)
    creds = kubeconfig.load(info.kubeconfig)
    apiservice.install_crds(creds)
    if visibility_port:
        apiservice.register_visibility(creds, schedulerproc.serving_files(info), visibility_port)
    click.echo(f"installed on {info.apiserver_url}")


@group.command("run")
@click.option("--name", default=None, help="A cluster started by `kqbench cluster up` (default: kqbench).")
@click.option("--kubeconfig", "kubeconfig_path", default=None, help="Or any cluster's kubeconfig.")
@click.option("--implementation", type=click.Choice(list(implementations.implementations())),
              default=_DEFAULTS.implementation, show_default=True,
              help="kueue: the real Kueue manager built by `kqbench toolchain build` (uses --qps/--burst/"
                   "--no-client-limit; positions through its visibility API only).")
@click.option("--strategy", type=click.Choice(list(models.STRATEGIES)), default=_DEFAULTS.strategy,
              show_default=True, help="How users learn their queue position.")
@click.option("--qps", type=float, default=None,
              help=f"Client write QPS (default: the implementation's own, reference {_DEFAULTS.qps:g}; Kueue: as its version ships).")
@click.option("--burst", type=int, default=None,
              help=f"Client write burst (default: the implementation's own, reference {_DEFAULTS.burst}; Kueue: as its version ships).")
@click.option("--no-client-limit", is_flag=True, help="No client-side limit on writes.")
@click.option("--top-n", type=int, default=_DEFAULTS.top_n, show_default=True,
              help="cq-status-topn: entries kept in ClusterQueue status.")
@click.option("--refresh-seconds", type=float, default=_DEFAULTS.refresh_seconds, show_default=True,
              help="cq-status-topn: status refresh period.")
@click.option("--single-object-interval-seconds", type=float, default=_DEFAULTS.single_object_interval_seconds,
              show_default=True, help="single-object: rewrite each queue's object at most this often.")
@click.option("--status-min-interval-seconds", type=float, default=_DEFAULTS.status_min_interval_seconds,
              show_default=True, help="status-field: recompute positions at most this often.")
@click.option("--authorization", type=click.Choice(["delegate", "off"]), default=_DEFAULTS.authorization,
              show_default=True, help="Visibility requests: SubjectAccessReview per user and queue, or none.")
@click.option("--max-unwritten", type=int, default=_DEFAULTS.max_unwritten, show_default=True,
              help="Admissions decided ahead of their status writes before scheduling waits.")
@click.option("--page-cache/--no-page-cache", default=_DEFAULTS.page_cache, show_default=True,
              help="Keep encoded visibility pages until their queue changes (off: encode per request, as Kueue).")
@click.option("--manage-jobs", is_flag=True, default=_DEFAULTS.manage_jobs,
              help="Queue batch/v1 Jobs labelled kueue.x-k8s.io/queue-name (Kueue's job integration).")
@click.option("--fair-sharing", is_flag=True, default=_DEFAULTS.fair_sharing,
              help="Kueue's fairSharing: order by dominant resource share, preempt between queues by strategies.")
@click.option("--fair-sharing-strategies", type=click.Choice(list(typing.get_args(models.FairSharingStrategies))),
              default=_DEFAULTS.fair_sharing_strategies, show_default=True,
              help="fairSharing.preemptionStrategies, comma-separated.")
@click.option("--admission-fair-sharing", is_flag=True, default=_DEFAULTS.admission_fair_sharing,
              help="Kueue's admissionFairSharing: order by LocalQueue usage in ClusterQueues that ask for it.")
@click.option("--usage-half-life-seconds", type=float, default=_DEFAULTS.usage_half_life_seconds, show_default=True,
              help="admissionFairSharing.usageHalfLifeTime.")
@click.option("--usage-sampling-interval-seconds", type=float, default=_DEFAULTS.usage_sampling_interval_seconds,
              show_default=True, help="admissionFairSharing.usageSamplingInterval.")
@click.option("--resource-weights", default="", callback=lambda _c, _p, given: _resource_weights(given),
              metavar="RESOURCE=WEIGHT,...", help="admissionFairSharing.resourceWeights.")
@click.option("--min-cycle-seconds", type=float, default=_DEFAULTS.min_cycle_seconds, show_default=True,
              help="Reference only: each scheduling cycle takes at least this long (another scheduler's pace).")
@click.option("--write-pending-reasons", is_flag=True, default=_DEFAULTS.write_pending_reasons,
              help="Reference only: write why on every head a cycle turns away, before the next cycle, as Kueue does.")
@click.option("--kueue-concurrency", multiple=True, callback=lambda _c, _p, given: _kind_counts(given),
              metavar="KIND.GROUP=N", help="Kueue only: workers of one reconciler over what Kueue ships "
              "(its controller.groupKindConcurrency), e.g. Job.batch=50; repeatable.")
@click.option("--kueue-version", default=None,
              help="Kueue only: a version of harness/versions.toml (default: its default); built by `kqbench toolchain build`.")
@click.option("--kueue-log-level", type=click.IntRange(0, 10), default=None,
              help="Kueue only: its --zap-log-level; 3 logs every scheduling cycle (read back by `kqbench replay`).")
@click.option("--log-dir", type=click.Path(file_okay=False), default=None,
              help="Folder of the scheduler's log (default: the kqbench state folder's logs/).")
def run(name, kubeconfig_path, log_dir, **fields) -> None:
    """Install what is needed and run the scheduler until Ctrl-C (options: the scenario's `scheduler:` section)."""
    section = section_of(fields)
    info = _cluster(name, kubeconfig_path)
    refuse_a_second(info)
    log_dir = state.state_root() / "logs" if log_dir is None else log_dir
    handle = implementations.get(section.implementation).start(info, section, Path(log_dir))
    try:
        click.echo(f"scheduler {section.implementation} ({section.strategy}) on {info.apiserver_url}: "
                   f"metrics {handle.metrics_url()}, pid {handle.pid()}, log in {log_dir} (Ctrl-C stops)", err=True)
        while handle.alive():
            time.sleep(1.0)
        raise KqbenchError(f"the scheduler exited (log in {log_dir})")
    except KeyboardInterrupt:
        pass
    finally:
        handle.stop()


def refuse_a_second(info: state.ClusterInfo) -> None:
    """One scheduler per cluster: two would both decide (admit the same quota twice, evict each other's)."""
    found = implementations.running_on(info)
    if found:
        running = ", ".join(f"{name} pid {pid}" for name, pid in found)
        raise KqbenchError(f"cluster {info.name} already has a scheduler running ({running}): stop it first")


def _kind_counts(given: tuple[str, ...]) -> dict[str, str]:
    counts = {}
    for item in given:
        kind, sep, count = item.partition("=")
        if not sep:
            raise click.BadParameter(f"{item!r}: use KIND.GROUP=N, e.g. Job.batch=50")
        counts[kind.strip()] = count.strip()
    return counts


def _resource_weights(given: str) -> dict[str, float]:
    try:
        return dict(scheduler_settings.resource_weights_of(given))
    except ValueError as error:
        raise click.BadParameter(str(error)) from None


def section_of(fields: dict) -> models.SchedulerSection:
    """The scheduler section of the command's options; a bad value is one line naming the option."""
    try:
        return models.SchedulerSection(**fields)
    except pydantic.ValidationError as error:
        first = error.errors()[0]
        message = first["msg"].removeprefix("Value error, ")
        if not first["loc"]:  # a rule across options
            raise KqbenchError(message) from None
        option = "--" + str(first["loc"][0]).replace("_", "-")
        raise KqbenchError(f"{option}: {message} (got {first.get('input')!r})") from None

