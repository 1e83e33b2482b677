"""How a cluster benchmark of one implementation ends, also on failure (shared by the benchmarks that start
a cluster and a scheduler): the error in its result beside the figures so far, scheduler and cluster
stopped, the result saved."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from harness.clusters import bringup


@contextmanager
def kept(bench: Any) -> Iterator[None]:
    """``bench`` has result (a dict), handle (the scheduler or None), info (the cluster or None),
    cluster_name and save(). A SIGTERM (a `kill`, a CI job's timeout) ends it as Ctrl-C does: torn down, saved."""
    def stop(signum: int, _frame: object) -> None:
        bench.result["error"] = f"stopped by {signal.Signals(signum).name}"
        raise SystemExit(128 + signum)

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    except Exception as error:  # the figures so far are kept, with where it stopped
        bench.result["error"] = f"{type(error).__name__}: {error}"
        raise
    finally:
        if bench.handle is not None:
            bench.handle.stop()
        if bench.info is not None:
            bringup.down(bench.cluster_name)
        bench.save()
        signal.signal(signal.SIGTERM, previous)
