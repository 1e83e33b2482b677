"""Who is asking: trust X-Remote-* headers only from kube-apiserver's front-proxy certificate.

The request-header CA and allowed names come from the `extension-apiserver-authentication`
ConfigMap that kube-apiserver publishes, as every aggregated API server reads them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class RequestHeaderConfig:
    client_ca_pem: str
    allowed_names: tuple[str, ...] = ()
    """Empty means any certificate signed by the CA may proxy (Kubernetes' rule)."""
    username_headers: tuple[str, ...] = ("X-Remote-User",)
    group_headers: tuple[str, ...] = ("X-Remote-Group",)
    extra_prefixes: tuple[str, ...] = ("X-Remote-Extra-",)

    @classmethod
    def from_configmap(cls, data: dict[str, str]) -> "RequestHeaderConfig":
        """Parse the ConfigMap's data (its list values are JSON arrays)."""
        ca = data.get("requestheader-client-ca-file")
        if not ca:
            raise ValueError("kube-apiserver has no --requestheader-client-ca-file: the aggregation layer is not set up")

        def names(key: str, default: tuple[str, ...]) -> tuple[str, ...]:
            text = data.get(key)
            return tuple(json.loads(text)) if text else default

        return cls(
            client_ca_pem=ca,
            allowed_names=names("requestheader-allowed-names", ()),
            username_headers=names("requestheader-username-headers", ("X-Remote-User",)),
            group_headers=names("requestheader-group-headers", ("X-Remote-Group",)),
            extra_prefixes=names("requestheader-extra-headers-prefix", ("X-Remote-Extra-",)),
        )


@dataclass(frozen=True, slots=True)
class User:
    name: str
    groups: tuple[str, ...] = ()
    extra: dict[str, tuple[str, ...]] = field(default_factory=dict)


class Unauthenticated(Exception):
    """No trusted identity on this request (answered with 401)."""


def peer_common_name(peercert: dict | None) -> str | None:
    """CN of a verified client certificate as `ssl` reports it (None when there was none)."""
    if not peercert:
        return None
    for rdn in peercert.get("subject", ()):
        for key, value in rdn:
            if key == "commonName":
                return value
    return None


def authenticate(config: RequestHeaderConfig, peercert: dict | None, headers) -> User:
    """The user kube-apiserver vouches for; Unauthenticated if the proxy certificate is missing or not allowed.

    headers is any case-insensitive mapping with getall() or get() (aiohttp's CIMultiDict).
    """
    name = peer_common_name(peercert)
    if name is None:
        raise Unauthenticated("no client certificate signed by the request-header CA")
    if config.allowed_names and name not in config.allowed_names:
        raise Unauthenticated(f"client certificate CN {name!r} is not an allowed request-header name")
    user = next((headers.get(h) for h in config.username_headers if headers.get(h)), None)
    if not user:
        raise Unauthenticated("the front proxy sent no user header")
    groups: list[str] = []
    for header in config.group_headers:
        groups.extend(headers.getall(header, []))
    extra: dict[str, list[str]] = {}
    for key in headers.keys():
        for prefix in config.extra_prefixes:
            if key.lower().startswith(prefix.lower()):
                extra.setdefault(_text(key[len(prefix):].lower()), []).append(_text(headers[key]))
    return User(_text(user), tuple(map(_text, groups)), {k: tuple(v) for k, v in extra.items()})


def _text(value: str) -> str:
    """A header value as text that JSON can carry: bytes that are not UTF-8 (which the HTTP parser keeps as
    surrogates) become U+FFFD, as Go's encoding/json writes them in kube-apiserver's own SubjectAccessReview."""
    return value.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
