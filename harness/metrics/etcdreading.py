"""Reading key names and exact value sizes out of etcd through its JSON gateway (the I/O edge of the census).

The gateway returns values base64-encoded, so a value's size is known from its encoded length
without decoding it. Pages are read at one revision, so the census is one consistent snapshot.
"""

from __future__ import annotations

import base64
from collections.abc import Iterator
from dataclasses import dataclass

import orjson

from harness.errors import KqbenchError
from harness.kube import calling

PAGE_KEYS = 500
"""Keys per range request: 500 values of 10 KiB are ~7 MB of JSON per page, so memory stays
bounded and 100k keys take 200 round trips."""
MAX_PAGES = 100_000
"""A guard against a gateway that keeps saying `more` (50M keys at the default page)."""


@dataclass(slots=True)
class Snapshot:
    """Filled while reading: the revision every page was read at."""

    revision: int | None = None
    keys: int = 0


def _b64(text: str | bytes) -> str:
    return base64.b64encode(text.encode() if isinstance(text, str) else text).decode()


def decoded_length(encoded: str) -> int:
    """Byte length of a base64 string's decoded content (exact, padding-aware)."""
    if not encoded:
        return 0
    return len(encoded) * 3 // 4 - encoded[-2:].count("=")


def prefix_end(prefix: bytes) -> bytes:
    """The first key after every key that starts with prefix (etcd's range_end for a prefix)."""
    end = bytearray(prefix)
    while end and end[-1] == 0xFF:
        end.pop()
    if not end:
        return b"\0"
    end[-1] += 1
    return bytes(end)


def _range(url: str, body: dict, timeout: float) -> dict:
    try:
        status, answer = calling.call(url.rstrip("/") + "/v3/kv/range", "POST", body=body, timeout=timeout)
    except OSError as error:
        raise KqbenchError(f"etcd at {url} is not reachable: {error}") from None
    if not 200 <= status < 300:
        raise KqbenchError(f"etcd at {url} refused a range read ({status}): {answer[:200]!r}")
    return orjson.loads(answer)


def read_sizes(etcd_url: str, prefix: str = "/registry/", page_keys: int = PAGE_KEYS, timeout: float = 60.0,
               snapshot: Snapshot | None = None) -> Iterator[tuple[str, int]]:
    """Yield (key, value bytes) for every key under prefix, at one revision, in key order."""
    snapshot = snapshot if snapshot is not None else Snapshot()
    start, end = prefix.encode(), prefix_end(prefix.encode())
    for _ in range(MAX_PAGES):
        body = {"key": _b64(start), "range_end": _b64(end), "limit": page_keys}
        if snapshot.revision is not None:
            body["revision"] = snapshot.revision
        answer = _range(etcd_url, body, timeout)
        if snapshot.revision is None:
            snapshot.revision = int(answer["header"]["revision"])
        kvs = answer.get("kvs", [])
        for kv in kvs:
            snapshot.keys += 1
            yield base64.b64decode(kv["key"]).decode(errors="replace"), decoded_length(kv.get("value", ""))
        if not answer.get("more") or not kvs:
            return
        start = base64.b64decode(kvs[-1]["key"]) + b"\0"
    raise KqbenchError(f"etcd at {etcd_url}: more than {MAX_PAGES} pages under {prefix}; raise the page size")
