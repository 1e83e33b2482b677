"""Phase drivers: one experiment per folder, found through `registry` by the phase kinds it runs.

- `locust`: fill / churn / query / drain with Locust users (the position-strategy comparison).
- `watchcache`: populate ConfigMaps, then list them in one mode per phase (the watch-cache arms).
- `kueuebaseline`: Kueue's own scheduler performance test, on schedule, against our scheduler.
- `capacity`: a search over one load axis until a break condition holds.
"""
