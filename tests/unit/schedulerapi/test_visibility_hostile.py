"""The visibility server in this process over real TLS, fed hostile requests (tests/hostile_requests.py).

Whatever the request: never a 5xx, an error is a metav1.Status whose code is the HTTP status, the
server keeps answering, and its caches stay within their bounds. Authorization is off (AllowAll,
`--authorization off`): the SubjectAccessReview path is fuzzed through kube-apiserver in
tests/integration/test_visibility_hostile.py.
"""

from __future__ import annotations

import asyncio
import json
import ssl
import threading

import pytest
from aiohttp import web
from hypothesis import example, given

from harness.kube import pki
from scheduler.controller import metering
from scheduler.core import conversion
from scheduler.core.queues import QueueManager
from scheduler.visibility import authn, authz, pagecache, serving
from tests import hostile_requests as hostile

CQS = ("cq-a", "cq-b")
LQS = (("team-a", "lq-a"), ("team-b", "lq-b"))
IDENTITY = (("X-Remote-User", "fuzzer"), ("X-Remote-Group", "system:authenticated"))


def _manager() -> QueueManager:
    manager = QueueManager()
    manager.add_resource_flavor(conversion.resource_flavor_from_dict({"metadata": {"name": "default"}}))
    for name in CQS:
        manager.add_cluster_queue(conversion.cluster_queue_from_dict({"metadata": {"name": name}, "spec": {
            "resourceGroups": [{"coveredResources": ["cpu"], "flavors": [{"name": "default", "resources": [
                {"name": "cpu", "nominalQuota": 0}]}]}]}}))
    for (namespace, name), cq in zip(LQS, CQS):
        manager.add_local_queue(conversion.local_queue_from_dict(
            {"metadata": {"name": name, "namespace": namespace}, "spec": {"clusterQueue": cq}}))
    for i in range(30):
        namespace, queue = LQS[i % 2]
        manager.add_workload(conversion.workload_from_dict({
            "metadata": {"name": f"w{i}", "namespace": namespace, "uid": f"u{i}", "creationTimestamp": "2026-01-01T00:00:00Z"},
            "spec": {"queueName": queue, "priority": i % 3, "podSets": [{"name": "main", "count": 1, "template": {"spec": {
                "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}}}]}}))
    return manager


class Served:
    """The app on 127.0.0.1 in a thread of its own; the client trusts its CA and holds a front-proxy cert."""

    def __init__(self, tmp_path, authorizer=None) -> None:
        serving_ca, proxy_ca = pki.make_ca("serving-ca"), pki.make_ca("front-proxy-ca")
        pki.make_serving_cert(serving_ca, ["localhost"]).write(tmp_path / "tls.crt", tmp_path / "tls.key")
        pki.make_client_cert(proxy_ca, "front-proxy-client").write(tmp_path / "proxy.crt", tmp_path / "proxy.key")
        header = authn.RequestHeaderConfig(client_ca_pem=proxy_ca.cert_pem.decode(), allowed_names=("front-proxy-client",))
        self.pages = pagecache.PageCache(max_entries=64, max_bytes=1 << 20)
        self.server = serving.VisibilityServer(_manager().pending_lists, header, authorizer or authz.AllowAll(),
                                               metering.SchedulerMetrics(), page_cache=self.pages)
        self.server_context = serving.server_ssl_context(serving.TLSFiles(str(tmp_path / "tls.crt"), str(tmp_path / "tls.key")),
                                                         header)
        self.client = ssl.create_default_context(cadata=serving_ca.cert_pem.decode())
        self.client.load_cert_chain(tmp_path / "proxy.crt", tmp_path / "proxy.key")
        self.anonymous = ssl.create_default_context(cadata=serving_ca.cert_pem.decode())
        self.loop = asyncio.new_event_loop()
        self.port = 0
        started = threading.Event()
        self.thread = threading.Thread(target=self._serve, args=(started,), daemon=True)
        self.thread.start()
        assert started.wait(30), "the visibility server did not start"

    def _serve(self, started: threading.Event) -> None:
        asyncio.set_event_loop(self.loop)
        runner = web.AppRunner(self.server.app(), access_log=None)
        self.loop.run_until_complete(runner.setup())
        site = web.TCPSite(runner, "127.0.0.1", 0, ssl_context=self.server_context)
        self.loop.run_until_complete(site.start())
        self.port = site._server.sockets[0].getsockname()[1]
        self.runner = runner
        started.set()
        self.loop.run_forever()
        self.loop.run_until_complete(runner.cleanup())
        self.loop.close()

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(30)


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    server = Served(tmp_path_factory.mktemp("visibility"))
    try:
        yield server
    finally:
        server.stop()


def _is_status(body: bytes, code: int) -> bool:
    try:
        status = json.loads(body)
    except ValueError:
        return False
    return status.get("kind") == "Status" and status.get("code") == code and status.get("status") == "Failure"


def _malformed(code: int, body: bytes) -> bool:
    """Refused by the HTTP parser before any handler (a lowercase method, a duplicated Content-Type): plain
    text, as Go's net/http answers a malformed request in front of kube-apiserver too."""
    return code == 400 and not body.startswith(b"{")


def _check(served, request: hostile.Request, identity) -> None:
    code, body = hostile.send("127.0.0.1", served.port, served.client, request, identity)
    assert code < 500, f"{request.short()} -> {code} {body[:300]!r}"
    if code >= 400 and request.method != "HEAD" and not _malformed(code, body):
        assert _is_status(body, code), f"{request.short()} -> {code} is not a Status: {body[:300]!r}"
    assert hostile.send("127.0.0.1", served.port, served.client, hostile.Request("GET", "/healthz"))[0] == 200


@hostile.PROFILE
@given(request=hostile.requests(CQS, LQS))
@example(request=hostile.Request("GET", f"{hostile.GROUP_PATH}/v1beta2/clusterqueues/cq-a/pendingworkloads?offset=" + "9" * 5000))
@example(request=hostile.Request("GET", f"{hostile.GROUP_PATH}/v1beta2/clusterqueues/cq-a/pendingworkloads?limit=" + "9" * 30))
@example(request=hostile.Request("POST", f"{hostile.GROUP_PATH}/v1beta2/clusterqueues/cq-a/pendingworkloads", body=b"{}"))
@example(request=hostile.Request("GET", f"{hostile.GROUP_PATH}/v1beta2/nothing/here"))
def test_a_trusted_proxy_never_gets_a_server_error(served, request):
    _check(served, request, IDENTITY)


@hostile.PROFILE
@given(request=hostile.requests(CQS, LQS))
def test_without_identity_every_answer_is_a_client_error_or_health(served, request):
    code, body = hostile.send("127.0.0.1", served.port, served.anonymous, request)
    assert code < 500, f"{request.short()} -> {code} {body[:300]!r}"
    if request.method != "HEAD" and not _malformed(code, body):
        assert code == 401 and _is_status(body, code), f"{request.short()} -> {code} {body[:300]!r}"


def test_the_caches_stay_within_their_bounds_after_the_fuzz(served):
    for offset in range(200):  # more distinct pages than the cache holds
        hostile.send("127.0.0.1", served.port, served.client,
                     hostile.Request("GET", f"{hostile.GROUP_PATH}/v1beta2/clusterqueues/cq-a/pendingworkloads?offset={offset}"),
                     IDENTITY)
    assert len(served.pages) <= served.pages.max_entries and served.pages.bytes <= served.pages.max_bytes


class Unreachable:
    """An authorizer whose kube-apiserver is away (restarting): every review fails to connect."""

    async def allowed(self, user, attributes):
        raise ConnectionRefusedError("kube-apiserver is restarting")


def test_an_unreachable_authorizer_is_a_503_to_retry_not_a_500(tmp_path):
    server = Served(tmp_path, Unreachable())
    try:
        request = hostile.Request("GET", f"{hostile.GROUP_PATH}/v1beta2/clusterqueues/cq-a/pendingworkloads")
        code, body = hostile.send("127.0.0.1", server.port, server.client, request, IDENTITY)
        assert code == 503 and _is_status(body, 503) and json.loads(body)["reason"] == "ServiceUnavailable"
    finally:
        server.stop()


@pytest.mark.parametrize("query", ["", "?limit=0", "?offset=0&limit=0", "?limit=00"])
def test_a_limit_of_zero_is_kueues_default_page(served, query):
    # Kueue defaults limit 0 like a missing one (1000; apis/visibility/v1beta2/defaults.go).
    for path in ("clusterqueues/cq-a", "namespaces/team-a/localqueues/lq-a"):
        request = hostile.Request("GET", f"{hostile.GROUP_PATH}/v1beta2/{path}/pendingworkloads{query}")
        code, body = hostile.send("127.0.0.1", served.port, served.client, request, IDENTITY)
        assert code == 200 and len(json.loads(body)["items"]) == 15, f"{path}{query} -> {code} {body[:200]!r}"
