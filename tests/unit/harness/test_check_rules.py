"""kqbench's admission check controller's rules (harness.workloads.checkrules): parsing, and what a Pending check
of a Workload holding quota becomes; a Job's Workload carries the rule on its pod set (checkcontrolling.rule_text)."""

import pytest

from harness.workloads import checkcontrolling, checkrules
from harness.workloads.checkrules import Rule, Verdict

RESERVED = 1000.0


@pytest.mark.parametrize("text, rule", [
    (None, Rule()),
    ("ready", Rule()),
    (" ready ", Rule()),
    ("ready-after=2s", Rule(ready_after_seconds=2.0)),
    ("ready-after=0.5s", Rule(ready_after_seconds=0.5)),
    ("retry=1", Rule(retries=1)),
    ("retry=2,backoff=10s", Rule(retries=2, backoff_seconds=10)),
    ("reject", Rule(reject=True)),
])
def test_rules_parse(text, rule):
    assert checkrules.parse(text) == rule


@pytest.mark.parametrize("text", ["retyr=1", "", "ready-after=2", "retry=-1", "retry=1,backoff=1.5s", "Reject"])
def test_a_bad_rule_is_one_line_naming_it_and_the_syntax(text):
    with pytest.raises(checkrules.BadRule) as caught:
        checkrules.parse(text)
    message = str(caught.value)
    assert "\n" not in message and repr(text) in message and checkrules.SYNTAX in message


@pytest.mark.parametrize("rule, retry_count, now, verdict", [
    (Rule(), 0, RESERVED, Verdict("Ready", "kqbench: ready by rule")),
    (Rule(ready_after_seconds=2), 0, RESERVED + 1, Verdict(look_again_at=RESERVED + 2)),
    (Rule(ready_after_seconds=2), 0, RESERVED + 2, Verdict("Ready", "kqbench: ready by rule")),
    (Rule(retries=1), 0, RESERVED, Verdict("Retry", "kqbench: retry 1 of 1", 3)),
    (Rule(retries=1), 1, RESERVED, Verdict("Ready", "kqbench: ready by rule")),  # the eviction counted the retry
    (Rule(retries=2, backoff_seconds=5), 1, RESERVED, Verdict("Retry", "kqbench: retry 2 of 2", 5)),
    (Rule(reject=True), 0, RESERVED, Verdict("Rejected", "kqbench: rejected by rule")),
])
def test_a_pending_check_becomes_what_its_rule_says(rule, retry_count, now, verdict):
    assert checkrules.decide(rule, retry_count, RESERVED, now) == verdict


def test_the_rule_is_read_from_the_workload_then_from_its_pod_set_template():
    pod_set = {"name": "main", "template": {"metadata": {"annotations": {checkrules.RULE_ANNOTATION: "reject"}}}}
    assert checkcontrolling.rule_text({"metadata": {}, "spec": {"podSets": [pod_set]}}) == "reject"
    own = {"metadata": {"annotations": {checkrules.RULE_ANNOTATION: "ready"}}, "spec": {"podSets": [pod_set]}}
    assert checkcontrolling.rule_text(own) == "ready"
    assert checkcontrolling.rule_text({"metadata": {}, "spec": {"podSets": [{"name": "main"}]}}) is None


def _workload(*conditions: tuple[str, str], active: bool = True, state: str = "Pending", name: str = "c") -> dict:
    return {"metadata": {"name": "w"}, "spec": {"active": active},
            "status": {"conditions": [{"type": t, "status": s} for t, s in conditions],
                       "admissionChecks": [{"name": name, "state": state}]}}


@pytest.mark.parametrize("workload, due", [
    (_workload(("QuotaReserved", "True")), True),
    (_workload(("QuotaReserved", "False")), False),
    (_workload(), False),
    # evicted with the states reset to Pending before the quota is released: Kueue's own check controllers
    # leave it alone, and a verdict then would admit a Workload on its way out
    (_workload(("QuotaReserved", "True"), ("Evicted", "True")), False),
    (_workload(("QuotaReserved", "True"), ("Evicted", "False")), True),
    (_workload(("QuotaReserved", "True"), ("Finished", "True")), False),
    (_workload(("QuotaReserved", "True"), active=False), False),
    (_workload(("QuotaReserved", "True"), state="Retry"), False),
    (_workload(("QuotaReserved", "True"), name="someone-elses"), False),
])
def test_a_check_is_decided_only_while_its_workload_holds_quota_and_is_not_on_its_way_out(workload, due):
    assert bool(checkcontrolling.pending_checks(workload, {"c"})) is due
