"""Hostile requests to the visibility API of a running reference scheduler, through kube-apiserver and
straight to its port (tests/hostile_requests.py); RBAC per namespace; a client certificate from
another CA; the metrics port on loopback only; planted invariant violations found from the API.

One small cluster (1 node, 2 ClusterQueues, 20 pending Workloads) for the whole module.
"""

from __future__ import annotations

import http.client
import json
import ssl
import urllib.error
import urllib.request
from dataclasses import dataclass

import psutil
import pytest
from hypothesis import given

from harness.clusters import kwok, state
from harness.implementations.reference import process as schedulerproc
from harness.invariants import checking, reading
from harness.kube import apiservice, kubeconfig, pki, rest
from tests import hostile_requests as hostile

from .conftest import kwok_cluster, running_scheduler
from .kueue_objects import BASE, VISIBILITY, cluster_queue, create, flavor, local_queue, wait_for, workload

pytestmark = pytest.mark.integration

CQS = ("cq-a", "cq-b")
LQS = (("team-a", "lq-a"), ("team-b", "lq-b"))
ADMIN = (("X-Remote-User", "admin"), ("X-Remote-Group", "system:masters"))
MEMORY_GROWTH_LIMIT = 128 * 2**20
"""Bytes the scheduler's RSS may grow over all the fuzzing (its page and review caches are bounded)."""


@dataclass
class Served:
    info: state.ClusterInfo
    creds: kubeconfig.Credentials
    scheduler: schedulerproc.SchedulerProcess
    host: str
    port: int
    proxy: ssl.SSLContext
    """Straight to the scheduler with kube-apiserver's front-proxy client certificate."""
    rss_before: int


def _namespace(name):
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}


@pytest.fixture(scope="module")
def served(binaries, state_dir):
    with kwok_cluster("hostile") as info:
        creds = kubeconfig.load(info.kubeconfig)
        apiservice.install_crds(creds)
        for namespace, _ in LQS:
            rest.apply(creds, f"/api/v1/namespaces/{namespace}", _namespace(namespace))
        create(creds, [flavor("default"), *(cluster_queue(cq, 2, cohort="") for cq in CQS),
                       *(local_queue(lq, cq, namespace) for (namespace, lq), cq in zip(LQS, CQS)),
                       *(workload(f"w-{i}", LQS[i % 2][1], i % 3, 5, namespace=LQS[i % 2][0]) for i in range(20))])
        with running_scheduler(info) as handle:
            scheduler = handle.process
            apiservice.wait_available(creds)
            folder = kwok.pki_dir(info.name)
            proxy = ssl.create_default_context()
            proxy.check_hostname = False
            proxy.verify_mode = ssl.CERT_NONE
            proxy.load_cert_chain(folder / "front-proxy-client.crt", folder / "front-proxy-client.key")
            host, port = creds.server.removeprefix("https://").rsplit(":", 1)
            yield Served(info, creds, scheduler, host, int(port), proxy, psutil.Process(scheduler.pid()).memory_info().rss)


def _is_status(body: bytes, code: int) -> bool:
    try:
        status = json.loads(body)
    except ValueError:
        return False
    return status.get("kind") == "Status" and status.get("code") == code


def _judge(served: Served, request: hostile.Request, code: int, body: bytes) -> None:
    assert code < 500, f"{request.short()} -> {code} {body[:300]!r}"
    if code >= 400 and request.method != "HEAD" and body.startswith(b"{"):
        assert _is_status(body, code), f"{request.short()} -> {code} is not a Status: {body[:300]!r}"
    assert served.scheduler.alive(), f"the scheduler died on {request.short()}"


@hostile.PROFILE
@given(request=hostile.requests(CQS, LQS))
def test_through_kube_apiserver_never_a_server_error(served, request):
    code, body = hostile.send(served.host, served.port, served.creds.ssl_context(), request)
    _judge(served, request, code, body)


@hostile.PROFILE
@given(request=hostile.requests(CQS, LQS))
def test_straight_to_the_server_never_a_server_error(served, request):
    code, body = hostile.send("127.0.0.1", served.scheduler.visibility_port, served.proxy, request, ADMIN)
    _judge(served, request, code, body)


def _code(served: Served, method: str, path: str, straight: bool = False) -> int:
    if straight:
        return hostile.send("127.0.0.1", served.scheduler.visibility_port, served.proxy,
                            hostile.Request(method, path), ADMIN)[0]
    return hostile.send(served.host, served.port, served.creds.ssl_context(), hostile.Request(method, path))[0]


@pytest.mark.parametrize("kind, ours, theirs", [
    ("unknown resource", ("GET", f"{VISIBILITY}/nothing"), ("GET", "/api/v1/nothing")),
    ("unknown subresource", ("GET", f"{VISIBILITY}/clusterqueues/cq-a/nothing"),
     ("GET", "/api/v1/namespaces/team-a/configmaps/x/nothing")),
    ("method not allowed", ("DELETE", f"{VISIBILITY}/clusterqueues/cq-a/pendingworkloads"),
     ("DELETE", "/api/v1/namespaces/team-a/pods/x/log")),
    ("non-numeric limit", ("GET", f"{VISIBILITY}/clusterqueues/cq-a/pendingworkloads?limit=abc"),
     ("GET", "/api/v1/namespaces/team-a/configmaps?limit=abc")),
])
def test_the_same_kind_of_bad_request_gets_kube_apiservers_status_code(served, kind, ours, theirs):
    expected = _code(served, *theirs)
    assert 400 <= expected < 500, f"kube-apiserver answered {kind} with {expected}"
    assert _code(served, *ours) == expected, kind
    assert _code(served, *ours, straight=True) == expected, kind


