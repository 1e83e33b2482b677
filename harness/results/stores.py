"""Where raw run data lives: a content-addressed store of objects named by their sha256.

Two backends behind one address (`KQBENCH_STORE`):
- a folder (`/path` or `file:///path`): the default, outside the checkout, so a fresh machine needs nothing;
- an S3-compatible object store (`s3://bucket/prefix` for AWS with its usual credentials and region, or
  `s3+http://host:port/bucket/prefix` for a self-hosted server such as versitygw) through the minio client.
Objects are immutable: a sha256 already present is never written again.
"""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
import urllib.parse
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from harness.errors import KqbenchError

ADDRESS_VARIABLE = "KQBENCH_STORE"


class StoreError(KqbenchError):
    """A store that cannot be reached or lacks an object; the message names the store and what to do."""


class Store(Protocol):
    address: str

    def has(self, sha256: str) -> bool: ...

    def put(self, sha256: str, source: Path) -> None: ...

    def get(self, sha256: str, destination: Path) -> None:
        """Write the object's bytes to destination (unverified: the caller checks the sha256)."""


def default_address() -> str:
    """$KQBENCH_STORE, else a folder beside the user's data: $XDG_DATA_HOME/kqbench/store or
    ~/.local/share/kqbench/store (outside any checkout, kept across clones)."""
    if address := os.environ.get(ADDRESS_VARIABLE):
        return address
    base = os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share"
    return str(Path(base) / "kqbench" / "store")


def open_store(address: str | None = None) -> Store:
    """The store at address (None: the configured one); a StoreError for an address no backend takes."""
    address = address or default_address()
    parsed = urllib.parse.urlparse(address)
    if parsed.scheme in ("", "file"):
        return FolderStore(Path(parsed.path if parsed.scheme else address).expanduser())
    if parsed.scheme in ("s3", "s3+http", "s3+https"):
        bucket, _, prefix = (parsed.netloc + parsed.path if parsed.scheme == "s3" else parsed.path.lstrip("/")).partition("/")
        if not bucket:
            raise StoreError(f"store address {address!r} names no bucket: write s3://BUCKET/PREFIX or "
                             "s3+http://HOST:PORT/BUCKET/PREFIX")
        endpoint = None if parsed.scheme == "s3" else f"{parsed.scheme.removeprefix('s3+')}://{parsed.netloc}"
        return S3Store(address, bucket, prefix.strip("/"), endpoint)
    raise StoreError(f"store address {address!r}: unknown scheme {parsed.scheme!r}; use a folder path, s3://BUCKET/PREFIX "
                     f"or s3+http://HOST:PORT/BUCKET/PREFIX (set {ADDRESS_VARIABLE})")


@dataclass(slots=True)
class FolderStore:
    root: Path

    @property
    def address(self) -> str:
        return str(self.root)

    def _object(self, sha256: str) -> Path:
        return self.root / "objects" / sha256[:2] / sha256

    def has(self, sha256: str) -> bool:
        return self._object(sha256).is_file()

    def put(self, sha256: str, source: Path) -> None:
        target = self._object(sha256)
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            # A copy under a temporary name, then a rename: a reader never sees half an object.
            with tempfile.NamedTemporaryFile(dir=target.parent, delete=False) as handle:
                temporary = Path(handle.name)
                with source.open("rb") as reader:
                    shutil.copyfileobj(reader, handle, 1 << 20)
            os.replace(temporary, target)
        except OSError as error:
            raise StoreError(f"store {self.address}: cannot write {target.name} ({error.strerror}): check that the "
                             f"folder is writable, or set {ADDRESS_VARIABLE}") from None

    def get(self, sha256: str, destination: Path) -> None:
        source = self._object(sha256)
        if not source.is_file():
            raise StoreError(f"store {self.address} has no object {sha256}")
        try:
            shutil.copyfile(source, destination)
        except OSError as error:
            raise StoreError(f"store {self.address}: cannot read {source.name} ({error.strerror}): check that the "
                             f"folder is readable, or set {ADDRESS_VARIABLE}") from None


class S3Store:
    """A bucket (and key prefix) of an S3-compatible store, through the minio client; credentials come from
    the usual AWS settings (AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY, ~/.aws/credentials, an instance role)."""

    def __init__(self, address: str, bucket: str, prefix: str, endpoint: str | None) -> None:
        import minio
        import urllib3
        from minio import credentials

        self.address, self.bucket, self.prefix, self.endpoint = address, bucket, prefix, endpoint
        # urllib3 logs each retry as a warning; the one-line StoreError below says what failed instead.
        logging.getLogger("urllib3.connectionpool").setLevel(logging.ERROR)
        parsed = urllib.parse.urlparse(endpoint or "https://s3.amazonaws.com")
        # Few, short retries: an unreachable store is said in seconds, not after minutes of backoff.
        http = urllib3.PoolManager(timeout=urllib3.Timeout(connect=5, read=120),
                                   retries=urllib3.Retry(total=2, backoff_factor=0.2, status_forcelist=(500, 502, 503, 504)))
        provider = credentials.ChainedProvider([credentials.EnvAWSProvider(), credentials.AWSConfigProvider(),
                                                credentials.IamAwsProvider()])
        self._client = minio.Minio(parsed.netloc, secure=parsed.scheme == "https", http_client=http, credentials=provider,
                                   region=os.environ.get("AWS_REGION", "us-east-1"))

    def _key(self, sha256: str) -> str:
        return f"{self.prefix}/{sha256}" if self.prefix else sha256

    def has(self, sha256: str) -> bool:
        try:
            self._client.stat_object(self.bucket, self._key(sha256))
            return True
        except Exception as error:  # noqa: BLE001 - S3 answers and connection failures come as many types
            if _code(error) in ("NoSuchKey", "NoSuchObject", "ResourceNotFound"):
                return False
            raise self._error(error) from None

    def put(self, sha256: str, source: Path) -> None:
        try:
            self._client.fput_object(self.bucket, self._key(sha256), str(source))
        except Exception as error:  # noqa: BLE001
            raise self._error(error) from None

    def get(self, sha256: str, destination: Path) -> None:
        try:
            self._client.fget_object(self.bucket, self._key(sha256), str(destination))
        except Exception as error:  # noqa: BLE001
            if _code(error) in ("NoSuchKey", "NoSuchObject", "ResourceNotFound"):
                raise StoreError(f"store {self.address} has no object {sha256}") from None
            raise self._error(error) from None

    def _error(self, error: Exception) -> StoreError:
        where = f"store {self.address}"
        code = _code(error)
        if code == "NoSuchBucket":
            return StoreError(f"{where}: bucket {self.bucket!r} does not exist: create it, or set {ADDRESS_VARIABLE}")
        if code:
            return StoreError(f"{where}: {code}: {getattr(error, 'message', '') or error} "
                              f"(check the credentials and {ADDRESS_VARIABLE})")
        first = (str(error).splitlines() or [type(error).__name__])[0]
        return StoreError(f"{where} cannot be reached ({type(error).__name__}: {first[:160]}): start it, or set "
                          f"{ADDRESS_VARIABLE} to one that runs")


def _code(error: Exception) -> str:
    """The S3 error code of an answer from the store ('' for a failure to reach it)."""
    from minio.error import S3Error

    return error.code if isinstance(error, S3Error) else ""
