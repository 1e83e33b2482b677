"""Reading a kubeconfig into what our own HTTP clients need (URL, CA, client cert or token)."""

from __future__ import annotations

import base64
import hashlib
import os
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
    """A file holding `data`, one per distinct content in a private folder of this user: loading a
    kubeconfig again reuses it, so repeated loads leave no new files behind (and other processes, such
    as Locust workers, can open the path while this one runs)."""
    folder = Path(tempfile.gettempdir()) / f"kqbench-credentials-{os.getuid()}"
    folder.mkdir(mode=0o700, exist_ok=True)
    info = folder.stat()
    if info.st_uid != os.getuid() or info.st_mode & 0o077:
        raise KubeconfigError(f"{folder} is not private to this user: remove it and try again")
    path = folder / f"{hashlib.sha256(data).hexdigest()[:40]}{suffix}"
    if not path.is_file():
        partial = folder / f".{path.name}.{os.getpid()}"
        with os.fdopen(os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "wb") as handle:
            handle.write(data)
        partial.replace(path)  # atomic: a concurrent reader never sees half a key
    return path


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
