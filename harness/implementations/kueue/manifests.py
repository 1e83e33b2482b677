"""Kueue's own manifests, adapted to a manager that runs as a local process (pure: dicts in, dicts out).

Every object starts from what the Kueue module ships (the toolchain copies its CRDs, visibility
manifests and default manager configuration next to the binaries); this module only changes what a
pod-less manager on 127.0.0.1 needs:
- the five CRDs Kueue converts get a conversion webhook `clientConfig` (Kueue's certificate rotator
  injects its CA bundle there and never turns ready without it), pointing at the webhook port through
  an ExternalName Service, as kustomize's `webhook_in_*` patches do in a real install;
- the visibility Service becomes ExternalName `localhost`, and the APIServices trust kqbench's CA
  instead of `insecureSkipTLSVerify`;
- the Configuration binds every port to 127.0.0.1, turns leader election off and takes qps/burst
  and fair sharing from the scenario.
Names follow Kueue's `config/default` (namespace `kueue-system`, prefix `kueue-`).
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from dataclasses import dataclass, field

from scheduler import listening
from scheduler.core import podsready

NAMESPACE = "kueue-system"
NAME_PREFIX = "kueue-"
WEBHOOK_SERVICE = "kueue-webhook-service"
WEBHOOK_SECRET = "kueue-webhook-server-cert"
VISIBILITY_SERVICE = "visibility-server"
"""As named in Kueue's visibility manifests, before kustomize's `kueue-` prefix."""
CA_NAME = "kueue-ca"
"""The name Kueue's rotator checks its CA against (cert-controller verifies the CA for this DNS name)."""
CONVERSION_CRDS = ("localqueues", "clusterqueues", "workloads", "cohorts", "multikueueclusters")
"""The CRDs Kueue's kustomization gives a conversion webhook and its rotator injects a CA into."""


@dataclass(frozen=True, slots=True)
class Ports:
    """Loopback ports of one Kueue manager."""

    webhook: int
    visibility: int
    metrics: int
    health: int


@dataclass(frozen=True, slots=True)
class AdmissionFairSharing:
    """Kueue's Configuration admissionFairSharing, durations in seconds."""

    usage_half_life_seconds: float
    usage_sampling_interval_seconds: float
    resource_weights: Mapping[str, float] = field(default_factory=dict)

    def section(self) -> dict:
        """The section as Kueue's Configuration reads it (metav1.Duration: Go duration strings)."""
        section: dict = {"usageHalfLifeTime": _duration(self.usage_half_life_seconds),
                         "usageSamplingInterval": _duration(self.usage_sampling_interval_seconds)}
        if self.resource_weights:
            section["resourceWeights"] = dict(self.resource_weights)
        return section


def _duration(seconds: float) -> str:
    """A Go duration string (time.ParseDuration) of whole milliseconds."""
    return f"{round(seconds * 1000)}ms"


@dataclass(frozen=True, slots=True)
class ManagerSettings:
    ports: Ports
    cert_dir: str
    """Folder of the webhook server's tls.crt/tls.key (a kubelet would mount the Secret there)."""
    qps: float | None
    """Client-side write limit; None turns it off (Kueue: a negative qps)."""
    burst: int
    concurrency: Mapping[str, int] = field(default_factory=dict)
    """Workers per reconciled kind (controller.groupKindConcurrency, e.g. Job.batch), over what Kueue ships."""
    fair_sharing: tuple[str, ...] | None = None
    """fairSharing.preemptionStrategies; None leaves fairSharing out (Kueue: fair sharing off)."""
    admission_fair_sharing: AdmissionFairSharing | None = None
    """admissionFairSharing; None leaves it out (Kueue: admission fair sharing off)."""
    wait_for_pods_ready: podsready.WaitForPodsReady | None = None
    """waitForPodsReady; None leaves the shipped Configuration as it is (Kueue's version decides). Off: the
    section left out, and with ``disable_gate`` the DisableWaitForPodsReady gate set too."""
    disable_gate: bool = False
    """This Kueue has the DisableWaitForPodsReady gate (v0.19 on): the only way to turn waitForPodsReady off,
    as its v1beta2 defaulting adds the section when absent. Kueue refuses a gate it does not know (v0.17)."""


def _controller(shipped: dict, concurrency: Mapping[str, int]) -> dict:
    controller = {**shipped, "cacheSyncTimeout": CACHE_SYNC_TIMEOUT_NS}
    if concurrency:
        controller["groupKindConcurrency"] = {**shipped.get("groupKindConcurrency", {}), **concurrency}
    return controller


