"""Run a held-queue phase: fill, every Workload processed, idle, three read arms, admissions.

Each step is a measured sub-phase (`<phase>/fill`, `<phase>/idle`, `<phase>/cq_page_idle`, ...: the run's
measurements split there) and emits its rows as soon as it ends, so a failure or Ctrl-C keeps every step
that finished. The waits are bounded and a bound reached is recorded in the milestone, not raised: how far
a slow scheduler got is the finding. The counters and processes read are behind `Probe`.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

import pandas as pd

from harness.drivers import contract
from harness.drivers.heldqueue import figures as figs, filling, reading, tabulating as tab
from harness.errors import KqbenchError
from harness.implementations import names
from harness.kube import kubeconfig, rest, waiting
from harness.kube.kubeconfig import Credentials
from harness.metrics import catalog, samples, sampling, scraping, summarising
from harness.progress import LineProgress
from harness.scenarios import queueobjects
from harness.toolchain import versions
from loadtests import settings as load_settings, workloads
from scheduler.api import groups

if TYPE_CHECKING:
    from harness.scenarios import sections

POLL_SECONDS = 2.0
SCRAPE_TIMEOUT = 30.0
QUOTA_SLACK = 100
"""Quota raised to every Workload and this many more (the one the churn leaves behind among them)."""
CHURN_KIND = load_settings.WorkloadKind(priority=3, cpu="1", memory="0")


class Probe:
    """What the phase reads: the scheduler's gauges and counters, kube-apiserver's writes, the processes."""

    def __init__(self, context: contract.PhaseContext) -> None:
        endpoint = context.scheduler.metrics_endpoint() if context.scheduler is not None else None
        if endpoint is None:
            raise KqbenchError("held-queue measures the scheduler: the scenario must run one (scheduler.enabled) "
                               "that serves /metrics")
        self.source = endpoint.source
        self.target = (scraping.bearer_target(endpoint.source, endpoint.url, endpoint.bearer_token)
                       if endpoint.bearer_token else scraping.scheduler_target(endpoint.url))
        self.creds = kubeconfig.load(context.cluster.kubeconfig)
        self.pids = {**context.cluster.pids, "scheduler": context.scheduler.pid() or 0, "kqbench": os.getpid()}

    def scheduler_text(self) -> str:
        return scraping.fetch(self.target, SCRAPE_TIMEOUT)

    def pending(self) -> float:
        return samples.metric_sum(self.scheduler_text(), catalog.PENDING[self.source])

    def admitted(self) -> float:
        return samples.metric_sum(self.scheduler_text(), catalog.ADMITTED[self.source])

    def page_counts(self) -> dict[str, float] | None:
        """Ours: the page cache's hits and misses so far (Kueue has none)."""
        if self.source != catalog.SCHEDULER:
            return None
        text = self.scheduler_text()
        return {outcome: samples.metric_sum(text, "kqbench_visibility_pages_total", cache=outcome)
                for outcome in ("hit", "miss")}

    def apiserver_writes(self) -> dict[str, float]:
        status, body = rest.get(self.creds, "/metrics", timeout=60)
        if status != 200:
            raise KqbenchError(f"kube-apiserver's /metrics answered {status}")
        return figs.apiserver_writes(body.decode())

    def processes(self) -> list[summarising.ProcessSample]:
        """Every process's CPU seconds and RSS now, stamped with the instant they were read."""
        return sampling.sample(self.pids, time.monotonic())


def run(context: contract.PhaseContext) -> None:
    phase, name = context.phase, context.phase_name
    section = context.scenario.scheduler
    probe = Probe(context)
    labels = tab.Labels(name, section.implementation,
                        section.page_cache if section.implementation == names.REFERENCE else False)
    cluster_queue, namespace, queues = held_queue(context.scenario)
    page = (f"{groups.VISIBILITY_PATH}/clusterqueues/{cluster_queue}/pendingworkloads"
            f"?limit={phase.page_limit}&offset={phase.workloads // 2}")
    context.say(f"    held-queue: {phase.workloads} Workloads ({phase.create}) in {cluster_queue} over "
                f"{len(queues)} LocalQueues of {namespace}, {section.implementation}"
                + ("" if labels.page_cache or section.implementation != names.REFERENCE else ", no page cache"))
    fill(context, probe, labels, namespace, queues)
    if phase.idle_seconds > 0:
        context.mark_phase(f"{name}/idle")
        before = probe.processes()
        time.sleep(phase.idle_seconds)
        context.emit(tab.FIGURES_TABLE, tab.figures_frame(labels, tab.cores_figures(
            "idle_cores", summarising.cores_between(before, probe.processes()))))
    if phase.read_seconds > 0 and phase.readers > 0:
        churn = reading.Churn(lambda workload: workloads.build(workload, namespace, queues[0], CHURN_KIND, owner=""),
                              filling.collection(namespace), phase.churn_per_second)
        for arm, path, churning in ((tab.IDLE_ARM, page, None), (tab.CHURN_ARM, page, churn),
                                    (tab.CEILING_ARM, groups.VISIBILITY_PATH, None)):
            context.mark_phase(f"{name}/{arm}")
            context.emit(tab.READS_TABLE, read(context, probe, labels, arm, path, churning))
    if phase.admit_seconds > 0:
        admit(context, probe, labels, cluster_queue)


