"""Run one Locust phase: plan it, run Locust in a child process, emit its tables."""

from __future__ import annotations

from harness.drivers import contract
from harness.drivers.locust import backlogfill, phases, planning
from harness.load import results


def run(context: contract.PhaseContext) -> None:
    if isinstance(context.phase, phases.FillPhase) and context.phase.bulk:
        backlogfill.run(context)
        return
    plan = planning.load_plan(context.cluster, context.scenario, context.phase)
    if plan is None:
        return
    for table, frame in results.phase_tables(results.run_load(plan, context.out_dir), context.phase_name).items():
        context.emit(table, frame)
