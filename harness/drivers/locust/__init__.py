"""The Locust driver: fill the queues, churn, query positions, drain (the position-strategy comparison).

- `phases`: FillPhase, ChurnPhase, QueryPhase, DrainPhase.
- `planning`: a phase's Locust run plan from the scenario (users, rates, query mode of the strategy).
- `results`: a Locust run as tables (`load_history`, `load_totals`, `load_failures`, `load_latency`, `load_hdr`, `load_workers`).
- `summarising`: position-query and bystander latency, failure ratio.
"""

from harness.drivers import contract
from harness.drivers.locust import phases, running, summarising
from harness.load import results

DRIVER = contract.DriverSpec(name="locust", phases=phases.PHASES, tables=results.TABLES, run_phase=running.run,
                             summary_metrics=summarising.metrics, ratio_metrics=summarising.RATIO_METRICS)
