"""Run a jobs phase: create and watch, then the figures as tables and small files."""

from __future__ import annotations

import json
import os
from pathlib import Path

from harness.drivers import contract
from harness.drivers.jobs import figures as figs, generating, placing, plans, tabulating
from harness.kube import kubeconfig
from harness.load import creating


def _line(figures: figs.Figures) -> str:
    def p50(dist: figs.Distribution | None) -> str:
        return "n/a" if dist is None else f"{dist.p50:.1f}s"

    bound = figures.sustained.get("pods_bound")
    return (f"    jobs: {figures.jobs_completed}/{figures.jobs} Jobs complete, {figures.pods_succeeded}/{figures.pods} pods "
            f"succeeded in {figures.wall_seconds:.0f}s; pods bound {bound or 0:.1f}/s sustained; p50 to admission "
            f"{p50(figures.job_latency['admitted'])}, to first pod Running {p50(figures.job_latency['first_running'])}, "
            f"to complete {p50(figures.job_latency['completed'])}")


def run(context: contract.PhaseContext) -> None:
    say = context.say
    plan = plans.from_scenario(context.scenario, only=context.phase.local_queues)
    settings = creating.Settings(max_seconds=float(context.phase.seconds), in_flight=context.phase.in_flight)
    say(f"    jobs: {plan.total_jobs} Jobs ({plan.total_pods} pods) over {len(plan.arrivals.queues)} ClusterQueues, "
        f"bounded at {settings.max_seconds:.0f}s")
    context.watch_process("kqbench-generator", os.getpid())
    outcome = generating.generate(kubeconfig.load(context.cluster.kubeconfig), plan, settings, say)
    created = outcome.creating
    figures = figs.compute(outcome.recorder, created.start, created.end)
    lags = sorted(created.lags) or [0.0]
    extras = {"create_failures": created.failures, "timed_out": float(created.timed_out),
              "creation_lag_p50_seconds": lags[len(lags) // 2], "creation_lag_max_seconds": lags[-1],
              "job_events": outcome.recorder.job_events, "pod_events": outcome.recorder.pod_events,
              "workload_events": outcome.recorder.workload_events}
    required = placing.required_levels(plan)
    kept = placing.kept_by_class(outcome.recorder.jobs.values(), outcome.recorder.pods.values(), required,
                                 placing.node_levels(context.scenario.cluster.node_pools()) if required else {})
    jobs = tabulating.jobs_frame(outcome.recorder, created.start)
    more = [*tabulating.placement_rows(kept), *tabulating.per_job_rows(jobs)]
    tables = {tabulating.FIGURES_TABLE: tabulating.figures_frame(figures, extras, more),
              tabulating.RATES_TABLE: tabulating.rates_frame(figures),
              tabulating.JOBS_TABLE: jobs,
              tabulating.PODS_TABLE: tabulating.pods_frame(outcome.recorder, created.start)}
    out = Path(context.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    (out / "jobs-figures.json").write_text(json.dumps(tables[tabulating.FIGURES_TABLE].to_dict(orient="records"), indent=1))
    if created.first_failure:
        say(f"    jobs: {created.failures} creates failed, the first: {created.first_failure}")
    say(_line(figures) + ("" if figures.complete else " (INCOMPLETE)"))
    for name, k in kept.items():
        say(f"    jobs: class {name}: {k.in_one_domain} of {k.judged} Jobs ran in one {required[name]}")
    for name, table in tables.items():
        context.emit(name, table.assign(phase=context.phase_name, implementation=context.scenario.scheduler.implementation))
