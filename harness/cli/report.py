"""`kqbench report RUN_DIR...`: one self-contained HTML file, plus perfdata.json and junit.xml."""

from __future__ import annotations

from pathlib import Path

import click

from harness.reporting import rendering


@click.command("report")
@click.argument("run_dirs", nargs=-1, required=True, type=click.Path(file_okay=False, path_type=Path))
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="HTML file to write (default: report.html in the first RUN_DIR).")
def command(run_dirs, out) -> None:
    """Plots and SLO table of one or more runs (several runs are drawn together)."""
    for folder in run_dirs:
        if not folder.is_dir():
            raise click.BadParameter(f"{folder} is not a folder", param_hint="RUN_DIR")
    written = rendering.render(list(run_dirs), out or run_dirs[0] / "report.html")
    click.echo(f"report: {written}")
    click.echo(f"perfdata: {written.parent / 'perfdata.json'}")
    click.echo(f"junit: {written.parent / 'junit.xml'}")
