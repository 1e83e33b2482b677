"""`kqbench baseline record RUN` / `kqbench baseline find SCENARIO`: a baseline per machine."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from harness.results import baselining, machines


@click.group("baseline")
def group() -> None:
    """Baselines per machine (results/baselines/machines/<fingerprint>/): compare judges a run's timings only
    against a baseline of the same machine (CPU model, CPUs, memory, kernel), its counts against any."""


_DIR = click.option("--dir", "root", type=click.Path(file_okay=False, path_type=Path), default=baselining.ROOT,
                    show_default=True, help="The baselines folder.")


@group.command("record")
@click.argument("run", type=click.Path(exists=True, file_okay=False, path_type=Path))
@_DIR
def record(run: Path, root: Path) -> None:
    """Make RUN (a finished run folder, all cases ok) the baseline of its scenario on the machine it ran on."""
    click.echo(f"recorded: {baselining.record(root, run)}")


@group.command("find")
@click.argument("scenario")
@_DIR
@click.option("--counts", is_flag=True,
              help="Without a baseline of this machine, the newest of SCENARIO on any machine: what this machine's "
                   "counts are gated against (`kqbench compare` judges only counts across machines).")
def find(scenario: str, root: Path, counts: bool) -> None:
    """Print the path of this machine's baseline of SCENARIO; exit 1 (printing nothing) when it has none."""
    found = (baselining.find_for_counts if counts else baselining.find)(root, scenario, machines.read())
    if found is None:
        sys.exit(1)
    click.echo(found)
