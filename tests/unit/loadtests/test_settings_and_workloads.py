"""Settings survive the JSON trip to workers and refuse bad values; Workload JSON follows Kueue v1beta2."""

from __future__ import annotations

import datetime as dt

import pytest

from loadtests import settings as s, workloads

TARGET = s.Target(server="https://127.0.0.1:6443", ca_file="/ca", cert_file="/c", key_file="/k")


def test_plan_round_trips_through_json():
    plan = s.RunPlan(settings=s.LoadSettings(target=TARGET, churn=s.ChurnSettings(
                         mix=(s.WorkloadKind(priority=5, pods=4), s.WorkloadKind(weight=3)), local_queues=("a", "b"))),
                     locustfile="/f.py", user_weights={"Bystander": 3}, shape=s.ShapeSettings(kind="spike"),
                     workers=2, max_requests=1000)
    assert s.RunPlan.from_json(plan.to_json()) == plan


@pytest.mark.parametrize("changes, message", [
    (dict(target=s.Target(server="https://10.0.0.1:6443")), "loopback"),
    (dict(query=s.QuerySettings(mode="psychic")), "query mode"),
    (dict(listwatch=s.ListWatchSettings(list_modes=("rv1",))), "list mode"),
    (dict(listwatch=s.ListWatchSettings(watch_modes=("poll",))), "watch mode"),
    (dict(churn=s.ChurnSettings(mix=())), "mix"),
    (dict(churn=s.ChurnSettings(local_queues=())), "LocalQueue"),
])
def test_bad_settings_are_refused(changes, message):
    with pytest.raises(s.SettingsError, match=message):
        s.LoadSettings(**{"target": TARGET, **changes}).validate()


@pytest.mark.parametrize("data, message", [
    ({"churn": {"pending_targett": 3}}, "unknown settings"),
    ({"target": {"server": "https://127.0.0.1:1"}}, "must not name a target"),
])
def test_scenario_mappings_are_checked(data, message):
    with pytest.raises(s.SettingsError, match=message):
        s.from_mapping(data, TARGET)


def test_scenario_mapping_builds_nested_settings():
    settings = s.from_mapping({"churn": {"mix": [{"pods": 8, "weight": 2}], "local_queues": ["x"]}, "seed": 7}, TARGET)
    assert settings.churn.mix == (s.WorkloadKind(pods=8, weight=2),) and settings.churn.local_queues == ("x",)
    assert settings.seed == 7 and settings.target == TARGET


def test_newer_formats_are_refused():
    with pytest.raises(s.SettingsError, match="newer"):
        s.LoadSettings.from_json('{"version": 99, "target": {"server": "https://127.0.0.1:1"}}')


@pytest.mark.parametrize("text, weights", [
    ("WorkloadChurn=2,Bystander=5", {"WorkloadChurn": 2, "Bystander": 5}),
    ("Lister", {"Lister": 1}),
    ("", {}),
])
def test_user_weights(text, weights):
    assert s.user_weights(text) == weights


def test_churn_totals_split_per_user():
    per_user = s.ChurnSettings(create_per_second=10.0, pending_target=100).per_user(4)
    assert (per_user.create_per_second, per_user.pending_target) == (2.5, 25)


def test_workload_json_is_kueue_v1beta2():
    kind = s.WorkloadKind(priority=7, pods=3, cpu="2", memory="4Gi", gpus=1, pod_sets=2)
    obj = workloads.build("w-1", "ns", "lq-a", kind, owner="u1", priority_class="high")
    assert obj["apiVersion"] == "kueue.x-k8s.io/v1beta2" and obj["kind"] == "Workload"
    assert obj["spec"]["queueName"] == "lq-a" and obj["spec"]["priority"] == 7
    assert obj["spec"]["priorityClassName"] == "high"
    assert [p["count"] for p in obj["spec"]["podSets"]] == [3, 3]
    requests = obj["spec"]["podSets"][0]["template"]["spec"]["containers"][0]["resources"]["requests"]
    assert requests == {"cpu": "2", "memory": "4Gi", "nvidia.com/gpu": "1"}
    assert obj["metadata"]["labels"] == {workloads.CHURN_LABEL: "u1"}
    assert workloads.runtime_seconds(obj) == kind.runtime_seconds  # whoever holds it later finishes it on time


@pytest.mark.parametrize("annotations, expected", [({}, None), ({workloads.RUNTIME_ANNOTATION: "2.5"}, 2.5),
                                                   ({workloads.RUNTIME_ANNOTATION: "soon"}, None)])
def test_runtime_is_read_back_from_the_annotation(annotations, expected):
    assert workloads.runtime_seconds({"metadata": {"annotations": annotations}}) == expected


def test_workloads_always_carry_a_priority_kueues_visibility_api_needs():
    obj = workloads.build("w-0", "ns", "lq-a", s.WorkloadKind(), owner="u1")
    assert obj["spec"]["priority"] == 0 and "priorityClassName" not in obj["spec"]


def condition(kind, status="True"):
    return {"type": kind, "status": status}


@pytest.mark.parametrize("conditions, phase", [
    ([], workloads.Phase.PENDING),
    ([condition("QuotaReserved")], workloads.Phase.PENDING),
    ([condition("QuotaReserved"), condition("Admitted")], workloads.Phase.ADMITTED),
    ([condition("Admitted", "False")], workloads.Phase.PENDING),
    ([condition("Admitted"), condition("Finished")], workloads.Phase.FINISHED),
])
def test_phase_from_conditions(conditions, phase):
    assert workloads.phase({"status": {"conditions": conditions}}) is phase


def test_finished_patch_keeps_other_conditions():
    obj = {"metadata": {"generation": 2}, "status": {"conditions": [condition("QuotaReserved"), condition("Admitted")]}}
    patch = workloads.finished_patch(obj, dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=dt.timezone.utc))
    types = [c["type"] for c in patch["status"]["conditions"]]
    assert types == ["QuotaReserved", "Admitted", "Finished"]
    assert patch["status"]["conditions"][-1]["lastTransitionTime"] == "2026-01-02T03:04:05Z"
    assert patch["status"]["conditions"][-1]["observedGeneration"] == 2


@pytest.mark.parametrize("changes, message", [
    (dict(min_available_mb=-1), "min available memory"),
    (dict(run_time=0), "run time"),
])
def test_bad_run_plans_are_refused(changes, message):
    with pytest.raises(s.SettingsError, match=message):
        s.RunPlan(settings=s.LoadSettings(target=TARGET), locustfile="x.py", **changes).validate()


def test_admitted_seconds_ago_reads_the_admitted_condition():
    now = dt.datetime(2026, 12, 1, 7, 0, 30, tzinfo=dt.timezone.utc)
    admitted = {"status": {"conditions": [{"type": "QuotaReserved", "status": "True",
                                           "lastTransitionTime": "2026-12-01T06:00:00Z"},
                                          {"type": "Admitted", "status": "True",
                                           "lastTransitionTime": "2026-12-01T07:00:00Z"}]}}
    assert workloads.admitted_seconds_ago(admitted, now) == 30.0
    pending = {"status": {"conditions": [{"type": "Admitted", "status": "False",
                                          "lastTransitionTime": "2026-12-01T07:00:00Z"}]}}
    assert workloads.admitted_seconds_ago(pending, now) is None
    assert workloads.admitted_seconds_ago({}, now) is None
