"""Writing many objects straight into a cluster's etcd: many transactions in flight over etcd's v3 API,
one object per revision.

For set-up that a run does not measure (100k nodes): kube-apiserver picks the objects up from etcd's
watch like any other write. The caller decides what the keys and values are; this module only
writes them, refuses to overwrite unless told to, and says exactly how far it got when etcd refuses.

Why the gRPC API through `aetcd` and not etcd's JSON gateway (`/v3/kv/txn` over aiohttp): measured on
this 2-core machine against a bare etcd v3.6.16, 100,000 values of 1.6 KB in transactions of 128 puts,
gRPC took 1.5-2.1 s (4, 8 or 16 concurrent transactions) and the gateway 2.6-5.8 s: etcd transcodes
every gateway request from JSON and base64 into protobuf, on the cores kube-apiserver needs at the same
time. The client's own CPU was 0.7 s against 0.55 s.
"""

from __future__ import annotations

import asyncio
import ipaddress
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar
from urllib.parse import urlsplit

import aetcd
import aetcd.exceptions

from harness.errors import KqbenchError

T = TypeVar("T")
Entry = tuple[bytes, bytes]
"""(key, value) as etcd stores them."""
Progress = Callable[..., None]

PUTS_PER_TRANSACTION = 1
"""One object per etcd revision. Every put of a transaction gets the transaction's revision, so its
objects reach watchers as events of one resourceVersion, and a watch that ends among them resumes after
that version and never sees the rest. Measured with transactions of 128 puts: the reference scheduler's
informer, cut off while 5,000 Workloads arrived, held 4,359 pending for minutes (a fresh LIST found
all 5,000); kube-scheduler, after 100,000 bulk nodes, held 96,936 in its cache for good (3,064 lost,
24 transactions' worth). Single puts cost throughput: 20,000 Workloads in 5.1 s at 64 in flight
(16: 10.1 s; 128: 4.9 s) against 0.8 s in transactions of 128, on this 2-core machine."""
UNWATCHED_PUTS_PER_TRANSACTION = 128
"""Objects per revision when nothing watches etcd (kube-apiserver stopped): no watch can end inside one.
100,000 nodes in 782 transactions took 2.2 s here, against 43 s one per revision with kube-apiserver up."""
CONCURRENCY = 64
"""Transactions in flight at once over one connection: etcd commits concurrent ones together (measured above)."""
MAX_MESSAGE_BYTES = 512 * 1024**2
"""gRPC's 4 MiB default answer size would cut off a keys-only range over a few hundred thousand keys."""
RPC_TIMEOUT_SECONDS = 60


SHOWN_NAMES = 3
"""How many of the clashing names a refusal lists."""


class NamesExist(KqbenchError):
    """Objects to be loaded already exist in the cluster and the overwrite was not asked for; nothing was written."""


def refuse_existing(names: Sequence[str], total: int, replace: bool, kind: str, otherwise: str) -> None:
    """NamesExist unless none of the `total` objects to load exists yet (`names`: those found in etcd) or
    the overwrite is explicit (`replace`); `otherwise` says how to choose other names."""
    if not names or replace:
        return
    more = ", ..." if len(names) > SHOWN_NAMES else ""
    raise NamesExist(f"{len(names)} of the {total} {kind} to load already exist in the cluster "
                     f"({', '.join(names[:SHOWN_NAMES])}{more}): nothing was written. Give --replace to overwrite "
                     f"them, or {otherwise}")


@dataclass(frozen=True, slots=True)
class LoadReport:
    """A bulk load of objects into a running cluster's etcd, until kube-apiserver served them."""

    requested: int
    replaced: int
    """Objects that existed and were overwritten (only with replace)."""
    write_seconds: float
    """From building the objects to etcd's answer to the last write."""
    transactions: int
    value_bytes: int
    served_seconds: float
    """From the last write until kube-apiserver served every object (nodes: Ready)."""
    served: int


class WriteRefused(KqbenchError):
    """etcd refused a write (quota, request size, a key that appeared meanwhile); says how many were written."""


@dataclass(frozen=True, slots=True)
class WriteReport:
    written: int
    transactions: int
    value_bytes: int
    seconds: float
    revision: int
    """etcd's revision after the last transaction: a reader at this revision sees every object."""


def batches(items: Sequence[T], size: int = PUTS_PER_TRANSACTION) -> list[Sequence[T]]:
    """Consecutive slices of at most `size` items, in order."""
    if size <= 0:
        raise ValueError(f"batch size must be >= 1 (got {size})")
    return [items[start:start + size] for start in range(0, len(items), size)]


