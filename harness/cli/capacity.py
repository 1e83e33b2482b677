"""`kqbench capacity SCENARIO`: where each position design breaks, found by a search per design."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import click
from rich.console import Console
from rich.table import Table

from harness.drivers.capacity import commanding
from harness.results import runs, storing, tables as tidy
from harness.running import adapters, runner
from harness.scenarios import loading, sections

STRATEGY_CHOICES = click.Choice(list(sections.STRATEGIES))


@click.command("capacity")
@click.argument("scenario")
@click.option("--vary", type=click.Choice(["queue.pending"]), default=None,
              help="The load axis raised step by step (pending Workloads; churn goes on at load.rates).")
@click.option("--from", "start", type=click.IntRange(min=1), default=None, help="First load tried (default: the scenario's).")
@click.option("--to", "stop", type=click.IntRange(min=1), default=None, help="Largest load tried (default: the scenario's).")
@click.option("--strategies", default=None, metavar="S1,S2",
              help=f"Designs to search, comma-separated from: {', '.join(sections.STRATEGIES)}. "
                   "aggregated-indexed runs first (the admissions condition compares with it); status-field runs "
                   "twice, with Kueue's client limit and without one. Default: the scenario's sweep.")
@click.option("--bulk/--no-bulk", default=None,
              help="Fill each step by writing its pending straight into etcd (the churn keeping "
                   "phases.<capacity>.churn_pending of its own), past the ~16k a churn fill reaches on 2 cores. "
                   "Default: the scenario's.")
@click.option("--set", "overrides", multiple=True, metavar="PATH=VALUE", help="Override a scenario field (repeatable).")
@click.option("--out", "out_parent", type=click.Path(file_okay=False, path_type=Path), default=runs.RUNS_DIR,
              show_default=True, help="Parent folder of run folders.")
@click.option("--dry-run", is_flag=True, help="List the designs and a duration estimate, start nothing.")
def command(scenario, vary, start, stop, strategies, bulk, overrides, out_parent, dry_run) -> None:
    """Search, per design, the largest load that holds before a break condition (see docs/capacity.md).

    One cluster per design, reused across steps. Each step deletes every Workload and restarts the
    scheduler, fills to the step's pending with churn, queries and bystanders, holds, and is judged.
    Progress is printed per step; Ctrl-C keeps every finished step. Writes capacity.csv and
    report.html into the run folder.
    """
    chosen = tuple(s.strip() for s in strategies.split(",") if s.strip()) if strategies else ()
    unknown = [s for s in chosen if s not in sections.STRATEGIES]
    if unknown:
        raise click.BadParameter(f"{', '.join(unknown)} is not a strategy: use {', '.join(sections.STRATEGIES)}",
                                 param_hint="--strategies")
    base = loading.load(scenario, list(overrides))
    loaded = loading.load(scenario, [*overrides, *commanding.overrides_for(base.scenario, vary, start, stop, chosen, bulk)])
    low, high = commanding.estimate(case.scenario for case in loaded.cases)
    console = Console(stderr=True)
    console.print(f"{len(loaded.cases)} design(s); estimated {low / 60:.0f}-{high / 60:.0f} min of steps "
                  "(holds to `to` .. breaks near it), plus about 1 min per design to start its cluster", highlight=False)
    if dry_run:
        for case in loaded.cases:
            _, phase = commanding.capacity_phase(case.scenario)
            click.echo(f"{case.id}: {phase.plan().describe()}")
        return
    result = runner.run(loaded, adapters.hooks_for(loaded.scenario), runner.RunOptions(out_parent, True),
                        say=lambda text: console.print(text, highlight=False, markup=False))
    stopped = {c.id for c in result.record.cases if c.status in ("interrupted", "skipped")}
    capacity = commanding.write_capacity(tidy.read(result.folder), stopped, result.folder)
    _print(console, capacity)
    click.echo(f"results: {result.folder}")
    if result.report:
        click.echo(f"report: {result.report}")
    storing.push_new_run(result.folder, click.echo)
    if result.interrupted:
        raise KeyboardInterrupt("capacity search interrupted; finished steps kept")
    if result.record.status != "ok":
        sys.exit(1)


def _print(console: Console, capacity) -> None:
    table = Table(title="capacity: largest load held before a break condition")
    for column in ("design", "conclusion", "max held", "first broken", "broke on"):
        table.add_column(column)
    for row in capacity.itertuples(index=False):
        table.add_row(row.design, row.conclusion, _int(row.max_held), _int(row.first_broken), row.broke_on or "-")
    console.print(table)


def _int(value: float) -> str:
    return "-" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.0f}"
