"""Locust load against kube-apiserver: Workload churn, position queries, bystanders, list/watch.

Entry points (none of them imports Locust, so the harness process is never gevent-patched):
- `running.run(settings.RunPlan, out_dir) -> running.LoadResult` with pandas frames
  `history` (per interval and request name), `totals` (per name) and `failures` (per name and reason).
- `settings`: the typed plan (`RunPlan`, `LoadSettings`, `Target`, per-user sections, `ShapeSettings`);
  `settings.from_mapping(scenario_section, target)` builds it from a scenario.
- `locustfile.py`: the built-in users; `python -m loadtests.engine` is what runs in the child process.

Pure modules (tested without Locust or a server): settings, naming, shapes, churning, workloads,
watching, frames. Locust edges: client (TLS, named reports), users/*, engine.
"""