DISABLE_WAIT_FOR_PODS_READY = "DisableWaitForPodsReady"
"""pkg/features/kube_features.go (alpha from v0.19, off by default; pkg/util/waitforpodsready reads it)."""


def wait_for_pods_ready_section(settings: podsready.WaitForPodsReady) -> dict:
    """waitForPodsReady as Kueue's v1beta2 Configuration reads it (no `enable`: the section's presence turns
    it on; durations are Go duration strings)."""
    strategy: dict = {"timestamp": settings.requeuing_timestamp.value,
                      "backoffBaseSeconds": settings.backoff_base_seconds,
                      "backoffMaxSeconds": settings.backoff_max_seconds}
    if settings.backoff_limit_count is not None:
        strategy["backoffLimitCount"] = settings.backoff_limit_count
    section = {"timeout": _duration(settings.timeout_seconds), "blockAdmission": settings.block_admission,
               "requeuingStrategy": strategy}
    if settings.recovery_timeout_seconds is not None:
        section["recoveryTimeout"] = _duration(settings.recovery_timeout_seconds)
    return section


def _service_ref(name: str, port: int) -> dict:
    return {"namespace": NAMESPACE, "name": name, "port": port}


def patch_crd(crd: dict, webhook_port: int) -> dict:
    """A copy of one of Kueue's CRDs with a conversion webhook where Kueue expects one."""
    out = {**crd, "spec": {**crd["spec"]}}
    if crd["spec"]["names"]["plural"] in CONVERSION_CRDS:
        out["spec"]["conversion"] = {
            "strategy": "Webhook",
            "webhook": {"clientConfig": {"service": {**_service_ref(WEBHOOK_SERVICE, webhook_port), "path": "/convert"}},
                        "conversionReviewVersions": ["v1"]},
        }
    return out


def namespace() -> tuple[str, dict]:
    return f"/api/v1/namespaces/{NAMESPACE}", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}}


def external_service(name: str, port: int) -> tuple[str, dict]:
    """A Service kube-apiserver resolves to localhost:port (endpoints may not be loopback addresses)."""
    return (f"/api/v1/namespaces/{NAMESPACE}/services/{name}",
            {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name, "namespace": NAMESPACE},
             "spec": {"type": "ExternalName", "externalName": "localhost",
                      "ports": [{"name": "https", "port": port, "protocol": "TCP"}]}})


def webhook_secret(ca_cert: bytes, ca_key: bytes, cert: bytes, key: bytes) -> tuple[str, dict]:
    """The Secret Kueue's rotator reads; valid certificates in it are kept, not regenerated."""
    data = {"ca.crt": ca_cert, "ca.key": ca_key, "tls.crt": cert, "tls.key": key}
    return (f"/api/v1/namespaces/{NAMESPACE}/secrets/{WEBHOOK_SECRET}",
            {"apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/tls",
             "metadata": {"name": WEBHOOK_SECRET, "namespace": NAMESPACE},
             "data": {k: base64.b64encode(v).decode() for k, v in data.items()}})


METRICS_READER = "kqbench-metrics-reader"