def endpoint(url: str) -> tuple[str, int]:
    """(host, port) of an etcd client URL on a loopback address; anything else is refused."""
    parts = urlsplit(url)
    if parts.scheme != "http" or not parts.hostname or not parts.port:
        raise KqbenchError(f"etcd client URL {url!r} is not http://HOST:PORT")
    try:
        loopback = ipaddress.ip_address(parts.hostname).is_loopback
    except ValueError:
        loopback = parts.hostname == "localhost"
    if not loopback:
        raise KqbenchError(f"etcd at {url} is not on a loopback address: kqbench writes only into its own clusters")
    return parts.hostname, parts.port


def _client(url: str) -> aetcd.Client:
    host, port = endpoint(url)
    return aetcd.Client(host, port, timeout=RPC_TIMEOUT_SECONDS,
                        options={"grpc.max_receive_message_length": MAX_MESSAGE_BYTES,
                                 "grpc.max_send_message_length": MAX_MESSAGE_BYTES})


async def _existing(url: str, prefix: bytes, keys: set[bytes]) -> list[bytes]:
    async with _client(url) as client:
        listed = await client.get_prefix(prefix, keys_only=True)
    return sorted(kv.key for kv in listed if kv.key in keys)


def existing(url: str, prefix: bytes, keys: Sequence[bytes]) -> list[bytes]:
    """Which of `keys` (all under `prefix`) etcd holds now, sorted: one keys-only range over the prefix."""
    wanted = set(keys)
    if any(not key.startswith(prefix) for key in wanted):
        raise ValueError(f"every key must start with {prefix!r}")
    return asyncio.run(_existing(url, prefix, wanted))


async def _write(url: str, entries: Sequence[Entry], replace: bool, progress: Progress, concurrency: int,
                 size: int, topic: str) -> WriteReport:
    chunks = batches(entries, size)
    next_chunk = written = value_bytes = revision = 0
    failures: list[str] = []
    started = time.monotonic()

    async def writer(client: aetcd.Client) -> None:
        nonlocal next_chunk, written, value_bytes, revision
        while next_chunk < len(chunks) and not failures:
            chunk = chunks[next_chunk]
            next_chunk += 1
            # Without replace, every key must be new in etcd at the moment of the write (create
            # revision 0): a name that appeared after the check is refused, never silently doubled.
            compare = [] if replace else [client.transactions.create(key) == 0 for key, _ in chunk]
            puts = [client.transactions.put(key, value) for key, value in chunk]
            try:
                # failure=[] given: aetcd 1.0.0 iterates it and fails on its own default of None.
                succeeded, responses = await client.transaction(compare=compare, success=puts, failure=[])
            except aetcd.exceptions.ClientError as error:
                failures.append(f"etcd refused a transaction of {len(chunk)}: {error}")
                return
            if not succeeded:
                first, last = (chunk[i][0].decode(errors="replace") for i in (0, -1))
                failures.append(f"a transaction of {len(chunk)} ({first} .. {last}) found one of its keys in etcd, "
                                "written there after the check; give --replace to overwrite")
                return
            # Every put of a transaction gets the transaction's revision.
            revision = max(revision, responses[-1].response_put.header.revision)
            written += len(chunk)
            value_bytes += sum(len(value) for _, value in chunk)
            done = written == len(entries)
            elapsed = max(time.monotonic() - started, 1e-9)
            progress(topic, f"wrote {written}/{len(entries)} into etcd ({written / elapsed:.0f}/s)", done)

    async with _client(url) as client:
        # Every writer ends its transaction in flight before the error is raised, so `written` is exact.
        await asyncio.gather(*(writer(client) for _ in range(max(1, concurrency))))
    if failures:
        raise WriteRefused(f"{failures[0]}; {written} of {len(entries)} objects were written before it")
    return WriteReport(written, len(chunks), value_bytes, time.monotonic() - started, revision)


def write(url: str, entries: Sequence[Entry], progress: Progress, replace: bool = False,
          concurrency: int = CONCURRENCY, size: int = PUTS_PER_TRANSACTION, topic: str = "etcd") -> WriteReport:
    """Put every (key, value) in transactions of `size`, `concurrency` at a time. Without `replace` a
    transaction only writes if none of its keys exists; WriteRefused on the first refusal, with etcd's
    message and how many objects were written."""
    return asyncio.run(_write(url, entries, replace, progress, concurrency, size, topic))
