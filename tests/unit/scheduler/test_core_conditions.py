"""Status conditions: found by type; true only when a condition of that type says "True"."""

from scheduler.core import conditions

WORKLOAD = {"status": {"conditions": [{"type": "QuotaReserved", "status": "True"},
                                      {"type": "Admitted", "status": "False"}]}}


def test_a_condition_is_found_by_type_and_true_only_when_it_says_true():
    assert conditions.condition(WORKLOAD, "Admitted") == {"type": "Admitted", "status": "False"}
    assert conditions.is_true(WORKLOAD, "QuotaReserved")
    assert not conditions.is_true(WORKLOAD, "Admitted")
    assert not conditions.is_true(WORKLOAD, "Finished")


def test_an_object_without_status_has_no_conditions():
    assert conditions.condition({}, "Finished") is None
    assert not conditions.is_true({"status": None}, "Finished")
