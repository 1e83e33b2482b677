"""`kqbench load`: drive Locust users against a cluster's apiserver and print what they saw."""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

import click
import yaml

from harness import kubeconfig
from harness.clusters import state
from loadtests import running, settings as load_settings

_SPAN = re.compile(r"^(?:(\d+)h)?(?:(\d+)m)?(?:(\d+(?:\.\d+)?)s?)?$")


def parse_span(text: str) -> float:
    """'90', '90s', '2m', '1h30m' -> seconds (Locust's --run-time spelling)."""
    match = _SPAN.match(text.strip())
    if not text.strip() or not match:
        raise click.BadParameter(f"{text!r} is not a time span like 30s, 2m or 1h30m", param_hint="--run-time")
    hours, minutes, seconds = match.groups()
    return int(hours or 0) * 3600 + int(minutes or 0) * 60 + float(seconds or 0)


def target_of(name: str | None, kubeconfig_path: str | None) -> load_settings.Target:
    """The apiserver and credentials from --kubeconfig, else from the named cluster's kubeconfig."""
    path = kubeconfig_path or state.load(name or "kqbench").kubeconfig
    creds = kubeconfig.load(path)
    return load_settings.Target(server=creds.server, ca_file=creds.ca_file, cert_file=creds.cert_file,
                                key_file=creds.key_file, token=creds.token, insecure=creds.insecure)


def _settings_file(path: str | None) -> dict:
    if not path:
        return {}
    data = yaml.safe_load(Path(path).read_text()) or {}
    if not isinstance(data, dict):
        raise click.BadParameter(f"{path} must hold a mapping of settings sections", param_hint="--settings")
    return data


@click.command("load")
@click.option("--name", default=None, help="Cluster to load (default: kqbench). Excludes --kubeconfig.")
@click.option("--kubeconfig", "kubeconfig_path", default=None, type=click.Path(dir_okay=False),
              help="Kubeconfig of the apiserver to load (loopback addresses only).")
@click.option("--locustfile", default=running.BUILTIN_LOCUSTFILE, show_default="the built-in kqbench users",
              type=click.Path(exists=True, dir_okay=False))
@click.option("--user-classes", default="", help="Weights of user classes, e.g. WorkloadChurn=1,Bystander=3 "
              "(default: every class in the locustfile, weight 1).")
@click.option("--users", type=int, default=10, show_default=True, help="Concurrent users.")
@click.option("--spawn-rate", type=float, default=5.0, show_default=True, help="Users started per second.")
@click.option("--run-time", default="60s", show_default=True, help="How long the load runs (30s, 2m, 1h30m).")
@click.option("--max-requests", type=int, default=None, help="Also stop after this many requests.")
@click.option("--shape", type=click.Choice(["constant", "steps", "spike"]), default=None,
              help="Move users over time (tune with a `shape:` section in --settings).")
@click.option("--query-mode", type=click.Choice(load_settings.QUERY_MODES), default=None,
              help="Where PositionQuerier reads positions (default: visibility-cq).")
@click.option("--settings", "settings_path", default=None, type=click.Path(exists=True, dir_okay=False),
              help="YAML with sections client/churn/query/bystander/listwatch/shape and seed.")
@click.option("--workers", type=int, default=0, show_default=True,
              help="Local worker processes under a master (0: one process).")
@click.option("--master-port", type=int, default=0, help="Port for workers to reach the master (default: free).")
@click.option("--web", is_flag=True, help="Serve Locust's web UI on 127.0.0.1 while the run goes.")
@click.option("--web-port", type=int, default=8089, show_default=True)
@click.option("--out", default=None, type=click.Path(file_okay=False),
              help="Folder for history/totals/failures parquet and summary.json (default: results/runs/load-<time>).")
def command(name, kubeconfig_path, locustfile, user_classes, users, spawn_rate, run_time, max_requests, shape,
            query_mode, settings_path, workers, master_port, web, web_port, out) -> None:
    """Run Locust users (churn, position queries, bystanders, list/watch) against the apiserver."""
    if name and kubeconfig_path:
        raise click.UsageError("give either --name or --kubeconfig, not both")
    seconds = parse_span(run_time)
    sections = _settings_file(settings_path)
    shape_section = sections.pop("shape", None)
    try:
        settings = load_settings.from_mapping(sections, target_of(name, kubeconfig_path))
        if query_mode:
            import dataclasses

            settings = dataclasses.replace(settings, query=dataclasses.replace(settings.query, mode=query_mode))
        shape_settings = None
        if shape or shape_section:
            shape_settings = load_settings._build(load_settings.ShapeSettings, {
                "users": users, "spawn_rate": spawn_rate, "duration": seconds, **(shape_section or {}),
                **({"kind": shape} if shape else {})})
        plan = load_settings.RunPlan(
            settings=settings, locustfile=str(Path(locustfile).resolve()),
            user_weights=load_settings.user_weights(user_classes), users=users, spawn_rate=spawn_rate,
            run_time=seconds, max_requests=max_requests, shape=shape_settings, workers=workers,
            master_port=master_port, web=web, web_port=web_port).validate()
    except load_settings.SettingsError as error:
        raise click.UsageError(str(error)) from None
    out_dir = Path(out) if out else Path("results/runs") / f"load-{dt.datetime.now():%Y%m%d-%H%M%S}"
    click.echo(f"load: {users} users for {seconds:.0f}s against {settings.target.server}"
               + (f" with {workers} workers" if workers else "")
               + (f"; web UI on http://127.0.0.1:{web_port}" if web else ""), err=True)
    try:
        result = running.run(plan, out_dir, show_output=web)
    except load_settings.SettingsError as error:
        raise click.UsageError(str(error)) from None
    except running.LoadError as error:
        raise click.ClickException(str(error)) from None
    _print(result)


def _print(result: running.LoadResult) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console()
    table = Table(title=f"load: {result.summary['requests']} requests in {result.summary['load_seconds']:.0f}s "
                        f"(stopped by {result.summary['stopped_by']})")
    for column in ("name", "requests", "failures", "rps", "p50 ms", "p95 ms", "p99 ms", "KiB"):
        table.add_column(column, justify="left" if column == "name" else "right", no_wrap=column == "name")
    for row in result.totals.itertuples():
        table.add_row(row.name, str(row.requests), str(row.failures), f"{row.rps:.1f}", f"{row.p50_ms:.0f}",
                      f"{row.p95_ms:.0f}", f"{row.p99_ms:.0f}", f"{row.bytes / 1024:.0f}")
    console.print(table)
    for row in result.failures.itertuples():
        console.print(f"[red]failed[/red] {row.name}: {row.reason} x{row.occurrences}")
    cpu = result.summary["cpu_seconds_master"] + result.summary["cpu_seconds_workers"]
    console.print(f"load generator CPU: {cpu:.1f}s over {result.summary['wall_seconds']:.0f}s; frames in {result.out_dir}")
