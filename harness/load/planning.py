"""A Locust run plan from the scenario's load section (pure but for the kubeconfig read)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from harness.errors import KqbenchError
from harness.kube import kubeconfig
from loadtests import running, settings as ls
from scheduler.publishing import strategies

if TYPE_CHECKING:
    from harness.clusters import state
    from harness.scenarios import sections

USER_CLASSES = {"churn": "WorkloadChurn", "querier": "PositionQuerier", "bystander": "Bystander",
                "listwatch": "Lister"}
"""Scenario `load.users` keys -> the Locust User classes of loadtests' built-in locustfile."""


def refuse_fixed_counts(scenario: sections.ScenarioFields) -> None:
    """KqbenchError when load.mix gives per-class counts: Locust's load is open-ended."""
    if any(m.count is not None for m in scenario.load.mix):
        raise KqbenchError("load.mix gives per-class `count`: that is Kueue's fixed-count run, a phase of "
                           "`kind: kueue-baseline`, not Locust's open-ended fill/churn/query")


def plan(cluster: state.ClusterInfo, scenario: sections.ScenarioFields, users: Mapping[str, int], run_time: float,
         pending: int, limit: int = 100, max_offset: int = 0) -> ls.RunPlan | None:
    """Churn keeping `pending` Workloads, position queries and bystanders for `run_time` seconds, with
    `users` (scenario `load.users` keys -> count); None when no user is left."""
    refuse_fixed_counts(scenario)
    load = scenario.load
    weights = {USER_CLASSES[k]: v for k, v in users.items() if v > 0}
    if not weights:
        return None
    namespace, local_queues = queues_of(scenario)
    mix = mix_of(scenario)
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


def queues_of(scenario: sections.ScenarioFields) -> tuple[str, tuple[str, ...]]:
    """(namespace, LocalQueue names) the load's Workloads go to: the scenario's LocalQueues, in its first namespace."""
    local_queues = tuple(scenario.queues.local_queue_names()) or ("lq-0",)
    namespace = next((ns for lq in scenario.queues.local_queues for ns, _, _ in lq.expanded()), "kqbench-churn")
    return namespace, local_queues


def mix_of(scenario: sections.ScenarioFields) -> tuple[ls.WorkloadKind, ...]:
    """The churn mix of the scenario's load section."""
    return tuple(ls.WorkloadKind(weight=m.weight, priority=m.priority, pods=m.pods, cpu=m.cpu, memory=m.memory,
                                 runtime_seconds=m.runtime_seconds) for m in scenario.load.mix)


def distribution(load: sections.LoadFields) -> dict:
    """RunPlan fields of the scenario's workers: local processes, and remote ones that rejoin every phase."""
    if not load.remote_workers:
        return {"workers": load.workers}
    host, port = ls.host_port(load.master_bind)
    return {"workers": load.workers, "remote_workers": load.remote_workers, "master_bind": host, "master_port": port,
            "worker_start_timeout": load.worker_timeout_seconds, "workers_rejoin": True}
