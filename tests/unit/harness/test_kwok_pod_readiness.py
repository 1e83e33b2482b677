"""Which of our kwok pod stages selects which pod: late and never-ready pods (READY_AFTER_ANNOTATION).

kwok (v0.7.0, pkg/utils/lifecycle) plays, per change of a pod, one of the stages whose selector matches,
picked at random by `weight` when several do: the selectors must be disjoint. The stages' keys are jq
queries; `matches` below evaluates the few shapes we use as kwok's expression.Requirement does (a failed
query or a null is no value; In/NotIn look for any value among `values`; Exists means some value, even "")."""

from __future__ import annotations

import itertools
import re

import pytest
import yaml

from harness.clusters import kwokconfig

_TOKEN = re.compile(r'\.\[\]|\.[A-Za-z_]\w*|\["[^"]+"\]')
_SELECT = re.compile(r'select\( \.(\w+) == "([^"]*)" \)')


class _NoValue(Exception):
    """A jq error (e.g. iterating null): kwok reads it as no value at all."""


def _step(values: list, token: str) -> list:
    out = []
    for value in values:
        if token == ".[]":
            if not isinstance(value, list):
                raise _NoValue(token)
            out += value
        elif value is None:
            out.append(None)
        elif not isinstance(value, dict):
            raise _NoValue(token)
        else:
            out.append(value.get(token[2:-2] if token.startswith("[") else token[1:]))
    return out


def query(key: str, obj: dict) -> list:
    """The non-null outputs of the jq query `key` on `obj`, for the shapes our stages use."""
    values = [obj]
    try:
        for segment in (part.strip() for part in key.split("|")):
            if select := _SELECT.fullmatch(segment):
                values = [v for v in values if isinstance(v, dict) and v.get(select[1]) == select[2]]
                continue
            tokens = _TOKEN.findall(segment)
            assert "".join(tokens) == segment, f"query shape this model does not know: {key!r}"
            for token in tokens:
                values = _step(values, token)
    except _NoValue:
        return []
    return [v for v in values if v is not None]


def _text(value) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def matches(expression: dict, obj: dict) -> bool:
    data = [_text(v) for v in query(expression["key"], obj)]
    return {"In": lambda: any(v in expression["values"] for v in data),
            "NotIn": lambda: not any(v in expression["values"] for v in data),
            "Exists": lambda: bool(data),
            "DoesNotExist": lambda: not data}[expression["operator"]]()


def selecting(pod: dict) -> list[str]:
    """The names of our pod stages whose selector matches `pod`."""
    return [stage["metadata"]["name"] for stage in kwokconfig.pod_stages()
            if all(matches(e, pod) for e in stage["spec"]["selector"]["matchExpressions"])]


def pod(phase: str = "Pending", ready: str | None = None, ready_after: str | None = None, job: bool = False,
        deleting: bool = False) -> dict:
    """A bound pod as kwok sees it: its phase, Ready condition, annotation, owner and deletion."""
    metadata: dict = {"name": "p", "namespace": "default"}
    if ready_after is not None:
        metadata["annotations"] = {kwokconfig.READY_AFTER_ANNOTATION: ready_after, kwokconfig.RUNTIME_ANNOTATION: "5s"}
    if job:
        metadata["ownerReferences"] = [{"apiVersion": "batch/v1", "kind": "Job", "name": "j", "uid": "u"}]
    if deleting:
        metadata["deletionTimestamp"] = "2025-01-01T00:00:00Z"
    status: dict = {"phase": phase}
    if ready is not None:
        status["conditions"] = [{"type": "PodScheduled", "status": "True"}, {"type": "Ready", "status": ready}]
    return {"metadata": metadata, "spec": {"nodeName": "n-0"}, "status": status}


