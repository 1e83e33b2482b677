"""Random topology placement cases: the same seed gives the same case, and our side answers every pod set."""

from __future__ import annotations

from harness.agreeing import topologyplacements


def test_a_seed_gives_one_case():
    assert topologyplacements.random_case(7) == topologyplacements.random_case(7)
    assert topologyplacements.random_case(7) != topologyplacements.random_case(8)


def test_every_pod_set_gets_an_assignment_or_a_reason_and_the_cases_cover_the_kinds():
    seen = set()
    for seed in range(1, 60):
        case = topologyplacements.random_case(seed)
        results = topologyplacements.ours(case)
        assert [r["podSet"] for r in results] == [p["name"] for p in case["podSets"]]
        first = results[0]
        assert (first["assignment"] is None) == bool(first["reason"])
        for pod_set in case["podSets"]:
            request = pod_set["topologyRequest"] or {}
            seen.update(k for k in ("required", "preferred", "unconstrained", "podSetSliceSize", "podSetGroupName")
                        if k in request)
            seen.add("implied" if pod_set["implied"] else "explicit")
        seen.update(["placed"] if first["assignment"] else ["refused"])
    assert seen >= {"required", "preferred", "unconstrained", "podSetSliceSize", "podSetGroupName", "implied",
                    "placed", "refused"}


def test_an_assignment_without_domains_reads_alike_from_both_sides():
    kueue = [{"podSet": "a", "reason": "", "assignment": {"Levels": ["h"], "Domains": None}}]
    ours = [{"podSet": "a", "reason": "", "assignment": {"Levels": ["h"], "Domains": []}}]
    assert topologyplacements._normal(kueue) == topologyplacements._normal(ours)


def test_kueues_group_on_no_domain_is_told_apart_from_other_differences():
    refused = {"podSet": "a", "reason": "topology assignment failed: code assumptions violated (1 pods ...)",
               "assignment": None}
    kueue_empty = {"podSet": "a", "reason": "", "assignment": {"Levels": ["h"], "Domains": None}}
    kueue_placed = {"podSet": "a", "reason": "", "assignment": {"Levels": ["h"], "Domains": [{"Values": ["x"],
                                                                                               "Count": 1}]}}
    assert topologyplacements.kueue_placed_nothing({"reference": [refused], "kueue": [kueue_empty]})
    assert not topologyplacements.kueue_placed_nothing({"reference": [refused], "kueue": [kueue_placed]})
