"""Reading a kubeconfig into what our own HTTP clients need (URL, CA, client cert or token)."""

from __future__ import annotations

import atexit
import base64
import hashlib
import os
import shutil
import ssl
import tempfile
from dataclasses import dataclass
from pathlib import Path

import yaml


class KubeconfigError(ValueError):
    """A kubeconfig that cannot be used; the message names the file and the problem."""


@dataclass(frozen=True, slots=True)
class Credentials:
    server: str
    ca_file: str | None
    cert_file: str | None
    key_file: str | None
    token: str | None
    insecure: bool = False

    def ssl_context(self) -> ssl.SSLContext:
        context = ssl.create_default_context(cafile=self.ca_file)
        if self.insecure:
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE
        if self.cert_file:
            context.load_cert_chain(self.cert_file, self.key_file)
        return context

    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"} if self.token else {}


def _materialise(data_b64: str | None, path: str | None, base: Path, suffix: str) -> str | None:
    """Inline `*-data` fields become files (ssl wants paths); relative paths resolve from the kubeconfig."""
    if data_b64:
        return str(credential_file(base64.b64decode(data_b64), suffix))
    if path:
        return str((base / path).resolve())
    return None


def credential_file(data: bytes, suffix: str) -> Path:
    """A 0600 file holding `data` in this process's private folder, removed when the process exits.

    One file per distinct content: loading a kubeconfig again reuses it, so repeated loads leave no new
    files behind. The folder is per process so that one process's exit never removes a key another
    still uses (Locust workers open the parent's paths while it runs); folders of processes that died
    without running their exit hooks (kill -9) are removed by the next process that loads one."""
    folder = _process_folder()
    path = folder / f"{hashlib.sha256(data).hexdigest()[:40]}{suffix}"
    if not path.is_file():
        partial = folder / f".{path.name}.partial"
        with os.fdopen(os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "wb") as handle:
            handle.write(data)
        partial.replace(path)  # atomic: a concurrent reader never sees half a key
    return path


def credentials_root() -> Path:
    """The folder of this user's per-process credential folders."""
    return Path(tempfile.gettempdir()) / f"kqbench-credentials-{os.getuid()}"


def _private_folder(folder: Path) -> Path:
    folder.mkdir(mode=0o700, exist_ok=True)
    info = folder.stat()
    if info.st_uid != os.getuid() or info.st_mode & 0o077:
        raise KubeconfigError(f"{folder} is not private to this user: remove it and try again")
    return folder


def private_folder() -> Path:
    """This process's private credential folder (0700, removed at exit): for files other loaders write."""
    return _process_folder()


def _process_folder() -> Path:
    root = _private_folder(credentials_root())
    folder = root / str(os.getpid())
    if not folder.is_dir():
        remove_stale_folders(root)
        _private_folder(folder)
        atexit.register(_remove_own, folder)
    return folder


def _remove_own(folder: Path) -> None:
    # a forked child inherits the parent's exit hooks: it must not remove the parent's folder
    if folder.name == str(os.getpid()):
        shutil.rmtree(folder, ignore_errors=True)


def remove_stale_folders(root: Path) -> list[Path]:
    """Remove the credential folders of processes that are gone; returns what was removed."""
    removed = []
    for folder in root.iterdir():
        if folder.name.isdigit() and not _alive(int(folder.name)):
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder)
        elif folder.is_file():  # left by versions that wrote keys straight into the root
            folder.unlink(missing_ok=True)
            removed.append(folder)
    return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process holds the number: not ours to judge
        return True
    return True


def load(path: str | Path, context: str | None = None) -> Credentials:
    """Credentials of the current (or named) context of a kubeconfig file."""
    path = Path(path).expanduser()
    try:
        config = yaml.safe_load(path.read_text())
    except FileNotFoundError:
        raise KubeconfigError(f"kubeconfig {path} does not exist: pass --kubeconfig with an existing file") from None
    except yaml.YAMLError as error:
        raise KubeconfigError(f"kubeconfig {path} is not valid YAML: {error}") from None
    try:
        name = context or config["current-context"]
        ctx = next(c["context"] for c in config["contexts"] if c["name"] == name)
        cluster = next(c["cluster"] for c in config["clusters"] if c["name"] == ctx["cluster"])
        user = next(u["user"] for u in config.get("users", []) if u["name"] == ctx.get("user"))
    except (KeyError, StopIteration, TypeError):
        raise KubeconfigError(f"kubeconfig {path}: context {context or 'current-context'} is incomplete") from None
    base = path.parent
    return Credentials(
        server=cluster["server"].rstrip("/"),
        ca_file=_materialise(cluster.get("certificate-authority-data"), cluster.get("certificate-authority"), base, ".crt"),
        cert_file=_materialise(user.get("client-certificate-data"), user.get("client-certificate"), base, ".crt"),
        key_file=_materialise(user.get("client-key-data"), user.get("client-key"), base, ".key"),
        token=user.get("token"),
        insecure=bool(cluster.get("insecure-skip-tls-verify")),
    )
