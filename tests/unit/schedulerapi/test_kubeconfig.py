"""Reading a kubeconfig: inline credentials become private files, reused across loads, removed at exit."""

from __future__ import annotations

import base64
import os
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

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


@pytest.fixture
def temp(tmp_path, monkeypatch):
    folder = tmp_path / "tmp"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    return folder


def test_inline_credentials_become_private_files_reused_across_loads(tmp_path, temp):
    path = _write(tmp_path, b"KEY PEM")
    first, second = kubeconfig.load(path), kubeconfig.load(path)
    assert first == second and first.server == "https://127.0.0.1:6443"
    assert Path(first.key_file).read_bytes() == b"KEY PEM"
    [root] = temp.iterdir()
    [folder] = root.iterdir()
    assert folder.name == str(os.getpid())
    for private in (root, folder):
        assert stat.S_IMODE(private.stat().st_mode) == 0o700
    for file in folder.iterdir():
        assert stat.S_IMODE(file.stat().st_mode) == 0o600
    assert len(list(folder.iterdir())) == 3  # CA, certificate, key: nothing more for the second load
    other = kubeconfig.load(_write(tmp_path, b"OTHER KEY"))
    assert other.key_file != first.key_file and other.ca_file == first.ca_file


LOAD_AND_EXIT = """
import sys, tempfile
tempfile.tempdir = sys.argv[1]
from scheduler.kube import kubeconfig
creds = kubeconfig.load(sys.argv[2])
print(creds.key_file)
"""


def test_a_process_removes_its_key_files_when_it_exits(tmp_path, temp):
    path = _write(tmp_path, b"KEY PEM")
    done = subprocess.run([sys.executable, "-c", LOAD_AND_EXIT, str(temp), str(path)],
                          capture_output=True, text=True, check=True, timeout=60)
    key_file = Path(done.stdout.strip())
    assert key_file.name.endswith(".key") and str(key_file).startswith(str(temp))
    assert not key_file.exists() and not key_file.parent.exists()


def test_folders_of_dead_processes_are_removed_by_the_next_load(tmp_path, temp):
    root = temp / f"kqbench-credentials-{os.getuid()}"
    root.mkdir(mode=0o700)
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True, timeout=60)
    stale = root / dead.stdout.strip()
    stale.mkdir(mode=0o700)
    (stale / "left.key").write_bytes(b"KEY")
    (root / "old-layout.key").write_bytes(b"KEY")
    kubeconfig.load(_write(tmp_path, b"KEY PEM"))
    assert sorted(p.name for p in root.iterdir()) == [str(os.getpid())]


def test_a_folder_open_to_others_is_refused(tmp_path, temp):
    root = temp / f"kqbench-credentials-{os.getuid()}"
    root.mkdir()
    root.chmod(0o755)
    with pytest.raises(kubeconfig.KubeconfigError, match="not private"):
        kubeconfig.load(_write(tmp_path, b"KEY PEM"))


PLAIN_LOAD = """
import sys, tempfile
tempfile.tempdir = sys.argv[1]
from scheduler.kube import kubeconfig
kubeconfig.load(sys.argv[2])
print("kubernetes" in sys.modules)
"""


def test_a_plain_kubeconfig_is_read_without_the_client_library(tmp_path, temp):
    # the scheduler under test reads one; the client library would add some 17 MB to its RSS
    done = subprocess.run([sys.executable, "-c", PLAIN_LOAD, str(temp), str(_write(tmp_path, b"KEY PEM"))],
                          capture_output=True, text=True, check=True, timeout=60)
    assert done.stdout.strip() == "False"
