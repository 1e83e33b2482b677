"""The container recipe and manifests under deploy/: consistent with the project and with the CLI."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import tomllib
import yaml

from harness.cli import load

DEPLOY = Path(__file__).resolve().parents[3] / "deploy"


def manifests() -> list[dict]:
    return [doc for path in sorted((DEPLOY / "kubernetes").glob("*.yaml"))
            for doc in yaml.safe_load_all(path.read_text()) if doc]


def project_version() -> str:
    return tomllib.loads((DEPLOY.parent / "pyproject.toml").read_text())["project"]["version"]


def containers() -> list[dict]:
    return [c for doc in manifests() if doc["kind"] in ("Job", "Deployment")
            for c in doc["spec"]["template"]["spec"]["containers"]]


def test_the_containerfile_installs_this_version_from_the_index_and_names_no_registry():
    text = (DEPLOY / "Containerfile").read_text()
    assert f"ARG KQBENCH_VERSION={project_version()}" in text
    network_steps = [line for line in text.splitlines() if line.startswith("RUN")]
    assert network_steps == ['RUN python -m pip install --no-cache-dir --disable-pip-version-check '
                             '"kqbench==${KQBENCH_VERSION}"']
    assert not re.search(r"--index-url|--extra-index-url|https?://", text)
    base = re.search(r"ARG PYTHON_IMAGE=(\S+)", text).group(1)
    assert "/" not in base  # no host in the image name: the builder's own configuration decides


def test_every_container_runs_this_version_as_a_user_that_is_not_root():
    for container in containers():
        assert container["image"] == f"kqbench:{project_version()}"
        assert container["securityContext"]["allowPrivilegeEscalation"] is False


@pytest.mark.parametrize("role", ["master", "worker"])
def test_the_manifests_arguments_are_ones_kqbench_load_accepts(role):
    (container,) = [c for c in containers() if c["name"] == role]
    args = container["args"]
    assert args[0] == "load"
    context = load.command.make_context("load", list(args[1:]))  # click refuses unknown or malformed options
    assert context.params[role] is True


def test_the_master_waits_for_as_many_workers_as_the_deployment_runs():
    (job,) = [d for d in manifests() if d["kind"] == "Job"]
    (workers,) = [d for d in manifests() if d["kind"] == "Deployment"]
    args = job["spec"]["template"]["spec"]["containers"][0]["args"]
    assert int(args[args.index("--expect-workers") + 1]) == workers["spec"]["replicas"]
    worker_args = workers["spec"]["template"]["spec"]["containers"][0]["args"]
    (service,) = [d for d in manifests() if d["kind"] == "Service"]
    host = worker_args[worker_args.index("--master-host") + 1]
    assert host.startswith(f"{service['metadata']['name']}.{service['metadata']['namespace']}.")
    assert workers["spec"]["template"]["spec"]["automountServiceAccountToken"] is False


def test_rbac_grants_no_wildcards_and_binds_only_the_load_account():
    for doc in manifests():
        for rule in doc.get("rules", []):
            assert "*" not in rule["verbs"] + rule["resources"] + rule["apiGroups"], doc["metadata"]["name"]
        for subject in doc.get("subjects", []):
            assert subject["name"] == "kqbench-load"
