"""The scheduler's API on a cluster: the Kueue CRDs, and the visibility APIService through which
kube-apiserver's aggregation layer proxies to the visibility server.

The visibility server runs on 127.0.0.1, outside any pod. kube-apiserver reaches it through a
Service of type ExternalName pointing at `localhost` (endpoints may not be loopback addresses, and
aggregator routing stays off), and verifies it with the caBundle of the APIService.
"""

from __future__ import annotations

import datetime as dt
import json
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from harness.errors import KqbenchError
from harness.implementations import names
from harness.kube import pki, rest, waiting
from harness.kube.kubeconfig import Credentials
from scheduler.api import crds
from scheduler.visibility import documents

NAMESPACE = "kqbench-system"
SERVICE = "kqbench-visibility"
CREATE_HOLD_SECONDS = 2.0
"""kube-apiserver sleeps 2 s in every create of a custom resource whose CRD turned Established less
than 2 s before (apiextensions-apiserver, customresource_handler.go: so that HA peers see the CRD
first). A run that starts right after installing the CRDs would measure that sleep: single-object's
first QueuePositions POST took 2.00 s and failed its SLO check in most `quick` runs."""


@dataclass(frozen=True, slots=True)
class ServingFiles:
    ca: Path
    cert: Path
    key: Path

    @property
    def ca_pem(self) -> bytes:
        return self.ca.read_bytes()


def service_host(namespace: str = NAMESPACE, service: str = SERVICE) -> str:
    """The name kube-apiserver checks the serving certificate against."""
    return f"{service}.{namespace}.svc"


def ensure_serving_certs(folder: Path) -> ServingFiles:
    """A CA and a serving certificate for the visibility server (made once per folder)."""
    files = ServingFiles(folder / "visibility-ca.crt", folder / "visibility.crt", folder / "visibility.key")
    if not (files.ca.exists() and files.cert.exists() and files.key.exists()):
        ca = pki.make_ca("kqbench-visibility-ca")
        ca.write(files.ca, folder / "visibility-ca.key")
        pki.make_serving_cert(ca, [service_host(), "localhost"]).write(files.cert, files.key)
    return files


def registration_objects(ca_pem: bytes, port: int) -> list[tuple[str, dict]]:
    """(path, object) pairs that register the visibility API versions with kube-apiserver (pure)."""
    import base64

    bundle = base64.b64encode(ca_pem).decode()
    objects: list[tuple[str, dict]] = [
        (f"/api/v1/namespaces/{NAMESPACE}",
         {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}}),
        (f"/api/v1/namespaces/{NAMESPACE}/services/{SERVICE}",
         {"apiVersion": "v1", "kind": "Service", "metadata": {"name": SERVICE, "namespace": NAMESPACE},
          "spec": {"type": "ExternalName", "externalName": "localhost", "ports": [{"port": port, "protocol": "TCP"}]}}),
    ]
    for priority, version in enumerate(documents.VERSIONS):
        name = f"{version}.{documents.GROUP}"
        objects.append((f"/apis/apiregistration.k8s.io/v1/apiservices/{name}", {
            "apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService", "metadata": {"name": name},
            "spec": {"group": documents.GROUP, "version": version, "caBundle": bundle,
                     "service": {"name": SERVICE, "namespace": NAMESPACE, "port": port},
                     "groupPriorityMinimum": 100, "versionPriority": 100 - priority},
        }))
    return objects


CRD_SOURCE_LABEL = "kqbench.io/api-source"
"""Whose Kueue CRDs a cluster holds: "reference" (ours) or "kueue-<version>" (Kueue's own). Both use the
same names with different schemas, so a cluster holds one set, never both."""


def _implementation(source: str) -> str:
    return source.split("-", 1)[0]


