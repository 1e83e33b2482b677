"""`kqbench run SCENARIO`: a scenario end to end into results/runs/<run-id>/."""

from __future__ import annotations

import sys
from pathlib import Path

import click
from rich.console import Console
from rich.table import Table
from rich.text import Text

from harness.drivers import registry
from harness.progress import LineProgress
from harness.reporting import printing, rendering, verdicts
from harness.results import runs, storing
from harness.running import adapters, runner
from harness.scenarios import loading, needs
from harness.toolchain import building


@click.command("run")
@click.argument("scenario", required=False)
@click.option("--set", "overrides", multiple=True, metavar="PATH=VALUE",
              help="Override a scenario field, e.g. --set scheduler.strategy=aggregated-indexed (repeatable).")
@click.option("--repeat", type=click.IntRange(min=1), default=None,
              help="Run every sweep point N times (the scenario's `repeat`); summaries then carry intervals over repeats.")
@click.option("--out", "out_parent", type=click.Path(file_okay=False, path_type=Path), default=runs.RUNS_DIR,
              show_default=True, help="Parent folder of run folders.")
@click.option("--kubeconfig", default=None, help="Backend `existing`: the cluster's kubeconfig (one on another machine also needs "
              "--set cluster.allow_remote=true).")
@click.option("--no-report", is_flag=True, help="Skip report.html (tables and summary.json are still written).")
@click.option("--dry-run", is_flag=True, help="Validate and list the cases, start nothing.")
@click.option("--resume", "resume_folder", type=click.Path(file_okay=False, exists=True, path_type=Path), default=None,
              help="Run folder of a stopped run: run the cases it left undone (interrupted, skipped) into it, with "
                   "the scenario as run.json holds it; the cases it finished stay as they are.")
def command(scenario, overrides, repeat, out_parent, kubeconfig, no_report, dry_run, resume_folder) -> None:
    """Run SCENARIO (a shipped name like `quick` or a YAML file); tears everything down, also on Ctrl-C."""
    console = Console(stderr=True)
    say = lambda text: console.print(text, highlight=False, markup=False)  # noqa: E731
    options = runner.RunOptions(out_parent, not no_report, kubeconfig)
    if resume_folder is not None:
        if scenario or overrides or repeat or dry_run:
            raise click.UsageError("--resume takes the scenario from the run folder: give no SCENARIO, --set, --repeat "
                                   "or --dry-run with it")
        result = runner.resume(resume_folder, adapters.hooks_for, options, say=say)
    elif scenario is None:
        raise click.UsageError("give a SCENARIO (a shipped name like `quick` or a YAML file), or --resume RUN_FOLDER")
    else:
        loaded = loading.load(scenario, [*overrides, *([f"repeat={repeat}"] if repeat else [])])
        wanted = needs.of(loaded)
        if dry_run:
            for case in loaded.cases:
                click.echo(case.id)
            say(f"needs built: {', '.join(map(str, wanted))}")
            return
        # Before the first cluster: a component built on first use is never built next to a measured case.
        building.ensure(wanted, LineProgress(interval=10.0))
        result = runner.run(loaded, adapters.hooks_for(loaded.scenario), options, say=say)
    table = Table(title=f"run {result.record.run_id}: {result.record.status}")
    for column in ("case", "status", "error"):
        table.add_column(column, overflow="fold")
    for case in result.record.cases:
        table.add_row(Text(case.id), case.status, Text(case.error))
    console.print(table)
    drivers = registry.drivers()
    printing.show(console, rendering.pivot_of([result.folder], drivers), verdicts.questions(drivers))
    click.echo(f"results: {result.folder}")
    if result.report:
        click.echo(f"report: {result.report}")
    storing.push_new_run(result.folder, click.echo)
    if result.interrupted:
        raise KeyboardInterrupt("run interrupted; partial results kept")
    if result.record.status != "ok":
        sys.exit(1)
