"""Writes per admission: kube-apiserver's writes in a phase less the load generator's own, over the admissions."""

import json

import pandas as pd
import pytest

from harness.metrics import catalog
from harness.results import headlines

CASE = "strategy=single-object,r0"


def _request(phase, verb, value, resource="workloads", stat="delta", case=CASE):
    return {"case": case, "source": "apiserver", "metric": "apiserver_request_total", "stat": stat,
            "labels": json.dumps({"verb": verb, "resource": resource, "code": "201"}), "phase": phase, "t": 0.0,
            "value": value}


def _admitted(phase, value, source=catalog.SCHEDULER, cluster_queue="cq-0", case=CASE):
    return {"case": case, "source": source, "metric": catalog.ADMITTED[source], "stat": "delta",
            "labels": json.dumps({"cluster_queue": cluster_queue}), "phase": phase, "t": 0.0, "value": value}


def _load(phase, verb, requests, name="workloads churn", case=CASE):
    return {"case": case, "phase": phase, "verb": verb, "name": f"{verb} {name}", "requests": requests}


def _summary(*rows) -> pd.DataFrame:
    return pd.DataFrame(list(rows))


def _by_name(metrics) -> dict[str, float]:
    return {m.name: m.value for m in metrics}


FILL = (
    _request("fill", "POST", 2200),  # the load's creations
    _request("fill", "DELETE", 350),  # the load's deletions
    _request("fill", "PATCH", 350 + 110, resource="workloads"),  # 350 Finished (load) + 110 of the scheduler
    _request("fill", "APPLY", 460, resource="workloads"),  # the admissions
    _request("fill", "APPLY", 128, resource="clusterqueues"),
    _request("fill", "PUT", 40, resource="leases"),
    _request("fill", "LIST", 9999),  # a read: never counted
    _request("fill", "POST", 4000, stat="rate"),  # a rate row: never counted
    _admitted("fill", 300, cluster_queue="cq-0"),
    _admitted("fill", 160, cluster_queue="cq-1"),
)
FILL_LOAD = (_load("fill", "POST", 2200), _load("fill", "DELETE", 350), _load("fill", "PATCH", 350),
             _load("fill", "LIST", 59))


@pytest.mark.parametrize(("rows", "load", "expected"), [
    pytest.param(FILL, FILL_LOAD, {"apiserver.writes_per_admission[fill]": (110 + 460 + 128 + 40) / 460},
                 id="the-loads-own-writes-left-out"),
    pytest.param(FILL, (), {"apiserver.writes_per_admission[fill]": (2200 + 350 + 460 + 460 + 128 + 40) / 460},
                 id="without-load-totals-every-write-counts"),
    pytest.param((_request("churn", "POST", 30), _request("churn", "PATCH", 12), _admitted("churn", 20)),
                 (_load("churn", "POST", 50),), {"apiserver.writes_per_admission[churn]": 0.0},
                 id="more-load-writes-than-the-apiserver-saw-is-zero-not-negative"),
    pytest.param((_request("churn", "APPLY", 60), _admitted("churn", 30, source=catalog.KUEUE)), (),
                 {"apiserver.writes_per_admission[churn]": 2.0}, id="kueues-admissions-counter"),
    pytest.param((_request("drain", "PATCH", 66), _request("query", "PATCH", 1150), _admitted("drain", 19)), (), {},
                 id="no-figure-for-a-phase-with-few-or-no-admissions"),
])
def test_writes_per_admission(rows, load, expected):
    got = _by_name(headlines.writes_per_admission(_summary(*rows), pd.DataFrame(list(load))))
    assert got == pytest.approx(expected)


def test_each_phase_over_its_own_admissions_and_only_this_cases_rows():
    rows = (*FILL, _request("churn", "APPLY", 150), _request("churn", "POST", 400), _admitted("churn", 100),
            _request("churn", "APPLY", 5000, case="strategy=status-field,r0"),
            _admitted("churn", 1, case="strategy=status-field,r0"))
    load = (*FILL_LOAD, _load("churn", "POST", 400), _load("churn", "POST", 999, case="strategy=status-field,r0"))
    tables = {"summary": _summary(*rows), "load_totals": pd.DataFrame(list(load))}
    metrics = {m.name: m for m in headlines.metrics(tables, CASE)
               if m.name.startswith("apiserver.writes_per_admission")}
    assert {name: m.value for name, m in metrics.items()} == pytest.approx(
        {"apiserver.writes_per_admission[fill]": 738 / 460, "apiserver.writes_per_admission[churn]": 1.5})
    assert {(m.unit, m.better) for m in metrics.values()} == {("ratio", "lower")}
