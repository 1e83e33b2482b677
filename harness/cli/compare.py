"""`kqbench compare BASE NEW`: each metric's verdict with its interval; exit 1 only on `regressed`.
`kqbench compare --ab BASE_SHA`: run a scenario with BASE_SHA's code and with the working code, then compare."""

from __future__ import annotations

import json
import sys
from datetime import datetime, timezone
from pathlib import Path

import click
from rich import markup
from rich.console import Console
from rich.table import Table

from harness.errors import KqbenchError
from harness.reporting import comparing
from harness.results import baselining, runs, summaries
from harness.running import abtesting
from harness.scenarios import loading

DEFAULT_THRESHOLDS = Path("ci") / "thresholds.yaml"
_STYLE = {"regressed": "bold red", "improved": "green", "same": "", "inconclusive": "yellow", "missing": "yellow",
          "new": "cyan", "unchecked": "dim"}
_AB_ONLY = ("scenario", "overrides", "repeat", "out")


@click.command("compare")
@click.argument("base", type=click.Path(exists=True, path_type=Path), required=False)
@click.argument("new", type=click.Path(exists=True, path_type=Path), required=False)
@click.option("--thresholds", type=click.Path(dir_okay=False, path_type=Path), default=DEFAULT_THRESHOLDS,
              show_default=True, help="Thresholds YAML (metric patterns, their kind, smallest change that matters, "
                                      "provenance).")
@click.option("--any-machine", is_flag=True,
              help="Judge timings too when the two ran on different machines (for reading; the gate judges only "
                   "counts).")
@click.option("--json", "json_out", type=click.Path(dir_okay=False, path_type=Path),
              help="Also write every metric's verdict and the counts to this JSON file (what a README table reads).")
@click.option("--ab", "ab", metavar="BASE_SHA",
              help="Instead of BASE NEW: run --scenario with the code of commit BASE_SHA (a git worktree in a "
                   "temporary folder, removed after) and then with the working code, on this machine, and compare "
                   "the two runs.")
@click.option("--scenario", default=None, help="With --ab: the scenario both sides run.  [default: quick]")
@click.option("--set", "overrides", multiple=True, metavar="PATH=VALUE",
              help="With --ab: a scenario override both sides get (repeatable), as `kqbench run --set`.")
@click.option("--repeat", type=click.IntRange(min=1), default=None,
              help="With --ab: repeats of every sweep point on each side (intervals over repeats).")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="With --ab: folder of the two runs (base/, head/).  [default: results/runs/ab-<sha12>-<time>]")
def command(base, new, thresholds, any_machine, json_out, ab, scenario, overrides, repeat, out) -> None:
    """BASE and NEW are run folders or summary.json files (a baseline is a summary file).

    A metric is `regressed` only when its change is beyond its threshold, beyond what the values'
    resolution allows, and significant (the 95% interval of the change excludes 0); otherwise beyond
    its threshold it is `inconclusive`. Intervals print as [low, high] with n, the samples behind them.
    Summaries of two machines (their fingerprints differ) are judged on counts only: each threshold rule's
    `kind` says whether it is a `count` (the same on any machine) or a `timing`, whose rows are then
    `unchecked` (test `other machine`).

    With --ab BASE_SHA (no BASE NEW): both sides run here, one after the other, and everything is judged,
    timings too. The base's code runs with this environment's packages (PYTHONPATH), so its dependencies
    must match; uncommitted changes of the working code are part of the head (and said).
    Example: kqbench compare --ab origin/main --scenario quick --repeat 3"""
    if ab is not None:
        if base is not None or new is not None:
            raise click.UsageError("--ab runs both sides itself: give BASE_SHA and no BASE NEW")
        scenario = scenario or "quick"
        loading.load(scenario, list(overrides))  # a typo is one line now, not after the base's worktree and run
        stamp = datetime.now(timezone.utc).strftime("%Y%m%d-%H%M%S")
        out = out or runs.RUNS_DIR / f"ab-{''.join(c for c in ab if c.isalnum())[:12]}-{stamp}"
        base, new = abtesting.run(ab, scenario, overrides, repeat, out, lambda text: click.echo(text, err=True))
    else:
        given = [name for name, value in zip(_AB_ONLY, (scenario, overrides, repeat, out)) if value]
        if given:
            raise click.UsageError(f"--{given[0].replace('overrides', 'set')} goes with --ab BASE_SHA only")
        if base is None or new is None:
            raise click.UsageError("give BASE and NEW (run folders or summary.json files), or --ab BASE_SHA")
    judge(base, new, thresholds, any_machine, json_out)


