"""`kqbench toolchain build|show`: the Go-built binaries a cluster runs."""

from __future__ import annotations

import json
import subprocess

import click

from harness.progress import LineProgress
from harness.scenarios import loading, needs
from harness.toolchain import building, components, layout, versions


@click.group("toolchain")
def group() -> None:
    """Build or show kube-apiserver, etcd, kwok and Kueue binaries (built from Go modules, cached per version)."""


@group.command("build")
@click.option("--for", "scenario", default=None, metavar="SCENARIO",
              help="Build only what SCENARIO runs (a shipped name or a YAML file): its clusters' control plane and "
                   "the Kueue versions its cases name; `make bench` builds this way.")
@click.option("--k8s-version", default=None, help="Kubernetes release to build (default: the pinned one).")
@click.option("--without-kueue", is_flag=True, help="Skip Kueue (each version's build takes 5-8 min; only its scenarios need it).")
@click.option("--kueue-version", "kueue_versions", multiple=True,
              help="Build only this Kueue version of harness/versions.toml (repeatable; default: every known one).")
def build(scenario: str | None, k8s_version: str | None, without_kueue: bool, kueue_versions: tuple[str, ...]) -> None:
    """Build every missing binary: with no SCENARIO, the control plane at K8S_VERSION (pinned etcd and kwok), the
    results store's S3 server (versitygw, for the tests) and each known Kueue version (CI warms its cache so)."""
    if scenario is not None:
        if k8s_version or without_kueue or kueue_versions:
            raise click.UsageError("--for builds what the scenario names: give no --k8s-version, --without-kueue or "
                                   "--kueue-version with it (override the scenario with `kqbench run --set`)")
        wanted = needs.of(loading.load(scenario))
    else:
        pins = versions.load_pins()
        kueues = [components.kueue(v, pins) for v in kueue_versions or pins.kueue_known]
        wanted = components.unique([*components.control_plane(k8s_version, pins),
                                    components.Component("versitygw", pins.versitygw),
                                    *([] if without_kueue else kueues)])
    folders = building.ensure(wanted, LineProgress(interval=5.0))
    click.echo(json.dumps({str(component): str(folder) for component, folder in zip(wanted, folders)}, indent=2))


def _version_of(path, command: str) -> str:
    args = {"kubectl": ["version", "--client"], "kwok": ["--version"], "kwokctl": ["--version"],
            "kubectl-kueue": ["version"]}.get(command, ["--version"])
    if command == "kueue":  # the manager has no version flag; the stamp is what the build wrote
        return f"Kueue {json.loads((path.parent / layout.STAMP).read_text())['version']}"
    try:
        out = subprocess.run([str(path), *args], capture_output=True, text=True, timeout=20)
    except OSError as error:
        return f"cannot run: {error}"
    return (out.stdout or out.stderr).strip().splitlines()[0] if (out.stdout or out.stderr) else "?"


@group.command("show")
@click.option("--k8s-version", default=None, help="Kubernetes release (default: the pinned one).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
def show(k8s_version: str | None, as_json: bool) -> None:
    """Print each binary's path, whether it is built, and the version it reports."""
    pins = versions.load_pins()
    k8s = versions.normalise_k8s_version(k8s_version or pins.kubernetes_default)
    binaries = layout.Binaries.in_cache(k8s, pins.etcd, pins.kwok)
    kueues = [layout.KueueBuild.in_cache(version) for version in pins.kueue_known]
    rows = []
    for path in [*binaries.paths().values(), *(p for k in kueues for p in (k.manager, k.kubectl_plugin))]:
        command = path.name
        built = path.is_file()
        rows.append({
            "binary": command, "path": str(path), "built": built,
            "version": _version_of(path, command) if built else "not built",
        })
    if as_json:
        click.echo(json.dumps(rows, indent=2))
        return
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"kqbench toolchain (cache: {layout.cache_root()})")
    for column in ("binary", "version", "path"):
        table.add_column(column)
    for row in rows:
        table.add_row(row["binary"], row["version"], row["path"])
    Console().print(table)
