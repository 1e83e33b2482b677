"""Kueue's shipped manifests, adapted for a manager on 127.0.0.1 (pure dict work)."""

import base64

import pytest

from harness.implementations.kueue import manifests
from harness.scenarios import models

PORTS = manifests.Ports(webhook=9443, visibility=8082, metrics=8443, health=8081)


def crd(plural: str) -> dict:
    """The shape of one of Kueue's CRD bases (config/components/crd/bases)."""
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": f"{plural}.kueue.x-k8s.io", "annotations": {"controller-gen.kubebuilder.io/version": "v0.20.1"}},
            "spec": {"group": "kueue.x-k8s.io", "names": {"plural": plural}, "scope": "Namespaced", "versions": []}}


# As shipped in config/components/visibility (v0.17.0), kustomize-only documents included.
VISIBILITY = [
    {"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService", "metadata": {"name": f"{v}.visibility.kueue.x-k8s.io"},
     "spec": {"group": "visibility.kueue.x-k8s.io", "groupPriorityMinimum": 100, "insecureSkipTLSVerify": True,
              "service": {"name": "visibility-server", "namespace": "kueue-system"}, "version": v, "versionPriority": 100}}
    for v in ("v1beta1", "v1beta2")
] + [
    {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "visibility-server", "namespace": "kueue-system"},
     "spec": {"ports": [{"name": "https", "port": 443, "protocol": "TCP", "targetPort": 8082}]}},
    {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": {"name": "visibility-server-auth-reader"}},
    {"resources": ["apiservice_v1beta1.yaml"]},
    {"apiVersion": "builtin", "kind": "PrefixSuffixTransformer", "metadata": {"name": "add-prefix-to-subject-name"}},
]


@pytest.mark.parametrize("plural, converted", [
    ("workloads", True), ("clusterqueues", True), ("localqueues", True), ("cohorts", True), ("multikueueclusters", True),
    ("resourceflavors", False), ("workloadpriorityclasses", False), ("topologies", False),
])
def test_crds_kueue_converts_get_a_webhook_at_the_local_port(plural, converted):
    original = crd(plural)
    patched = manifests.patch_crd(original, webhook_port=PORTS.webhook)
    assert ("conversion" in patched["spec"]) is converted
    assert "conversion" not in original["spec"], "the shipped document is not modified"
    if converted:
        service = patched["spec"]["conversion"]["webhook"]["clientConfig"]["service"]
        assert service == {"namespace": "kueue-system", "name": "kueue-webhook-service", "port": 9443, "path": "/convert"}
        assert patched["spec"]["conversion"]["strategy"] == "Webhook"


def test_visibility_service_is_external_and_apiservices_trust_our_ca():
    objects = dict(manifests.visibility_objects(VISIBILITY, b"CA PEM", PORTS.visibility))
    service = objects["/api/v1/namespaces/kueue-system/services/kueue-visibility-server"]
    assert service["spec"] == {"type": "ExternalName", "externalName": "localhost",
                               "ports": [{"name": "https", "port": 8082, "protocol": "TCP"}]}
    for version in ("v1beta1", "v1beta2"):
        spec = objects[f"/apis/apiregistration.k8s.io/v1/apiservices/{version}.visibility.kueue.x-k8s.io"]["spec"]
        assert "insecureSkipTLSVerify" not in spec
        assert base64.b64decode(spec["caBundle"]) == b"CA PEM"
        assert spec["service"] == {"namespace": "kueue-system", "name": "kueue-visibility-server", "port": 8082}
        assert spec["version"] == version
    assert len(objects) == 3, "RoleBinding and kustomize documents are left out"


def test_visibility_manifests_of_another_shape_are_refused():
    with pytest.raises(ValueError, match="one Service"):
        manifests.visibility_objects([d for d in VISIBILITY if d.get("kind") != "Service"], b"", 1)


SHIPPED = {"apiVersion": "config.kueue.x-k8s.io/v1beta2", "kind": "Configuration",
           "health": {"healthProbeBindAddress": ":8081"}, "metrics": {"bindAddress": ":8443"},
           "webhook": {"port": 9443}, "leaderElection": {"leaderElect": True, "resourceName": "c1f6bfd2.kueue.x-k8s.io"},
           "controller": {"groupKindConcurrency": {"Workload.kueue.x-k8s.io": 5}},
           "clientConnection": {"qps": 50, "burst": 100}, "integrations": {"frameworks": ["batch/job", "pod"]}}


