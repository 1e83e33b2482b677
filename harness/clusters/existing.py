"""The existing backend: a cluster someone else runs, reached through their kubeconfig.

Nothing is started or stopped; `down` only forgets it.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from harness.clusters import state
from harness.errors import KqbenchError
from harness.kube import kubeconfig, rest

NAME = "existing"


def up(name: str, kubeconfig_path: str, root: Path | None = None, allow_remote: bool = False) -> state.ClusterInfo:
    """Adopt the cluster of a kubeconfig; one on another machine only with `allow_remote` (checked first)."""
    if state.info_path(name, root).exists():
        raise KqbenchError(f"cluster name {name!r} is taken: `kqbench cluster down --name {name}` or pick another --name")
    path = str(Path(kubeconfig_path).expanduser().resolve())
    kubeconfig.load_target(path, allow_remote)  # refuses a remote apiserver before any request
    creds = kubeconfig.load(path)
    version = rest.get_json(creds, "/version")
    info = state.ClusterInfo(
        name=name, backend=NAME, kubeconfig=path, apiserver_url=creds.server,
        versions={"kubernetes": version.get("gitVersion", "?")},
        created_at=dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
    )
    state.save(info, root)
    return info


def down(name: str, root: Path | None = None) -> list[int]:
    state.forget(name, root)
    return []
