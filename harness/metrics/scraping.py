"""Fetching /metrics text from kube-apiserver (admin client cert), etcd and our scheduler (plain HTTP on
127.0.0.1), kube-controller-manager and kube-scheduler (anonymous) and Kueue's manager (bearer token)."""

from __future__ import annotations

import ssl
from dataclasses import dataclass, field

from harness.clusters import state
from harness.errors import KqbenchError
from harness.kube import calling, kubeconfig
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
        found.append(Target(component, url, calling.loopback_tls()))
    return found


def scheduler_target(metrics_url: str) -> Target:
    """The reference scheduler's /metrics (plain HTTP on 127.0.0.1, no credentials)."""
    return Target(catalog.SCHEDULER, metrics_url)


def bearer_target(source: str, metrics_url: str, token: str) -> Target:
    """A /metrics on 127.0.0.1 behind a bearer token over TLS with a self-signed serving certificate
    (Kueue's manager): loopback only, so the certificate is not verified."""
    return Target(source, metrics_url, calling.loopback_tls(), {"Authorization": f"Bearer {token}"})


def fetch(target: Target, timeout: float = 10.0) -> str:
    """The metrics text; KqbenchError with the reason when the source does not answer 200."""
    try:
        status, body = calling.call(target.url, headers={"Accept": "text/plain", **target.headers}, timeout=timeout,
                                    context=target.ssl_context)
    except OSError as error:
        raise KqbenchError(f"{target.source} {target.url} is not reachable: {error}") from None
    if not 200 <= status < 300:
        hint = " (the kubeconfig user may lack get on nonResourceURL /metrics)" if status == 403 else ""
        raise KqbenchError(f"{target.source} {target.url} answered {status}{hint}")
    return body.decode("utf-8", errors="replace")
