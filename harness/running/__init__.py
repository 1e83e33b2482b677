"""`kqbench run`: a scenario's cases through cluster, queues, scheduler, measurements and phases.

- `phases`: the small phase engine (ordered steps, always-run teardowns, injected clock).
- `hooks`: the interfaces the pieces plug into (SchedulerStarter/SchedulerHandle, Measurements, the
  driver registry that runs each phase kind).
- `queueobjects`: Kueue objects of a scenario's `queues:` section (pure) and their install.
- `calibrating`: the calibration step of a case (a fixed load on the apiserver alone, before the
  scheduler), summarised by harness.results.machines.
- `adapters`: the default implementations over harness.implementations, harness.metrics, harness.drivers.
- `runner`: one run folder per invocation, one case per sweep point and repeat, partial results kept.
"""
