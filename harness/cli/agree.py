"""`kqbench agree`: the same cases to two implementations, each twice; where they decide differently."""

from __future__ import annotations

import datetime as dt
import json
import sys
import time
from pathlib import Path

import click
from rich.console import Console
from rich.table import Table

import yaml

from harness.agreeing import cases, generating
from harness.drivers.agreement import batching, differential, reporting, settings
from harness.errors import KqbenchError
from harness.implementations import names
from harness.progress import LineProgress
from harness.results import runs, storing, tables as tidy
from harness.running import adapters, runner
from harness.scenarios import loading
from harness.toolchain import building, versions

DEFAULT_OUT = Path("results") / "agreement" / "runs"
BATCHES = "batches"
"""Where in --out each batch's scenario file and run folder go (its scheduler's log among the run's files)."""


@click.command("agree")
@click.option("--cases", "count", type=click.IntRange(min=0), default=0, show_default=True,
              help="How many random cases (seeds SEED, SEED+1, ...).")
@click.option("--seed", type=int, default=1, show_default=True, help="The first random case's seed.")
@click.option("--require", "required", multiple=True, type=click.Choice(generating.FEATURES),
              help="Turn this on in every random case (may be given several times); the same seed otherwise "
                   "draws the same case. limits, pods-ready and checks (the Workload lifecycle families: "
                   "execution limits, waitForPodsReady timeouts with backoff, admission checks) appear only "
                   "when required.")
@click.option("--case", "files", multiple=True, type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="A case file to replay (YAML); may be given several times, beside or instead of --cases.")
@click.option("--implementation-a", "impl_a", type=click.Choice(settings.IMPLEMENTATIONS), default=names.REFERENCE,
              show_default=True)
@click.option("--implementation-b", "impl_b", type=click.Choice(settings.IMPLEMENTATIONS), default=names.KUEUE,
              show_default=True)
@click.option("--repeats", type=click.IntRange(1, 5), default=2, show_default=True,
              help="Runs per implementation; 2 or more measures each one's agreement with itself.")
@click.option("--batch", "batch_size", type=click.IntRange(1, 400), default=50, show_default=True,
              help="Cases side by side on one cluster.")
@click.option("--shrink/--no-shrink", default=False, show_default=True,
              help="Reduce one case of every difference class to a minimal one (cases/minimal-*.yaml).")
@click.option("--from", "previous", type=click.Path(exists=True, file_okay=False, path_type=Path), default=None,
              help="Run nothing new: summarize (and with --shrink, shrink) the run in this folder again.")
@click.option("--per-class", type=click.IntRange(1, 20), default=1, show_default=True,
              help="With --shrink: how many cases of each difference class to shrink.")
@click.option("--confirm/--no-confirm", default=True, show_default=True,
              help="Run the disagreeing cases again, side by side in one small batch: a difference that does "
                   "not come back depended on the big batch's timing.")
@click.option("--kueue-version", default=None,
              help="The Kueue version to run (one of harness/versions.toml; default: its pinned one).")
@click.option("--kueue-log-level", type=click.IntRange(0, 10), default=None,
              help="Kueue's --zap-log-level: 3 and up log every scheduling cycle, and the reference scheduler then "
                   "logs its own (--log-cycles); each log goes to its batch's run folder under <out>/batches.")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=None,
              help=f"Results folder [default: {DEFAULT_OUT}/<time>].")
