"""Where built binaries live: a per-user cache keyed by component and version."""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path

KUBERNETES_COMMANDS = ("kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubectl")
ETCD_COMMANDS = ("etcd", "etcdctl")
KWOK_COMMANDS = ("kwok", "kwokctl")
# kueuectl is installed under the name kubectl looks plugins up by (`kubectl kueue ...`).
KUEUE_COMMANDS = ("kueue", "kubectl-kueue")
# Folders of the Kueue module source copied beside its binaries: {folder in the cache: folder in the module}.
KUEUE_MANIFESTS = {
    "crd": "config/components/crd/bases",
    "visibility": "config/components/visibility",
    "manager": "config/components/manager",
}
VERSITYGW_COMMANDS = ("versitygw",)
STAMP = "build.json"


def cache_root() -> Path:
    """$KQBENCH_CACHE, else $XDG_CACHE_HOME/kqbench, else ~/.cache/kqbench."""
    if env := os.environ.get("KQBENCH_CACHE"):
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "kqbench"


def component_dir(component: str, version: str, root: Path | None = None) -> Path:
    """Folder of one component's binaries, e.g. ~/.cache/kqbench/bin/kubernetes-v1.35.4."""
    return (root or cache_root()) / "bin" / f"{component}-{version}"


def build_dir(component: str, version: str, root: Path | None = None) -> Path:
    """Folder of the wrapper module and build log for one component."""
    return (root or cache_root()) / "build" / f"{component}-{version}"


def is_built(directory: Path, commands: tuple[str, ...], folders: tuple[str, ...] = ()) -> bool:
    """True when a finished build left every command, every folder and its stamp in directory."""
    return ((directory / STAMP).is_file() and all((directory / c).is_file() for c in commands)
            and all((directory / f).is_dir() for f in folders))


@dataclass(frozen=True, slots=True)
class Binaries:
    """Absolute paths of every binary a cluster needs, and the versions they were built at."""

    kubernetes_version: str
    etcd_version: str
    kwok_version: str
    kube_apiserver: Path
    kube_controller_manager: Path
    kube_scheduler: Path
    kubectl: Path
    etcd: Path
    etcdctl: Path
    kwok: Path
    kwokctl: Path

    @classmethod
    def in_cache(cls, k8s: str, etcd: str, kwok: str, root: Path | None = None) -> "Binaries":
        kube_dir = component_dir("kubernetes", k8s, root)
        etcd_dir = component_dir("etcd", etcd, root)
        kwok_dir = component_dir("kwok", kwok, root)
        return cls(
            kubernetes_version=k8s,
            etcd_version=etcd,
            kwok_version=kwok,
            kube_apiserver=kube_dir / "kube-apiserver",
            kube_controller_manager=kube_dir / "kube-controller-manager",
            kube_scheduler=kube_dir / "kube-scheduler",
            kubectl=kube_dir / "kubectl",
            etcd=etcd_dir / "etcd",
            etcdctl=etcd_dir / "etcdctl",
            kwok=kwok_dir / "kwok",
            kwokctl=kwok_dir / "kwokctl",
        )

    def missing(self) -> list[Path]:
        """Binaries that are not (yet) on disk."""
        return [p for p in self.paths().values() if not p.is_file()]

    def paths(self) -> dict[str, Path]:
        return {k: v for k, v in asdict(self).items() if isinstance(v, Path)}

    def as_json(self) -> str:
        return json.dumps({k: str(v) for k, v in asdict(self).items()}, indent=2)


KUEUE_MANAGER = "kueue"
"""File name of Kueue's manager binary (cmd/kueue); also how its running processes are recognised."""


@dataclass(frozen=True, slots=True)
class KueueBuild:
    """Kueue's manager, its kubectl plugin and the manifests taken from the same module version."""

    version: str
    manager: Path
    kubectl_plugin: Path
    crd_dir: Path
    """Kueue's CRDs as its module ships them (config/components/crd/bases)."""
    visibility_dir: Path
    """Its visibility APIService and Service manifests (config/components/visibility)."""
    manager_config: Path
    """The Configuration Kueue ships for its manager (config/components/manager)."""

    @classmethod
    def in_cache(cls, version: str, root: Path | None = None) -> "KueueBuild":
        folder = component_dir("kueue", version, root)
        return cls(version=version, manager=folder / KUEUE_MANAGER, kubectl_plugin=folder / "kubectl-kueue",
                   crd_dir=folder / "crd", visibility_dir=folder / "visibility",
                   manager_config=folder / "manager" / "controller_manager_config.yaml")

    def missing(self) -> list[Path]:
        """Files or folders that are not (yet) on disk."""
        wanted = [self.manager, self.kubectl_plugin, self.crd_dir, self.visibility_dir, self.manager_config]
        return [p for p in wanted if not p.exists()]
