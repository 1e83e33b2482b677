"""A Locust phase's run plan from the scenario (pure but for the kubeconfig read)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from harness import kubeconfig
from harness.drivers.locust import phases as locustphases
from harness.errors import KqbenchError
from loadtests import running, settings as ls
from scheduler.publishing import strategies

if TYPE_CHECKING:
    from harness.clusters import state
    from harness.scenarios import models

USER_CLASSES = {"churn": "WorkloadChurn", "querier": "PositionQuerier", "bystander": "Bystander",
                "listwatch": "Lister"}
"""Scenario `load.users` keys -> the Locust User classes of loadtests' built-in locustfile."""
DEFAULT_FILL_TARGET = 50
"""Pending Workloads churn keeps when the scenario has no fill phase."""


def load_plan(cluster: state.ClusterInfo, scenario: models.Scenario, phase) -> ls.RunPlan | None:
    """The Locust run plan of one phase; None when the phase drives no load."""
    if any(m.count is not None for m in scenario.load.mix):
        raise KqbenchError("load.mix gives per-class `count`: that is Kueue's fixed-count run, a phase of "
                           "`kind: kueue-baseline`, not Locust's open-ended fill/churn/query")
    load = scenario.load
    users = dict(load.users)
    if isinstance(phase, locustphases.FillPhase):
        users = {"churn": max(1, users["churn"])}
        run_time = min(phase.timeout_seconds, phase.pending / load.rates.create_per_second + 10.0)
        pending = phase.pending
    elif isinstance(phase, locustphases.ChurnPhase):
        run_time, pending = phase.seconds, fill_target(scenario)
    elif isinstance(phase, locustphases.QueryPhase):
        users = {"querier": max(1, users["querier"]), "bystander": users["bystander"]}
        run_time, pending = phase.seconds, fill_target(scenario)
    else:
        return None  # drain drives no load (see DrainPhase)
    weights = {USER_CLASSES[k]: v for k, v in users.items() if v > 0}
    if not weights:
        return None
    limit, max_offset = (phase.limit, phase.max_offset) if isinstance(phase, locustphases.QueryPhase) else (100, 0)
    local_queues = tuple(name for lq in scenario.queues.local_queues for _, name, _ in lq.expanded()) or ("lq-0",)
    namespace = next((ns for lq in scenario.queues.local_queues for ns, _, _ in lq.expanded()), "kqbench-churn")
    mix = tuple(ls.WorkloadKind(weight=m.weight, priority=m.priority, pods=m.pods, cpu=m.cpu, memory=m.memory,
                                runtime_seconds=m.runtime_seconds) for m in load.mix)
    cq = (scenario.queues.cluster_queue_names() or ["cq-0"])[0]
    settings = ls.LoadSettings(
        target=kubeconfig.load_target(cluster.kubeconfig, scenario.cluster.allow_remote),
        churn=ls.ChurnSettings(namespace=namespace, local_queues=local_queues,
                               create_per_second=load.rates.create_per_second, pending_target=max(1, pending),
                               mix=mix).per_user(users.get("churn", 1)),
        query=ls.QuerySettings(mode=strategies.get(scenario.scheduler.strategy).query_mode, cluster_queue=cq, namespace=namespace,
                               local_queue=local_queues[0], per_second=load.rates.query_per_second,
                               limit=limit, max_offset=max_offset),
        bystander=ls.BystanderSettings(per_second=load.rates.bystander_per_second),
    )
    total = sum(weights.values())
    return ls.RunPlan(settings=settings, locustfile=running.BUILTIN_LOCUSTFILE, user_weights=weights, users=total,
                      spawn_rate=max(1.0, float(total)), run_time=float(run_time), **distribution(load))


def distribution(load: models.LoadSection) -> dict:
    """RunPlan fields of the scenario's workers: local processes, and remote ones that rejoin every phase."""
    if not load.remote_workers:
        return {"workers": load.workers}
    host, port = ls.host_port(load.master_bind)
    return {"workers": load.workers, "remote_workers": load.remote_workers, "master_bind": host, "master_port": port,
            "worker_start_timeout": load.worker_timeout_seconds, "workers_rejoin": True}


def fill_target(scenario: models.Scenario) -> int:
    """Pending Workloads of the scenario's last fill phase: what churn and queries keep the queues at."""
    fills = [p.pending for p in scenario.phases.values() if isinstance(p, locustphases.FillPhase)]
    return fills[-1] if fills else DEFAULT_FILL_TARGET
