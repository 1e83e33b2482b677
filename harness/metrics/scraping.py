"""Fetching /metrics text from kube-apiserver (admin client cert), etcd and our scheduler (plain HTTP on
127.0.0.1), kube-controller-manager and kube-scheduler (anonymous) and Kueue's manager (bearer token)."""

from __future__ import annotations

import ssl
import urllib.error
import urllib.request
from dataclasses import dataclass, field

from harness.clusters import state
from harness.errors import KqbenchError
from harness.kube import kubeconfig
from harness.metrics import catalog


@dataclass(frozen=True, slots=True)
class Target:
    """Where one source's /metrics is, and how to authenticate to it."""

    source: str
    url: str
    ssl_context: ssl.SSLContext | None = None
    headers: dict[str, str] = field(default_factory=dict)


def targets(cluster: state.ClusterInfo) -> list[Target]:
    """The apiserver's and (when kqbench started them, so their URLs are known) etcd's, kube-controller-manager's
    and kube-scheduler's /metrics."""
    creds = kubeconfig.load(cluster.kubeconfig)
    # One SSL context per run: loading the client cert for every scrape costs more than the scrape.
    found = [Target(catalog.APISERVER, creds.server + "/metrics", creds.ssl_context(), creds.headers())]
    if cluster.etcd_url:
        found.append(Target(catalog.ETCD, cluster.etcd_url.rstrip("/") + "/metrics"))
    for component, url in sorted(cluster.metrics_urls.items()):
        found.append(Target(component, url, _loopback_tls()))
    return found


def _loopback_tls() -> ssl.SSLContext:
    """TLS to a self-signed serving certificate on 127.0.0.1: loopback only, so it is not verified."""
    context = ssl.create_default_context()
    context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
    return context


def scheduler_target(metrics_url: str) -> Target:
    """The reference scheduler's /metrics (plain HTTP on 127.0.0.1, no credentials)."""
    return Target(catalog.SCHEDULER, metrics_url)


def bearer_target(source: str, metrics_url: str, token: str) -> Target:
    """A /metrics on 127.0.0.1 behind a bearer token over TLS with a self-signed serving certificate
    (Kueue's manager): loopback only, so the certificate is not verified."""
    return Target(source, metrics_url, _loopback_tls(), {"Authorization": f"Bearer {token}"})


def fetch(target: Target, timeout: float = 10.0) -> str:
    """The metrics text; KqbenchError with the reason when the source does not answer 200."""
    request = urllib.request.Request(target.url, headers={"Accept": "text/plain", **target.headers})
    try:
        with urllib.request.urlopen(request, context=target.ssl_context, timeout=timeout) as response:
            return response.read().decode("utf-8", errors="replace")
    except urllib.error.HTTPError as error:
        hint = " (the kubeconfig user may lack get on nonResourceURL /metrics)" if error.code == 403 else ""
        raise KqbenchError(f"{target.source} {target.url} answered {error.code}{hint}") from None
    except OSError as error:
        raise KqbenchError(f"{target.source} {target.url} is not reachable: {error}") from None
