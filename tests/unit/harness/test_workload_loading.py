"""Loading pending Workloads into etcd, the pure parts: the stored objects and their keys, refusing
existing names, the LIST that counts them, the wait for the scheduler, and the CLI's input checks."""

import json
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

from harness.cli import cluster as cluster_cli
from harness.kube import waiting
from harness.workloads import bulkloading, storing
from loadtests import settings as load_settings

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "workloads"
CREATED = "2026-12-01T15:39:12Z"


def batch(**fields) -> storing.Batch:
    return storing.Batch(**{"count": 3, "queue": "lq", "namespace": "ns", "prefix": "post", **fields})


def test_a_stored_workload_is_what_kube_apiserver_stored_for_a_post_but_for_identity_time_and_field_managers():
    # Recorded from etcd on a real cluster after POSTing batch(...).manifest(1) to the default namespace.
    posted = json.loads((FIXTURES / "posted-workload-etcd-v1.35.4.json").read_text())
    stored = storing.stored_workload(batch(namespace="default"), 1, uid="u-1", created=CREATED)
    for workload in (posted, stored):
        for field in ("uid", "creationTimestamp", "managedFields"):
            workload["metadata"].pop(field, None)
    assert stored == posted


def test_a_stored_workload_is_pending_at_generation_one_with_nothing_only_the_server_writes_later():
    workload = storing.stored_workload(batch(), 0, uid="u", created=CREATED)
    assert workload["metadata"]["generation"] == 1 and workload["metadata"]["creationTimestamp"] == CREATED
    assert "status" not in workload
    assert not {"resourceVersion", "managedFields", "deletionTimestamp"} & set(workload["metadata"])


@pytest.mark.parametrize("kind, requests, priority", [
    (load_settings.WorkloadKind(), {"cpu": "1", "memory": "1Gi"}, 0),
    (load_settings.WorkloadKind(cpu="250m", priority=7), {"cpu": "250m", "memory": "1Gi"}, 7),
])
def test_the_kind_shapes_the_request_and_priority(kind, requests, priority):
    spec = storing.stored_workload(batch(kind=kind), 0, uid="u", created=CREATED)["spec"]
    assert spec["podSets"][0]["template"]["spec"]["containers"][0]["resources"]["requests"] == requests
    assert spec["priority"] == priority and spec["queueName"] == "lq"


def test_entries_key_every_workload_under_its_namespace_with_its_own_uid():
    uids = iter(["a", "b", "c"])
    entries = list(storing.entries(batch(), CREATED, uids=lambda: next(uids)))
    assert [key for key, _ in entries] == [b"/registry/kueue.x-k8s.io/workloads/ns/post-0000000",
                                           b"/registry/kueue.x-k8s.io/workloads/ns/post-0000001",
                                           b"/registry/kueue.x-k8s.io/workloads/ns/post-0000002"]
    values = [orjson.loads(value) for _, value in entries]
    assert [v["metadata"]["uid"] for v in values] == ["a", "b", "c"]
    assert {v["metadata"]["labels"][storing.BULK_LABEL] for v in values} == {"post"}
    assert all(key.startswith(storing.namespace_prefix("ns")) for key, _ in entries)
    assert storing.name_of(entries[2][0]) == "ns/post-0000002"


def test_another_namespace_is_another_prefix():
    # The existing-name check reads one namespace's keys: "ns" must not match "ns2".
    assert not storing.key("ns2", "x").startswith(storing.namespace_prefix("ns"))


def test_existing_names_are_refused_with_how_many_and_which():
    present = [storing.key("ns", f"post-{i:07d}") for i in range(5)]
    with pytest.raises(bulkloading.NamesExist) as refused:
        bulkloading.refuse_existing(present, 10, replace=False)
    assert str(refused.value).startswith("5 of the 10 Workloads to load already exist in the cluster "
                                         "(ns/post-0000000, ns/post-0000001, ns/post-0000002, ...): nothing was written")
    assert "--replace" in str(refused.value)


@pytest.mark.parametrize("present, replace", [([], False), ([b"/registry/kueue.x-k8s.io/workloads/ns/x"], True)])
def test_nothing_present_or_an_explicit_replace_goes_ahead(present, replace):
    bulkloading.refuse_existing(present, 1, replace)


def test_the_counting_list_pages_by_selector_and_the_probe_asks_for_the_revision():
    assert bulkloading.list_path("ns", "a=b", 500, token="t") == (
        "/apis/kueue.x-k8s.io/v1beta2/namespaces/ns/workloads?labelSelector=a%3Db&limit=500&continue=t")
    assert bulkloading.list_path("ns", "a=b", 1, revision=42).endswith(
        "limit=1&resourceVersion=42&resourceVersionMatch=NotOlderThan")


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


def test_waiting_for_the_scheduler_returns_once_it_holds_them_all():
    clock = FakeClock()
    counts = iter([0.0, 40.0, 100.0])
    waited = bulkloading.wait_pending(lambda: next(counts), 100, lambda *a: None, timeout=10, interval=1,
                                      clock=clock, sleep=clock.sleep)
    assert waited == 2.0


def test_a_scheduler_that_never_holds_them_all_fails_with_its_count():
    clock = FakeClock()
    with pytest.raises(waiting.TimedOut, match="the scheduler holds 40 of 100 Workloads pending after 5s"):
        bulkloading.wait_pending(lambda: 40.0, 100, lambda *a: None, timeout=5, interval=1,
                                 clock=clock, sleep=clock.sleep)


@pytest.mark.parametrize("fields, option", [
    ({"prefix": "Bulk"}, "--prefix"),
    ({"prefix": "p" * 60}, "--prefix"),
    ({"namespace": "a_b"}, "--namespace"),
    ({"queue": "-lq"}, "--queue"),
    ({"count": 10**7 + 1}, "--count"),
])
def test_names_kube_apiserver_would_refuse_are_named_by_option(fields, option):
    assert list(storing.problems(batch(**fields))) == [option]


def test_a_valid_batch_has_no_problems():
    assert storing.problems(batch(prefix="p" * 55)) == {}


def test_the_cli_refuses_a_bad_name_in_one_line_before_touching_a_cluster():
    result = CliRunner().invoke(cluster_cli.group, ["load-workloads", "--name", "nowhere", "--count", "5",
                                                    "--queue", "LQ"])
    assert result.exit_code == 2
    assert "--queue" in result.output and "'LQ' is not a DNS label" in result.output
