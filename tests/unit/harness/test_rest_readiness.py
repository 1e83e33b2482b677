"""kube-apiserver's /readyz waited for through harness.kube.waiting, against a real HTTP server on 127.0.0.1."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from harness.errors import KqbenchError
from harness.kube import rest
from harness.kube.kubeconfig import Credentials
from tests.unit.harness.faketime import FakeTime


@contextmanager
def readyz(answers: list[tuple[int, bytes]]) -> Iterator[Credentials]:
    """A server whose /readyz gives `answers` in turn, then the last one for ever; stopped on exit."""
    queue = list(answers)

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            status, body = queue.pop(0) if len(queue) > 1 else queue[0]
            self.send_response(status)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield Credentials(server=f"http://127.0.0.1:{server.server_port}", ca_file=None, cert_file=None,
                          key_file=None, token=None)
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def test_ready_after_two_refusals_returns_the_time_waited():
    time = FakeTime()
    with readyz([(503, b"[-]etcd failed"), (503, b"[-]etcd failed"), (200, b"ok")]) as creds:
        assert rest.wait_ready(creds, timeout=10, clock=time.clock, sleep=time.sleep) == pytest.approx(1.0)


def test_never_ready_names_the_last_answer():
    time = FakeTime()
    with readyz([(500, b"[-]informer-sync failed"), (503, b"[-]etcd failed")]) as creds:
        with pytest.raises(KqbenchError, match=r"not ready after 3s \(last answer: 503 \[-\]etcd failed\)$"):
            rest.wait_ready(creds, timeout=3, clock=time.clock, sleep=time.sleep)