def metrics_reader_objects() -> list[tuple[str, dict]]:
    """A ServiceAccount allowed to GET /metrics: Kueue's metrics endpoint authenticates bearer tokens only."""
    rbac = "/apis/rbac.authorization.k8s.io/v1"
    return [
        (f"/api/v1/namespaces/{NAMESPACE}/serviceaccounts/{METRICS_READER}",
         {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": METRICS_READER, "namespace": NAMESPACE}}),
        (f"{rbac}/clusterroles/{METRICS_READER}",
         {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": METRICS_READER},
          "rules": [{"nonResourceURLs": ["/metrics"], "verbs": ["get"]}]}),
        (f"{rbac}/clusterrolebindings/{METRICS_READER}",
         {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": {"name": METRICS_READER},
          "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": METRICS_READER},
          "subjects": [{"kind": "ServiceAccount", "name": METRICS_READER, "namespace": NAMESPACE}]}),
    ]


def visibility_objects(documents: list[dict], ca_pem: bytes, port: int) -> list[tuple[str, dict]]:
    """Kueue's visibility Service and APIServices, reached at localhost:port and verified with ca_pem.

    Its RoleBinding (the pod's service account may read the authentication ConfigMap) is left out:
    the local manager runs with the cluster's admin kubeconfig.
    """
    apiservices = [d for d in documents if d.get("kind") == "APIService"]
    services = [d for d in documents if d.get("kind") == "Service"]
    if not apiservices or len(services) != 1:
        raise ValueError(f"expected APIServices and one Service in Kueue's visibility manifests, got kinds "
                         f"{sorted(str(d.get('kind')) for d in documents)}")
    if services[0]["metadata"]["name"] != VISIBILITY_SERVICE:
        raise ValueError(f"Kueue's visibility Service is now {services[0]['metadata']['name']!r}, "
                         f"not {VISIBILITY_SERVICE!r}: update manifests.VISIBILITY_SERVICE (certificates name it)")
    service_name = NAME_PREFIX + VISIBILITY_SERVICE
    out = [external_service(service_name, port)]
    bundle = base64.b64encode(ca_pem).decode()
    for apiservice in apiservices:
        spec = {k: v for k, v in apiservice["spec"].items() if k != "insecureSkipTLSVerify"}
        if spec["service"]["name"] != services[0]["metadata"]["name"]:
            raise ValueError(f"APIService {apiservice['metadata']['name']} points at Service "
                             f"{spec['service']['name']}, not at the visibility Service")
        spec |= {"caBundle": bundle, "service": _service_ref(service_name, port)}
        name = apiservice["metadata"]["name"]
        out.append((f"/apis/apiregistration.k8s.io/v1/apiservices/{name}",
                    {"apiVersion": apiservice["apiVersion"], "kind": "APIService", "metadata": {"name": name},
                     "spec": spec}))
    return out


def apiservice_names(documents: list[dict]) -> list[str]:
    return [d["metadata"]["name"] for d in documents if d.get("kind") == "APIService"]


CACHE_SYNC_TIMEOUT_NS = 10 * 60 * 10**9
"""Kueue's controllers wait this long for their informers (a time.Duration: nanoseconds in the file).
Its default, 2 minutes, ends the manager ("timed out waiting for cache to be synced for Kind
*v1beta2.Workload") with 100k pending Workloads on a 2-core machine; an admin at that size raises it."""


def configuration(shipped: dict, settings: ManagerSettings) -> dict:
    """Kueue's shipped Configuration with loopback ports, no leader election and kqbench's client limits."""
    ports = settings.ports
    config = {k: v for k, v in shipped.items() if k not in ("leaderElection",)}
    config |= {
        "namespace": NAMESPACE,
        "health": {"healthProbeBindAddress": f"{listening.LOOPBACK}:{ports.health}"},
        "metrics": {**shipped.get("metrics", {}), "bindAddress": f"{listening.LOOPBACK}:{ports.metrics}"},
        "webhook": {"host": listening.LOOPBACK, "port": ports.webhook, "certDir": settings.cert_dir},
        "visibilityServer": {"bindAddress": listening.LOOPBACK, "bindPort": ports.visibility},
        "leaderElection": {"leaderElect": False},
        # On, with a Secret kqbench fills: Kueue then injects the CA into its CRDs itself, and with it
        # off Kueue insists on metrics certificates under the fixed /etc/kueue/metrics/certs.
        "internalCertManagement": {"enable": True, "webhookServiceName": WEBHOOK_SERVICE,
                                   "webhookSecretName": WEBHOOK_SECRET},
        "clientConnection": {"qps": -1 if settings.qps is None else settings.qps, "burst": settings.burst},
        "controller": _controller(shipped.get("controller", {}), settings.concurrency),
    }
    if settings.fair_sharing is not None:
        # v1beta2 has no `enable`: the section's presence turns fair sharing on (fairsharing.Enabled).
        config["fairSharing"] = {"preemptionStrategies": list(settings.fair_sharing)}
    else:
        config.pop("fairSharing", None)
    if settings.admission_fair_sharing is not None:
        # also on by its presence (afs.Enabled; the AdmissionFairSharing gate is on by default since v0.15)
        config["admissionFairSharing"] = settings.admission_fair_sharing.section()
    else:
        config.pop("admissionFairSharing", None)
    ready = settings.wait_for_pods_ready
    if ready is not None and ready.enable:
        config["waitForPodsReady"] = wait_for_pods_ready_section(ready)
    elif ready is not None:
        config.pop("waitForPodsReady", None)
        if settings.disable_gate:
            config["featureGates"] = {**shipped.get("featureGates", {}), DISABLE_WAIT_FOR_PODS_READY: True}
    return config
