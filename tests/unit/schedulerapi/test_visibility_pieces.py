"""Pure pieces of the scheduler's API edge: CRDs, discovery, Status, request-header authn, SAR cache, rate limit."""

import asyncio
import base64

import aiohttp
import orjson
import pytest
from multidict import CIMultiDict

from harness.kube import apiservice, pki
from scheduler.api import crds
from scheduler.kube import client as kube
from scheduler.kube.ratelimit import TokenBucket
from scheduler.visibility import authn, authz, documents


def test_every_kueue_kind_has_a_crd_with_status_subresource():
    kinds = {c["spec"]["names"]["kind"]: c for c in crds.all_crds() if c["spec"]["group"] == "kueue.x-k8s.io"}
    assert set(kinds) == {"ResourceFlavor", "Cohort", "ClusterQueue", "LocalQueue", "WorkloadPriorityClass", "Workload",
                          "Topology", "AdmissionCheck"}
    for crd in kinds.values():
        version = crd["spec"]["versions"][0]
        assert version["name"] == "v1beta2" and version["subresources"] == {"status": {}}
        assert crd["metadata"]["name"] == f"{crd['spec']['names']['plural']}.kueue.x-k8s.io"
        spec = version["schema"]["openAPIV3Schema"]["properties"]["spec"]
        assert spec["x-kubernetes-preserve-unknown-fields"] is True, "unknown fields must survive"
    assert kinds["Workload"]["spec"]["scope"] == "Namespaced"
    assert kinds["ClusterQueue"]["spec"]["scope"] == "Cluster"
    assert "value" in kinds["WorkloadPriorityClass"]["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]


def test_namespace_selector_keeps_null_and_empty_apart():
    # No default anywhere on the path and not nullable (as Kueue's CRD): null is pruned to absent (no
    # namespace), {} is kept (every namespace), so the two never collapse into one another.
    crd = next(c for c in crds.all_crds() if c["spec"]["names"]["kind"] == "ClusterQueue")
    spec = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    selector = spec["properties"]["namespaceSelector"]
    assert "default" not in spec and "default" not in selector and not selector.get("nullable")
    assert selector["type"] == "object" and selector["x-kubernetes-map-type"] == "atomic"
    expression = selector["properties"]["matchExpressions"]["items"]
    assert expression["properties"]["operator"]["enum"] == ["In", "NotIn", "Exists", "DoesNotExist"]


def test_queue_positions_crd_has_no_status_and_an_open_list():
    crd = crds.queue_positions_crd()
    assert crd["spec"]["group"] == "kqbench.dev" and crd["spec"]["scope"] == "Cluster"
    assert "subresources" not in crd["spec"]["versions"][0], "written whole, as a single object"


def test_discovery_lists_both_queue_kinds_and_their_pendingworkloads():
    resources = {r["name"]: r for r in documents.api_resource_list("v1beta2")["resources"]}
    assert resources["clusterqueues/pendingworkloads"]["namespaced"] is False
    assert resources["localqueues/pendingworkloads"]["namespaced"] is True
    assert resources["localqueues/pendingworkloads"]["kind"] == "PendingWorkloadsSummary"
    group = documents.api_group()
    assert group["preferredVersion"]["version"] == "v1beta2"
    assert [v["version"] for v in group["versions"]] == ["v1beta2", "v1beta1"]


@pytest.mark.parametrize("code, reason", [(400, "BadRequest"), (401, "Unauthorized"), (404, "NotFound"), (503, "ServiceUnavailable"), (500, "InternalError")])
def test_status_objects(code, reason):
    body = documents.status(code, "msg")
    assert body["kind"] == "Status" and body["code"] == code and body["reason"] == reason


CONFIG = authn.RequestHeaderConfig(client_ca_pem="x", allowed_names=("front-proxy-client",))


def cert(cn):
    return {"subject": ((("organizationName", "o"),), (("commonName", cn),))}


def test_front_proxy_headers_are_trusted_from_an_allowed_cert():
    headers = CIMultiDict([("X-Remote-User", "alice"), ("X-Remote-Group", "dev"), ("X-Remote-Group", "ops"),
                           ("X-Remote-Extra-Scopes", "a")])
    user = authn.authenticate(CONFIG, cert("front-proxy-client"), headers)
    assert user.name == "alice" and user.groups == ("dev", "ops") and user.extra == {"scopes": ("a",)}


def test_header_bytes_that_are_not_utf8_reach_the_access_review_as_replacement_characters():
    # aiohttp keeps such bytes as surrogates, which no JSON encoder takes (the SubjectAccessReview failed
    # with a 500); kube-apiserver's Go encoder writes U+FFFD for them.
    raw = "a \udcd9q".encode("utf-8", "surrogateescape").decode("utf-8", "surrogateescape")
    headers = CIMultiDict([("X-Remote-User", "al\udc8dice"), ("X-Remote-Group", "d\udc90ev"),
                           ("X-Remote-Extra-Scopes", raw)])
    user = authn.authenticate(CONFIG, cert("front-proxy-client"), headers)
    assert (user.name, user.groups, user.extra) == ("al\ufffdice", ("d\ufffdev",), {"scopes": ("a \ufffdq",)})
    assert orjson.dumps({"user": user.name, "groups": user.groups, "extra": user.extra})


@pytest.mark.parametrize("peer, headers, message", [
    (None, {"X-Remote-User": "admin"}, "no client certificate"),
    (cert("someone-else"), {"X-Remote-User": "admin"}, "not an allowed"),
    (cert("front-proxy-client"), {}, "no user header"),
])
def test_untrusted_requests_are_unauthenticated(peer, headers, message):
    with pytest.raises(authn.Unauthenticated, match=message):
        authn.authenticate(CONFIG, peer, CIMultiDict(headers))


def test_request_header_config_from_the_apiserver_configmap():
    data = {"requestheader-client-ca-file": "PEM", "requestheader-allowed-names": '["front-proxy-client"]',
            "requestheader-username-headers": '["X-Remote-User"]', "requestheader-group-headers": '["X-Remote-Group"]',
            "requestheader-extra-headers-prefix": '["X-Remote-Extra-"]'}
    config = authn.RequestHeaderConfig.from_configmap(data)
    assert config.allowed_names == ("front-proxy-client",) and config.client_ca_pem == "PEM"
    with pytest.raises(ValueError, match="aggregation layer"):
        authn.RequestHeaderConfig.from_configmap({})


class FakeReviews:
    """Stands in for kube-apiserver's SubjectAccessReview endpoint (counts calls, answers by user)."""

    def __init__(self):
        self.calls = []

    async def request(self, method, path, body):
        self.calls.append(body)
        return {"status": {"allowed": body["spec"]["user"] == "alice"}}


def test_authorizer_asks_once_per_user_and_queue_within_the_ttl():
    now = [0.0]
    reviews = FakeReviews()
    authorizer = authz.DelegatingAuthorizer(reviews, ttl_seconds=10, clock=lambda: now[0])
    attrs = authz.Attributes("localqueues", "lq", "ns")
    alice, bob = authn.User("alice", ("dev",)), authn.User("bob")

    async def ask():
        return [await authorizer.allowed(alice, attrs), await authorizer.allowed(alice, attrs),
                await authorizer.allowed(bob, attrs)]

    assert asyncio.run(ask()) == [True, True, False]
    assert len(reviews.calls) == 2
    review = reviews.calls[0]["spec"]
    assert review["resourceAttributes"] == {"group": "visibility.kueue.x-k8s.io", "resource": "localqueues",
                                            "subresource": "pendingworkloads", "verb": "get", "name": "lq",
                                            "namespace": "ns"}
    now[0] = 11.0
    asyncio.run(authorizer.allowed(alice, attrs))
    assert len(reviews.calls) == 3, "expired entries are asked again"


def test_token_bucket_allows_a_burst_then_paces_at_qps():
    now = [0.0]
    bucket = TokenBucket(qps=10, burst=3, clock=lambda: now[0])
    assert [bucket.delay() for _ in range(3)] == [0.0, 0.0, 0.0]
    assert bucket.delay() == pytest.approx(0.1)
    now[0] = 1.0
    assert bucket.delay() == 0.0
    assert TokenBucket(None, 1).delay() == 0.0
    with pytest.raises(ValueError):
        TokenBucket(qps=0, burst=1)


@pytest.mark.parametrize("path, resource", [
    ("/apis/kueue.x-k8s.io/v1beta2/namespaces/ns/workloads/w/status?fieldManager=x", "workloads/status"),
    ("/apis/kueue.x-k8s.io/v1beta2/clusterqueues/cq/status", "clusterqueues/status"),
    ("/api/v1/namespaces/ns/configmaps", "configmaps"),
    ("/apis/authorization.k8s.io/v1/subjectaccessreviews", "subjectaccessreviews"),
])
def test_write_metrics_group_by_resource(path, resource):
    assert kube.resource_of(path) == resource


@pytest.mark.parametrize("error, code", [
    (kube.ApiError(429, b'{"message": "slow down"}', "PATCH x"), "429"),
    (aiohttp.ServerDisconnectedError(), "transport"),
    (asyncio.TimeoutError(), "transport"),
])
def test_a_refused_timed_out_or_dropped_write_is_a_failure_with_its_label(error, code):
    # Anything else escaping a write task would leave a decided admission unwritten for good.
    assert isinstance(error, kube.FAILURES)
    assert kube.failure_code(error) == code


def test_registration_points_an_apiservice_per_version_at_an_externalname_service():
    ca = pki.make_ca("test-ca")
    objects = dict(apiservice.registration_objects(ca.cert_pem, 8443))
    service = objects["/api/v1/namespaces/kqbench-system/services/kqbench-visibility"]
    assert service["spec"] == {"type": "ExternalName", "externalName": "localhost",
                               "ports": [{"port": 8443, "protocol": "TCP"}]}
    v1beta2 = objects["/apis/apiregistration.k8s.io/v1/apiservices/v1beta2.visibility.kueue.x-k8s.io"]["spec"]
    assert base64.b64decode(v1beta2["caBundle"]) == ca.cert_pem
    assert v1beta2["service"] == {"name": "kqbench-visibility", "namespace": "kqbench-system", "port": 8443}
    assert "/apis/apiregistration.k8s.io/v1/apiservices/v1beta1.visibility.kueue.x-k8s.io" in objects


def test_serving_cert_names_the_service_host_kube_apiserver_checks(tmp_path):
    files = apiservice.ensure_serving_certs(tmp_path)
    names = pki.dns_names(files.cert.read_bytes())
    assert names[0] == "kqbench-visibility.kqbench-system.svc" and "localhost" in names
    again = apiservice.ensure_serving_certs(tmp_path)
    assert again.cert.read_bytes() == files.cert.read_bytes(), "made once per folder"
    client = pki.make_client_cert(pki.make_ca("ca"), "front-proxy-client")
    assert pki.common_name(client.cert_pem) == "front-proxy-client"
