"""Hostile requests to the visibility API, generated with hypothesis; shared by the in-process fuzz
(tests/unit) and the one through kube-apiserver (tests/integration).

Examples: `KQBENCH_FUZZ_EXAMPLES` (default 300, what CI runs; e.g. 20000 for a long hunt). Each
request is what a raw HTTP client could send: any method, a path built from the API's own templates
with hostile names, versions and extra segments, hostile query values, extra headers and a body.
"""

from __future__ import annotations

import http.client
import os
import ssl
import urllib.parse
from dataclasses import dataclass

from hypothesis import HealthCheck, settings, strategies as st

EXAMPLES = int(os.environ.get("KQBENCH_FUZZ_EXAMPLES", "300"))
PROFILE = settings(max_examples=EXAMPLES, deadline=None, derandomize=False, database=None,
                   suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
"""CI runs a few hundred examples per test; more with KQBENCH_FUZZ_EXAMPLES."""

GROUP_PATH = "/apis/visibility.kueue.x-k8s.io"


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    headers: tuple[tuple[str, str], ...] = ()
    body: bytes = b""

    def short(self) -> str:
        return f"{self.method} {self.path[:200]}{'...' if len(self.path) > 200 else ''}"


def _quote(text: str) -> str:
    return urllib.parse.quote(text, safe="")


def names(known: tuple[str, ...]) -> st.SearchStrategy[str]:
    """Queue and namespace names: known ones, unknown, long, non-ASCII, dots, encoded slashes."""
    return st.one_of(
        st.sampled_from(known),
        st.sampled_from(["nope", "..", ".", "%2F", "a%2Fb", "%00", "-", "UPPER", "a" * 253, "a" * 4000]),
        st.text(min_size=1, max_size=300).map(_quote),
        st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-.", min_size=1, max_size=64),
    )


def query_values() -> st.SearchStrategy[str]:
    return st.one_of(
        st.integers(min_value=-(10**30), max_value=10**30).map(str),
        st.integers(min_value=0, max_value=6000).map(lambda digits: "9" * digits),  # beyond int64 and int() limits
        st.sampled_from(["", "-1", "1.5", "1e3", " 1", "+1", "0x10", "١٢", "NaN", "null", "[]", "0" * 50 + "1"]),
        st.text(max_size=100),
    )


def queries() -> st.SearchStrategy[str]:
    key = st.one_of(st.sampled_from(["offset", "limit", "watch", "resourceVersion", "fieldSelector"]),
                    st.text(max_size=30))
    pairs = st.lists(st.tuples(key, query_values()), max_size=6)  # repeats happen: the same key twice
    return pairs.map(lambda kv: urllib.parse.urlencode(kv))


def paths(known_cqs: tuple[str, ...], known_lqs: tuple[tuple[str, str], ...]) -> st.SearchStrategy[str]:
    version = st.one_of(st.sampled_from(["v1beta2", "v1beta1", "v1", "v9", ""]), st.text(max_size=20).map(_quote))
    namespaces = names(tuple(ns for ns, _ in known_lqs))
    lqs = names(tuple(lq for _, lq in known_lqs))
    cqs = names(known_cqs)
    tail = st.sampled_from(["", "/", "/pendingworkloads", "/pendingworkloads/", "/pendingworkloads/x", "/status", "//"])
    templates = st.one_of(
        st.builds(lambda v, n, t: f"{GROUP_PATH}/{v}/clusterqueues/{n}{t}", version, cqs, tail),
        st.builds(lambda v, ns, n, t: f"{GROUP_PATH}/{v}/namespaces/{ns}/localqueues/{n}{t}", version, namespaces, lqs, tail),
        st.builds(lambda v: f"{GROUP_PATH}/{v}", version),
        st.builds(lambda v, segs: f"{GROUP_PATH}/{v}/" + "/".join(segs), version,
                  st.lists(st.text(min_size=1, max_size=20).map(_quote), max_size=8)),
        st.sampled_from(["/apis", GROUP_PATH, GROUP_PATH + "/", f"{GROUP_PATH}/v1beta2/clusterqueues"]),
    )
    return st.builds(lambda p, q: f"{p}?{q}" if q else p, templates, queries())


def header_values() -> st.SearchStrategy[str]:
    latin = st.characters(min_codepoint=0x20, max_codepoint=0xFF, blacklist_characters="\x7f")
    return st.one_of(st.text(alphabet=latin, max_size=200), st.just("x" * 7000))


_FRAMING = {"host", "content-length", "transfer-encoding", "connection", "expect", "upgrade", "te", "trailer",
            "x-remote-user"}
"""Headers that frame the request or name its user: the fuzz varies everything else."""


def headers() -> st.SearchStrategy[tuple[tuple[str, str], ...]]:
    name = st.one_of(st.sampled_from(["Accept", "Content-Type", "Accept-Encoding", "X-Remote-Group", "X-Remote-Extra-Scopes",
                                      "Impersonate-User", "Range", "If-None-Match", "Transfer-Encoding-Ish"]),
                     st.text(alphabet="abcdefghijklmnopqrstuvwxyz-", min_size=1, max_size=30)
                     .filter(lambda n: n.lower() not in _FRAMING))
    return st.lists(st.tuples(name, header_values()), max_size=5).map(tuple)


def requests(known_cqs: tuple[str, ...], known_lqs: tuple[tuple[str, str], ...]) -> st.SearchStrategy[Request]:
    method = st.one_of(st.just("GET"), st.just("GET"), st.sampled_from(["POST", "PUT", "PATCH", "DELETE", "HEAD",
                                                                         "OPTIONS", "PROPFIND", "get", "TRACE"]))
    return st.builds(Request, method, paths(known_cqs, known_lqs), headers(), st.binary(max_size=2000))


def send(host: str, port: int, context: ssl.SSLContext, request: Request,
         identity: tuple[tuple[str, str], ...] = (), timeout: float = 30.0) -> tuple[int, bytes]:
    """One raw request on a fresh connection: (status, body)."""
    connection = http.client.HTTPSConnection(host, port, context=context, timeout=timeout)
    try:
        connection.putrequest(request.method, request.path, skip_accept_encoding=True)
        for name, value in request.headers + identity:
            connection.putheader(name, value.encode("latin-1"))
        if request.body and request.method not in ("GET", "HEAD"):
            connection.putheader("Content-Length", str(len(request.body)))
            connection.endheaders(request.body)
        else:
            connection.endheaders()
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()