def judge(base: Path, new: Path, thresholds: Path, any_machine: bool, json_out: Path | None) -> None:
    """Print the comparison of two summaries; exit 1 when a metric regressed."""
    rules = comparing.load_thresholds(thresholds)
    base_summary, new_summary = summaries.read(base), summaries.read(new)
    for note in base_summary.notes + new_summary.notes:
        click.echo(f"note: {note}", err=True)
    check = comparing.machine_check(base_summary, new_summary)
    other_machine = check.same is False and not any_machine
    if check.same is False:
        line = f"{base} ran on another machine than {new} ({'; '.join(check.differences)})"
        if any_machine:
            click.echo(f"note: {line}: timings judged anyway (--any-machine); absolute figures differ by machine",
                       err=True)
        else:
            click.echo(f"note: {line}: counts judged, timings unchecked (they need a baseline of this machine: "
                       f"`{baselining.record_command(base_summary.scenario or new_summary.scenario, new)}`; "
                       "--any-machine judges them anyway)", err=True)
    if check.calibration is not None:
        drift = f"calibration p50 {base_summary.calibration.p50_ms:.3g} -> {new_summary.calibration.p50_ms:.3g} ms (x{check.calibration:.2f})"
        if check.same is not False and max(check.calibration, 1 / check.calibration) > comparing.CALIBRATION_DRIFT:
            click.echo(f"note: {drift}: the machine was slower or busier than the other time; absolute figures move "
                       "with it", err=True)
        else:
            click.echo(drift)
    rows = comparing.compare(base_summary, new_summary, rules, other_machine=other_machine)
    table = Table(title=f"{base} -> {new}")
    table.add_column("metric", no_wrap=True)
    for column in ("point", "base", "new", "change [95%]", "limit"):
        table.add_column(column, justify="left" if column == "point" else "right", overflow="fold")
    # The verdict is what a CI log reader greps for: never shortened, whatever the terminal width.
    table.add_column("verdict", no_wrap=True, min_width=len("inconclusive"))
    table.add_column("test", overflow="fold")
    for row in rows:
        cells = (row.metric, row.point, _side(row.base, row.base_interval, row.base_n),
                 _side(row.new, row.new_interval, row.new_n), _change(row),
                 "" if row.limit is None else f"{row.limit:.0%}", row.verdict, row.test)
        # Escaped: `write_qps[churn]` would otherwise read as a markup tag and vanish from the table.
        table.add_row(*(markup.escape(cell) for cell in cells), style=_STYLE[row.verdict])
    Console(width=max(Console().width, 200)).print(table)
    counts = comparing.counts(rows)
    if json_out is not None:
        json_out.write_text(json.dumps(comparing.document(rows, str(base), str(new), str(thresholds)), indent=1) + "\n")
    click.echo(", ".join(f"{count} {verdict}" for verdict, count in counts.items() if count))
    old = [str(path) for path, summary in ((base, base_summary), (new, new_summary)) if summary.schema_version < 2]
    if old or comparing.threshold_only(rows):
        click.echo(f"note: {', '.join(old) or 'a side'} has no intervals (summary version 1): verdicts beyond a "
                   "threshold are threshold only, not tested; record a baseline with repeats "
                   "(`kqbench run SCENARIO --repeat 3`)", err=True)
    for row in rows:
        if row.note and row.verdict not in ("unchecked", "missing", "new"):
            click.echo(f"note: {row.metric} @ {row.point} ({row.test or row.verdict}): {row.note}")
    scope = (f" (counts only: {comparing.unchecked_timings(rows)} timing(s) unchecked, other machine)"
             if other_machine else "")
    if comparing.failed(rows):
        click.echo(f"FAIL: {counts['regressed']} metric(s) regressed beyond their threshold{scope}", err=True)
        sys.exit(1)
    click.echo(f"PASS: no metric regressed{scope}")


def _num(value: float | None) -> str:
    return "" if value is None else f"{value:.4g}"


def _side(value: float | None, interval: tuple[float, float] | None, n: int | None) -> str:
    if value is None:
        return ""
    text = _num(value)
    if interval is not None:
        text += f" [{_num(interval[0])}, {_num(interval[1])}]"
    return text + ("" if n is None else f" n={n}")


def _change(row: comparing.Row) -> str:
    if row.change is None:
        if row.base is not None and row.new is not None and row.base == 0:
            absolute = f"{row.new - row.base:+.4g}"
            return absolute + ("" if row.change_low is None else f" [{row.change_low:+.4g}, {row.change_high:+.4g}]")
        return ""
    text = f"{row.change:+.1%}"
    return text + ("" if row.change_low is None else f" [{row.change_low:+.1%}, {row.change_high:+.1%}]")
