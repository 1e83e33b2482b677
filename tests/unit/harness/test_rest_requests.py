"""harness.kube.rest's GET with a media type and its watch, the doors the bulk loader's count and the
watchers (the backlog keeper, the eviction log) go through, against a real HTTP server on the loopback."""

from __future__ import annotations

import http.server
import json
import threading
import urllib.error
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from harness.kube import rest
from harness.kube.kubeconfig import Credentials
from scheduler import listening


@contextmanager
def serving(status: int, body: bytes, seen: list[dict]) -> Iterator[Credentials]:
    """A server answering every GET with `status` and `body`, recording each request's path and headers."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            seen.append({"path": self.path, **{k.lower(): v for k, v in self.headers.items()}})
            self.send_response(status)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args) -> None:
            pass

    server = http.server.ThreadingHTTPServer((listening.LOOPBACK, 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield Credentials(server=f"http://{listening.LOOPBACK}:{server.server_port}", ca_file=None, cert_file=None,
                          key_file=None, token="t0ken")
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def test_a_get_sends_the_credentials_and_the_media_type_asked_for():
    # the bulk loader's count asks for metadata only: without the Accept header it would still count, slower
    seen: list[dict] = []
    with serving(200, b'{"items": []}', seen) as creds:
        assert rest.get(creds, "/x", accept="application/json;as=PartialObjectMetadataList") == (200, b'{"items": []}')
        assert rest.get(creds, "/y") == (200, b'{"items": []}')
    assert seen[0]["accept"] == "application/json;as=PartialObjectMetadataList"
    assert seen[0]["authorization"] == "Bearer t0ken"
    assert seen[1].get("accept") != seen[0]["accept"] and seen[1]["authorization"] == "Bearer t0ken"


def test_a_watch_hands_over_each_event_and_an_http_error_raises():
    events = [{"type": "ADDED", "object": {"metadata": {"name": "a"}}}, {"type": "BOOKMARK", "object": {}}]
    seen: list[dict] = []
    with serving(200, b"".join(json.dumps(e).encode() + b"\n" for e in events), seen) as creds:
        got: list[dict] = []
        rest.watch(creds, "/w?watch=1", got.append, timeout=5)
    assert got == events and seen[0]["path"] == "/w?watch=1"
    with serving(410, b"gone", []) as creds, pytest.raises(urllib.error.HTTPError):
        rest.watch(creds, "/w?watch=1", got.append, timeout=5)
