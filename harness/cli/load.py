"""`kqbench load`: drive Locust users against a cluster's apiserver and print what they saw."""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

import click
import yaml

from harness.clusters import state
from harness.kube import kubeconfig
from loadtests import running, settings as load_settings
from scheduler import listening

_SPAN = re.compile(r"^(?:(\d+)h)?(?:(\d+)m)?(?:(\d+(?:\.\d+)?)s?)?$")


def parse_span(text: str) -> float:
    """'90', '90s', '2m', '1h30m' -> seconds (Locust's --run-time spelling)."""
    match = _SPAN.match(text.strip())
    if not text.strip() or not match:
        raise click.BadParameter(f"{text!r} is not a time span like 30s, 2m or 1h30m", param_hint="--run-time")
    hours, minutes, seconds = match.groups()
    return int(hours or 0) * 3600 + int(minutes or 0) * 60 + float(seconds or 0)


def target_of(name: str | None, kubeconfig_path: str | None, allow_remote: bool) -> load_settings.Target:
    """The apiserver and credentials from --kubeconfig, else from the named cluster's kubeconfig."""
    path = kubeconfig_path or state.load(name or "kqbench").kubeconfig
    return kubeconfig.load_target(path, allow_remote)


def _settings_file(path: str | None) -> dict:
    if not path:
        return {}
    data = yaml.safe_load(Path(path).read_text()) or {}
    if not isinstance(data, dict):
        raise click.BadParameter(f"{path} must hold a mapping of settings sections", param_hint="--settings")
    return data


def _check_roles(worker: bool, master: bool, master_host: str | None, expect_workers: int | None,
                 master_bind: str | None) -> None:
    """Options of one role given to another are refused: a silently ignored flag misleads."""
    if worker and master:
        raise click.UsageError("give either --worker or --master, not both")
    if worker and not master_host:
        raise click.UsageError("--worker needs --master-host: the address of the host running `kqbench load --master`")
    if master_host and not worker:
        raise click.UsageError("--master-host is for --worker (a master listens on --master-bind)")
    if (expect_workers is not None or master_bind) and not master:
        raise click.UsageError("--expect-workers and --master-bind are for --master")
    if expect_workers is not None and expect_workers < 1:
        raise click.BadParameter("must be >= 1", param_hint="--expect-workers")


@click.command("load")
@click.option("--name", default=None, help="Cluster to load (default: kqbench). Excludes --kubeconfig.")
@click.option("--kubeconfig", "kubeconfig_path", default=None, type=click.Path(dir_okay=False),
              help="Kubeconfig of the apiserver to load (a loopback address unless --allow-remote).")
@click.option("--allow-remote", is_flag=True,
              help="Allow an apiserver that is not on a loopback address (a cluster on another machine).")
@click.option("--locustfile", default=running.BUILTIN_LOCUSTFILE, show_default="the built-in kqbench users",
              type=click.Path(exists=True, dir_okay=False),
              help="Locust users to run; a worker needs the master's file (the built-in one ships with kqbench).")
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
@click.option("--master", is_flag=True,
              help="Be Locust's master for workers on other hosts (`kqbench load --worker`): wait for them, hand them "
                   "the users and settings (apiserver credentials included), gather their results here.")
@click.option("--expect-workers", type=int, default=None,
              help="With --master: workers on other hosts to wait for before the load starts (default 1).")
@click.option("--master-bind", default=None,
              help="With --master: HOST:PORT to listen on for workers (default 0.0.0.0:5557). Locust's port has no "
                   "authentication and carries the credentials: bind an address only your workers reach.")
@click.option("--worker", is_flag=True,
              help="Be a Locust worker of the master at --master-host; it needs no kubeconfig, and serves the "
                   "master's next runs too when it asks (a scenario's phases).")
@click.option("--master-host", default=None, help="With --worker: the host running `kqbench load --master`.")
@click.option("--master-port", type=int, default=None,
              help="With --worker: the master's port (default 5557). Otherwise the port local workers reach the "
                   "master on (default: a free one).")
@click.option("--worker-timeout", type=float, default=120.0, show_default=True,
              help="Seconds a master waits for its workers, and a worker tries to reach its master.")
