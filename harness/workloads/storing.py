"""Workload objects as kube-apiserver keeps them in etcd, for loading pending Workloads without POSTs (pure).

Workload is a custom resource: kube-apiserver stores it as JSON (custom resources have no protobuf),
under --etcd-prefix (kwokctl's default, /registry), then `<group>/<plural>/<namespace>/<name>`; found
by POSTing one on a kwok cluster and listing etcd's keys. A stored Workload is the body a client POSTs
(loadtests.workloads.build, the same one the churn users send) plus what the POST path adds: the uid,
creationTimestamp and generation 1 kube-apiserver sets. Nothing else: no resourceVersion (etcd's
revision is the version kube-apiserver reports), no managedFields (a client's field-manager history;
kube-apiserver starts one on the first update), no status (the status subresource drops it on create).
"""

from __future__ import annotations

import datetime as dt
import re
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import orjson

from loadtests import settings as load_settings, workloads

ETCD_PREFIX = f"/registry/{workloads.GROUP}/workloads/"
BULK_LABEL = "kqbench.io/bulk-load"
"""Every loaded Workload carries it with its batch's name prefix: what the LIST that counts them selects."""


@dataclass(frozen=True, slots=True)
class Batch:
    """`count` pending Workloads named PREFIX-0000000 ... in one LocalQueue of one namespace."""

    count: int
    queue: str
    namespace: str = "default"
    prefix: str = "bulk"
    kind: load_settings.WorkloadKind = load_settings.WorkloadKind()

    def name(self, index: int) -> str:
        return f"{self.prefix}-{index:07d}"

    def names(self) -> list[str]:
        return [self.name(index) for index in range(self.count)]

    def selector(self) -> str:
        return f"{BULK_LABEL}={self.prefix}"

    def manifest(self, index: int) -> dict:
        """The body a client would POST for the index-th Workload."""
        body = workloads.build(self.name(index), self.namespace, self.queue, self.kind, owner="")
        body["metadata"]["labels"] = {BULK_LABEL: self.prefix}
        return body


def namespace_prefix(namespace: str) -> bytes:
    """The etcd prefix of every Workload in `namespace` (the existing-name check reads it keys-only)."""
    return f"{ETCD_PREFIX}{namespace}/".encode()


def key(namespace: str, name: str) -> bytes:
    return namespace_prefix(namespace) + name.encode()


def name_of(stored_key: bytes) -> str:
    """namespace/name of a Workload's etcd key."""
    return stored_key.decode(errors="replace")[len(ETCD_PREFIX):]


def rfc3339(seconds: float) -> str:
    """A Kubernetes timestamp (whole seconds, UTC), as metav1.Time serialises."""
    return dt.datetime.fromtimestamp(int(seconds), dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def stored_workload(batch: Batch, index: int, uid: str, created: str) -> dict:
    """The index-th Workload of batch as kube-apiserver would store it after a POST (module docstring)."""
    manifest = batch.manifest(index)
    metadata = {**manifest["metadata"], "uid": uid, "creationTimestamp": created, "generation": 1}
    return {"apiVersion": manifest["apiVersion"], "kind": manifest["kind"], "metadata": metadata,
            "spec": manifest["spec"]}


def entries(batch: Batch, created: str, uids: Callable[[], str] = lambda: str(uuid.uuid4())
            ) -> Iterator[tuple[bytes, bytes]]:
    """(etcd key, JSON value) of every Workload of the batch, in index order."""
    for index in range(batch.count):
        workload = stored_workload(batch, index, uids(), created)
        yield key(batch.namespace, workload["metadata"]["name"]), orjson.dumps(workload)


_DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
DNS_LABEL_MAX = 63
SUFFIX = len("-0000000")


def problems(batch: Batch) -> dict[str, str]:
    """What would make kube-apiserver refuse the batch's objects, by CLI option ({} when none)."""
    found = {}
    for option, value, longest in (("--prefix", batch.prefix, DNS_LABEL_MAX - SUFFIX),
                                   ("--namespace", batch.namespace, DNS_LABEL_MAX),
                                   ("--queue", batch.queue, DNS_LABEL_MAX)):
        if not _DNS_LABEL.fullmatch(value) or len(value) > longest:
            found[option] = (f"{value!r} is not a DNS label of at most {longest} characters "
                             "(lower-case letters, digits and '-', a letter or digit at each end)")
    if batch.count > 10**7:
        found["--count"] = f"at most 10000000 (names carry 7 digits; got {batch.count})"
    return found
