"""Reading a kubeconfig: inline credentials become private files, reused across loads."""

from __future__ import annotations

import base64
import stat
import tempfile
from pathlib import Path

from scheduler.kube import kubeconfig

KUBECONFIG = """apiVersion: v1
kind: Config
clusters: [{{name: c, cluster: {{server: "https://127.0.0.1:6443/", certificate-authority-data: {ca}}}}}]
users: [{{name: u, user: {{client-certificate-data: {cert}, client-key-data: {key}}}}}]
contexts: [{{name: x, context: {{cluster: c, user: u}}}}]
current-context: x
"""


def _write(tmp_path, key: bytes):
    b64 = lambda data: base64.b64encode(data).decode()  # noqa: E731
    path = tmp_path / f"kubeconfig-{len(key)}"
    path.write_text(KUBECONFIG.format(ca=b64(b"CA PEM"), cert=b64(b"CERT PEM"), key=b64(key)))
    return path


def test_inline_credentials_become_private_files_reused_across_loads(tmp_path, monkeypatch):
    temp = tmp_path / "tmp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    path = _write(tmp_path, b"KEY PEM")
    first, second = kubeconfig.load(path), kubeconfig.load(path)
    assert first == second and first.server == "https://127.0.0.1:6443"
    assert Path(first.key_file).read_bytes() == b"KEY PEM"
    [folder] = temp.iterdir()
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700 and stat.S_IMODE(Path(first.key_file).stat().st_mode) == 0o600
    assert len(list(folder.iterdir())) == 3  # CA, certificate, key: nothing more for the second load
    other = kubeconfig.load(_write(tmp_path, b"OTHER KEY"))
    assert other.key_file != first.key_file and other.ca_file == first.ca_file
