"""A Target's credentials as they travel to workers on other machines: contents out, files back in.

The master reads its CA, client certificate and key into the Target it sends; a worker writes them
into its own private folder (0600 files, removed when the worker exits), because TLS wants paths.
Nothing of the master's file system is assumed on a worker.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from loadtests import settings as load_settings
from scheduler.kube import kubeconfig


def _read(path: str | None) -> str | None:
    return Path(path).read_text() if path else None


def portable(target: load_settings.Target) -> load_settings.Target:
    """The target with its credential files' contents instead of their paths."""
    return dataclasses.replace(target, ca_pem=_read(target.ca_file), cert_pem=_read(target.cert_file),
                               key_pem=_read(target.key_file), ca_file=None, cert_file=None, key_file=None)


def _write(pem: str | None, suffix: str) -> str | None:
    return str(kubeconfig.credential_file(pem.encode(), suffix)) if pem else None


def materialised(target: load_settings.Target) -> load_settings.Target:
    """The target with the contents it carried written to this process's private files."""
    if not (target.ca_pem or target.cert_pem or target.key_pem):
        return target
    return dataclasses.replace(target, ca_file=_write(target.ca_pem, ".crt"), cert_file=_write(target.cert_pem, ".crt"),
                               key_file=_write(target.key_pem, ".key"), ca_pem=None, cert_pem=None, key_pem=None)
