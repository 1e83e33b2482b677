"""A local S3 server for the results store: versitygw (built by the toolchain) serving a folder on loopback,
started in its own process group and always stopped. The tests and the store's benchmark run it; a team
points KQBENCH_STORE at its own S3 store instead."""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from harness.progress import LineProgress
from harness.toolchain import building
from scheduler import listening

ACCESS, SECRET = "kqbench-local", "kqbench-local-secret"
"""The local server's root credentials: it listens on loopback only."""
START_SECONDS = 30.0


@dataclass(frozen=True, slots=True)
class Server:
    port: int
    root: Path
    """The folder it serves: one subfolder per bucket, one file per object."""

    def address(self, bucket: str, prefix: str = "objects") -> str:
        """A KQBENCH_STORE address of bucket on this server."""
        return f"s3+http://{listening.LOOPBACK}:{self.port}/{bucket}/{prefix}"


def environment() -> dict[str, str]:
    """The credentials a client of the local server takes from the environment."""
    return {"AWS_ACCESS_KEY_ID": ACCESS, "AWS_SECRET_ACCESS_KEY": SECRET}


@contextmanager
def serving(root: Path, buckets: tuple[str, ...] = ("runs",), log: Path | None = None) -> Iterator[Server]:
    """versitygw serving root on a free loopback port, with buckets made; stopped on exit, also on error."""
    import minio
    from tenacity import Retrying, retry_if_not_exception_type, stop_after_delay, wait_fixed

    binary = building.ensure_versitygw(LineProgress(interval=10.0))
    [port] = listening.pick_free(1)
    root.mkdir(parents=True, exist_ok=True)
    log = log or root.parent / f"versitygw-{port}.log"
    with log.open("w") as sink:
        process = subprocess.Popen([str(binary), "--access", ACCESS, "--secret", SECRET, "--port", f"{listening.LOOPBACK}:{port}",
                                    "posix", str(root)], stdout=sink, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            client = minio.Minio(f"{listening.LOOPBACK}:{port}", ACCESS, SECRET, secure=False)
            for attempt in Retrying(stop=stop_after_delay(START_SECONDS), wait=wait_fixed(0.2), reraise=True,
                                    retry=retry_if_not_exception_type(RuntimeError)):
                with attempt:
                    if process.poll() is not None:
                        raise RuntimeError(f"versitygw exited with {process.returncode}: see {log}")
                    for bucket in buckets:
                        if not client.bucket_exists(bucket):
                            client.make_bucket(bucket)
            yield Server(port, root)
        finally:
            _stop(process)


def _stop(process: subprocess.Popen) -> None:
    try:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=20)
    except ProcessLookupError:
        pass
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=20)
