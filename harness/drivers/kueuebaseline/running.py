"""Run a kueue-baseline phase: generate on schedule, then the figures as tables and small files."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from harness.drivers import contract
from harness.drivers.kueuebaseline import declaring, figures as figs, generating, rangespecs, reading, tabulating
from harness.kube import kubeconfig
from harness.load import arrivals
from harness.toolchain import building


def run(context: contract.PhaseContext) -> None:
    say = context.say
    plan = arrivals.from_scenario(context.scenario)
    settings = dataclasses.replace(generating.SETTINGS, max_seconds=float(context.phase.seconds))
    say(f"    kueue-baseline: {plan.total} workloads over {len(plan.queues)} ClusterQueues "
        f"(classes {', '.join(f'{c.name} x{c.count}/{c.interval_seconds:g}s' for c in plan.classes)}), "
        f"bounded at {settings.max_seconds:.0f}s")
    phase = context.phase
    runtimes = declaring.draw(plan, context.scenario.load.mix, phase.declare_runtime, phase.runtime_seed)
    if phase.estimates_every_seconds:
        say(f"    kueue-baseline: reading every ClusterQueue's pending Workloads and their expected admission "
            f"times every {phase.estimates_every_seconds:g}s")
    outcome = generating.generate(kubeconfig.load(context.cluster.kubeconfig), plan, settings, say, runtimes=runtimes,
                                  estimates_every_seconds=phase.estimates_every_seconds)
    created = outcome.creating
    figures = figs.compute(list(outcome.records.values()), plan.nominal_milli, created.start,
                           queue_events=outcome.queue_events)
    lags = sorted(created.lags) or [0.0]
    api_metrics = tabulating.api_time_to_admission(outcome.records, outcome.api_times)
    api_wall = tabulating.api_wall_seconds(outcome.api_times)
    if api_wall is not None:
        api_metrics["wall_seconds"] = api_wall
    extras = {"workloads": float(figures.workloads), "finished": float(figures.finished),
              "complete": float(figures.complete and not created.timed_out),
              "evictions": float(sum(c.evictions for c in figures.classes)),
              "create_failures": float(created.failures),
              "generator_released_evictions": float(outcome.evictions_released), "finish_failures": float(outcome.finish_failures),
              "creation_lag_p50_seconds": lags[len(lags) // 2],
              "creation_lag_max_seconds": lags[-1],
              "cq_usage_from_flavors_usage": float(figures.cq_usage_source == "flavorsUsage")}
    config = context.phase.kueue_config
    bounds = rangespecs.shipped(config, building.module_dir) if context.phase.rangespec else ()
    if not context.phase.rangespec:
        say(f"    kueue-baseline: rangespec off (the shape is not Kueue's {config}): no verdicts")
    elif not bounds:
        say(f"    kueue-baseline: no rangespec for {config} (Kueue {rangespecs.config_version(config)} not in the "
            "Go module cache): no verdicts")
    frame = tabulating.figures_frame(figures, api_metrics, extras, rangespecs.reference(config, bounds))
    classes = tabulating.classes_frame(figures)
    workloads = tabulating.with_entitlements(tabulating.workloads_frame(outcome.records, outcome.api_times,
                                                                        created.start, outcome.runtimes),
                                             context.scenario, plan.nominal_milli)
    evictions = tabulating.evictions_frame(outcome.evictions, outcome.records, created.start)
    out = Path(context.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    frame.to_csv(out / "kueue-baseline.csv", index=False)
    (out / "kueue-baseline.json").write_text(json.dumps(
        {"figures": frame.to_dict(orient="records"), "classes": classes.to_dict(orient="records")}, indent=1))
    (out / "kueue-baseline.md").write_text(tabulating.markdown(frame))
    say(f"    kueue-baseline: wall {figures.wall_seconds:.1f}s, CQ usage {figures.cq_usage_percent:.1f}%, "
        + ", ".join(f"{c.workload_class} {c.mean_time_to_admission_seconds or float('nan'):.1f}s"
                    for c in figures.classes)
        + ("" if figures.complete else f" (INCOMPLETE: {figures.finished}/{plan.total} finished)"))
    tables = [(tabulating.FIGURES_TABLE, frame), (tabulating.CLASSES_TABLE, classes),
              (tabulating.WORKLOADS_TABLE, workloads), (tabulating.EVICTIONS_TABLE, evictions),
              (tabulating.ADMISSIONS_TABLE, tabulating.admissions_frame(outcome.reservations, created.start))]
    reader = outcome.reader
    if reader is not None:
        estimates = tabulating.estimates_frame(reader.entries, created.start)
        tables += [(tabulating.ESTIMATES_TABLE, estimates),
                   (tabulating.ESTIMATE_READS_TABLE, tabulating.estimate_reads_frame(reader.pages))]
        say(f"    kueue-baseline: {reader.reads} reads of the pending Workloads, {len(estimates)} entries, "
            f"{int(estimates['estimated_s'].notna().sum())} with a time"
            + (f", {reader.failures} failed reads (first: {reader.first_failure})" if reader.failures else "")
            + (f", stopped at {reading.MAX_ENTRIES:,} entries" if reader.truncated else "")
            + (f"; the reader failed: {outcome.reader_error}" if outcome.reader_error else ""))
    for name, table in tables:
        # which scheduler made these figures: a sweep over scheduler.implementation puts both in one run
        context.emit(name, table.assign(phase=context.phase_name, implementation=context.scenario.scheduler.implementation))
