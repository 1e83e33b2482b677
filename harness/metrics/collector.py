"""What the scenario runner calls: start(), mark_phase(name), stop() -> frames.Frames.

The runner orchestrates, the collector measures (pyperf's split): scrapes run on a background
thread, bounded in count, so the runner's own loop never waits for a scrape except at a phase
boundary, where one scrape with histogram buckets is taken on purpose.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from harness.clusters import state
from harness.errors import KqbenchError
from harness.metrics import (
    catalog, census as censuses, etcdreading, frames, samples, sampling, scraping, slo, summarising,
)

BOUNDARY = "boundary"
BACKGROUND = "background"


@dataclass(frozen=True, slots=True)
class CollectorSettings:
    interval_seconds: float = 5.0
    """Between background scrapes: resolves minute-long phases without loading a 2-core machine
    (one background scrape of the apiserver parses in ~0.05 s)."""
    timeout_seconds: float = 10.0
    """Per HTTP request; a scrape slower than this is recorded as failed, not waited for."""
    max_background_scrapes: int = 4320
    """Upper bound on background scrapes (6 h at 5 s): memory stays bounded on a forgotten stop()."""
    census_at_stop: bool = True
    """Take an etcd object-size census in stop() (needs the cluster's etcd URL)."""
    census_threshold_bytes: int = censuses.DEFAULT_THRESHOLD_BYTES
    census_top: int = 20
    families: tuple[catalog.Family, ...] = catalog.FAMILIES


@dataclass(slots=True)
class _Record:
    scrape: samples.Scrape
    phase: str
    kind: str
    seconds: float


@dataclass(slots=True)
class _Edges:
    """The I/O the collector does, replaceable in unit tests (recorded text, fake clocks)."""

    fetch: Callable[[scraping.Target, float], str] = scraping.fetch
    sample_processes: Callable[[dict[str, int], float], list] = sampling.sample
    read_sizes: Callable[..., object] = etcdreading.read_sizes
    clock: Callable[[], float] = time.monotonic
    wall_clock: Callable[[], float] = time.time


class Collector:
    """Measures one run against one cluster. Not reusable: one start() and one stop()."""

    def __init__(self, cluster: state.ClusterInfo, settings: CollectorSettings | None = None,
                 targets: list[scraping.Target] | None = None, edges: _Edges | None = None) -> None:
        self._cluster = cluster
        self._settings = settings or CollectorSettings()
        self._targets = targets if targets is not None else scraping.targets(cluster)
        self._edges = edges or _Edges()
        self._pids = dict(cluster.pids)
        self._records: list[_Record] = []
        self._process_samples: list[tuple[summarising.ProcessSample, str]] = []
        self._phases: list[summarising.Phase] = []
        self._phase: str | None = None
        self._phase_start = 0.0
        self._t0 = 0.0
        self._started_at = 0.0
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self._background_scrapes = 0
        self._state = "new"

    def watch_process(self, component: str, pid: int) -> None:
        """Also sample this process (the scheduler, the load generator) from now on."""
        with self._lock:
            self._pids[component] = pid

    def watch_metrics(self, target: scraping.Target) -> None:
        """Also scrape this /metrics (the scheduler's) from the next scrape on; it replaces an
        earlier target of the same source (a restarted scheduler listens on a new port)."""
        with self._lock:
            self._targets = [t for t in self._targets if t.source != target.source] + [target]

    def start(self, phase: str = "start") -> None:
        """Scrape once (the first phase's start boundary), then keep scraping in the background."""
        if self._state != "new":
            raise KqbenchError(f"collector already {self._state}: make a new Collector for each run")
        self._t0 = self._edges.clock()
        self._started_at = self._edges.wall_clock()
        self._state = "running"
        self._phase = phase
        self._boundary()
        apiserver = [r for r in self._records if r.scrape.source == catalog.APISERVER]
        if apiserver and apiserver[0].scrape.error:
            self._state = "stopped"
            raise KqbenchError(f"cannot collect metrics: {apiserver[0].scrape.error}")
        if self._settings.interval_seconds > 0 and self._settings.max_background_scrapes > 0:
            self._thread = threading.Thread(target=self._loop, name="kqbench-metrics", daemon=True)
            self._thread.start()

    def mark_phase(self, name: str) -> None:
        """End the current phase and start `name` at one boundary scrape (phase names are unique)."""
        if self._state != "running":
            raise KqbenchError(f"mark_phase({name!r}) needs a started collector (it is {self._state})")
        if name == self._phase or any(p.name == name for p in self._phases):
            raise KqbenchError(f"phase {name!r} was already used in this run: give every phase its own name")
        t = self._boundary(next_phase=name)
        self._phases.append(summarising.Phase(self._phase, self._phase_start, t))
        self._phase, self._phase_start = name, t

    def stop(self) -> frames.Frames:
        """Stop the background scrapes, take the last boundary scrape (and a census), return the tables."""
        if self._state != "running":
            raise KqbenchError(f"stop() needs a started collector (it is {self._state})")
        self.close()
        t = self._boundary()
        self._phases.append(summarising.Phase(self._phase, self._phase_start, t))
        census = self._census()
        return self._frames(census)

    def __enter__(self) -> "Collector":
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        """Stop background scraping without building tables (error paths); harmless after stop()."""
        self._stopping.set()
        if self._thread is not None:
            self._thread.join(timeout=self._settings.timeout_seconds * (len(self._targets) + 1))
        if self._state == "running":
            self._state = "stopped"

    # -- scraping -------------------------------------------------------------------------

    def _now(self) -> float:
        return self._edges.clock() - self._t0

    def _boundary(self, next_phase: str | None = None) -> float:
        """Scrape everything with buckets; returns the boundary's t. The scrape belongs to both phases."""
        with self._lock:
            t = self._now()
            self._scrape_all(t, self._phase, BOUNDARY, buckets=True)
            return t

    def _loop(self) -> None:
        interval = self._settings.interval_seconds
        while not self._stopping.wait(interval):
            with self._lock:
                if self._state != "running" or self._stopping.is_set():
                    return
                self._scrape_all(self._now(), self._phase, BACKGROUND, buckets=False)
                self._background_scrapes += 1
                if self._background_scrapes >= self._settings.max_background_scrapes:
                    return

    def _scrape_all(self, t: float, phase: str, kind: str, buckets: bool) -> None:
        # Processes first, at t: a scrape of a busy apiserver takes seconds, and CPU read after it but
        # stamped t made a short phase's cores exceed the machine (0.29 s said, 1.42 s elapsed).
        for sample in self._edges.sample_processes(self._pids, t):
            self._process_samples.append((sample, phase))
        for target in self._targets:
            began = self._edges.clock()
            try:
                text = self._edges.fetch(target, self._settings.timeout_seconds)
                scrape = samples.parse(text, target.source, t, self._settings.families, buckets=buckets)
            except KqbenchError as error:
                scrape = samples.failed(target.source, t, str(error))
            self._records.append(_Record(scrape, phase, kind, self._edges.clock() - began))

    def _census(self) -> censuses.Census | None:
        if not (self._settings.census_at_stop and self._cluster.etcd_url):
            return None
        snapshot = etcdreading.Snapshot()
        items = self._edges.read_sizes(self._cluster.etcd_url, snapshot=snapshot)
        try:
            result = censuses.summarise(items, self._settings.census_threshold_bytes, self._settings.census_top)
        except KqbenchError:
            return None  # a census is a bonus at stop(); the scraped tables must still come back
        return dataclasses.replace(result, revision=snapshot.revision)

    # -- tables ---------------------------------------------------------------------------

    def _frames(self, census: censuses.Census | None) -> frames.Frames:
        families = self._settings.families
        rows: list[summarising.Row] = []
        verdicts: list[slo.Verdict] = []
        process_samples = [s for s, _ in self._process_samples]
        for phase in self._phases:
            for source in {r.scrape.source for r in self._records}:
                scrapes = [r.scrape for r in self._records if r.scrape.source == source]
                rows.extend(summarising.summarise(scrapes, phase, families))
                if source == catalog.APISERVER:
                    verdicts.extend(slo.evaluate(summarising.in_phase(scrapes, phase), phase.name))
            rows.extend(summarising.summarise_processes(process_samples, phase))
        return frames.Frames(
            observations=frames.observations_frame(((r.scrape, r.phase) for r in self._records), self._process_samples),
            summary=frames.summary_frame(rows),
            slo=frames.slo_frame(verdicts),
            census=frames.census_frame(census),
            names=self._names_frame(),
            scrapes=self._scrapes_frame(),
            meta=self._meta(census),
        )

    def _names_frame(self):
        import pandas as pd

        rows = []
        for source in sorted({r.scrape.source for r in self._records}):
            ok = [r.scrape for r in self._records if r.scrape.source == source and r.scrape.error is None]
            exposed = frozenset().union(*(s.exposed for s in ok)) if ok else frozenset()
            version = server_version(ok[-1], self._cluster) if ok else ""
            for family in catalog.for_source(source, self._settings.families):
                rows.append({"source": source, "family": family.name,
                             "exposed_as": catalog.resolve(family, exposed) or "", "server_version": version})
        return pd.DataFrame(rows, columns=["source", "family", "exposed_as", "server_version"])

    def _scrapes_frame(self):
        import pandas as pd

        rows = [{"source": r.scrape.source, "kind": r.kind, "phase": r.phase, "t": r.scrape.t,
                 "seconds": r.seconds, "series": len(r.scrape.values), "error": r.scrape.error or ""}
                for r in self._records]
        return pd.DataFrame(rows, columns=["source", "kind", "phase", "t", "seconds", "series", "error"])

    def _meta(self, census: censuses.Census | None) -> dict:
        return {
            "schema_version": frames.SCHEMA_VERSION,
            "cluster": self._cluster.name,
            "versions": dict(self._cluster.versions),
            "started_at_unix": self._started_at,
            "interval_seconds": self._settings.interval_seconds,
            "background_scrapes": self._background_scrapes,
            "phases": [{"name": p.name, "start": p.start, "end": p.end} for p in self._phases],
            "census": None if census is None else {
                "revision": census.revision, "objects": census.objects, "total_bytes": census.total_bytes,
                "threshold_bytes": census.threshold_bytes, "limit_bytes": census.limit_bytes,
                "flagged": [list(kb) for kb in census.flagged], "largest": [list(kb) for kb in census.largest],
            },
        }


def server_version(scrape: samples.Scrape, cluster: state.ClusterInfo) -> str:
    """The version the server reports about itself in its metrics, else the one kqbench started."""
    for (metric, labels), _ in scrape.values.items():
        found = dict(labels)
        if metric == "kubernetes_build_info" and "git_version" in found:
            return found["git_version"]
        if metric == "etcd_server_version" and "server_version" in found:
            return "v" + found["server_version"]
    key = "kubernetes" if scrape.source == catalog.APISERVER else scrape.source
    return cluster.versions.get(key, "")
