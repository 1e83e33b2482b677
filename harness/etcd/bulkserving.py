"""Waiting until kube-apiserver serves what was written straight into its etcd.

A bulk load (nodes, Workloads) ends with etcd's revision after its last write. kube-apiserver takes the
objects in through its watch on etcd, so they are served once its watch cache has reached that revision,
and then counted by a LIST of the kind's own (nodes: Ready ones; Workloads: all of a selector).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from harness.errors import KqbenchError
from harness.kube import rest, waiting
from harness.kube.kubeconfig import Credentials

Progress = Callable[..., None]
_CURRENT = re.compile(r"current: (\d+)")


def cache_revision(message: bytes | str) -> int | None:
    """The revision kube-apiserver's watch cache has reached, from its 'Too large resource version' answer."""
    text = message.decode(errors="replace") if isinstance(message, bytes) else message
    found = _CURRENT.search(text)
    return int(found.group(1)) if found else None


@dataclass(frozen=True, slots=True)
class Served:
    """What is waited for: `probe` is a LIST of one item at etcd's revision or newer (resourceVersionMatch
    NotOlderThan), `count` counts what is served, `noun` names it in progress ("loaded nodes Ready")."""

    probe: str
    count: Callable[[], int]
    noun: str
    topic: str


@dataclass(slots=True)
class _Seen:
    """What the last look found, for progress and for the message of a wait that ran out."""

    cache: int = 0
    served: int = 0
    caught_up: bool = False


def wait(creds: Credentials, what: Served, revision: int, expected: int, progress: Progress, timeout: float,
         interval: float = 0.5) -> int:
    """Wait until kube-apiserver's watch cache has reached etcd `revision` and what.count() is at least
    `expected`; returns the last count. Bounded by timeout."""
    seen = _Seen()

    def check() -> int | None:
        if not seen.caught_up:
            # Served only once the watch cache holds revision; else a 504 after up to 3 s naming its revision.
            status, body = rest.get(creds, what.probe, timeout=30.0)
            if status == 429:  # a restarted kube-apiserver still filling its watch cache
                progress(what.topic, "kube-apiserver's watch cache is being filled")
                return None
            if status == 504:
                seen.cache = cache_revision(body) or seen.cache
                progress(what.topic, f"kube-apiserver's watch cache at etcd revision {seen.cache} of {revision}")
                return None
            if status != 200:
                raise KqbenchError(f"listing {what.topic} at revision {revision} failed: HTTP {status} {body[:200]!r}")
            seen.caught_up = True
        seen.served = what.count()
        progress(what.topic, f"kube-apiserver serves {seen.served}/{expected} {what.noun}", seen.served >= expected)
        return seen.served if seen.served >= expected else None

    def failure() -> str:
        if not seen.caught_up:
            return (f"kube-apiserver's watch cache reached etcd revision {seen.cache} of {revision} in "
                    f"{timeout:.0f}s (its log says why)")
        return f"kube-apiserver serves {seen.served} of {expected} {what.noun} after {timeout:.0f}s"

    return waiting.poll(check, timeout=timeout, interval=interval, failure=failure)
