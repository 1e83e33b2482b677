"""`kqbench report RUN_DIR...`: one self-contained HTML file, plus perfdata.json and junit.xml."""

from __future__ import annotations

from pathlib import Path

import click

from rich.console import Console

from harness.drivers import registry
from harness.reporting import printing, rendering, verdicts


@click.command("report")
@click.argument("run_dirs", nargs=-1, required=True, type=click.Path(file_okay=False, path_type=Path))
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="HTML file to write (default: report.html in the first RUN_DIR).")
@click.option("--history", "history_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="A scenario's nightly history (results/history/SCENARIO): adds its series and change points.")
@click.option("--quiet", is_flag=True, help="Do not print the verdict and the side-by-side table.")
def command(run_dirs, out, history_dir, quiet) -> None:
    """Verdict, side-by-side table, figures and SLO checks of one or more runs (several runs: one column per run)."""
    for folder in run_dirs:
        if not folder.is_dir():
            raise click.BadParameter(f"{folder} is not a folder", param_hint="RUN_DIR")
    loaded = rendering.load(list(run_dirs), registry.drivers())
    written = rendering.write(loaded, out or run_dirs[0] / "report.html", history_dir)
    if not quiet:
        printing.show(Console(), rendering.analyse(loaded)[0], verdicts.questions(loaded.drivers))
    click.echo(f"report: {written}")
    click.echo(f"perfdata: {written.parent / 'perfdata.json'}")
    click.echo(f"junit: {written.parent / 'junit.xml'}")
