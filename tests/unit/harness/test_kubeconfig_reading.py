"""Kubeconfigs read the way kubectl reads them, and remote apiservers refused before any traffic."""

from __future__ import annotations

import base64
import socket
import stat
import sys
from pathlib import Path

import pytest
import yaml

from harness import cli
from harness.clusters import existing
from harness.errors import KqbenchError
from harness.kube import kubeconfig
from scheduler.kube import kubeconfig as reader


def write_config(folder: Path, user: dict, server: str = "https://127.0.0.1:6443", cluster: dict | None = None) -> Path:
    config = {"apiVersion": "v1", "kind": "Config", "current-context": "c",
              "contexts": [{"name": "c", "context": {"cluster": "k", "user": "u"}}],
              "clusters": [{"name": "k", "cluster": {"server": server, **(cluster or {})}}],
              "users": [{"name": "u", "user": user}]}
    path = folder / "kubeconfig"
    path.write_text(yaml.safe_dump(config))
    return path


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def test_inline_certificates_become_private_files_of_this_process(tmp_path):
    path = write_config(tmp_path, {"client-certificate-data": b64("CERT"), "client-key-data": b64("KEY")},
                        cluster={"certificate-authority-data": b64("CA")})
    creds = kubeconfig.load(path)
    assert creds.server == "https://127.0.0.1:6443" and creds.token is None and not creds.insecure
    for file, content in ((creds.ca_file, "CA"), (creds.cert_file, "CERT"), (creds.key_file, "KEY")):
        assert Path(file).read_text() == content
        assert Path(file).parent == reader.private_folder()
        assert stat.S_IMODE(Path(file).stat().st_mode) == 0o600


def test_relative_paths_and_token_files_resolve_from_the_kubeconfig_folder(tmp_path):
    (tmp_path / "pki").mkdir()
    (tmp_path / "pki" / "ca.crt").write_text("CA")
    (tmp_path / "token").write_text("from-a-file")
    path = write_config(tmp_path, {"tokenFile": "token"}, cluster={"certificate-authority": "pki/ca.crt"})
    creds = kubeconfig.load(path)
    assert Path(creds.ca_file).read_text() == "CA"
    assert creds.token == "from-a-file"
    assert creds.headers() == {"Authorization": "Bearer from-a-file"}


def test_an_exec_plugin_runs_and_its_token_is_used(tmp_path):
    plugin = tmp_path / "plugin.py"
    plugin.write_text('import json\nprint(json.dumps({"apiVersion": "client.authentication.k8s.io/v1beta1", '
                      '"kind": "ExecCredential", "status": {"token": "from-the-plugin"}}))\n')
    path = write_config(tmp_path, {"exec": {"apiVersion": "client.authentication.k8s.io/v1beta1",
                                            "command": sys.executable, "args": [str(plugin)],
                                            "interactiveMode": "Never"}},
                        cluster={"insecure-skip-tls-verify": True})
    creds = kubeconfig.load(path)
    assert creds.token == "from-the-plugin" and creds.insecure


def test_a_named_context_is_honoured(tmp_path):
    path = write_config(tmp_path, {"token": "t"})
    config = yaml.safe_load(path.read_text())
    config["clusters"].append({"name": "far", "cluster": {"server": "https://10.1.2.3:6443"}})
    config["contexts"].append({"name": "remote", "context": {"cluster": "far", "user": "u"}})
    path.write_text(yaml.safe_dump(config))
    assert kubeconfig.server(path) == "https://127.0.0.1:6443"
    assert kubeconfig.load(path, context="remote").server == "https://10.1.2.3:6443"


@pytest.mark.parametrize("user, message", [
    ({"username": "admin", "password": "secret"}, "password"),
])
def test_unsupported_logins_are_one_line_errors(tmp_path, user, message):
    with pytest.raises(KqbenchError, match=message):
        kubeconfig.load(write_config(tmp_path, user))


def test_missing_and_broken_files_are_one_line_errors(tmp_path):
    with pytest.raises(KqbenchError, match="does not exist"):
        kubeconfig.load(tmp_path / "nope")
    (tmp_path / "broken").write_text("current-context: x\ncontexts: []\n")
    with pytest.raises(KqbenchError, match="cannot be used") as error:
        kubeconfig.load(tmp_path / "broken")
    assert "\n" not in str(error.value)


class Traffic(Exception):
    """A connection was attempted."""


@pytest.fixture
def no_traffic(monkeypatch):
    """Any socket connection (to the apiserver or anywhere) fails the test."""
    def refuse(*args, **kwargs):
        raise Traffic(f"connection attempted: {args[1:] or kwargs}")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)


REMOTE = "https://10.255.255.1:6443"
"""A private address no test can reach: any connection to it trips `no_traffic` first."""


def test_the_existing_backend_refuses_a_remote_apiserver_without_the_flag_and_sends_nothing(tmp_path, no_traffic):
    path = write_config(tmp_path, {"token": "t"}, server=REMOTE)
    with pytest.raises(KqbenchError, match="--allow-remote"):
        existing.up("far", str(path), root=tmp_path)
    # with the flag the same call goes on to ask the apiserver its version: the flag is what stood in the way
    with pytest.raises(Traffic):
        existing.up("far", str(path), root=tmp_path, allow_remote=True)


def test_the_refusal_comes_before_any_credential_plugin_runs(tmp_path, no_traffic):
    ran = tmp_path / "plugin-ran"
    plugin = tmp_path / "plugin.py"
    plugin.write_text(f"open({str(ran)!r}, 'w').close()\n")
    path = write_config(tmp_path, {"exec": {"apiVersion": "client.authentication.k8s.io/v1beta1",
                                            "command": sys.executable, "args": [str(plugin)]}}, server=REMOTE)
    with pytest.raises(KqbenchError, match="--allow-remote"):
        kubeconfig.load_target(path, allow_remote=False)
    assert not ran.exists()


def test_kqbench_load_refuses_a_remote_apiserver_without_the_flag_and_names_it(tmp_path, no_traffic, monkeypatch,
                                                                              capsys):
    path = write_config(tmp_path, {"token": "t"}, server=REMOTE)
    monkeypatch.setattr(sys, "argv", ["kqbench", "load", "--kubeconfig", str(path), "--run-time", "1s",
                                      "--out", str(tmp_path / "out")])
    with pytest.raises(SystemExit) as exit_status:
        cli.main()
    assert exit_status.value.code == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert "--allow-remote" in line and "10.255.255.1" in line
    assert not (tmp_path / "out").exists()  # refused before a run folder or a load process existed


def test_a_remote_target_carries_the_opt_in(tmp_path, no_traffic):
    path = write_config(tmp_path, {"token": "t"}, server=REMOTE)
    target = kubeconfig.load_target(path, allow_remote=True)
    assert target.server == REMOTE and target.allow_remote and target.token == "t"
