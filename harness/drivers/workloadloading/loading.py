"""The workload-loading phase's run function: write N Workloads one way, time each stage, count the CPU.

From the phase's start: until the objects were written (the last POST answered / etcd's answer to the last
write), until kube-apiserver served them all (a paginated LIST counts them), until the scheduler under test
held them all pending (its pending gauge for the LocalQueue's ClusterQueue, ours or Kueue's), and the CPU
each process spent meanwhile (the cluster's, the scheduler's, kqbench's own).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable

import orjson

from harness.clusters import bringup, state
from harness.drivers import contract
from harness.drivers.workloadloading import phases as loadphases, tabulating
from harness.errors import KqbenchError
from harness.implementations import contract as implementations
from harness.kube import kubeconfig, posting
from harness.metrics import catalog, samples, sampling, scraping
from harness.progress import LineProgress
from harness.workloads import bulkloading, storing
from loadtests import workloads


def run(context: contract.PhaseContext) -> None:
    phase: loadphases.LoadWorkloadsPhase = context.phase
    info, scheduler = context.cluster, context.scheduler
    cluster_queue = context.scenario.queues.cluster_queue_of(phase.namespace, phase.local_queue)
    if cluster_queue is None:
        raise KqbenchError(f"load-workloads: LocalQueue {phase.namespace}/{phase.local_queue} is not in the "
                           "scenario's queues.local_queues")
    endpoint = scheduler.metrics_endpoint() if scheduler is not None else None
    if endpoint is None:
        raise KqbenchError("load-workloads: the phase waits for the scheduler to hold the Workloads; run one "
                           "(scheduler.enabled) that serves /metrics")
    pending = pending_reader(endpoint, cluster_queue)
    progress = LineProgress(interval=5.0)
    creds = kubeconfig.load(info.kubeconfig)
    bulkloading.ensure_namespace(creds, phase.namespace)
    batch = storing.Batch(count=phase.count, queue=phase.local_queue, namespace=phase.namespace,
                          prefix=context.phase_name)
    scheduler_pid = scheduler.pid()
    pids = {**info.pids, "kqbench": os.getpid(), **({"scheduler": scheduler_pid} if scheduler_pid else {})}
    cpu_before = cpu_seconds(pids)
    pending_before = pending()
    started = time.monotonic()
    written, served = write(phase, info, creds, batch, progress)
    bulkloading.wait_pending(pending, int(pending_before) + phase.count, progress,
                             max(1.0, phase.timeout_seconds - (time.monotonic() - started)))
    held = time.monotonic() - started
    cpu_after = cpu_seconds(pids)
    stage = tabulating.Stages(written=written, served=served, held=held)
    frames = tabulating.frames(context.phase_name, context.scenario.scheduler.implementation, phase, stage,
                               pending_before, {c: cpu_after[c] - cpu_before[c] for c in cpu_after if c in cpu_before},
                               bringup.etcd_db_size(info))
    for table, frame in frames.items():
        context.emit(table, frame)
    context.say(f"{context.phase_name}: {phase.count:,} Workloads by {phase.path}: written {written:.1f}s, served "
                f"{served:.1f}s, held pending {held:.1f}s ({phase.count / held:,.0f}/s)")


def write(phase: loadphases.LoadWorkloadsPhase, info: state.ClusterInfo, creds: kubeconfig.Credentials,
          batch: storing.Batch, progress: LineProgress) -> tuple[float, float]:
    """Write the batch the phase's way; (seconds until written, until kube-apiserver served them all)."""
    if phase.path == "bulk":
        loaded = bulkloading.load(info, batch, progress, timeout=phase.timeout_seconds)
        return loaded.write_seconds, loaded.write_seconds + loaded.served_seconds
    started = time.monotonic()
    jobs = [(workloads.collection_path(phase.namespace), lambda i=i: orjson.dumps(batch.manifest(i)))
            for i in range(phase.count)]
    written = posting.post_all(creds, jobs, phase.concurrency, phase.timeout_seconds,
                               progress=lambda done, total: progress("posts", f"{done}/{total} POSTed"))
    bulkloading.wait_served(creds, 0, phase.count, phase.namespace, batch.selector(), progress,
                            max(1.0, phase.timeout_seconds - written))
    return written, time.monotonic() - started


def pending_reader(endpoint: implementations.MetricsEndpoint, cluster_queue: str) -> Callable[[], float]:
    """A function reading the scheduler's pending Workloads in one ClusterQueue from its /metrics."""
    target = (scraping.bearer_target(endpoint.source, endpoint.url, endpoint.bearer_token) if endpoint.bearer_token
              else scraping.scheduler_target(endpoint.url))

    def read() -> float:
        return samples.metric_sum(scraping.fetch(target, 10.0), catalog.PENDING[endpoint.source],
                                  cluster_queue=cluster_queue)

    return read


def cpu_seconds(pids: dict[str, int]) -> dict[str, float]:
    """CPU seconds (user + system) each live process has spent so far."""
    return {sample.component: sample.cpu_seconds for sample in sampling.sample(pids, 0.0)}
