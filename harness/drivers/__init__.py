"""Phase drivers: one experiment per folder, found through `registry` by the phase kinds it runs.

A driver implements `contract` and imports nothing else of this package (never `registry`, which
lists the drivers, nor another driver: what they share is harness.load).

- `locust`: fill / churn / query / drain with Locust users (the position-strategy comparison).
- `watchcache`: populate ConfigMaps, then list them in one mode per phase (the watch-cache arms).
- `kueuebaseline`: Kueue's own scheduler performance test, on schedule, against our scheduler.
- `capacity`: a search over one load axis until a break condition holds.
- `jobs`: batch/v1 Jobs through the scheduler under test onto KWOK nodes.
- `invariants`, `faults`: no phase kinds; their tables in the summary and the report.
"""
