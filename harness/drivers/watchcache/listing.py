"""The watch-cache driver's run function: `populate` and `list` phases.

A `list` phase is one Locust run of ModeListers (loadtests.users.modelisting) in one mode; its
tables are the usual load tables plus one `list_phases` row saying what the phase was (mode, scope,
arm, version, gates), which is all `tabulating` needs to turn a run into one row per mode and arm.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd

from harness.clusters import spec as clusterspecs
from harness.drivers import contract
from harness.drivers.watchcache import phases as wcphases, populating
from harness.kube import kubeconfig
from harness.load import planning, results
from harness.progress import LineProgress
from loadtests import listgroups, settings as ls

if TYPE_CHECKING:
    from harness.clusters import state
    from harness.scenarios import sections

POPULATE_TABLE = "populate"
LIST_PHASES_TABLE = "list_phases"
LIST_PHASE_COLUMNS = ("phase", "resource", "mode", "scope", "workers", "seconds", "page_size", "gzip", "arm",
                      "k8s_version", "feature_gates", "apiserver_args", "stopped_by", "load_seconds")


def plan(cluster: state.ClusterInfo, scenario: sections.ScenarioFields, phase: wcphases.ListPhase) -> ls.RunPlan:
    """The Locust run plan of a list phase (pure but for the kubeconfig read)."""
    namespaced = phase.resource != "nodes" and phase.scope == "namespace"
    listwatch = ls.ListWatchSettings(
        resource=phase.resource, namespace=populating.GROUP if namespaced else None,
        list_modes=() if phase.mode == "watchlist" else (phase.mode,), watch_modes=("watchlist",),
        page_size=phase.page_size, per_second=phase.per_second,
        # the server ends a watch-list at timeoutSeconds even mid-way: leave the initial events time
        hold_seconds=int(max(60, phase.seconds * 2)))
    settings = ls.LoadSettings(
        target=kubeconfig.load_target(cluster.kubeconfig, scenario.cluster.allow_remote),
        client=ls.ClientSettings(network_timeout=max(120.0, phase.seconds * 2), gzip=phase.gzip),
        listwatch=listwatch)
    return ls.RunPlan(settings=settings, locustfile=listgroups.LOCUSTFILE, user_weights={listgroups.USER_CLASS: phase.workers},
                      users=phase.workers, spawn_rate=float(phase.workers), run_time=float(phase.seconds),
                      **planning.distribution(scenario.load))


def phase_row(cluster: state.ClusterInfo, scenario: sections.ScenarioFields, phase_name: str, phase: wcphases.ListPhase,
              summary: dict) -> dict:
    """What a list phase was, for the report (pure)."""
    return {"phase": phase_name, "resource": phase.resource, "mode": phase.mode,
            "scope": "cluster" if phase.resource == "nodes" else phase.scope, "workers": phase.workers,
            "seconds": phase.seconds, "page_size": phase.page_size, "gzip": phase.gzip,
            "arm": scenario.arm or "default", "k8s_version": cluster.versions.get("kubernetes", ""),
            "feature_gates": clusterspecs.format_feature_gates(dict(scenario.cluster.feature_gates)),
            "apiserver_args": ",".join(f"{k}={v}" for k, v in sorted(scenario.cluster.apiserver_args.items())),
            "stopped_by": str(summary.get("stopped_by", "")), "load_seconds": float(summary.get("load_seconds", 0.0))}


def run(context: contract.PhaseContext) -> None:
    """Run a populate or list phase, emitting its tables (the runner adds `case`)."""
    phase, phase_name = context.phase, context.phase_name
    if isinstance(phase, wcphases.PopulatePhase):
        context.emit(POPULATE_TABLE, _populate(context.cluster, phase_name, phase))
        return
    result = results.run_load(plan(context.cluster, context.scenario, phase), context.out_dir)
    for table, frame in results.phase_tables(result, phase_name).items():
        context.emit(table, frame)
    context.emit(LIST_PHASES_TABLE, pd.DataFrame([phase_row(context.cluster, context.scenario, phase_name, phase,
                                                            result.summary)], columns=list(LIST_PHASE_COLUMNS)))


def _populate(cluster: state.ClusterInfo, phase_name: str, phase: wcphases.PopulatePhase) -> pd.DataFrame:
    progress = LineProgress(interval=10.0)
    report = populating.populate(
        kubeconfig.load(cluster.kubeconfig), phase.namespaces, phase.per_namespace, phase.bytes,
        concurrency=phase.concurrency, timeout=phase.timeout_seconds,
        progress=lambda done, total: progress("configmaps", f"created {done}/{total}", done == total))
    row = {"phase": phase_name, "namespaces": report.namespaces, "objects": report.objects,
           "bytes": report.bytes, "seconds": report.seconds, "objects_per_second": report.objects_per_second}
    return pd.DataFrame([row])
