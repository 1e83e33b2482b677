"""Run one capacity phase: the search for the case's design, one step at a time.

Every finished step is emitted at once (its row in `capacity_steps`, its Locust tables), so a
Ctrl-C or a failure keeps every finished step. The scheduler is restarted for every step (see
`stepping`); the one this driver started last is stopped when the phase ends.
"""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

from harness.drivers import contract
from harness.drivers.capacity import edges as clusteredges, searching, stepping, tabulating
from harness.errors import KqbenchError
from harness.implementations import names
from harness.load import planning, results
from scheduler.publishing import strategies


def run(context: contract.PhaseContext) -> None:
    phase = context.phase
    section = context.scenario.scheduler
    if section.implementation != names.REFERENCE or context.restart_scheduler is None:
        raise KqbenchError("the capacity search restarts the reference scheduler between steps: "
                           f"set scheduler.implementation to reference (got {section.implementation!r})")
    name = tabulating.design(section.strategy, section.no_client_limit)
    limit = tabulating.client_limit(section.no_client_limit, section.qps, section.burst)
    plan = phase.plan()
    context.emit(tabulating.PLANS, tabulating.plan_row(name, section.strategy, limit, phase.vary, plan,
                                                       phase.hold_seconds, phase.thresholds))
    world = clusteredges.ClusterEdges(context.cluster, context.scenario, context.scheduler, context.out_dir,
                                      phase.reset_timeout_seconds, context.restart_scheduler, run_locust,
                                      context.watch_process, fill_timeout=phase.fill_timeout_seconds,
                                      say=context.say)
    settings = stepping.StepSettings(context.phase_name, phase.hold_seconds, phase.fill_timeout_seconds,
                                     context.scenario.load.rates.create_per_second,
                                     strategies.get(section.strategy).query_mode, phase.thresholds,
                                     churn_pending=phase.churn_pending if phase.bulk else None)

    def emit_load(phase_name: str, tables) -> None:
        for table, frame in tables.items():
            context.emit(table, frame)

    stepper = stepping.Stepper(settings, dataclasses.replace(world.edges(), mark_phase=context.mark_phase),
                               on_tables=emit_load)
    context.say(f"  capacity {name}: {plan.describe()}"
                + (f"; each step bulk-loaded, the churn keeping {phase.churn_pending} of it" if phase.bulk else ""))

    def on_step(step: searching.Step) -> None:
        context.emit(tabulating.STEPS, tabulating.step_row(name, section.strategy, limit,
                                                           stepper.phase_of(step.index, "hold"), step))
        context.say(f"  capacity {name}: step {step.index + 1} ({step.stage}) at {step.load} pending: "
                    f"{progress(step)}")

    search = searching.Search(plan)
    try:
        outcome = searching.run(search, stepper, on_step)
    finally:
        world.close()
    held = "-" if outcome.max_held is None else str(outcome.max_held)
    context.say(f"  capacity {name}: {outcome.conclusion}, held {held}"
                + (f", broke at {outcome.first_broken} on {outcome.breaking_step.verdict.detail}"
                   if outcome.breaking_step else ""))


def progress(step: searching.Step) -> str:
    figures = step.verdict.figures
    shown = [f"{label} {figures[key]:{spec}}" for key, label, spec in (
        ("admissions_per_second", "admissions/s", ".0f"), ("position_writes_per_second", "writes/s", ".0f"),
        ("staleness_p99_seconds", "staleness p99 s", ".2f"), ("query_p99_seconds", "query p99 s", ".2f"))
        if key in figures and not math.isnan(figures[key])]
    return ("held" if step.verdict.held else f"BROKE ({step.verdict.detail})") + (
        f" [{', '.join(shown)}]" if shown else "")


def run_locust(cluster, scenario, pending: int, seconds: float, out_dir: Path) -> stepping.LoadOutcome:
    """Churn keeping `pending` Workloads, position queries and bystanders, for `seconds`, in one Locust run."""
    plan = planning.plan(cluster, scenario, dict(scenario.load.users), seconds, pending)
    if plan is None:
        raise KqbenchError("load.users has no users: a capacity step needs churn, queriers and bystanders")
    result = results.run_load(plan, out_dir)
    return stepping.LoadOutcome(result.history, results.phase_tables(result, out_dir.name))