def installed_implementation(creds: Credentials) -> str | None:
    """Whose Kueue CRDs the cluster holds ("reference" or "kueue"), None when it has none."""
    status, body = rest.get(creds, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/workloads.kueue.x-k8s.io")
    if status == 404:
        return None
    if status != 200:
        raise KqbenchError(f"cannot read the Workload CRD ({status}): {body[:200]!r}")
    labels = (json.loads(body).get("metadata") or {}).get("labels") or {}
    return _implementation(labels.get(CRD_SOURCE_LABEL, names.REFERENCE))  # unlabelled: from before the label


def refuse_mixing(creds: Credentials, source: str) -> None:
    """Raise when the cluster's Kueue CRDs were installed for another implementation than source's."""
    has = installed_implementation(creds)
    if has is not None and has != _implementation(source):
        raise KqbenchError(
            f"this cluster holds the {has} scheduler's Kueue CRDs, and the {_implementation(source)} scheduler "
            f"needs its own (same names, other schemas): use a fresh cluster (`kqbench cluster down`, then `up`)")


def apply_crds(creds: Credentials, crd_objects: list[dict], source: str, timeout: float = 60.0) -> None:
    """Apply CRDs labelled with their source, refusing to mix implementations; wait until all are Established."""
    refuse_mixing(creds, source)
    names = []
    for crd in crd_objects:
        name = crd["metadata"]["name"]
        names.append(name)
        labelled = {**crd, "metadata": {**crd["metadata"],
                                        "labels": {**crd["metadata"].get("labels", {}), CRD_SOURCE_LABEL: source}}}
        rest.apply(creds, f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{name}", labelled)
    pending = list(names)

    def established() -> bool:
        pending[:] = [name for name in pending if not _established(creds, name)]
        return not pending

    waiting.poll(established, timeout, 0.3,
                 lambda: f"CRDs not Established after {timeout:.0f}s: {', '.join(pending)}")
    time.sleep(hold_remaining((established_at(creds, name) for name in names), time.time()))


def _conditions(creds: Credentials, name: str) -> list[dict]:
    obj = rest.get_json(creds, f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{name}")
    return (obj.get("status") or {}).get("conditions") or []


def _established(creds: Credentials, name: str) -> bool:
    return any(c["type"] == "Established" and c["status"] == "True" for c in _conditions(creds, name))


def established_at(creds: Credentials, name: str) -> str:
    return next((c.get("lastTransitionTime") or "" for c in _conditions(creds, name) if c["type"] == "Established"), "")


def hold_remaining(transition_times: Iterable[str], now: float) -> float:
    """Seconds until no CRD among these is in kube-apiserver's create hold (pure; `now` in Unix seconds).

    The apiserver compares with the condition's lastTransitionTime, which has whole seconds: the
    same truncated value is used here, so waiting until it + 2 s (and a margin) is enough."""
    latest = max((dt.datetime.fromisoformat(t).timestamp() for t in transition_times if t), default=None)
    if latest is None:
        return 0.0
    return max(0.0, latest + CREATE_HOLD_SECONDS + 0.1 - now)


def install_crds(creds: Credentials, timeout: float = 60.0) -> None:
    """Apply the reference scheduler's Kueue CRDs and wait until every one is Established."""
    apply_crds(creds, crds.all_crds(), names.REFERENCE, timeout)


def register_visibility(creds: Credentials, files: ServingFiles, port: int) -> None:
    for path, obj in registration_objects(files.ca_pem, port):
        rest.apply(creds, path, obj)


def unavailable_reason(creds: Credentials) -> str | None:
    """None when kube-apiserver reports every visibility APIService Available, else why one is not."""
    for version in documents.VERSIONS:
        obj = rest.get_json(creds, f"/apis/apiregistration.k8s.io/v1/apiservices/{version}.{documents.GROUP}")
        condition = next((c for c in (obj.get("status") or {}).get("conditions") or [] if c["type"] == "Available"), {})
        if condition.get("status") != "True":
            return f"{version}: {condition.get('message', 'no Available condition yet')}"
    return None


def wait_available(creds: Credentials, timeout: float = 60.0) -> None:
    """Wait until kube-apiserver reports the visibility APIServices Available (it reached our server).
    A loaded kube-apiserver may time out or answer 5xx meanwhile: that is asked again, not fatal."""
    def available() -> bool:
        reason = unavailable_reason(creds)
        if reason:
            raise waiting.NotYet(reason)
        return True

    waiting.poll(available, timeout, 0.5, lambda: f"visibility APIService not Available after {timeout:.0f}s",
                 retry_on=(OSError, KqbenchError))
