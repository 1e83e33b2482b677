"""Kueue's own scheduler performance test (test/performance/scheduler, `baseline` config) on our cluster.

- `plans`: the per-ClusterQueue, per-class creation schedule from a scenario (pure).
- `figures`: wall time, ClusterQueue usage and time to admission per class, defined as Kueue's
  runner/recorder and checker define them, next to Kueue's published numbers (pure).
- `generating`: creates the workloads on schedule, watches admissions, marks each Finished once its
  runtime has elapsed after admission (the I/O edge; the runner calls `run_phase`).
"""
