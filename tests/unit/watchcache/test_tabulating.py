"""From a run's tidy tables to one row per mode and arm (built tables, no cluster)."""

import math

import orjson
import pandas as pd
import pytest

from harness.drivers.watchcache import listing, reporting as watchcaching, tabulating

CASE = "arm=default,r0"


class Run:
    """Builder of the tables a watch-cache run writes: .phase(...).totals(...).counter(...).tables()"""

    def __init__(self):
        self._phases, self._totals, self._summary, self._failures = [], [], [], []

    def phase(self, name, mode, scope="namespace", arm="default", case=CASE):
        row = dict.fromkeys(listing.LIST_PHASE_COLUMNS, "")
        row.update(case=case, phase=name, resource="configmaps", mode=mode, scope=scope, workers=4, arm=arm,
                   k8s_version="v1.35.4")
        self._phases.append(row)
        return self

    def totals(self, phase, verb, name, requests, failures=0, p50=10.0, p99=50.0, nbytes=1e6, case=CASE):
        self._totals.append({"case": case, "phase": phase, "verb": verb, "name": name, "requests": requests,
                             "failures": failures, "rps": requests / 10, "bytes": nbytes, "p50_ms": p50,
                             "p99_ms": p99})
        return self

    def counter(self, phase, metric, value, source="apiserver", stat="delta", case=CASE, **labels):
        self._summary.append({"case": case, "phase": phase, "source": source, "metric": metric, "stat": stat,
                              "labels": orjson.dumps(labels, option=orjson.OPT_SORT_KEYS).decode(), "value": value})
        return self

    def failure(self, phase, reason, occurrences, case=CASE):
        self._failures.append({"case": case, "phase": phase, "verb": "WATCH", "name": "x", "reason": reason,
                               "occurrences": occurrences})
        return self

    def tables(self):
        return {"list_phases": pd.DataFrame(self._phases), "load_totals": pd.DataFrame(self._totals),
                "summary": pd.DataFrame(self._summary), "load_failures": pd.DataFrame(self._failures)}


def test_no_list_phases_gives_an_empty_table_with_the_columns():
    table = tabulating.rows({})
    assert table.empty and list(table.columns) == list(tabulating.COLUMNS)


def test_one_row_per_phase_with_etcd_and_cache_counts():
    run = (Run().phase("list-rv0", "rv0").phase("list-consistent", "consistent")
           .totals("list-rv0", "LIST", "LIST configmaps rv0", 100, nbytes=200e6)
           .totals("list-rv0", "LIST", "LIST namespaces setup", 4, p99=999.0)
           .totals("list-consistent", "LIST", "LIST configmaps consistent", 50, p99=80.0)
           .counter("list-rv0", "apiserver_cache_list_total", 100, group="", index="", resource="configmaps")
           .counter("list-rv0", "apiserver_cache_list_total", 7, group="", index="", resource="pods")
           .counter("list-consistent", "etcd_requests_total", 50, group="", operation="list", resource="configmaps")
           .counter("list-consistent", "etcd_requests_total", 3, group="", operation="get", resource="configmaps")
           .counter("list-consistent", "apiserver_storage_list_total", 53, group="", resource="configmaps")
           .counter("list-consistent", "apiserver_watch_cache_consistent_read_total", 2, group="",
                    resource="configmaps", fallback="true", success="true")
           .counter("list-consistent", "etcd_mvcc_range_total", 60, source="etcd"))
    table = tabulating.rows(run.tables()).set_index("mode")
    assert list(table.index) == ["rv0", "consistent"]
    rv0, consistent = table.loc["rv0"], table.loc["consistent"]
    assert (rv0["lists"], rv0["p99_ms"], rv0["mb_per_list"]) == (100, 50.0, 2.0)
    assert (rv0["cache_lists"], rv0["etcd_list_requests"]) == (100, 0)
    assert (consistent["etcd_list_requests"], consistent["etcd_rv_gets"], consistent["storage_lists"]) == (50, 3, 53)
    assert (consistent["consistent_fallbacks"], consistent["consistent_from_cache"], consistent["etcd_ranges"]) == (2, 0, 60)


