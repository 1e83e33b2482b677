"""The calibration figure: how fast this machine serves a fixed load on the apiserver's own path.

At the start of each case, before the scheduler or any load: REQUESTS GETs of one object every
kube-apiserver has (the `default` Namespace), one after another over one keep-alive TLS connection,
after WARMUP unmeasured ones. Its p50 is the run's measure of the machine (summarised over the cases
by `harness.results.machines`): it takes about a second here (0.7 ms a GET on 2 cores), and it moves with the CPU's speed and with
whatever else the machine is doing, not with the code under test (no scheduler runs yet).
"""

from __future__ import annotations

import http.client
import json
import statistics
from collections import Counter
import time
import urllib.parse
from collections.abc import Callable

import pandas as pd

from harness.clusters import state
from harness.errors import KqbenchError
from harness.kube import kubeconfig
from harness.results import machines

PATH = "/api/v1/namespaces/default"
REQUESTS = 1000
WARMUP = 50
"""Unmeasured requests first: the connection, the apiserver's caches and its authentication cache warm up."""
TIMEOUT_SECONDS = 10.0


def figures(latencies_ms: list[float], seconds: float, path: str = PATH) -> pd.DataFrame:
    """The calibration table's one row from the measured latencies (pure)."""
    ordered = sorted(latencies_ms)
    p90 = ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))] if ordered else float("nan")
    step = machines.CALIBRATION_STEP_MS
    histogram = Counter(round(round(ms / step) * step, 6) for ms in ordered)
    row = [path, len(ordered), statistics.median(ordered) if ordered else float("nan"), p90,
           statistics.fmean(ordered) if ordered else float("nan"), seconds, json.dumps(dict(sorted(histogram.items())))]
    return pd.DataFrame([row], columns=machines.CALIBRATION_COLUMNS)


def measure(cluster: state.ClusterInfo, requests: int = REQUESTS, warmup: int = WARMUP,
            clock: Callable[[], float] = time.perf_counter) -> pd.DataFrame:
    """GET PATH `warmup + requests` times over one connection; the calibration table (one row)."""
    creds = kubeconfig.load(cluster.kubeconfig)
    url = urllib.parse.urlsplit(creds.server)
    headers = {**creds.headers(), "Accept": "application/json"}
    if url.scheme == "https":
        connection = http.client.HTTPSConnection(url.hostname, url.port, timeout=TIMEOUT_SECONDS,
                                                 context=creds.ssl_context())
    else:
        connection = http.client.HTTPConnection(url.hostname, url.port, timeout=TIMEOUT_SECONDS)
    latencies = []
    started = clock()
    try:
        for index in range(warmup + requests):
            sent = clock()
            connection.request("GET", PATH, headers=headers)
            response = connection.getresponse()
            body = response.read()
            took = (clock() - sent) * 1000.0
            if response.status != 200:
                raise KqbenchError(f"calibration: GET {PATH} answered {response.status}: {body[:200]!r}")
            if index >= warmup:
                latencies.append(took)
    except (OSError, http.client.HTTPException) as error:
        raise KqbenchError(f"calibration: GET {PATH} at {creds.server} failed: {error}") from None
    finally:
        connection.close()
    return figures(latencies, clock() - started)
