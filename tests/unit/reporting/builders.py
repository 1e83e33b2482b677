"""A small run folder built from tables written here: run.json and the tables a `quick` run keeps,
for a few strategies, with numbers that make each strategy best at something."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from harness.results import runs, tables

PHASES = (("fill", 0.0, 30.0), ("churn", 30.0, 60.0), ("query", 60.0, 80.0))
COMPONENTS = ("kube-apiserver", "etcd", "scheduler", "kube-controller-manager")


@dataclass
class Design:
    strategy: str
    query_p99_ms: float = 30.0
    bystander_p99_ms: float = 15.0
    writes_per_second: float = 40.0
    largest_object: int = 5_000
    apiserver_rss: float = 400e6
    queries: int = 1000
    extra_params: dict = field(default_factory=dict)


@dataclass
class RunBuilder:
    run_id: str = "20260101-000000-tiny"
    designs: list[Design] = field(default_factory=lambda: [
        Design("status-field", query_p99_ms=15, writes_per_second=90, apiserver_rss=500e6),
        Design("single-object", query_p99_ms=140, bystander_p99_ms=88, largest_object=194_000, apiserver_rss=700e6),
        Design("aggregated-indexed", query_p99_ms=29, bystander_p99_ms=12, writes_per_second=42)])
    pending: int = 200
    thin_failure: bool = True
    """One check over 2 requests whose p99 is over its threshold (insufficient samples, not FAIL)."""
    histograms: bool = True
    """Keep Locust's response-time histograms (`load_latency`): the summary's latency intervals come from them."""

    def point(self, design: Design) -> str:
        return ",".join([f"strategy={design.strategy}"] + [f"{k.rsplit('.', 1)[-1]}={v}" for k, v in design.extra_params.items()])

    def write(self, folder: Path) -> Path:
        folder.mkdir(parents=True, exist_ok=True)
        cases = [runs.CaseRecord(f"{self.point(d)},r0", self.point(d), {"scheduler.strategy": d.strategy, **d.extra_params},
                                 0, status="ok") for d in self.designs]
        scenario = {"scheduler": {"strategy": "aggregated-indexed"},
                    "phases": {"fill": {"kind": "fill", "pending": self.pending}}}
        runs.write_run(folder, runs.RunRecord(self.run_id, "tiny", "tiny.yaml", scenario, [], cases=cases, status="ok",
                                              machine={"cpus": 2}))
        parts: dict[str, list[pd.DataFrame]] = {}
        for design, case in zip(self.designs, cases):
            for name, frame in self._tables(case.id, design).items():
                parts.setdefault(name, []).append(frame)
        tables.write(folder, parts)
        return folder

    def _tables(self, case: str, d: Design) -> dict[str, pd.DataFrame]:
        rows = [(case, "bringup", "nodes_per_second", {}, "bringup", 0.0, 500.0)]
        for phase, start, end in PHASES:
            for t in range(int(start), int(end), 5):
                for index, component in enumerate(COMPONENTS):
                    base = d.apiserver_rss if component == "kube-apiserver" else 60e6 * (index + 1)
                    rows.append((case, "process", "rss_bytes", {"component": component, "pid": str(100 + index)},
                                 phase, float(t), base * (0.8 + 0.2 * t / 80)))
                rows.append((case, "etcd", "etcd_mvcc_db_total_size_in_bytes", {}, phase, float(t), 1e7 + t * 1e4))
        summary = pd.DataFrame([{"case": case, "source": "apiserver", "metric": "apiserver_request_total", "stat": "rate",
                                 "labels": f'{{"verb":"{verb}"}}', "phase": phase,
                                 "t": end, "value": d.writes_per_second * (1.0 if phase == "churn" else 0.6) if verb == "POST" else 100.0}
                                for phase, _, end in PHASES for verb in ("POST", "GET")]
                               + [{"case": case, "source": "process", "metric": "rss_bytes", "stat": "max",
                                   "labels": f'{{"component":"{c}"}}', "phase": "query", "t": 80.0,
                                   "value": (d.apiserver_rss if c == "kube-apiserver" else 60e6 * (i + 1))}
                                  for i, c in enumerate(COMPONENTS)])
        totals = pd.DataFrame([
            _total(case, "query", "GET clusterqueues/pendingworkloads visibility-cq", d.queries, d.query_p99_ms),
            _total(case, "churn", "GET configmaps bystander", d.queries // 2, d.bystander_p99_ms),
            _total(case, "churn", "POST workloads churn", 900, 20.0)])
        history = pd.DataFrame([{"case": case, "phase": phase, "t": float(t), "verb": "GET", "name": "GET configmaps bystander",
                                 "requests": 2, "failures": 0, "rps": 2.0, "bytes": 100, "p50_ms": 5.0, "p90_ms": 8.0,
                                 "p95_ms": 9.0, "p99_ms": d.bystander_p99_ms * (1 + (t % 3) / 10), "max_ms": 20.0}
                                for phase, start, end in PHASES[1:] for t in range(1, int(end - start))])
        slo = pd.DataFrame([_check(case, "churn", "POST", "workloads", 900, 0.05),
                            _check(case, "churn", "GET", "configmaps", 300, 0.02),
                            _check(case, "query", "GET", "clusterqueues", 12, 0.01)]
                           + ([_check(case, "fill", "POST", "queuepositions", 2, 2.98)]
                              if self.thin_failure and d.strategy == "single-object" else []))
        census = pd.DataFrame([{"case": case, "resource": resource, "count": 10, "total_bytes": size * 10,
                                "max_bytes": size, "p50_bytes": size, "p99_bytes": size, "largest_key": f"/registry/{resource}/x"}
                               for resource, size in (("kueue.x-k8s.io/workloads", 1200), ("nodes", 2345))]
                              + ([{"case": case, "resource": "kqbench.dev/queuepositions", "count": 1,
                                   "total_bytes": d.largest_object, "max_bytes": d.largest_object, "p50_bytes": d.largest_object,
                                   "p99_bytes": d.largest_object, "largest_key": "/registry/kqbench.dev/queuepositions/cq-1"}]
                                 if d.largest_object > 5_000 else []))
        out = {"observations": tables.observations(rows), "summary": summary, "load_totals": totals,
               "load_history": history, "slo": slo, "census": census}
        if self.histograms:
            out["load_latency"] = pd.DataFrame(
                _histogram(case, "query", "GET clusterqueues/pendingworkloads visibility-cq", d.queries, d.query_p99_ms)
                + _histogram(case, "churn", "GET configmaps bystander", d.queries // 2, d.bystander_p99_ms))
        return out


def _total(case: str, phase: str, name: str, requests: int, p99: float) -> dict:
    return {"case": case, "phase": phase, "verb": name.split(" ")[0], "name": name, "requests": requests, "failures": 0,
            "successes": requests, "rps": requests / 20, "bytes": requests * 100, "mean_ms": p99 / 3,
            "p50_ms": p99 / 4, "p90_ms": p99 / 2, "p95_ms": p99 / 1.5, "p99_ms": p99, "max_ms": p99 * 1.2}


def _check(case: str, phase: str, verb: str, resource: str, count: int, p99: float) -> dict:
    return {"case": case, "phase": phase, "verb": verb, "group": "", "resource": resource, "subresource": "",
            "scope": "resource", "kind": "mutating" if verb == "POST" else "read-single", "count": float(count),
            "p99_seconds": p99, "threshold_seconds": 1.0, "passed": p99 <= 1.0,
            "metric": "apiserver_request_sli_duration_seconds"}


def _histogram(case: str, phase: str, name: str, requests: int, p99: float) -> list[dict]:
    """Response times whose p99 is `p99`: most requests at a quarter of it, the slowest 2% around it."""
    slow = max(1, requests // 50)
    buckets = ((round(p99 / 4), requests - slow), (round(p99 * 0.9), slow // 2), (round(p99), slow - slow // 2))
    return [{"case": case, "phase": phase, "verb": name.split(" ")[0], "name": name, "ms": ms, "count": count}
            for ms, count in buckets if count]
