"""What kqbench remembers about clusters it started: one JSON file per cluster name."""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path

from harness.errors import KqbenchError

STATE_VERSION = 1


def state_root() -> Path:
    """$KQBENCH_STATE, else $XDG_STATE_HOME/kqbench, else ~/.local/state/kqbench."""
    if env := os.environ.get("KQBENCH_STATE"):
        return Path(env)
    base = os.environ.get("XDG_STATE_HOME") or Path.home() / ".local" / "state"
    return Path(base) / "kqbench"


@dataclass(slots=True)
class ClusterInfo:
    """A running (or crashed) cluster: where to reach it and which processes belong to it."""

    name: str
    backend: str
    kubeconfig: str
    apiserver_url: str
    etcd_url: str | None = None
    workdir: str | None = None
    """Folder whose path appears in every process the cluster runs (the kwok backend's)."""
    pids: dict[str, int] = field(default_factory=dict)
    metrics_urls: dict[str, str] = field(default_factory=dict)
    """/metrics of the cluster's own components that serve it to anyone on loopback, by component
    (kube-controller-manager, kube-scheduler: kwokctl allows /metrics without authorization)."""
    versions: dict[str, str] = field(default_factory=dict)
    feature_gates: dict[str, bool] = field(default_factory=dict)
    created_at: str = ""
    version: int = STATE_VERSION

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=2, sort_keys=True)

    @classmethod
    def from_json(cls, text: str, source: str = "cluster state") -> "ClusterInfo":
        data = json.loads(text)
        if data.get("version", 0) > STATE_VERSION:
            raise KqbenchError(f"{source} was written by a newer kqbench (format {data['version']}); upgrade kqbench")
        return cls(**data)


def info_path(name: str, root: Path | None = None) -> Path:
    return (root or state_root()) / "clusters" / f"{name}.json"


def save(info: ClusterInfo, root: Path | None = None) -> Path:
    path = info_path(info.name, root)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(info.to_json())
    tmp.replace(path)
    return path


def load(name: str, root: Path | None = None) -> ClusterInfo:
    path = info_path(name, root)
    if not path.is_file():
        raise KqbenchError(f"no cluster named {name!r} is known: start one with `kqbench cluster up --name {name}`")
    return ClusterInfo.from_json(path.read_text(), str(path))


def forget(name: str, root: Path | None = None) -> None:
    info_path(name, root).unlink(missing_ok=True)


def known_names(root: Path | None = None) -> list[str]:
    folder = (root or state_root()) / "clusters"
    return sorted(p.stem for p in folder.glob("*.json")) if folder.is_dir() else []
