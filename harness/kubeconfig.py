"""Reading a kubeconfig for the harness's own clients (the reader lives with the scheduler's client)."""

from __future__ import annotations

from pathlib import Path

from harness.errors import KqbenchError
from scheduler.kube import kubeconfig as reader

Credentials = reader.Credentials


def load(path: str | Path, context: str | None = None) -> Credentials:
    """Credentials of the current (or named) context; a bad file is a one-line KqbenchError."""
    try:
        return reader.load(path, context)
    except reader.KubeconfigError as error:
        raise KqbenchError(str(error)) from None
