"""The capacity search: raise one load axis step by step until a break condition holds.

- `searching`: which load to try next (geometric steps, then bisection), pure.
- `conditions`: the break conditions, their thresholds and their evaluation, pure.
- `figures`: a step's figures from its scrapes, Locust history and process samples, pure.
- `stepping`: one step (reset, fill, hold, judge) over replaceable edges; `edges`: those edges on a cluster.
- `tabulating`, `extrapolating`, `reporting`: the capacity table, the paper model, the report section.
- `running`: the phase driver; `phases`: its phase model (`kind: capacity`).
"""

from harness.drivers import contract
from harness.drivers.capacity import phases, running, tabulating


def _report(tables, context: contract.ReportContext) -> contract.ReportSection | None:
    # imported here, as the other drivers do: matplotlib takes about a second to import, and only the report draws
    from harness.drivers.capacity import reporting

    found = reporting.section(tables, context.out_dir)
    if found is None:
        return None
    body, figures = found
    return contract.ReportSection(body, figures)


def _metrics(tables, case: str) -> list[contract.Metric]:
    """capacity.max_held of this case's design (the largest load that held; higher is better),
    after the post-pass over every case of the run."""
    steps = tables.get(tabulating.STEPS)
    if steps is None or steps.empty or "case" not in steps.columns:
        return []
    designs = set(steps.loc[steps["case"] == case, "design"])
    capacity = tabulating.capacity({name: tables[name] for name in tabulating.TABLES if name in tables})
    return [contract.Metric("capacity.max_held", float(row.max_held), "pending", "higher")
            for row in capacity.itertuples() if row.design in designs and row.max_held == row.max_held]


QUESTIONS = (
    contract.Question("Capacity", "largest pending queue held", ("capacity.max_held",),
                      "each design ran its own loads: the answers below are each design's worst over its own steps, "
                      "not a like-for-like comparison (the capacity section compares them at equal load)", place=10),
)

DRIVER = contract.DriverSpec(name="capacity", phases=phases.PHASES, tables=tabulating.TABLES, run_phase=running.run,
                             summary_metrics=_metrics, report_section=_report, questions=QUESTIONS)
