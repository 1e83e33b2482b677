"""`kqbench scheduler install|run`: the reference scheduler on a cluster, by hand."""

from __future__ import annotations

import click

from harness import aggregation, kubeconfig
from harness.clusters import ports as portpicking, state
from harness.errors import KqbenchError
from scheduler import running
from scheduler.controller import controlling
from scheduler.publishing import strategies


@click.group("scheduler")
def group() -> None:
    """Install the Kueue CRDs and visibility APIService, or run the reference scheduler in the foreground."""


def _cluster(name: str | None, kubeconfig_path: str | None) -> state.ClusterInfo:
    if kubeconfig_path:
        creds = kubeconfig.load(kubeconfig_path)
        return state.ClusterInfo(name=name or "external", backend="existing", kubeconfig=kubeconfig_path,
                                 apiserver_url=creds.server)
    return state.load(name or "kqbench")


@group.command("install")
@click.option("--name", default=None, help="A cluster started by `kqbench cluster up` (default: kqbench).")
@click.option("--kubeconfig", "kubeconfig_path", default=None, help="Or any cluster's kubeconfig.")
@click.option("--visibility-port", type=int, default=0, help="Port the visibility server will listen on.")
def install(name, kubeconfig_path, visibility_port) -> None:
    """Apply the Kueue CRDs and register the visibility APIService (pointing at 127.0.0.1:PORT)."""
    info = _cluster(name, kubeconfig_path)
    creds = kubeconfig.load(info.kubeconfig)
    aggregation.install_crds(creds)
    if visibility_port:
        files = aggregation.ensure_serving_certs(state.state_root() / "pki" / info.name)
        aggregation.register_visibility(creds, files, visibility_port)
    click.echo(f"installed on {info.apiserver_url}")


@group.command("run")
@click.option("--name", default=None, help="A cluster started by `kqbench cluster up` (default: kqbench).")
@click.option("--kubeconfig", "kubeconfig_path", default=None, help="Or any cluster's kubeconfig.")
@click.option("--implementation", type=click.Choice(["reference", "kueue"]), default="reference", show_default=True,
              help="kueue: the real Kueue manager built by `kqbench toolchain build` (uses --qps/--burst/"
                   "--no-client-limit; positions through its visibility API only).")
@click.option("--strategy", type=click.Choice(list(strategies.STRATEGIES)), default=strategies.AGGREGATED_INDEXED,
              show_default=True, help="How users learn their queue position.")
@click.option("--qps", type=float, default=50.0, show_default=True, help="Client write QPS (Kueue's default).")
@click.option("--burst", type=int, default=100, show_default=True)
@click.option("--no-client-limit", is_flag=True, help="No client-side limit on writes.")
@click.option("--visibility-port", type=int, default=0, help="HTTPS port on 127.0.0.1 (default: a free one).")
@click.option("--metrics-port", type=int, default=0, help="HTTP /metrics port on 127.0.0.1 (default: a free one).")
@click.option("--authorization", type=click.Choice(["delegate", "off"]), default="delegate", show_default=True)
@click.option("--max-unwritten", type=int, default=controlling.DEFAULT_MAX_UNWRITTEN, show_default=True,
              help="Admissions decided ahead of their status writes before scheduling waits.")
def run(name, kubeconfig_path, implementation, strategy, qps, burst, no_client_limit, visibility_port, metrics_port,
        authorization, max_unwritten) -> None:
    """Install what is needed and run the scheduler until Ctrl-C."""
    info = _cluster(name, kubeconfig_path)
    if implementation == "kueue":
        _run_kueue(info, None if no_client_limit else qps, burst)
        return
    creds = kubeconfig.load(info.kubeconfig)
    visibility_port = visibility_port or portpicking.pick_free(1)[0]
    metrics_port = metrics_port or portpicking.pick_free(1)[0]
    aggregation.install_crds(creds)
    files = aggregation.ensure_serving_certs(state.state_root() / "pki" / info.name)
    if strategies.get(strategy).visibility_api:
        aggregation.register_visibility(creds, files, visibility_port)
    try:
        settings = running.SchedulerSettings(
            kubeconfig=info.kubeconfig, strategy=strategy, qps=None if no_client_limit else qps, burst=burst,
            visibility_port=visibility_port, metrics_port=metrics_port, tls_cert=str(files.cert),
            tls_key=str(files.key), authorization=authorization, max_unwritten=max_unwritten)
    except ValueError as error:
        raise KqbenchError(str(error)) from None
    click.echo(f"scheduler ({strategy}) on {info.apiserver_url}: metrics http://127.0.0.1:{metrics_port}/metrics, "
               f"visibility https://127.0.0.1:{visibility_port} (Ctrl-C stops)", err=True)
    running.run(settings)


def _run_kueue(info: state.ClusterInfo, qps: float | None, burst: int) -> None:
    from harness.implementations.kueue import starting

    handle = starting.start(info, qps=qps, burst=burst)
    try:
        click.echo(f"Kueue on {info.apiserver_url}: metrics {handle.metrics_url} (HTTPS, authenticated), "
                   f"log {handle.log_path} (Ctrl-C stops)", err=True)
        handle.process.wait()
        raise KqbenchError(f"Kueue's manager exited with code {handle.process.returncode}; "
                           f"last lines:\n{handle.log_tail()}")
    except KeyboardInterrupt:
        pass
    finally:
        handle.stop()
