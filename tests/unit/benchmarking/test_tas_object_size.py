"""The TAS object-size benchmark's pure parts: the Workload it asks for, the hosts an admission names, and
what its summary says per implementation."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[3] / "benchmarks"


@pytest.fixture
def bench(monkeypatch):
    monkeypatch.syspath_prepend(str(BENCHMARKS))  # the script imports its sibling modules as a script does
    return importlib.import_module("bench_tas_object_size")


def test_the_workload_asks_for_one_one_cpu_pod_per_host_preferring_a_block(bench):
    pod_set = bench.workload(1_000)["spec"]["podSets"][0]
    assert pod_set["count"] == 1_000 and pod_set["topologyRequest"] == {"preferred": "cloud.provider.com/topology-block"}
    assert pod_set["template"]["spec"]["containers"][0]["resources"]["requests"] == {"cpu": "1"}


def test_hosts_are_counted_from_every_slice_of_every_pod_set(bench):
    admission = {"podSetAssignments": [{"topologyAssignment": {"slices": [{"domainCount": 3}, {"domainCount": 2}]}},
                                       {"name": "no-tas"}]}
    assert bench.hosts_in(admission) == 5 and bench.hosts_in({}) == 0


def test_the_summary_names_the_largest_admitted_and_what_became_of_the_first_refused(bench):
    rows = [{"pods": 1_000, "admitted": True, "etcd_bytes": 20_000},
            {"pods": 90_000, "admitted": True, "etcd_bytes": 1_450_000},
            {"pods": 100_000, "admitted": False, "etcd_bytes": 900, "conditions": [{"reason": "Pending"}],
             "status_writes_by_code": {"500": 3.0}, "watched_seconds": 30.0, "status_writes_by_code_watched": {"500": 1.0}}]
    out = bench.summary([{"implementation": "reference", "pod_sets": rows},
                         {"implementation": "kueue", "pod_sets": []}])
    assert out["reference"]["largest_admitted_pods"] == 90_000
    assert out["reference"]["largest_stored_bytes"] == 1_450_000
    assert out["reference"]["first_not_admitted"]["status_writes_by_code_watched"] == {"500": 1.0}
    assert out["kueue"] == {"largest_admitted_pods": None, "largest_stored_bytes": None, "first_not_admitted": None}