def held_queue(scenario: sections.ScenarioFields) -> tuple[str, str, tuple[str, ...]]:
    """(ClusterQueue, namespace, its LocalQueues there): the scenario's first ClusterQueue holds the Workloads."""
    cluster_queues = scenario.queues.cluster_queue_names()
    if not cluster_queues:
        raise KqbenchError("held-queue: the scenario has no ClusterQueue (queues.cluster_queues)")
    held = cluster_queues[0]
    local = [(ns, lq) for spec in scenario.queues.local_queues for ns, lq, cq in spec.expanded() if cq == held]
    if not local:
        raise KqbenchError(f"held-queue: no LocalQueue points to {held} (queues.local_queues)")
    namespace = local[0][0]
    return held, namespace, tuple(lq for ns, lq in local if ns == namespace)


def fill(context: contract.PhaseContext, probe: Probe, labels: tab.Labels, namespace: str,
         queues: tuple[str, ...]) -> None:
    """Create the Workloads, then wait (bounded) until the scheduler has processed every one; the scheduler's
    CPU, RSS and kube-apiserver's writes over both, per pending Workload."""
    phase, section = context.phase, context.scenario.scheduler
    context.mark_phase(f"{context.phase_name}/fill")
    progress = LineProgress(interval=10.0)
    writes_before, processes_before = probe.apiserver_writes(), probe.processes()
    started = time.monotonic()
    created = filling.fill(context.cluster, filling.batches(phase.workloads, namespace, queues), phase.create,
                           phase.process_seconds, progress)
    as_created = filling.etcd_bytes_per_workload(context.cluster, namespace)
    per_workload = figs.STATUS_WRITES_PER_PENDING[section.implementation]
    # a Kueue-only field (harness.implementations.kueue.fields), in the section when Kueue's are assembled
    if per_workload and versions.reference_settings(getattr(section, "kueue_version", None))[
            "scheduling_equivalence_hashing"]:
        # From v0.18 Kueue sets aside every pending Workload of a no-fit head's shape without a status write
        # each (its scheduling-equivalence hashing): its pending gauge is what it has processed.
        per_workload = 0

    def processed() -> float:
        pending = probe.pending()
        if not per_workload:
            return pending
        marked = figs.delta(probe.apiserver_writes(), writes_before).get("workloads/status", 0.0)
        return min(pending, marked / per_workload)

    found = wait(tab.PROCESSED, phase.workloads, processed, started,
                 max(1.0, started + phase.process_seconds - time.monotonic()), progress)
    processes_after = probe.processes()
    writes = figs.delta(probe.apiserver_writes(), writes_before)
    scheduler = next((s for s in processes_after if s.component == "scheduler"), None)
    cpu = None if scheduler is None else _cpu_seconds(processes_before, scheduler)
    rss = None if scheduler is None else float(scheduler.rss_bytes)
    values: dict[str, float | None] = {
        "created_seconds": round(created, 2), "created_per_second": figs.per(phase.workloads, created, 1),
        "etcd_bytes_per_workload_as_created": as_created,
        "etcd_bytes_per_workload": filling.etcd_bytes_per_workload(context.cluster, namespace),
        "scheduler_cpu_seconds": None if cpu is None else round(cpu, 3), "scheduler_rss_bytes": rss,
        "pending_gauge": probe.pending(),
        "apiserver_writes_per_pending": figs.per(sum(figs.less_fill(
            writes, phase.workloads if phase.create == "posts" else 0).values()), phase.workloads)}
    if cpu is not None and rss is not None:
        values |= figs.per_pending(cpu, rss, phase.workloads)
    context.emit(tab.MILESTONES_TABLE, tab.milestone_frame(labels, found))
    context.emit(tab.FIGURES_TABLE, tab.figures_frame(labels, values))
    context.emit(tab.WRITES_TABLE, tab.writes_frame(labels, tab.PROCESSED, writes))
    context.say(f"    held-queue: {found.done:.0f}/{found.target} processed "
                + (f"{found.seconds:.1f}s after the fill began" if found.reached else
                   f"when the bound stopped the wait at {found.seconds:.0f}s") + f" (created in {created:.1f}s)")


