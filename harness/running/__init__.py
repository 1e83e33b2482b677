"""`kqbench run`: a scenario's cases through cluster, queues, scheduler, measurements and load.

- `phases`: the small phase engine (ordered steps, always-run teardowns, injected clock).
- `hooks`: the interfaces the pieces plug into (SchedulerStarter/SchedulerHandle, Measurements, LoadDriver).
- `queueobjects`: Kueue objects of a scenario's `queues:` section (pure) and their install.
- `adapters`: the default implementations over harness.schedulerproc, harness.metrics, loadtests.
- `runner`: one run folder per invocation, one case per sweep point and repeat, partial results kept.
"""
