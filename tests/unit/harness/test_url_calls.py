"""harness.kube.calling, the harness's one door for a plain HTTP request, and what its callers (the metrics
scrape, etcd's range read, the schedulers' readiness) make of the answer, against real servers on 127.0.0.1."""

from __future__ import annotations

import http.server
import json
import socket
import ssl
import threading
import urllib.error
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from harness.errors import KqbenchError
from harness.implementations.kueue import readiness
from harness.kube import calling, pki
from harness.kube.kubeconfig import Credentials
from harness.metrics import etcdreading, scraping
from scheduler import listening

Answers = dict[str, tuple[int, bytes]]
"""path -> (status, body); a path not listed answers 404."""


@contextmanager
def serving(answers: Answers, tls: ssl.SSLContext | None = None) -> Iterator[tuple[str, list[dict]]]:
    """A server on the loopback answering from `answers`; yields its base URL and the requests it saw (method,
    path, lower-cased headers, body). Stopped on exit."""
    seen: list[dict] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def answer(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            seen.append({"method": self.command, "path": self.path, "body": self.rfile.read(length),
                         **{name.lower(): value for name, value in self.headers.items()}})
            status, body = answers.get(self.path, (404, b"not found"))
            self.send_response(status)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_GET = do_POST = do_PATCH = answer

        def log_message(self, *args) -> None:
            pass

    server = http.server.ThreadingHTTPServer((listening.LOOPBACK, 0), Handler)
    if tls is not None:
        server.socket = tls.wrap_socket(server.socket, server_side=True)
    # a short poll: shutdown() waits for the loop to look, half a second by default
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"{'https' if tls else 'http'}://{listening.LOOPBACK}:{server.server_port}", seen
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


@contextmanager
def closed_port() -> Iterator[int]:
    """A loopback port bound but not listening (held, so nobody else takes it): a connection is refused."""
    with socket.socket() as held:
        held.bind((listening.LOOPBACK, 0))
        yield held.getsockname()[1]


@contextmanager
def silent_port() -> Iterator[int]:
    """A loopback port that accepts connections (the kernel's backlog) and never answers."""
    with socket.socket() as held:
        held.bind((listening.LOOPBACK, 0))
        held.listen(1)
        yield held.getsockname()[1]


def self_signed_tls(folder: Path) -> ssl.SSLContext:
    """A server's TLS with a certificate for 127.0.0.1 from a CA nobody trusts (as Kueue's manager makes its own)."""
    pair = pki.make_serving_cert(pki.make_ca("kqbench-test-ca"), ["localhost"])
    (folder / "tls.crt").write_bytes(pair.cert_pem)
    (folder / "tls.key").write_bytes(pair.key_pem)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(folder / "tls.crt", folder / "tls.key")
    return context


def test_a_200_answer_gives_its_status_and_body_and_the_headers_arrive():
    with serving({"/metrics": (200, b"up 1\n")}) as (base, seen):
        assert calling.call(f"{base}/metrics", headers={"Authorization": "Bearer t0ken"}) == (200, b"up 1\n")
    assert seen[0]["method"] == "GET" and seen[0]["authorization"] == "Bearer t0ken"


@pytest.mark.parametrize("status, body", [(403, b"forbidden"), (404, b"not found"), (410, b"gone"),
                                          (503, b"[-]informer-sync failed")])
def test_an_error_status_is_returned_not_raised(status, body):
    with serving({"/x": (status, body)}) as (base, _):
        assert calling.call(f"{base}/x") == (status, body)


def test_a_json_body_arrives_as_json_and_bytes_as_sent():
    with serving({"/v3/kv/range": (200, b"{}")}) as (base, seen):
        calling.call(f"{base}/v3/kv/range", "POST", body={"key": "L3JlZ2lzdHJ5Lw==", "limit": 2})
        calling.call(f"{base}/v3/kv/range", "POST", body=b"key: x", headers={"Content-Type": "application/yaml"})
        calling.call(f"{base}/v3/kv/range", "PATCH", body={"a": 1},
                     headers={"content-type": "application/apply-patch+yaml"})
    json_post, bytes_post, patch = seen
    assert json_post["method"] == "POST" and json.loads(json_post["body"]) == {"key": "L3JlZ2lzdHJ5Lw==", "limit": 2}
    assert json_post["content-type"] == "application/json"
    assert bytes_post["body"] == b"key: x" and bytes_post["content-type"] == "application/yaml"
    # the caller's Content-Type wins, whatever its case (server-side apply sends JSON as apply-patch+yaml)
    assert patch["method"] == "PATCH" and patch["content-type"] == "application/apply-patch+yaml"


def test_opened_streams_the_answer_and_an_error_status_raises_as_an_oserror():
    with serving({"/w": (200, b'{"n": 1}\n{"n": 2}\n'), "/gone": (410, b"gone")}) as (base, _):
        with calling.opened(f"{base}/w") as response:
            assert [json.loads(line) for line in response] == [{"n": 1}, {"n": 2}]
        with pytest.raises(urllib.error.HTTPError) as raised:
            calling.opened(f"{base}/gone")
    assert raised.value.code == 410 and isinstance(raised.value, OSError)


def test_a_refused_connection_and_a_silent_server_raise_oserror():
    with closed_port() as port, pytest.raises(OSError):
        calling.call(f"http://{listening.LOOPBACK}:{port}/readyz", timeout=2)
    with silent_port() as port, pytest.raises(OSError):
        calling.call(f"http://{listening.LOOPBACK}:{port}/readyz", timeout=0.2)


def test_loopback_tls_reaches_a_self_signed_server_that_verified_tls_refuses(tmp_path):
    with serving({"/metrics": (200, b"up 1\n")}, tls=self_signed_tls(tmp_path)) as (base, _):
        assert calling.call(f"{base}/metrics", context=calling.loopback_tls()) == (200, b"up 1\n")
        with pytest.raises(OSError, match="CERTIFICATE_VERIFY_FAILED"):
            calling.call(f"{base}/metrics", context=ssl.create_default_context())


@pytest.mark.parametrize("status, message", [
    (403, r"^apiserver http://\S+/metrics answered 403 "
          r"\(the kubeconfig user may lack get on nonResourceURL /metrics\)$"),
    (500, r"^apiserver http://\S+/metrics answered 500$"),
])
def test_a_scrape_that_is_refused_says_the_status_and_for_403_why(status, message):
    with serving({"/metrics": (status, b"no")}) as (base, _):
        with pytest.raises(KqbenchError, match=message):
            scraping.fetch(scraping.Target("apiserver", f"{base}/metrics"))


def test_a_scrape_reads_the_text_and_an_unreachable_source_says_so():
    with serving({"/metrics": (200, b"kueue_pending_workloads 3\n")}) as (base, seen):
        text = scraping.fetch(scraping.bearer_target("kueue", f"{base}/metrics", "t0ken"))
    assert text == "kueue_pending_workloads 3\n"
    assert seen[0]["accept"] == "text/plain" and seen[0]["authorization"] == "Bearer t0ken"
    with closed_port() as port, pytest.raises(KqbenchError, match=r"^etcd http://\S+/metrics is not reachable: "):
        scraping.fetch(scraping.Target("etcd", f"http://{listening.LOOPBACK}:{port}/metrics"), timeout=2)


def test_etcd_range_reads_post_json_and_a_refusal_names_the_status():
    page = {"header": {"revision": "7"}, "kvs": [{"key": "L3JlZ2lzdHJ5L2E=", "value": "YWJj"}], "more": False}
    with serving({"/v3/kv/range": (200, json.dumps(page).encode())}) as (base, seen):
        assert list(etcdreading.read_sizes(base)) == [("/registry/a", 3)]
    assert json.loads(seen[0]["body"])["key"] == "L3JlZ2lzdHJ5Lw=="
    with serving({"/v3/kv/range": (500, b"etcdserver: too many requests")}) as (base, _):
        with pytest.raises(KqbenchError, match=r"refused a range read \(500\): b'etcdserver: too many requests'"):
            list(etcdreading.read_sizes(base))


def test_kueues_readyz_step_holds_on_200_and_otherwise_says_what_it_saw():
    creds = Credentials(server="http://unused", ca_file=None, cert_file=None, key_file=None, token=None)
    with serving({"/readyz": (200, b"ok"), "/starting": (500, b"[-]webhook-certs not ready\n")}) as (base, _):
        assert readiness.steps(creds, f"{base}/readyz")[0].probe() is None
        assert readiness.steps(creds, f"{base}/starting")[0].probe() == "500 [-]webhook-certs not ready"