def test_counters_renamed_in_1_37_are_read_under_their_new_labels():
    run = (Run().phase("list-consistent", "consistent")
           .totals("list-consistent", "LIST", "LIST configmaps consistent", 50)
           .counter("list-consistent", "etcd_requests_total", 1, group="", operation="get", resource="configmaps")
           .counter("list-consistent", "etcd_requests_total", 50, group="", operation="getCurrentResourceVersion",
                    resource="configmaps")
           .counter("list-consistent", "apiserver_storage_list_total", 48, group="", index="",
                    resource="configmaps", storage="watchcache")
           .counter("list-consistent", "apiserver_storage_list_total", 2, group="", index="",
                    resource="configmaps", storage="etcd"))
    row = tabulating.rows(run.tables()).iloc[0]
    assert (row["etcd_rv_gets"], row["cache_lists"], row["storage_lists"]) == (50, 48, 50)


def test_whole_list_rows_carry_the_latency_of_paginated_and_watchlist():
    run = (Run().phase("p", "paginated").phase("w", "watchlist")
           .totals("p", "LIST", "LIST configmaps paginated", 300, p99=5.0)
           .totals("p", "LIST-ALL-PAGES", "LIST-ALL-PAGES configmaps paginated", 100, p99=40.0)
           .totals("w", "WATCH", "WATCH configmaps watchlist", 20, failures=20)
           .failure("w", "422 Invalid", 20))
    table = tabulating.rows(run.tables()).set_index("mode")
    assert (table.loc["paginated", "lists"], table.loc["paginated", "p99_ms"]) == (100, 40.0)
    assert table.loc["watchlist", "failures"] == 20 and math.isnan(table.loc["watchlist", "mb_per_list"])
    assert table.loc["watchlist", "failure_reason"] == "422 Invalid x20"


def test_apiserver_memory_and_cpu_come_from_process_samples():
    run = (Run().phase("a", "rv0")
           .counter("a", "rss_bytes", 3e8, source="process", stat="first", component="kube-apiserver", pid="1")
           .counter("a", "rss_bytes", 9e8, source="process", stat="max", component="kube-apiserver", pid="1")
           .counter("a", "rss_bytes", 5e7, source="process", stat="max", component="etcd", pid="2")
           .counter("a", "cpu_seconds", 1.5, source="process", stat="rate", component="kube-apiserver", pid="1"))
    row = tabulating.rows(run.tables()).iloc[0]
    assert (row["apiserver_rss_start_mb"], row["apiserver_rss_peak_mb"], row["etcd_rss_peak_mb"]) == (300, 900, 50)
    assert row["apiserver_cpu_cores"] == 1.5


@pytest.mark.parametrize("labels, expected", [
    ({"resource": "configmaps"}, True), ({"resource_prefix": "/configmaps"}, True), ({"resource": "pods"}, False),
])
def test_resource_label_across_versions(labels, expected):
    assert tabulating.resource_matches(labels, "configmaps") is expected


def test_section_writes_csv_and_json_and_one_table_row_per_mode_and_arm(tmp_path):
    run = Run()
    for arm in ("default", "no-snapshot"):
        for mode in ("rv0", "consistent"):
            case = f"arm={arm},r0"
            run.phase(f"list-{mode}", mode, arm=arm, case=case).totals(f"list-{mode}", "LIST",
                                                                      f"LIST configmaps {mode}", 10, case=case)
    section = watchcaching.section(run.tables(), tmp_path)
    html, [(_, png)] = section.html, section.figures
    assert html.count("<tr") == 1 + 4 and png.startswith(b"\x89PNG")
    saved = orjson.loads((tmp_path / watchcaching.JSON_NAME).read_bytes())
    assert saved["schema_version"] == tabulating.SCHEMA_VERSION and len(saved["rows"]) == 4
    assert len(pd.read_csv(tmp_path / watchcaching.CSV_NAME)) == 4
