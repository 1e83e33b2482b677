"""The front-proxy identity kube-apiserver uses when it proxies to aggregated API servers.

Each kwok cluster gets its own requestheader CA and a client certificate signed by it; the
aggregated server (our visibility API) trusts X-Remote-* headers only from that certificate.
"""

from __future__ import annotations

from pathlib import Path

from harness.kube import pki

CLIENT_NAME = "front-proxy-client"


def ensure(folder: Path) -> dict[str, Path]:
    """Write the requestheader CA and front-proxy client pair into folder (once); return their paths."""
    paths = {
        "ca": folder / "front-proxy-ca.crt",
        "ca_key": folder / "front-proxy-ca.key",
        "client": folder / "front-proxy-client.crt",
        "client_key": folder / "front-proxy-client.key",
    }
    if not all(p.exists() for p in paths.values()):
        ca = pki.make_ca("kqbench-front-proxy-ca")
        ca.write(paths["ca"], paths["ca_key"])
        pki.make_client_cert(ca, CLIENT_NAME).write(paths["client"], paths["client_key"])
    return paths


def apiserver_args(paths: dict[str, Path]) -> tuple[tuple[str, str], ...]:
    """kube-apiserver flags for the aggregation layer (routing through Services stays off)."""
    return (
        ("requestheader-client-ca-file", str(paths["ca"])),
        ("requestheader-allowed-names", CLIENT_NAME),
        ("requestheader-username-headers", "X-Remote-User"),
        ("requestheader-group-headers", "X-Remote-Group"),
        ("requestheader-extra-headers-prefix", "X-Remote-Extra-"),
        ("proxy-client-cert-file", str(paths["client"])),
        ("proxy-client-key-file", str(paths["client_key"])),
        ("enable-aggregator-routing", "false"),
    )
