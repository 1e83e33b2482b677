import sys, time, collections, statistics
sys.path.insert(0, sys.argv[1]); sys.path.insert(1, sys.argv[1] + "/benchmarks")
import scheduler_core_fixtures as fx
from scheduler.core.scheduling import decide_cycle
m = fx.cohort_world(100_000)
d = decide_cycle(m)
print(sys.argv[1], collections.Counter(type(x).__name__ for x in d))
times = []
for _ in range(40):
    t = time.perf_counter(); decide_cycle(m); times.append(time.perf_counter() - t)
print(f"median {statistics.median(times)*1000:.1f} ms, p10 {sorted(times)[4]*1000:.1f}, p90 {sorted(times)[35]*1000:.1f}")