@pytest.mark.parametrize("case, expected", [
    (pod(), "kqbench-pod-running"),
    (pod(job=True), "kqbench-pod-running"),
    (pod(ready_after="3s"), "kqbench-pod-running-unready"),
    (pod(ready_after=kwokconfig.READY_NEVER, job=True), "kqbench-pod-running-unready"),
    (pod(ready_after=""), "kqbench-pod-running-unready"),
    (pod("Running", "False", "3s"), "kqbench-pod-ready"),
    (pod("Running", "False", "3s", job=True), "kqbench-pod-ready"),  # Ready first, then its run time
    (pod("Running", "False", ""), "kqbench-pod-ready"),  # no duration: Ready at once
    (pod("Running", "False", kwokconfig.READY_NEVER), None),
    (pod("Running", "False", kwokconfig.READY_NEVER, job=True), None),  # runs until deleted
    (pod("Running", "True", "3s", job=True), "kqbench-pod-succeeded"),
    (pod("Running", "True", job=True), "kqbench-pod-succeeded"),
    (pod("Running", "True"), None),  # not a Job's: runs on
    (pod("Running", "True", "3s"), None),
    (pod("Succeeded", "False", "3s", job=True), None),
    (pod("Running", "False", kwokconfig.READY_NEVER, deleting=True), "kqbench-pod-deleted"),
    (pod(deleting=True), "kqbench-pod-deleted"),
], ids=lambda v: v if isinstance(v, str) else None)
def test_each_pod_state_is_selected_by_its_stage(case, expected):
    assert selecting(case) == ([expected] if expected else [])


def test_no_pod_state_is_selected_by_two_stages_so_weights_never_decide():
    states = itertools.product(["Pending", "Running", "Succeeded", "Failed"], [None, "True", "False"],
                               [None, "", "3s", kwokconfig.READY_NEVER, "Never"], [False, True], [False, True])
    for phase, ready, ready_after, job, deleting in states:
        chosen = selecting(pod(phase, ready, ready_after, job, deleting))
        assert len(chosen) <= 1, f"{phase} Ready={ready} ready-after={ready_after!r} job={job}: {chosen}"
    assert all("weight" not in s["spec"] and "weightFrom" not in s["spec"] for s in kwokconfig.pod_stages())


def _stage(name: str) -> dict:
    return next(s["spec"] for s in kwokconfig.pod_stages() if s["metadata"]["name"] == name)


def test_readiness_waits_the_annotated_duration_and_run_time_the_runtime_one():
    ready = _stage("kqbench-pod-ready")["delay"]
    assert ready == {"durationMilliseconds": 0, "durationFrom": {
        "expressionFrom": '.metadata.annotations["kqbench.io/ready-after"]'}}
    assert query(ready["durationFrom"]["expressionFrom"], pod(ready_after="20s")) == ["20s"]
    succeeded = _stage("kqbench-pod-succeeded")["delay"]["durationFrom"]["expressionFrom"]
    assert query(succeeded, pod(ready_after="20s")) == ["5s"]
    assert _stage("kqbench-pod-running-unready").get("delay") is None, "Running as soon as bound"


def test_a_pod_without_the_annotation_gets_todays_status_at_once():
    running = _stage("kqbench-pod-running")
    assert running["next"] == {"statusTemplate": kwokconfig.POD_RUNNING_TEMPLATE}
    assert running.get("delay") is None


def _filled(template: str) -> dict:
    """The template as YAML, its placeholders filled with "x" and its action-only lines dropped."""
    actions_alone = re.sub(r"^{{[^}]*}}$", "", template, flags=re.M)
    return yaml.safe_load(re.sub(r"{{[^}]*}}", '"x"', actions_alone))


def _conditions(status: dict) -> dict:
    return {c["type"]: c for c in status["conditions"]}


def test_an_annotated_pod_runs_unready_then_turns_ready_keeping_its_start():
    unready = _filled(_stage("kqbench-pod-running-unready")["next"]["statusTemplate"])
    assert unready["phase"] == "Running" and unready["startTime"]
    assert {t: c["status"] for t, c in _conditions(unready).items()} == {
        "Initialized": "True", "ContainersReady": "False", "Ready": "False"}
    assert [c["ready"] for c in unready["containerStatuses"]] == [False]

    template = _stage("kqbench-pod-ready")["next"]["statusTemplate"]
    ready = _filled(template)
    assert ready["phase"] == "Running" and "startTime" not in ready, "the start stays when it ran"
    conditions = _conditions(ready)
    assert {t: c["status"] for t, c in conditions.items()} == {"ContainersReady": "True", "Ready": "True"}
    assert all(c["reason"] is None for c in conditions.values()), "null: the merge drops the not-ready reason"
    assert [c["ready"] for c in ready["containerStatuses"]] == [True]
    assert "startedAt: {{ $.status.startTime | Quote }}" in template