def command(count, seed, required, files, impl_a, impl_b, repeats, batch_size, shrink, previous, per_class, confirm,
            kueue_version, kueue_log_level, out) -> None:
    """Generate or read cases (every one validated before a cluster starts), run each through
    both implementations on local clusters in epochs, and compare admissions, flavors, evictions,
    deactivations, requeue counts, admission check states, pending order and usage at every settled point.

    Writes summary.json, decisions.jsonl and the disagreeing cases under --out; exits 1 when a
    decision differs between the implementations (and not within one)."""
    implementations = (impl_a, impl_b)
    if impl_a == impl_b:
        raise click.UsageError(f"--implementation-a and -b are both {impl_a}: give two implementations "
                               "(an implementation's agreement with itself comes from --repeats 2)")
    if previous is not None:
        out, chosen = previous, []
    else:
        chosen = [cases.load(path) for path in files] + [generating.generate(seed + i, frozenset(required))
                                                           for i in range(count)]
        if not chosen:
            raise click.UsageError("nothing to run: give --cases N or --case FILE (or --from FOLDER)")
        out = out or DEFAULT_OUT / dt.datetime.now(dt.timezone.utc).strftime("%Y%m%d-%H%M%S")
    kueue = settings.KueueOptions(versions.kueue_version(kueue_version), kueue_log_level)
    if "kueue" in implementations:
        building.ensure_kueue(LineProgress(interval=10.0), version=kueue.version)
    out.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    if previous is None:
        (out / differential.RECORD).write_text(json.dumps({"schema_version": differential.SCHEMA_VERSION,
            "command": " ".join(["kqbench", "agree", *sys.argv[2:]]), "git_sha": runs.git_sha(),
            "seeds": [c.seed for c in chosen], "require": sorted(required), "files": [str(f) for f in files],
            "implementations": list(implementations), "repeats": repeats, "batch": batch_size,
            "versions": _versions(kueue.version), "machine": runs.machine(), "started": runs.now_iso()}, indent=2) + "\n")

    run_batch = batch_runner(out / BATCHES, kueue, say=click.echo)

    def record(results: list[differential.CaseResult]) -> dict:
        summary = differential.summarize(results, implementations)
        summary["seconds"] = round(time.monotonic() - started, 1)
        differential.write(results, summary, out, impl_a, impl_b)
        (out / "report.md").write_text(reporting.render(json.loads((out / differential.RECORD).read_text()), summary))
        return summary

    if previous is None:
        results = differential.run(chosen, implementations, repeats, batch_size, run_batch, say=click.echo,
                                   on_batch=record)
        summary = record(results)
    else:
        results = differential.read(previous, implementations)
        summary = differential.summarize(results, implementations)
        summary["seconds"] = json.loads((out / "summary.json").read_text()).get("seconds")
    if confirm and (doubtful := differential.disagreeing(results)):
        click.echo(f"confirming {len(doubtful)} disagreeing case(s) in a batch of their own")
        again = differential.run([r.case for r in doubtful], implementations, repeats, len(doubtful), run_batch,
                                 say=click.echo)
        differential.confirm(summary, doubtful, again)
        summary["confirmation"]["git_sha"] = runs.git_sha()
    if shrink and summary["classes"]:
        differential.minimal_cases(results, summary, run_batch, implementations, out, say=click.echo,
                                   per_class=per_class)
    (out / "summary.json").write_text(json.dumps({"schema_version": differential.SCHEMA_VERSION, **summary},
                                                 indent=2) + "\n")
    (out / "report.md").write_text(reporting.render(json.loads((out / differential.RECORD).read_text()), summary))
    _print(summary)
    click.echo(f"results: {out}")
    storing.push_new_run(out, click.echo)
    if summary["cases_failed"]:
        click.echo(f"{summary['cases_failed']} case(s) failed to run (see summary.json failures)", err=True)
    if summary["classes"]:
        sys.exit(1)


def batch_runner(folder: Path, kueue: settings.KueueOptions, say=print) -> differential.RunBatch:
    """Each batch through one implementation as a one-case scenario run in ``folder``: its scenario file
    (`<name>.yaml`: `kqbench run` plays the batch again) and its run folder (cluster, scheduler, logs and
    tables; the runner tears them down also on failure)."""
    hooks = adapters.bare_hooks()

    def run_batch(implementation: str, batch: dict[str, cases.Case], name: str) -> dict[str, batching.Outcome]:
        folder.mkdir(parents=True, exist_ok=True)
        scenario = folder / f"{name}.yaml"
        scenario.write_text(yaml.safe_dump(batching.scenario(batch, implementation, kueue, name), sort_keys=False))
        result = runner.run(loading.load(str(scenario)), hooks, runner.RunOptions(folder, report=False), say=say)
        if result.interrupted:
            raise KeyboardInterrupt(f"interrupted in batch {name}")
        return batching.outcomes(batch, tidy.read(result.folder), result.record.cases[0].error)

    return run_batch


def _versions(kueue: str) -> dict:
    try:
        return {"kueue": kueue, "kubernetes": versions.load_pins().kubernetes_default}
    except (KqbenchError, AttributeError):
        return {}


def _print(summary: dict) -> None:
    table = Table(title="decisions compared")
    for column in ("pair", "cases", "agreeing cases", "decisions", "agreeing", "rate", "orders agreeing"):
        table.add_column(column, justify="left" if column == "pair" else "right")
    a, b = summary["implementations"]
    rows = [(f"{a} / {b}", summary["cross"])] + [(f"{impl} / itself", rate) for impl, rate in summary["self"].items()]
    for label, rate in rows:
        table.add_row(label, str(rate["cases"]), str(rate["cases_agreeing"]), str(rate["decisions"]),
                      str(rate["agreeing"]), "-" if rate["rate"] is None else f"{rate['rate']:.2%}",
                      f"{rate['orders_agreeing']}/{rate['orders']}")
    console = Console(width=160)
    console.print(table)
    for title, key in (("decisions that differ", "classes"), ("orders and usage that differ", "order_classes")):
        if summary[key]:
            console.print(title + ", by class (reproduced by both implementations' repeats):")
        for row in summary[key]:
            console.print(f"  {row['count']:4d}  {row['class']}  (e.g. case {row['example_case']})")
