"""A kubeconfig for the harness's own clients: the scheduler's reader (`scheduler.kube.kubeconfig`,
the one reader: the scheduler may not import the harness), its errors as one-line KqbenchErrors, and
the remote-apiserver refusal of the load generator's target."""

from __future__ import annotations

from pathlib import Path

from harness.errors import KqbenchError
from loadtests import loopback, settings as load_settings
from scheduler.kube import kubeconfig as reader

Credentials = reader.Credentials


def load(path: str | Path, context: str | None = None) -> Credentials:
    """Credentials of the current (or named) context; a bad file is a one-line KqbenchError."""
    try:
        return reader.load(path, context)
    except reader.KubeconfigError as error:
        raise KqbenchError(str(error)) from None


def server(path: str | Path, context: str | None = None) -> str:
    """The apiserver URL of the current (or named) context, read without logging in (no plugin runs)."""
    try:
        return reader.server(path, context)
    except reader.KubeconfigError as error:
        raise KqbenchError(str(error)) from None


def load_target(path: str | Path, allow_remote: bool, context: str | None = None) -> load_settings.Target:
    """Where load goes and with which credentials; a remote apiserver is refused without the opt-in,
    before any credential plugin runs and before any request."""
    if why := loopback.refusal(server(path, context), allow_remote):
        raise KqbenchError(why)
    creds = load(path, context)
    return load_settings.Target(server=creds.server, ca_file=creds.ca_file, cert_file=creds.cert_file,
                                key_file=creds.key_file, token=creds.token, insecure=creds.insecure,
                                allow_remote=allow_remote)
