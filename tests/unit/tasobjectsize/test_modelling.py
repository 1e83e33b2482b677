"""The model of a host-level assignment's size: the numbers results/tas/README.md quotes, and the largest pod
set within a limit agreeing with the sizes it searched."""

import pytest

from harness.drivers.tasobjectsize import modelling
from harness.nodes import pools


def pool(pods: int, names: str) -> pools.NodePool:
    return pools.NodePool(count=pods, names=names)


@pytest.mark.parametrize("pods, names, compact, listed", [
    (1_000, "indexed", 8_312, 39_198),  # 8.3 KB and 39.2 KB in results/tas/object-size-model.json
    (10_000, "cloud", 162_312, 442_200),  # 162.3 KB and 442.2 KB there
])
def test_sizes_are_the_models_published_numbers(pods, names, compact, listed):
    sizes = modelling.sizes(pods, pool(pods, names))
    assert (sizes[modelling.COMPACT], sizes[modelling.DOMAIN_LIST]) == (compact, listed)


def test_prefix_runs_never_cost_more_than_the_single_slice_and_halve_it_with_cloud_names():
    indexed, cloud = modelling.sizes(1_000, pool(1_000, "indexed")), modelling.sizes(10_000, pool(10_000, "cloud"))
    assert indexed[modelling.PREFIX_RUNS] <= indexed[modelling.COMPACT]
    assert cloud[modelling.PREFIX_RUNS] < 0.55 * cloud[modelling.COMPACT]


@pytest.mark.parametrize("encoding", modelling.ENCODINGS)
def test_the_largest_pod_set_within_a_limit_fits_and_one_more_does_not(encoding):
    limit, names = 10_000, pool(1, "cloud")
    largest = modelling.largest_fitting(encoding, names, limit, high=1_500)
    assert modelling.sizes(largest, names)[encoding] <= limit < modelling.sizes(largest + 1, names)[encoding]
