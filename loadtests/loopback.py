"""Whether an apiserver URL stays on this machine, and the one opt-in that lets load leave it (pure).

Load aimed at a shared cluster by mistake hurts its users, so a non-loopback target needs an explicit
`--allow-remote` (in a scenario `cluster.allow_remote: true`); the check reads the URL only.
"""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

OPT_IN = "--allow-remote (in a scenario: cluster.allow_remote: true)"
"""How a user says a remote apiserver is meant; every refusal names it."""


def is_loopback(url: str) -> bool:
    """True when the URL's host is `localhost` or a loopback IP (127.0.0.0/8, ::1)."""
    try:
        host = urlsplit(url).hostname
    except ValueError:
        return False
    if not host:
        return False
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False  # a DNS name other than localhost may point anywhere


def refusal(url: str, allow_remote: bool) -> str:
    """Why load may not go to `url` ("" when it may)."""
    if allow_remote or is_loopback(url):
        return ""
    return f"apiserver {url} is not a loopback address: pass {OPT_IN} to target a cluster on another machine"