@pytest.mark.parametrize("qps, expected_qps", [(20.0, 20.0), (None, -1)])
def test_configuration_binds_loopback_and_keeps_what_kueue_ships(qps, expected_qps):
    settings = manifests.ManagerSettings(ports=PORTS, cert_dir="/tmp/x/webhook-certs", qps=qps, burst=40)
    config = manifests.configuration(SHIPPED, settings)
    assert config["health"]["healthProbeBindAddress"] == "127.0.0.1:8081"
    assert config["metrics"]["bindAddress"] == "127.0.0.1:8443"
    assert config["webhook"] == {"host": "127.0.0.1", "port": 9443, "certDir": "/tmp/x/webhook-certs"}
    assert config["visibilityServer"] == {"bindAddress": "127.0.0.1", "bindPort": 8082}
    assert config["leaderElection"] == {"leaderElect": False}
    assert config["clientConnection"] == {"qps": expected_qps, "burst": 40}
    assert config["internalCertManagement"]["webhookSecretName"] == manifests.WEBHOOK_SECRET
    assert config["controller"] == {**SHIPPED["controller"], "cacheSyncTimeout": 600 * 10**9}
    assert config["integrations"] == SHIPPED["integrations"]
    assert SHIPPED["leaderElection"]["leaderElect"] is True, "the shipped document is not modified"


def test_fair_sharing_goes_into_kueues_configuration_only_when_on():
    off = manifests.configuration({**SHIPPED, "fairSharing": {"preemptionStrategies": ["LessThanInitialShare"]}},
                                  manifests.ManagerSettings(ports=PORTS, cert_dir="/c", qps=1.0, burst=1))
    assert "fairSharing" not in off
    on = manifests.configuration(SHIPPED, manifests.ManagerSettings(
        ports=PORTS, cert_dir="/c", qps=1.0, burst=1, fair_sharing=("LessThanOrEqualToFinalShare", "LessThanInitialShare")))
    assert on["fairSharing"] == {"preemptionStrategies": ["LessThanOrEqualToFinalShare", "LessThanInitialShare"]}


def test_webhook_secret_carries_what_the_rotator_reads():
    path, secret = manifests.webhook_secret(b"ca", b"cakey", b"crt", b"key")
    assert path == "/api/v1/namespaces/kueue-system/secrets/kueue-webhook-server-cert"
    assert {k: base64.b64decode(v) for k, v in secret["data"].items()} == {
        "ca.crt": b"ca", "ca.key": b"cakey", "tls.crt": b"crt", "tls.key": b"key"}


@pytest.mark.parametrize("strategy, ok", [("aggregated-snapshot", True), ("aggregated-indexed", True),
                                          ("status-field", False), ("cq-status-topn", False)])
def test_kueue_takes_only_the_strategies_of_its_visibility_api(strategy, ok):
    if ok:
        assert models.SchedulerSection(implementation="kueue", strategy=strategy).implementation == "kueue"
    else:
        with pytest.raises(ValueError, match="publishes positions only as aggregated-snapshot or aggregated-indexed"):
            models.SchedulerSection(implementation="kueue", strategy=strategy)


def test_webhook_ca_is_one_kueues_rotator_keeps():
    from cryptography import x509

    from harness.kube import pki

    ca = pki.make_ca(manifests.CA_NAME, rsa_pkcs1=True)
    # cert-controller parses the CA key with x509.ParsePKCS1PrivateKey and verifies the CA for its own name.
    assert ca.key_pem.startswith(b"-----BEGIN RSA PRIVATE KEY-----")
    assert pki.dns_names(ca.cert_pem) == [manifests.CA_NAME]
    serving = pki.make_serving_cert(ca, ["kueue-webhook-service.kueue-system.svc", "localhost"])
    cert = x509.load_pem_x509_certificate(serving.cert_pem)
    cert.verify_directly_issued_by(x509.load_pem_x509_certificate(ca.cert_pem))
    assert pki.dns_names(serving.cert_pem)[0] == "kueue-webhook-service.kueue-system.svc"


def test_workers_per_kind_override_what_kueue_ships_and_keep_the_rest():
    settings = manifests.ManagerSettings(ports=PORTS, cert_dir="/tmp/x/webhook-certs", qps=None, burst=40,
                                         concurrency={"Job.batch": 50})
    controller = manifests.configuration(SHIPPED, settings)["controller"]
    assert controller["groupKindConcurrency"] == {"Workload.kueue.x-k8s.io": 5, "Job.batch": 50}
    assert SHIPPED["controller"]["groupKindConcurrency"] == {"Workload.kueue.x-k8s.io": 5}


