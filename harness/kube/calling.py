"""Calling a URL: the one way the harness sends a plain HTTP request (kube-apiserver through `rest`,
etcd's JSON gateway, the schedulers' /metrics and /readyz), and the TLS context for the loopback's
self-signed serving certificates.

Long-lived keep-alive traffic (the calibration's one connection, the aiohttp pools) is not here: it
measures or floods, and a request per call would change what it does.
"""

from __future__ import annotations

import http.client
import json
import ssl
import urllib.error
import urllib.request
from collections.abc import Mapping

Body = bytes | dict | list | None
"""Bytes go as they are; a dict or list goes as JSON (Content-Type application/json unless the headers say)."""


def call(url: str, method: str = "GET", *, body: Body = None, headers: Mapping[str, str] | None = None,
         timeout: float = 10.0, context: ssl.SSLContext | None = None) -> tuple[int, bytes]:
    """One request (timeout in seconds); returns (status, body), also for HTTP error statuses. A transport
    failure (refused, timed out, TLS) raises OSError."""
    try:
        with opened(url, method, body=body, headers=headers, timeout=timeout, context=context) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        with error:
            return error.code, error.read()


def opened(url: str, method: str = "GET", *, body: Body = None, headers: Mapping[str, str] | None = None,
           timeout: float = 10.0, context: ssl.SSLContext | None = None) -> http.client.HTTPResponse:
    """The open response (close it: use it in a `with`), to read as it streams (a watch) or to let an error
    status raise: it raises urllib.error.HTTPError, which like a transport failure is an OSError."""
    sent = dict(headers or {})
    data = body
    if body is not None and not isinstance(body, bytes):
        data = json.dumps(body).encode()
        if not any(name.lower() == "content-type" for name in sent):
            sent["Content-Type"] = "application/json"
    request = urllib.request.Request(url, data=data, headers=sent, method=method)
    return urllib.request.urlopen(request, timeout=timeout, context=context)


def loopback_tls() -> ssl.SSLContext:
    """TLS to a self-signed serving certificate on 127.0.0.1 (Kueue's manager, kube-controller-manager,
    kube-scheduler), not verified: acceptable because the connection never leaves the loopback, and
    these servers make their own certificates, which nothing here could trust."""
    context = ssl.create_default_context()
    context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
    return context
