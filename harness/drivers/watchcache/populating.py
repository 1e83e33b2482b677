"""Fill a cluster with N namespaces x M ConfigMaps of S bytes: the data the list experiments read.

Concurrent POSTs over kept-alive connections (harness.kube.posting). Objects are built
by pure functions so their shape and size are unit-tested without a server.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import orjson

from harness.kube import posting
from harness.kube.kubeconfig import Credentials
from loadtests import listgroups

NAMESPACE_PREFIX = "kqb-list"
GROUP = "watchcache"
"""Value of listgroups.GROUP_LABEL on the populated namespaces: the group ModeListers spread over."""
_FILLER = b"kqbench-watchcache-"


@dataclass(frozen=True, slots=True)
class PopulateReport:
    namespaces: int
    objects: int
    bytes: int
    """Bytes of ConfigMap data values written (object overhead excluded)."""
    seconds: float

    @property
    def objects_per_second(self) -> float:
        return self.objects / self.seconds if self.seconds > 0 else 0.0

    @property
    def megabytes_per_second(self) -> float:
        return self.bytes / 1e6 / self.seconds if self.seconds > 0 else 0.0


def namespace_name(index: int) -> str:
    return f"{NAMESPACE_PREFIX}-{index}"


def namespace_manifest(index: int, group: str = GROUP) -> dict:
    return {"apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": namespace_name(index), "labels": {listgroups.GROUP_LABEL: group}}}


def value_of(size: int) -> str:
    """A printable value of exactly `size` bytes (repetitive text: real ConfigMaps are text, not noise)."""
    return (_FILLER * (size // len(_FILLER) + 1))[:size].decode()


def configmap_manifest(namespace: str, index: int, size: int) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": f"cm-{index:06d}", "namespace": namespace, "labels": {"kqbench.dev/list": "data"}},
            "data": {"value": value_of(size)}}


def populate(creds: Credentials, namespaces: int, per_namespace: int, size: int, concurrency: int = 16,
             timeout: float = 1800.0, progress: Callable[[int, int], None] = lambda done, total: None,
             clock: Callable[[], float] = time.monotonic) -> PopulateReport:
    """Create the namespaces, then their ConfigMaps (existing ones count as done); bounded by timeout."""
    started = clock()
    namespace_jobs = [("/api/v1/namespaces", lambda i=i: orjson.dumps(namespace_manifest(i))) for i in range(namespaces)]
    spent = posting.post_all(creds, namespace_jobs, concurrency, timeout)
    # Interleave namespaces so every namespace grows at once (as a cluster's would), not one after another.
    jobs = [(f"/api/v1/namespaces/{namespace_name(n)}/configmaps",
             lambda n=n, i=i: orjson.dumps(configmap_manifest(namespace_name(n), i, size)))
            for i in range(per_namespace) for n in range(namespaces)]
    posting.post_all(creds, jobs, concurrency, max(1.0, timeout - spent), progress)
    return PopulateReport(namespaces, len(jobs), len(jobs) * size, clock() - started)
