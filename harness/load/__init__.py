"""Load generation the drivers share: Locust run plans and their tables, the fixed arrival schedule.

- `planning`: a Locust run plan from the scenario's load section (users, rates, query mode of the
  strategy, workers), given the users, duration and pending target a driver asks for.
- `results`: run a plan in a child process; its frames as the `load_*` tables, tagged with the phase.
- `arrivals`: Kueue's fixed schedule (each class `count` times per ClusterQueue, one per interval),
  which the kueue-baseline (Workloads) and jobs (Jobs) drivers both create on;
- `creating`: the engine that creates on that schedule while the driver's informers watch, until the
  driver says all is done or the deadline passes.

Drivers import this package, never each other (lint-imports keeps it so).
"""