@click.option("--web", is_flag=True, help=f"Serve Locust's web UI on {listening.LOOPBACK} while the run goes.")
@click.option("--web-port", type=int, default=8089, show_default=True, help="Port of the web UI.")
@click.option("--out", default=None, type=click.Path(file_okay=False),
              help="Folder for history/totals/failures/workers/hdr parquet and summary.json "
                   "(default: results/runs/load-<time>).")
def command(name, kubeconfig_path, allow_remote, locustfile, user_classes, users, spawn_rate, run_time, max_requests,
            shape, query_mode, settings_path, workers, master, expect_workers, master_bind, worker, master_host,
            master_port, worker_timeout, web, web_port, out) -> None:
    """Run Locust users (churn, position queries, bystanders, list/watch) against the apiserver."""
    _check_roles(worker, master, master_host, expect_workers, master_bind)
    if worker and (name or kubeconfig_path or allow_remote or workers):
        raise click.UsageError("a worker takes the apiserver, credentials and users from its master: "
                               "drop --name, --kubeconfig, --allow-remote and --workers")
    if worker:
        _serve(master_host, master_port or DEFAULT_MASTER_PORT, locustfile, worker_timeout)
        return
    if name and kubeconfig_path:
        raise click.UsageError("give either --name or --kubeconfig, not both")
    seconds = parse_span(run_time)
    sections = _settings_file(settings_path)
    shape_section = sections.pop("shape", None)
    try:
        distribution = _distribution(master, expect_workers, master_bind, master_port, worker_timeout)
        settings = load_settings.from_mapping(sections, target_of(name, kubeconfig_path, allow_remote))
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
            web=web, web_port=web_port, **distribution).validate()
    except load_settings.SettingsError as error:
        raise click.UsageError(str(error)) from None
    out_dir = Path(out) if out else Path("results/runs") / f"load-{dt.datetime.now():%Y%m%d-%H%M%S}"
    click.echo(f"load: {users} users for {seconds:.0f}s against {settings.target.server}"
               + (f" with {workers} workers" if workers else "")
               + (f"; waiting for {plan.remote_workers} workers on {plan.master_bind}:{plan.master_port}"
                  if plan.remote_workers else "")
               + (f"; web UI on http://{listening.LOOPBACK}:{web_port}" if web else ""), err=True)
    try:
        result = running.run(plan, out_dir, show_output=web)
    except load_settings.SettingsError as error:
        raise click.UsageError(str(error)) from None
    except running.LoadError as error:
        raise click.ClickException(str(error)) from None
    _print(result)


DEFAULT_MASTER_PORT = 5557
"""Locust's own default: what a worker tries when not told otherwise."""


def _distribution(master: bool, expect_workers: int | None, master_bind: str | None, master_port: int | None,
                  worker_timeout: float) -> dict:
    """RunPlan fields of where workers come from: local ones only, or also those on other hosts."""
    if not master:
        return {"master_port": master_port or 0, "worker_start_timeout": worker_timeout}
    host, port = load_settings.host_port(master_bind or f"0.0.0.0:{DEFAULT_MASTER_PORT}")
    if master_port and master_bind and master_port != port:
        raise load_settings.SettingsError(f"--master-port {master_port} contradicts --master-bind {master_bind}")
    return {"remote_workers": expect_workers or 1, "master_bind": host, "master_port": master_port or port,
            "worker_start_timeout": worker_timeout}


def _serve(master_host: str, master_port: int, locustfile: str, connect_timeout: float) -> None:
    click.echo(f"load: worker of the master at {master_host}:{master_port}", err=True)
    try:
        served = running.serve_as_worker(master_host, master_port, str(Path(locustfile).resolve()), connect_timeout)
    except running.LoadError as error:
        raise click.ClickException(str(error)) from None
    click.echo(f"load: served {served} master run(s); done", err=True)


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
    for row in result.workers.itertuples():
        console.print(f"worker {row.worker} (pid {row.pid}): {row.requests} requests, {row.failures} failures, "
                      f"{row.cpu_seconds:.1f} CPU s")
    # Local workers are children of the engine; remote ones report their own CPU seconds.
    cpu = result.summary["cpu_seconds_master"] + max(result.summary["cpu_seconds_workers"],
                                                     result.summary.get("cpu_seconds_reported_by_workers", 0.0))
    console.print(f"load generator CPU: {cpu:.1f}s over {result.summary['wall_seconds']:.0f}s; frames in {result.out_dir}")
