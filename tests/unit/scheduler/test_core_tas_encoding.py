"""Kueue v0.19's hostname-prefix encoding of a topology assignment (TASAssignmentsEncodingByHostnamePrefix),
cases of pkg/util/tas/tas_assignment_test.go in Kueue v0.19.2's module."""

from __future__ import annotations

import pytest

from scheduler.core import topologyconversion as tc
from scheduler.core.topologies import HOSTNAME_LABEL, DomainAssignment, TopologyAssignment


def _hosts(*names: str, counts=None) -> TopologyAssignment:
    counts = counts or [1] * len(names)
    return TopologyAssignment((HOSTNAME_LABEL,), tuple(DomainAssignment((n,), c) for n, c in zip(names, counts)))


def _prefix_assignment(domain_count: int) -> TopologyAssignment:
    """hostnamePrefixAssignment: half pool-a-node-NNNNN, half pool-b-node-NNNNN."""
    half = domain_count // 2
    return _hosts(*(f"pool-{'a' if i < half else 'b'}-node-{(i if i < half else i - half):05d}"
                    for i in range(domain_count)))


@pytest.mark.parametrize("domains, slices", [(1, 1), (4, 1), (20, 2)])
def test_the_smaller_of_the_two_encodings_is_written_and_reads_back(domains, slices):
    """TestV1Beta2FromInternal_hostnamePrefixFeatureGateAndFallback: one host stays one slice; four are
    smaller as one compact slice; twenty are smaller as a slice per prefix."""
    assignment = _prefix_assignment(domains)
    encoded = tc.assignment_to_dict(assignment, hostname_prefix_runs=True)
    assert len(encoded["slices"]) == slices
    assert tc.assignment_from_dict(encoded) == assignment
    assert len(tc.assignment_to_dict(assignment)["slices"]) == 1  # the gate off (Kueue v0.17.0)


def test_runs_keep_the_domains_in_order():
    """..._preservesDomainOrder: prefixes a, b, a, b make four slices, read back in the same order."""
    assignment = _hosts("gke-c-pool-a-hash1-aa", "gke-c-pool-b-hash2-cc", "gke-c-pool-a-hash1-bb",
                        "gke-c-pool-b-hash2-dd", counts=[1, 2, 3, 4])
    runs = tc._prefix_runs([HOSTNAME_LABEL], list(assignment.domains))
    assert len(runs["slices"]) == 4
    assert tc.assignment_from_dict(runs) == assignment


@pytest.mark.parametrize("hosts, keys", [
    (["gke-c-pool-a-hash1-aa", "gke-c-pool-a-hash1-bb", "gke-c-pool-b-hash2-cc", "gke-c-pool-b-hash2-dd"],
     ["gke-c-pool-a-hash1-"] * 2 + ["gke-c-pool-b-hash2-"] * 2),
    (["node-a", "host-b"], ["", ""]),
    (["nodea", "hostb"], None),
])
def test_each_host_gets_its_longest_reusable_prefix(hosts, keys):
    """TestReusableHostnamePrefixKeys."""
    assert tc._hostname_prefix_keys(list(_hosts(*hosts).domains)) == keys


def test_prefixes_back_off_until_the_runs_fit_the_slice_limit():
    """..._backsOffToFitSliceLimit: alternating a-x-/a-y- would make 1,001 slices; a- makes one."""
    hosts = [f"a-{'y' if i % 2 else 'x'}-{i:04d}" for i in range(tc.MAX_SLICES + 1)]
    assert tc._hostname_prefix_keys(list(_hosts(*hosts).domains)) == ["a-"] * len(hosts)


def test_without_a_prefix_depth_that_fits_all_hosts_are_one_run():
    """..._fallsBackWhenNoPrefixDepthFitsSliceLimit."""
    assignment = _hosts(*(f"{'b-y' if i % 2 else 'a-x'}-{i:04d}" for i in range(tc.MAX_SLICES + 1)))
    assert tc._hostname_prefix_keys(list(assignment.domains)) is None
    encoded = tc.assignment_to_dict(assignment, hostname_prefix_runs=True)
    assert len(encoded["slices"]) == 1 and tc.assignment_from_dict(encoded) == assignment


def test_a_cloud_named_assignment_over_a_slices_limit_is_cut_at_it():
    """TestV1Beta2FromInternal_largeHostnameAssignmentWithManyPools: 2,000 pools of 100 nodes, 200,000 hosts:
    the prefixes would make 2,000 slices, so they back off to one run, cut into two slices of 100,000."""
    assignment = _hosts(*(f"gke-cluster-pool-{p:04d}-{p:08x}-{n:04x}" for p in range(2000) for n in range(100)))
    encoded = tc.assignment_to_dict(assignment, hostname_prefix_runs=True)
    assert [s["domainCount"] for s in encoded["slices"]] == [tc.MAX_DOMAINS_PER_SLICE] * 2
