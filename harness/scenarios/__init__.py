"""Scenarios: YAML files validated once into typed specs (`models`, built on the registry-free `sections`),
loaded and expanded by `loading`.

    runs = loading.load("quick", overrides=["scheduler.strategy=aggregated-indexed"])
    for run in runs: run.scenario.cluster.node_pools() ...

The YAML files shipped next to this module are package data: `quick`, `positions-sweep`,
`kueue-baseline` and `tiny` (the integration test's).

`models`, `loading` and `needs` sit above the registries (the model is their phase union and scheduler
fields); `base`, `sections` and `queueobjects` (the Kueue objects of a `queues:` section, and applying
them) below every driver and implementation, which read them.
"""
