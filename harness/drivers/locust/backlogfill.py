"""A fill phase with `bulk: true`: the pending Workloads written straight into etcd as a backlog, a keeper
started for the rest of the case, and the phase over once the scheduler holds them all.

harness.workloads.backlog says what a backlog is and why; harness.workloads.bulkloading writes a batch
and waits until kube-apiserver serves it. The phase emits one `backlog` row per batch: how long writing,
serving and the scheduler's taking them took.
"""

from __future__ import annotations

import time

import pandas as pd

from harness.drivers import contract
from harness.errors import KqbenchError
from harness.kube import kubeconfig, waiting
from harness.load import planning
from harness.metrics import catalog, samples, scraping
from harness.progress import LineProgress
from harness.workloads import backlog, bulkloading, keeping

TABLE = "backlog"
COLUMNS = ["phase", "queue", "workloads", "write_seconds", "served_seconds", "held_seconds", "value_bytes"]
POLL_SECONDS = 1.0


def run(context: contract.PhaseContext) -> None:
    phase, scenario = context.phase, context.scenario
    namespace, queues = planning.queues_of(scenario)
    queues = tuple(q for q in queues if q in phase.local_queues) if phase.local_queues else queues
    batches = backlog.batches(phase.pending, namespace, queues, planning.mix_of(scenario))
    if not batches:
        return
    progress = LineProgress(interval=5.0)
    creds = kubeconfig.load(context.cluster.kubeconfig)
    bulkloading.ensure_namespace(creds, namespace)
    keeper = keeping.Keeper(creds, namespace, say=context.say)  # before the load: no admission goes unseen
    context.on_teardown("backlog keeper stop", keeper.stop_and_say)
    deadline = time.monotonic() + phase.timeout_seconds
    rows = []
    for batch in batches:
        report = bulkloading.load(context.cluster, batch, progress, timeout=max(1.0, deadline - time.monotonic()))
        rows.append([context.phase_name, batch.queue, batch.count, report.write_seconds, report.served_seconds,
                     None, report.value_bytes])
    held = _wait_held(context, phase.pending, keeper, deadline, progress)
    for row in rows:
        row[5] = held
    context.emit(TABLE, pd.DataFrame(rows, columns=COLUMNS))
    context.say(f"backlog: {phase.pending} Workloads in {len(batches)} LocalQueue(s) of {namespace}, "
                f"written in {sum(r[3] for r in rows):.1f}s, held by the scheduler {held:.1f}s after they were served")


def _wait_held(context: contract.PhaseContext, expected: int, keeper: keeping.Keeper, deadline: float,
               progress) -> float:
    """Seconds until the scheduler holds the whole backlog: pending + holding quota + finished by the keeper."""
    endpoint = context.scheduler.metrics_endpoint() if context.scheduler is not None else None
    if endpoint is None:
        return float("nan")  # no scheduler to ask (a run without one): served is all there is
    target = (scraping.bearer_target(endpoint.source, endpoint.url, endpoint.bearer_token) if endpoint.bearer_token
              else scraping.scheduler_target(endpoint.url))
    started = time.monotonic()
    seen = [0.0]

    def held() -> bool:
        text = scraping.fetch(target, 10.0)
        seen[0] = (samples.metric_sum(text, catalog.PENDING[endpoint.source])
                   + samples.metric_sum(text, catalog.HOLDING[endpoint.source]) + keeper.ledger.finished)
        progress("backlog", f"the scheduler holds {seen[0]:.0f}/{expected}", seen[0] >= expected)
        return seen[0] >= expected

    waiting.poll(held, timeout=max(1.0, deadline - time.monotonic()), interval=POLL_SECONDS,
                 retry_on=(KqbenchError,),
                 failure=lambda: f"the scheduler holds {seen[0]:.0f} of the {expected} backlog Workloads at the "
                                 "fill's timeout_seconds (its log says why; raise the timeout for larger fills)")
    return time.monotonic() - started
