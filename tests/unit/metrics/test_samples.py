"""Parsing recorded /metrics text into the families kqbench keeps."""

from __future__ import annotations

import pytest

from harness.metrics import catalog, samples
from tests.unit.metrics import recorded


def test_keeps_only_catalogued_families_from_the_apiserver():
    scrape = recorded.scrape(recorded.APISERVER, "after", 1.0)
    names = {metric for metric, _ in scrape.values}
    assert "apiserver_request_total" in names
    assert "apiserver_request_duration_seconds_bucket" in names
    assert "process_resident_memory_bytes" not in names  # in the text, not in the catalogue
    assert scrape.exposed <= catalog.exposed_names(catalog.FAMILIES)


def test_without_buckets_histograms_keep_sum_and_count():
    scrape = recorded.scrape(recorded.APISERVER, "after", 1.0, buckets=False)
    names = {metric for metric, _ in scrape.values}
    assert "apiserver_request_duration_seconds_count" in names
    assert "apiserver_request_duration_seconds_sum" in names
    assert not any(name.endswith("_bucket") for name in names)


@pytest.mark.parametrize("family, present", [
    ("apiserver_request_sli_duration_seconds", True),
    ("apiserver_storage_size_bytes", True),
    ("apiserver_resource_objects", True),
    ("apiserver_flowcontrol_rejected_requests_total", False),  # kwokctl starts the apiserver with APF off
    ("apiserver_terminated_watchers_total", False),            # registered on the first terminated watcher
])
def test_exposed_names_record_what_this_version_serves(family, present):
    scrape = recorded.scrape(recorded.APISERVER, "after", 1.0)
    assert (family in scrape.exposed) is present


def test_an_older_name_is_reported_under_the_family_name():
    # kube-apiserver 1.23-1.27 called it apiserver_storage_db_total_size_in_bytes: rename the recorded lines.
    old = recorded.text(recorded.APISERVER, "after").replace(
        "apiserver_storage_size_bytes", "apiserver_storage_db_total_size_in_bytes")
    scrape = samples.parse(old, catalog.APISERVER, 0.0)
    key = ("apiserver_storage_size_bytes", recorded.labels(storage_cluster_id="etcd-0"))
    assert scrape.values[key] == 327680.0
    family = next(f for f in catalog.FAMILIES if f.name == "apiserver_storage_size_bytes")
    assert catalog.resolve(family, scrape.exposed) == "apiserver_storage_db_total_size_in_bytes"


def test_etcd_families():
    scrape = recorded.scrape(recorded.ETCD, "after", 1.0)
    assert scrape.values[("etcd_mvcc_db_total_size_in_bytes", ())] == 327680.0
    assert ("etcd_server_version", recorded.labels(server_version="3.6.16")) in scrape.values
    assert scrape.exposed >= {"etcd_mvcc_put_total", "etcd_mvcc_range_total", "grpc_server_handled_total"}


@pytest.mark.parametrize("line, name", [
    ('apiserver_request_total{code="200"} 3', "apiserver_request_total"),
    ("etcd_mvcc_put_total 241", "etcd_mvcc_put_total"),
    ("# TYPE etcd_mvcc_put_total counter", "etcd_mvcc_put_total"),
    ("# HELP x_bucket help text", "x_bucket"),
])
def test_line_names(line, name):
    assert samples._line_name(line) == name