def test_memory_stays_bounded_after_the_fuzz(served):
    grown = psutil.Process(served.scheduler.pid()).memory_info().rss - served.rss_before
    assert grown < MEMORY_GROWTH_LIMIT, f"the scheduler grew by {grown / 2**20:.0f} MiB"


def _as_user(served: Served, user: str, path: str) -> int:
    request = urllib.request.Request(served.creds.server + path, headers={"Impersonate-User": user})
    try:
        with urllib.request.urlopen(request, context=served.creds.ssl_context(), timeout=30) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code


def test_rbac_on_one_namespace_reads_no_other_namespaces_positions(served):
    rules = [{"apiGroups": ["visibility.kueue.x-k8s.io"], "resources": ["localqueues/pendingworkloads"], "verbs": ["get"]}]
    rest.apply(served.creds, "/apis/rbac.authorization.k8s.io/v1/namespaces/team-a/roles/positions",
               {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
                "metadata": {"name": "positions", "namespace": "team-a"}, "rules": rules})
    rest.apply(served.creds, "/apis/rbac.authorization.k8s.io/v1/namespaces/team-a/rolebindings/alice",
               {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
                "metadata": {"name": "alice", "namespace": "team-a"},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "positions"},
                "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "alice"}]})
    own = f"{VISIBILITY}/namespaces/team-a/localqueues/lq-a/pendingworkloads"
    assert wait_for(lambda: _as_user(served, "alice", own) == 200, timeout=30), "RBAC on team-a never took effect"
    assert _as_user(served, "alice", f"{VISIBILITY}/namespaces/team-b/localqueues/lq-b/pendingworkloads") == 403
    assert _as_user(served, "alice", f"{VISIBILITY}/clusterqueues/cq-a/pendingworkloads") == 403
    # straight to the server with kube-apiserver's proxy certificate: the server's own review says the same
    code, _ = hostile.send("127.0.0.1", served.scheduler.visibility_port, served.proxy,
                           hostile.Request("GET", f"{VISIBILITY}/namespaces/team-b/localqueues/lq-b/pendingworkloads"),
                           (("X-Remote-User", "alice"),))
    assert code == 403


def test_a_client_certificate_from_another_ca_fails_the_handshake(served, tmp_path):
    rogue = pki.make_ca("front-proxy-ca")  # the same name, another key
    pki.make_client_cert(rogue, "front-proxy-client").write(tmp_path / "rogue.crt", tmp_path / "rogue.key")
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    context.load_cert_chain(tmp_path / "rogue.crt", tmp_path / "rogue.key")
    with pytest.raises((ssl.SSLError, ConnectionResetError, http.client.RemoteDisconnected, BrokenPipeError)):
        # TLS 1.3 reports the server's refusal of the client certificate at the first read
        hostile.send("127.0.0.1", served.scheduler.visibility_port, context,
                     hostile.Request("GET", f"{VISIBILITY}/clusterqueues/cq-a/pendingworkloads"), ADMIN)


def test_the_metrics_port_listens_on_loopback_only(served):
    metrics_port = int(served.scheduler.metrics_url.rsplit(":", 1)[1].split("/")[0])
    listening = [c for c in psutil.Process(served.scheduler.pid()).net_connections(kind="inet")
                 if c.status == psutil.CONN_LISTEN]
    assert metrics_port in {c.laddr.port for c in listening}
    assert {c.laddr.ip for c in listening} == {"127.0.0.1"}, listening


# -- last: planted violations the invariant checker must find in the API ---------------------


def _admit(creds, namespace, name, cq, flavor_name, cpu, reserved_at):
    status = {"admission": {"clusterQueue": cq, "podSetAssignments": [
        {"name": "main", "flavors": {"cpu": flavor_name}, "resourceUsage": {"cpu": str(cpu)}, "count": 1}]},
        "conditions": [{"type": "QuotaReserved", "status": "True", "reason": "Planted", "message": "by the test",
                        "lastTransitionTime": reserved_at}]}
    code, body = rest.request(creds, "PATCH", f"{BASE}/namespaces/{namespace}/workloads/{name}/status",
                              {"status": status}, "application/merge-patch+json")
    assert code == 200, body[:300]


def test_planted_violations_are_named_by_the_invariant_checker(served):
    creds = served.creds
    rest.apply(creds, "/api/v1/namespaces/planted", _namespace("planted"))
    create(creds, [flavor("spot"), cluster_queue("planted", 1, cohort=""), local_queue("lq", "planted", "planted"),
                   workload("over", "lq", 0, 5, namespace="planted")])
    checker = reading.checker_for(served.info, reading.InvariantSettings(status_reads=1))
    _admit(creds, "planted", "over", "planted", "default", 5, "2026-01-01T00:00:00Z")
    first = checker.check("planted-1")
    [quota] = first[first["check"] == checking.QUOTA].to_dict("records")
    assert quota["status"] == reading.FAILED and "ClusterQueue/planted" in quota["objects"]
    assert "Workload/planted/over" in quota["objects"] and "default/cpu: admitted 5 > 1" in quota["detail"]
    _admit(creds, "planted", "over", "planted", "spot", 5, "2026-01-01T00:00:00Z")  # another flavor, no eviction
    second = checker.check("planted-2")
    [again] = second[second["check"] == checking.ADMITTED_ONCE].to_dict("records")
    assert again["status"] == reading.FAILED and again["objects"] == "Workload/planted/over"
