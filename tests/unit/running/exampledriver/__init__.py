"""A test-only experiment: what a new driver is, one folder and one registry line.

It counts `steps` in a phase of `kind: example`, emits one row per step into its own table (tagged
with the first load.mix entry's `example_tag`, a mix field of its own), and gives the summary, the verdict block, the figures, perfdata.json and the report a piece each,
all through harness.drivers.contract (the runner, the summaries and the report are not told of it).
"""

from __future__ import annotations

from typing import Literal

import pandas as pd
from pydantic import PositiveInt

from harness.drivers import contract
from harness.scenarios import base

TABLE = "example_steps"
METRIC = "example.steps"


class ExamplePhase(base.Model):
    kind: Literal["example"] = "example"
    steps: PositiveInt = 2


class ExampleMixFields(base.Model):
    example_tag: str = ""
    """What its rows are tagged with."""


def run(context: contract.PhaseContext) -> None:
    for step in range(context.phase.steps):
        context.mark_phase(f"{context.phase_name}/step-{step}")
        context.emit(TABLE, pd.DataFrame([{"phase": context.phase_name, "step": step,
                                           "tag": context.scenario.load.mix[0].example_tag}]))


def metrics(tables: contract.Tables, case: str) -> list[contract.Metric]:
    steps = tables.get(TABLE)
    if steps is None or steps.empty:
        return []
    return [contract.Metric(METRIC, float((steps["case"] == case).sum()), "steps", "higher")]


def report(tables: contract.Tables, context: contract.ReportContext) -> contract.ReportSection | None:
    steps = tables.get(TABLE)
    return None if steps is None else contract.ReportSection(f"<h2>Example</h2><p>{len(steps)} steps counted.</p>")


def steps_per_design(tables, cases: pd.DataFrame, colours) -> bytes | None:
    from harness.reporting import plotting  # matplotlib: only the report draws

    steps = tables.get(TABLE)
    if steps is None or steps.empty:
        return None
    per_case = steps.groupby("case", as_index=False)["step"].count()
    return plotting.by_design(plotting.case_points(cases, per_case, "step"), cases, colours, "step",
                              "steps counted", "steps")


def perfdata(tables: contract.Tables, run_id: str) -> list[dict]:
    steps = tables.get(TABLE)
    return [] if steps is None else [{"data": {"Count": float(len(steps))}, "unit": "steps",
                                      "labels": {"Metric": "ExampleSteps", "RunID": run_id}}]


DRIVER = contract.DriverSpec(
    name="example", phases=(ExamplePhase,), mix_fields=(ExampleMixFields,), tables=(TABLE,), run_phase=run,
    summary_metrics=metrics,
    report_section=report, perfdata_items=perfdata,
    questions=(contract.Question("Counting", "steps counted", (METRIC,), place=70),),
    report_figures=lambda: (contract.Figure("Steps counted per design", steps_per_design, place=60),))
