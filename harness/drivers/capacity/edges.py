"""The capacity step's I/O on a real cluster: delete Workloads, restart the scheduler, load a backlog
straight into etcd, scrape, sample processes, run Locust. Everything here is bounded in time; the
scheduler and the backlog keeper this module starts are stopped by `close()`, which the driver calls
in a `finally`.
"""

from __future__ import annotations

import dataclasses
import json
import time
import urllib.parse
from pathlib import Path

from harness.clusters import state
from harness.drivers.capacity import stepping
from harness.errors import KqbenchError
from harness.kube import kubeconfig, rest, waiting
from harness.load import planning
from harness.metrics import catalog, samples, sampling, scraping
from harness.progress import LineProgress
from harness.workloads import backlog, bulkloading, keeping
from scheduler.api import groups

WORKLOADS = groups.PATH + "/namespaces/{namespace}/workloads"
TOP_UPS = 3
TOP_UP_SHARE = 0.02
"""A backlog short of its count by more than this share (admitted at once) is topped up."""


class ClusterEdges:
    """One design's cluster and scheduler across the steps of its search."""

    def __init__(self, cluster: state.ClusterInfo, scenario, scheduler, out_dir: Path, reset_timeout: float,
                 start_scheduler, run_load, watch_process=lambda component, pid: None,
                 fill_timeout: float = 900.0, say=print) -> None:
        self.cluster = cluster
        self.scenario = scenario
        self.out_dir = Path(out_dir)
        self.reset_timeout = reset_timeout
        self.fill_timeout = fill_timeout
        self.say = say
        self.keeper: keeping.Keeper | None = None
        self.creds = kubeconfig.load(cluster.kubeconfig)
        self._start_scheduler = start_scheduler
        self._run_load = run_load
        self._watch_process = watch_process
        self.original = scheduler
        self.scheduler = scheduler
        self.metrics_port = _port(scheduler.metrics_url() if scheduler else None)
        """Every scheduler of this search serves /metrics here, where the run's collector scrapes."""
        self.restarts = 0
        self.namespaces = sorted({ns for lq in scenario.queues.local_queues for ns, _, _ in lq.expanded()}) or [
            "kqbench-churn"]
        self.apiserver = [t for t in scraping.targets(cluster) if t.source == catalog.APISERVER]

    def edges(self) -> stepping.Edges:
        return stepping.Edges(reset=self.reset, scrape=self.scrape, processes=self.processes, pending=self.pending,
                              run_load=self.run_load, mark_phase=lambda name: None,
                              load_backlog=self.load_backlog if self.cluster.etcd_url else None,
                              machine_busy=stepping.machine_busy_seconds)

    # -- reset ------------------------------------------------------------------------------

    def reset(self) -> None:
        """Stop the scheduler, delete every Workload (one delete-collection per namespace, then
        wait until none is left), then start the scheduler again on the same /metrics port (the
        run's collector keeps scraping it; its counters restart from zero, which the collector reads
        as a restart). Stopping first matters: a status-field scheduler without a client limit
        keeps the apiserver busy with position writes for the Workloads being deleted, and the
        delete then outlasted 300 s at 4000 pending."""
        if self.scheduler is not None:
            self.scheduler.stop()
        self._stop_keeper()
        deadline = time.monotonic() + self.reset_timeout
        for namespace in self.namespaces:
            try:
                rest.request(self.creds, "DELETE", WORKLOADS.format(namespace=namespace),
                             timeout=max(1.0, min(60.0, deadline - time.monotonic())))
            except OSError:
                pass  # a delete-collection that outlives its request goes on in the apiserver: wait below
        waiting.poll(lambda: not self._remaining(), timeout=max(1.0, deadline - time.monotonic()), interval=1.0,
                     failure=lambda: f"Workloads still present in {', '.join(self._remaining())} after "
                                     f"{self.reset_timeout:.0f}s of deleting: raise reset_timeout_seconds")
        self._start()

    def _remaining(self) -> list[str]:
        left = []
        for namespace in self.namespaces:
            try:
                status, body = rest.get(self.creds, WORKLOADS.format(namespace=namespace) + "?limit=1", timeout=30)
            except OSError:
                left.append(namespace)
                continue
            if status != 200 or json.loads(body).get("items"):
                left.append(namespace)
        return left

    def _start(self) -> None:
        self.scheduler = None  # stopped by reset: a failed start leaves none to stop twice
        self.scheduler = self._start_scheduler(self.metrics_port)
        self.restarts += 1
        if self.scheduler.pid():  # the run's process samples follow the new scheduler
            self._watch_process("scheduler", self.scheduler.pid())

    def close(self) -> None:
        """Stop the scheduler this driver started (the runner stops the one it started) and the keeper."""
        self._stop_keeper()
        if self.scheduler is not None and self.scheduler is not self.original:
            self.scheduler.stop()

    # -- bulk fill --------------------------------------------------------------------------

    def load_backlog(self, count: int) -> float:
        """Write `count` pending Workloads straight into etcd as a backlog beneath the churn, a keeper
        finishing the admitted ones, and wait until the scheduler holds them all; then top up, up to
        TOP_UPS times, what it admitted at once (free quota takes a batch's first Workloads, and unlike a
        churn fill nothing replaces them). Returns the seconds."""
        namespace, queues = planning.queues_of(self.scenario)
        started = time.monotonic()
        deadline = started + self.fill_timeout
        progress = LineProgress(interval=5.0)
        bulkloading.ensure_namespace(self.creds, namespace)
        self.keeper = keeping.Keeper(self.creds, namespace, say=self.say, refill=True)  # before the load: no admission unseen
        keeper, written, missing = self.keeper, 0, count
        for round_ in range(TOP_UPS + 1):
            for batch in backlog.batches(missing, namespace, queues, planning.mix_of(self.scenario)):
                batch = dataclasses.replace(batch, prefix=f"{batch.prefix}-{self.restarts}-{round_}")
                bulkloading.load(self.cluster, batch, progress, timeout=max(1.0, deadline - time.monotonic()))
            written += missing
            bulkloading.wait_pending(lambda: self._held() + keeper.ledger.finished, written, progress,
                                     timeout=max(1.0, deadline - time.monotonic()))
            missing = count - int(self._pending_now())
            if missing <= TOP_UP_SHARE * count:
                break
        seconds = time.monotonic() - started
        self.say(f"  backlog: {written} Workloads written, {count} of them kept pending, in {seconds:.1f}s")
        return seconds

    def _pending_now(self) -> float:
        pending = self.pending()
        if pending is None:
            raise KqbenchError("the scheduler's /metrics did not answer after the backlog load")
        return pending

    def _held(self) -> float:
        """Workloads the scheduler holds, pending or holding quota (an admitted backlog Workload counts)."""
        text = self._metrics_text()
        if text is None:
            raise OSError("the scheduler's /metrics did not answer")  # wait_pending retries until its timeout
        return (samples.metric_sum(text, catalog.PENDING[catalog.SCHEDULER])
                + samples.metric_sum(text, catalog.HOLDING[catalog.SCHEDULER]))

    def _stop_keeper(self) -> None:
        if self.keeper is not None:
            keeper, self.keeper = self.keeper, None
            keeper.stop_and_say()

    # -- measuring --------------------------------------------------------------------------

    def scrape(self) -> dict[str, samples.Scrape]:
        found = {}
        targets = list(self.apiserver)
        if self.scheduler is not None and self.scheduler.metrics_url():
            targets.append(scraping.scheduler_target(self.scheduler.metrics_url()))
        for target in targets:
            t = time.monotonic()
            try:
                found[target.source] = samples.parse(scraping.fetch(target, 30.0), target.source, t)
            except KqbenchError as error:
                found[target.source] = samples.failed(target.source, t, str(error))
        return found

    def processes(self):
        pids = dict(self.cluster.pids)
        if self.scheduler is not None and self.scheduler.pid():
            pids["scheduler"] = self.scheduler.pid()
        return sampling.sample(pids, time.monotonic())

    def pending(self) -> float | None:
        text = self._metrics_text()
        return None if text is None else samples.metric_sum(text, catalog.PENDING[catalog.SCHEDULER])

    def _metrics_text(self) -> str | None:
        """The scheduler's /metrics now (None when there is none or it does not answer)."""
        if self.scheduler is None or not self.scheduler.metrics_url():
            return None
        try:
            return scraping.fetch(scraping.scheduler_target(self.scheduler.metrics_url()), 10.0)
        except KqbenchError:
            return None

    def run_load(self, pending: int, seconds: float, name: str) -> stepping.LoadOutcome:
        return self._run_load(self.cluster, self.scenario, pending, seconds, self.out_dir / name)


def _port(url: str | None) -> int:
    """The port of a /metrics URL (0: pick a free one)."""
    return urllib.parse.urlparse(url).port or 0 if url else 0