def test_a_kueue_versions_client_limits_are_the_ones_its_configuration_ships(tmp_path):
    from harness.errors import KqbenchError
    from harness.implementations.kueue import installing
    from harness.toolchain import layout

    kueue = layout.KueueBuild.in_cache("v0.19.2", tmp_path)
    kueue.manager_config.parent.mkdir(parents=True)
    kueue.manager_config.write_text("kind: Configuration\nclientConnection:\n  qps: 300\n  burst: 500\n")
    assert installing.shipped_client_limits(kueue) == (300.0, 500)
    kueue.manager_config.write_text("kind: Configuration\n")
    with pytest.raises(KqbenchError, match="set scheduler.qps and scheduler.burst"):
        installing.shipped_client_limits(kueue)


def test_admission_fair_sharing_goes_into_kueues_configuration_only_when_on():
    off = manifests.configuration({**SHIPPED, "admissionFairSharing": {"usageHalfLifeTime": "1h"}},
                                  manifests.ManagerSettings(ports=PORTS, cert_dir="/c", qps=1.0, burst=1))
    assert "admissionFairSharing" not in off
    afs = manifests.AdmissionFairSharing(600.0, 0.5, {"nvidia.com/gpu": 2.0})
    on = manifests.configuration(SHIPPED, manifests.ManagerSettings(
        ports=PORTS, cert_dir="/c", qps=1.0, burst=1, admission_fair_sharing=afs))
    assert on["admissionFairSharing"] == {"usageHalfLifeTime": "600000ms", "usageSamplingInterval": "500ms",
                                          "resourceWeights": {"nvidia.com/gpu": 2.0}}


def _config(**given) -> dict:
    settings = manifests.ManagerSettings(ports=PORTS, cert_dir="/c", qps=50.0, burst=100, **given)
    return manifests.configuration({"apiVersion": "config.kueue.x-k8s.io/v1beta2", "featureGates": {"X": True}},
                                   settings)


def test_wait_for_pods_ready_is_written_as_kueues_v1beta2_section():
    from scheduler.core import podsready

    ready = podsready.WaitForPodsReady(True, 10.0, True, podsready.RequeuingTimestamp.CREATION, 2, 1, 30, 0.0)
    assert _config(wait_for_pods_ready=ready)["waitForPodsReady"] == {
        "timeout": "10000ms", "blockAdmission": True, "recoveryTimeout": "0ms",
        "requeuingStrategy": {"timestamp": "Creation", "backoffLimitCount": 2, "backoffBaseSeconds": 1,
                              "backoffMaxSeconds": 30}}
    defaults = _config(wait_for_pods_ready=podsready.WaitForPodsReady())["waitForPodsReady"]
    assert defaults == {"timeout": "1800000ms", "blockAdmission": False,
                        "requeuingStrategy": {"timestamp": "Eviction", "backoffBaseSeconds": 60,
                                              "backoffMaxSeconds": 3600}}


def test_wait_for_pods_ready_off_is_the_gate_where_kueue_has_it_and_nothing_before():
    from scheduler.core import podsready

    off = _config(wait_for_pods_ready=podsready.OFF, disable_gate=True)
    assert "waitForPodsReady" not in off and off["featureGates"] == {"X": True, "DisableWaitForPodsReady": True}
    before = _config(wait_for_pods_ready=podsready.OFF)
    assert "waitForPodsReady" not in before and before["featureGates"] == {"X": True}
    assert "waitForPodsReady" not in _config() and _config()["featureGates"] == {"X": True}


@pytest.mark.parametrize(("version", "given", "expected"), [
    ("v0.17.0", None, None), ("v0.19.2", None, "1800000ms"), ("v0.19.2", False, None), ("v0.17.0", True, "1800000ms")])
def test_the_runners_kueue_gets_waitforpodsready_from_the_section(version, given, expected):
    from harness.implementations.kueue import starting
    from scheduler import settings as scheduler_settings

    section = models.SchedulerSection(implementation="kueue", strategy="aggregated-snapshot", kueue_version=version,
                                      wait_for_pods_ready=given)
    ready = scheduler_settings.wait_for_pods_ready_of(section, section.wait_for_pods_ready_on(version))
    config = _config(wait_for_pods_ready=ready, disable_gate=starting._has_disable_gate(version))
    assert config.get("waitForPodsReady", {}).get("timeout") == expected
    assert ("DisableWaitForPodsReady" in config["featureGates"]) is (given is False and version == "v0.19.2")
