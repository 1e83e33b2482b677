"""The Locust driver: fill the queues, churn, query positions, drain (the position-strategy comparison).

- `phases`: FillPhase, ChurnPhase, QueryPhase, DrainPhase.
- `planning`: a phase's Locust run plan from the scenario (users, rates, query mode of the strategy).
- `backlogfill`: a fill with `bulk: true`, written straight into etcd as a backlog beneath the churn.
- (harness.load: the Locust run plan and its tables, shared with the drivers that run Locust too.)
- `summarising`: position-query and bystander latency, failure ratio; the requests behind them.
- `figures`, `exporting`: its figures in the report, its items of perfdata.json.
"""

from harness.drivers import contract
from harness.drivers.locust import backlogfill, exporting, phases, running, summarising
from harness.load import results

QUESTIONS = (
    contract.Question("Write cost", "apiserver writes/s while the queue churns", ("apiserver.write_qps[churn]",),
                      place=20),
    contract.Question("Position latency", "position query p99", ("load.position_query_p99_ms",), place=30),
    contract.Question("Bystander impact", "p99 of unrelated requests (bystanders)", ("load.bystander_p99_ms",),
                      place=40),
)


def _figures() -> tuple[contract.Figure, ...]:
    # imported here: matplotlib takes about a second to import, and only the report draws
    from harness.drivers.locust import figures

    return figures.FIGURES


DRIVER = contract.DriverSpec(name="locust", phases=phases.PHASES, tables=(*results.TABLES, backlogfill.TABLE), run_phase=running.run,
                             summary_metrics=summarising.metrics, ratio_metrics=summarising.RATIO_METRICS,
                             calibrated_metrics=summarising.CALIBRATED_METRICS,
                             questions=QUESTIONS, report_figures=_figures, perfdata_items=exporting.perfdata,
                             requests_behind=summarising.request_counts, pending_of=summarising.case_pending)
