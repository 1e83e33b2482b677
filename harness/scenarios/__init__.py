"""Scenarios: YAML files validated once into typed specs (`models`, built on the registry-free `sections`),
loaded and expanded by `loading`.

    runs = loading.load("quick", overrides=["scheduler.strategy=aggregated-indexed"])
    for run in runs: run.scenario.cluster.node_pools() ...

The YAML files shipped next to this module are package data: `quick`, `positions-sweep`,
`kueue-baseline` and `tiny` (the integration test's).
"""
