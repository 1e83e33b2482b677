"""The Workload CRD refuses what Kueue's refuses about spec.maximumExecutionTimeSeconds (its CRD: no webhook checks
it), and keeps the status field the execution time is accumulated in."""

from scheduler.api import crds


def _schema() -> dict:
    crd = next(c for c in crds.all_crds() if c["spec"]["names"]["kind"] == "Workload")
    return crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]


def test_the_limit_is_an_int32_of_at_least_one_second():
    limit = _schema()["properties"]["spec"]["properties"]["maximumExecutionTimeSeconds"]
    assert limit == {"type": "integer", "format": "int32", "minimum": 1}
    accumulated = _schema()["properties"]["status"]["properties"]["accumulatedPastExecutionTimeSeconds"]
    assert accumulated == {"type": "integer", "format": "int32"}


def test_the_limit_is_immutable_while_admitted_with_kueues_message_and_bounded_conditions():
    schema = _schema()
    (rule,) = schema["x-kubernetes-validations"]
    assert rule["message"] == "maximumExecutionTimeSeconds is immutable while workload quota reserved"
    assert "oldSelf.spec.maximumExecutionTimeSeconds" in rule["rule"] and "'Admitted'" in rule["rule"]
    conditions = schema["properties"]["status"]["properties"]["conditions"]
    assert conditions["maxItems"] == 16, "bounded, as Kueue's: the rule's estimated cost stays within budget"
    assert conditions["items"]["properties"]["type"]["maxLength"] == 316


def test_no_other_kind_has_a_rule_on_the_whole_object():
    for crd in crds.all_crds():
        if crd["spec"]["names"]["kind"] != "Workload":
            assert "x-kubernetes-validations" not in crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
