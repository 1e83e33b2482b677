"""`kqbench history [METRIC...]`: change points in the nightly history, with their commit ranges and a plot."""

from __future__ import annotations

from pathlib import Path

import click

from harness.errors import KqbenchError
from harness.reporting import historyplot, trends
from harness.results import history, runs


@click.command("history")
@click.argument("metrics", nargs=-1)
@click.option("--scenario", default="quick", show_default=True, help="Whose history: a folder under --dir.")
@click.option("--dir", "history_dir", type=click.Path(file_okay=False, path_type=Path), default=history.HISTORY_DIR,
              show_default=True, help="The history folder (one subfolder per scenario, one file per night).")
@click.option("--plot", "plot_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Where to write the PNG  [default: results/runs/history-SCENARIO.png].")
@click.option("--record", "record_run", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Instead: append this run folder's summary to the history (what ci/nightly.sh does).")
def command(metrics, scenario, history_dir, plot_path, record_run) -> None:
    """Find change points in the nightly series of METRIC (names or fnmatch patterns such as `load.*_p99_ms`;
    all metrics when none are given). Each is printed with the commit range it falls in
    (`git log BEFORE..AFTER`); the plot marks them on every series that has one (or on the named ones)."""
    if record_run is not None:
        click.echo(f"recorded: {history.record(record_run, history_dir)}")
        return
    nights = history.load(history_dir / scenario)
    if not nights:
        raise KqbenchError(f"{history_dir / scenario} holds no nights yet: ci/nightly.sh adds one per run")
    found = trends.findings(nights, metrics)
    click.echo(f"{len(nights)} nights of {scenario} ({nights[0].date[:10]} .. {nights[-1].date[:10]}), "
               f"{len(found.keys)} series, {len(found.found)} change point(s)")
    for change in found.found:
        click.echo(trends.describe(change))
    path = plot_path or runs.RUNS_DIR / f"history-{scenario}.png"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(historyplot.png(found.plotted, found.found, [night.date for night in nights]))
    click.echo(f"plot: {path}" + ("" if found.plotted else " (no series with a change point)"))
