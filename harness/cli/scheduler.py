"""`kqbench scheduler install|run`: the scheduler under test on a cluster, by hand.

`run` starts it exactly as a scenario run does: its options are the fields of the scenario's
`scheduler:` section (made from them, harness.cli.fieldoptions), handed to the implementation's
starter (harness.implementations).
"""

from __future__ import annotations

import time
from pathlib import Path

import click
import pydantic

from harness.cli import fieldoptions
from harness.clusters import state
from harness.errors import KqbenchError
from harness.implementations import registry as implementations
from harness.implementations.reference import process as schedulerproc
from harness.kube import apiservice, kubeconfig
from harness.scenarios import models


@click.group("scheduler")
def group() -> None:
    """Install the Kueue CRDs and visibility APIService, or run the scheduler under test until Ctrl-C."""


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
    apiservice.install_crds(creds)
    if visibility_port:
        apiservice.register_visibility(creds, schedulerproc.serving_files(info), visibility_port)
    click.echo(f"installed on {info.apiserver_url}")


@group.command("run")
@click.option("--name", default=None, help="A cluster started by `kqbench cluster up` (default: kqbench).")
@click.option("--kubeconfig", "kubeconfig_path", default=None, help="Or any cluster's kubeconfig.")
@fieldoptions.options(models.SchedulerSection, leave_out=("enabled",))
@click.option("--log-dir", type=click.Path(file_okay=False), default=None,
              help="Folder of the scheduler's log (default: the kqbench state folder's logs/).")
def run(name, kubeconfig_path, log_dir, **fields) -> None:
    """Install what is needed and run the scheduler until Ctrl-C (options: the scenario's `scheduler:` section)."""
    section = section_of(fields)
    info = _cluster(name, kubeconfig_path)
    refuse_a_second(info)
    log_dir = state.state_root() / "logs" if log_dir is None else log_dir
    handle = implementations.get(section.implementation).start(info, section, Path(log_dir))
    try:
        click.echo(f"scheduler {section.implementation} ({section.strategy}) on {info.apiserver_url}: "
                   f"metrics {handle.metrics_url()}, pid {handle.pid()}, log in {log_dir} (Ctrl-C stops)", err=True)
        while handle.alive():
            time.sleep(1.0)
        raise KqbenchError(f"the scheduler exited (log in {log_dir})")
    except KeyboardInterrupt:
        pass
    finally:
        handle.stop()


def refuse_a_second(info: state.ClusterInfo) -> None:
    """One scheduler per cluster: two would both decide (admit the same quota twice, evict each other's)."""
    found = implementations.running_on(info)
    if found:
        running = ", ".join(f"{name} pid {pid}" for name, pid in found)
        raise KqbenchError(f"cluster {info.name} already has a scheduler running ({running}): stop it first")


def section_of(fields: dict) -> models.SchedulerSection:
    """The scheduler section of the command's options; a bad value is one line naming the option."""
    try:
        return models.SchedulerSection(**fields)
    except pydantic.ValidationError as error:
        first = error.errors()[0]
        message = first["msg"].removeprefix("Value error, ")
        if not first["loc"]:  # a rule across options
            raise KqbenchError(message) from None
        option = "--" + str(first["loc"][0]).replace("_", "-")
        raise KqbenchError(f"{option}: {message} (got {first.get('input')!r})") from None

