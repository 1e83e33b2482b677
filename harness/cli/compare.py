"""`kqbench compare BASE NEW`: key numbers side by side; exit 1 when a threshold is crossed."""

from __future__ import annotations

import sys
from pathlib import Path

import click
from rich.console import Console
from rich.table import Table

from harness.reporting import comparing
from harness.results import summaries

DEFAULT_THRESHOLDS = Path("ci") / "thresholds.yaml"
_STYLE = {"regressed": "bold red", "improved": "green", "ok": "", "missing": "yellow", "new": "cyan", "unchecked": "dim"}


@click.command("compare")
@click.argument("base", type=click.Path(exists=True, path_type=Path))
@click.argument("new", type=click.Path(exists=True, path_type=Path))
@click.option("--thresholds", type=click.Path(dir_okay=False, path_type=Path), default=DEFAULT_THRESHOLDS,
              show_default=True, help="Thresholds YAML (metric patterns, allowed regression, provenance).")
def command(base, new, thresholds) -> None:
    """BASE and NEW are run folders or summary.json files (a baseline is a summary file)."""
    rules = comparing.load_thresholds(thresholds)
    rows = comparing.compare(summaries.read(base), summaries.read(new), rules)
    table = Table(title=f"{base} -> {new}")
    for column in ("metric", "point", "base", "new", "change", "limit"):
        table.add_column(column, justify="right" if column in ("base", "new", "change", "limit") else "left",
                         overflow="fold")
    # The verdict is what a CI log reader greps for: never shortened, whatever the terminal width.
    table.add_column("verdict", no_wrap=True, min_width=len("regressed"))
    for row in rows:
        table.add_row(row.metric, row.point, _num(row.base), _num(row.new),
                      "" if row.change is None else f"{row.change:+.1%}",
                      "" if row.limit is None else f"{row.limit:.0%}", row.verdict, style=_STYLE[row.verdict])
    Console().print(table)
    if comparing.failed(rows):
        regressed = sum(r.verdict == "regressed" for r in rows)
        click.echo(f"FAIL: {regressed} metric(s) crossed their threshold", err=True)
        sys.exit(1)
    click.echo("PASS: no threshold crossed")


def _num(value: float | None) -> str:
    return "" if value is None else f"{value:.4g}"
