"""`kqbench replay`: Kueue's own scheduling cycles, read from its log, put to the reference core."""

from __future__ import annotations

import csv
import gzip
import json
import sys
from pathlib import Path

import click

from harness.agreeing import replaying
from harness.drivers.kueuebaseline import replayshape
from harness.errors import KqbenchError
from harness.implementations.kueue import cycles as kueue_cycles
from harness.progress import LineProgress
from harness.results import runs
from harness.scenarios import loading
from harness.toolchain import versions

EXAMPLES = 20
"""Differing heads kept per (Kueue, ours) pair in replay.json."""


@click.command("replay")
@click.argument("log", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--scenario", required=True,
              help="The kueue-baseline scenario (name or YAML) the Kueue run used: its queues and Workloads.")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Folder for replay.json (tally, differing heads, command, git sha), heads.csv.gz (every "
                   "head's verdict) and kueue-cycles.log.gz (the log lines read, to replay again) "
                   "[default: print only].")
def command(log: Path, scenario: str, out: Path | None) -> None:
    """Read the cycles Kueue logged at --zap-log-level=3 (scenario `scheduler.kueue_log_level: 3`),
    and for each one give the reference core the Workloads Kueue held and the heads it tried;
    compare each head's decision with Kueue's. Exits 1 when a decision differs."""
    loaded = loading.load(scenario)
    if loaded.scenario.phases and not any(p.kind == "kueue-baseline" for p in loaded.scenario.phases.values()):
        raise KqbenchError(f"--scenario {scenario}: has no kueue-baseline phase; the replay knows the Workloads "
                           "of kueue-baseline runs only (give the scenario the Kueue run used)")
    kept: list[dict] = []
    opener = gzip.open if log.suffix == ".gz" else open
    with opener(log, "rt") as lines:
        cycles, created = kueue_cycles.read(lines, keep=kept.append if out is not None else None)
    if not any(c.heads for c in cycles):
        raise KqbenchError(f"{log}: no scheduling cycle with heads in it; start Kueue with --zap-log-level="
                           f"{kueue_cycles.LOG_LEVEL} (scenario field scheduler.kueue_log_level: {kueue_cycles.LOG_LEVEL})")
    section = loaded.scenario.scheduler
    settings = replayshape.core_settings(section, versions.reference_settings(section.kueue_version))
    shape = replayshape.shape(loaded.scenario, created, settings)
    say = LineProgress()
    heads = replaying.replay(cycles, created, shape,
                             progress=lambda done: say("replay", f"{done}/{len(cycles)} cycles", force=done == len(cycles)))
    summary = replaying.tally(heads)
    record = {**summary, "cycles": len(cycles), "log": log.name, "scenario": scenario,
              "git": runs.git_sha(), "command": " ".join(["kqbench", "replay", *sys.argv[2:]]),
              "differing": _examples(heads)}
    agreeing = summary["heads"] - summary["verdicts"]["differs"]
    click.echo(f"{summary['heads']} head decisions in {len(cycles)} Kueue cycles: "
               + ", ".join(f"{v} {n}" for v, n in summary["verdicts"].items())
               + f"; agree {agreeing / max(1, summary['heads']):.3%}")
    for pair, n in summary["differing_pairs"].items():
        click.echo(f"  differs, Kueue / ours = {pair}: {n}")
    if out is not None:
        _write(out, record, heads, kept)
        click.echo(f"written: {out}/replay.json, heads.csv.gz, kueue-cycles.log.gz")
    if summary["verdicts"]["differs"]:
        sys.exit(1)


def _write(out: Path, record: dict, heads: list[replaying.Head], kept: list[dict]) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / "replay.json").write_text(json.dumps(record, indent=1) + "\n")
    with gzip.open(out / "heads.csv.gz", "wt", newline="") as stream:
        writer = csv.writer(stream)
        writer.writerow(["cycle", "workload", "verdict", "kueue", "kueue_targets", "ours", "ours_targets"])
        for h in heads:
            writer.writerow([h.cycle, h.name, h.verdict, h.kueue.kind, " ".join(h.kueue.targets), h.ours.kind,
                             " ".join(h.ours.targets)])
    with gzip.open(out / "kueue-cycles.log.gz", "wt") as stream:
        stream.writelines(json.dumps(entry, separators=(",", ":")) + "\n" for entry in kept)


def _examples(heads: list[replaying.Head]) -> list[dict]:
    kept: dict[str, int] = {}
    out = []
    for h in heads:
        if h.verdict != "differs":
            continue
        pair = f"{h.kueue.kind} / {h.ours.kind}"
        if kept.get(pair, 0) >= EXAMPLES:
            continue
        kept[pair] = kept.get(pair, 0) + 1
        out.append({"cycle": h.cycle, "workload": h.name, "kueue": [h.kueue.kind, list(h.kueue.targets), h.kueue.reason],
                    "ours": [h.ours.kind, list(h.ours.targets), h.ours.reason]})
    return out