def _cpu_seconds(before: list[summarising.ProcessSample], now: summarising.ProcessSample) -> float:
    """The scheduler's CPU seconds since `before` (all of its life when it was not sampled then)."""
    start = next((s for s in before if s.component == now.component and s.pid == now.pid), None)
    return now.cpu_seconds - (start.cpu_seconds if start is not None else 0.0)


def wait(name: str, target: int, progress_of: Callable[[], float], started: float, bound: float,
         progress: Callable[..., None]) -> figs.Milestone:
    """Poll `progress_of` until it reaches `target` or `bound` seconds pass; where it stood, in seconds since `started`."""
    seen: list[tuple[float, float]] = []

    def at_target() -> bool:
        done = progress_of()
        seen.append((round(time.monotonic() - started, 2), done))
        progress(name, f"{done:.0f}/{target} after {seen[-1][0]:.0f}s", done >= target)
        return done >= target

    try:
        # a scrape a busy scheduler answers late or with an error is read again within the bound
        waiting.poll(at_target, bound, POLL_SECONDS, lambda: f"{name} below {target} after {bound:.0f}s",
                     retry_on=(OSError, KqbenchError))
        reached = True
    except waiting.TimedOut:  # the bound: the milestone says how far it got
        reached = False
    return figs.milestone(name, target, seen, reached)


def read(context: contract.PhaseContext, probe: Probe, labels: tab.Labels, arm: str, path: str,
         churn: reading.Churn | None) -> pd.DataFrame:
    """One read arm: its latencies, the cores each process used over it, ours' page cache, the churn it made."""
    phase = context.phase
    pages_before = probe.page_counts()
    before = probe.processes()
    started = time.monotonic()
    latencies, failed = reading.read_pages(probe.creds.server, probe.creds.ssl_context(), probe.creds.headers(),
                                           phase.readers, phase.read_seconds, path, churn)
    # requests started before the arm's end run on past it: rates are over the time they took
    window = time.monotonic() - started
    cores = summarising.cores_between(before, probe.processes())
    pages_after = probe.page_counts()
    pages = None if pages_before is None or pages_after is None else figs.delta(pages_after, pages_before)
    summary = figs.latency_summary(latencies, window)
    context.say(f"    held-queue {arm}: {summary.requests} requests ({summary.per_second}/s), p99 {summary.p99_ms} ms, "
                f"{failed} failed")
    return tab.read_frame(labels, arm, path, phase.readers, summary, failed, window, cores,
                          None if pages is None else {"hit": pages.get("hit", 0.0), "miss": pages.get("miss", 0.0)},
                          None if churn is None else churn.counts(phase.read_seconds))


def admit(context: contract.PhaseContext, probe: Probe, labels: tab.Labels, cluster_queue: str) -> None:
    """Raise the ClusterQueue's CPU quota to every Workload and count admissions (bounded)."""
    phase = context.phase
    context.mark_phase(f"{context.phase_name}/admit")
    progress = LineProgress(interval=10.0)
    writes_before, first = probe.apiserver_writes(), probe.admitted()
    started = time.monotonic()
    raise_quota(probe.creds, context.scenario.queues, cluster_queue, phase.workloads + QUOTA_SLACK)
    # CPU over the wait alone, each process over its own two readings
    before = probe.processes()
    found = wait(tab.ADMITTED, phase.workloads, lambda: probe.admitted() - first, started, phase.admit_seconds, progress)
    cores = summarising.cores_between(before, probe.processes())
    writes = figs.delta(probe.apiserver_writes(), writes_before)
    values = {"admissions_per_second": figs.per(found.done, found.seconds, 1),
              "apiserver_writes_per_admission": figs.per(sum(writes.values()), found.done),
              **tab.cores_figures("admit_cores", cores)}
    context.emit(tab.MILESTONES_TABLE, tab.milestone_frame(labels, found))
    context.emit(tab.FIGURES_TABLE, tab.figures_frame(labels, values))
    context.emit(tab.WRITES_TABLE, tab.writes_frame(labels, tab.ADMITTED, writes))
    context.say(f"    held-queue: {found.done:.0f} admitted in {found.seconds:.1f}s "
                f"({values['admissions_per_second']}/s)")


def raise_quota(creds: Credentials, queues: sections.QueuesSection, cluster_queue: str, cpu: int) -> None:
    """The scenario's ClusterQueue applied again with `cpu` as the nominal CPU quota of every flavor."""
    for path, obj in queueobjects.manifests(queues):
        if obj["kind"] == "ClusterQueue" and obj["metadata"]["name"] == cluster_queue:
            for group in obj["spec"]["resourceGroups"]:
                for flavor in group["flavors"]:
                    for resource in flavor["resources"]:
                        if resource["name"] == "cpu":
                            resource["nominalQuota"] = str(cpu)
            rest.apply(creds, path, obj)
            return
    raise KqbenchError(f"held-queue: ClusterQueue {cluster_queue} is not among the scenario's queue objects")
