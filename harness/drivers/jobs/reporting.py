"""The report's jobs section: per case the headline figures, pods through their life per second,
Job latencies, API load per resource and CPU per process in the phase. None without jobs figures."""

from __future__ import annotations

import html
import io

import pandas as pd
from matplotlib.figure import Figure

from harness.drivers import contract
from harness.drivers.jobs import resources, summarising, tabulating

HEADLINES = (
    ("jobs", "Jobs"), ("jobs_completed", "complete"), ("pods", "pods"), ("wall_seconds", "wall s"),
    ("pods_bound_per_second_sustained", "pods bound/s"), ("pods_bound_per_second_peak_10s", "bound/s peak 10 s"),
    ("pods_succeeded_per_second_sustained", "pods succeeded/s"),
    ("time_to_admission_p50_seconds", "to admission p50 s"), ("time_to_admission_p99_seconds", "to admission p99 s"),
    ("time_to_first_pod_running_p50_seconds", "to first pod Running p50 s"),
    ("time_to_first_pod_running_p99_seconds", "to first pod Running p99 s"),
    ("time_to_complete_p50_seconds", "to complete p50 s"), ("time_to_complete_p99_seconds", "to complete p99 s"),
    ("pod_create_to_bound_p99_seconds", "pod created→bound p99 s"), ("most_pods_running", "most pods Running"),
    ("suspensions", "suspensions"))
NOTE = ("Jobs created suspended in their LocalQueue by the generator; admitted by the scheduler under test; pods made "
        "by the real job controller, bound by the real kube-scheduler, run and finished by kwok after the Job's "
        "runtime; the scheduler finishes the Workload once the Job is Complete. A step's time is the generator's clock "
        "at the first arrival, on any of its watches, of etcd's revision of the write or a newer one (so steps keep "
        "the cluster's order). 'sustained' is the count over the span from the first to the last such event. "
        "Per resource: requests per second in the phase (reads: GET, LIST, WATCH), watch events sent to watchers, "
        "events the watch cache took from etcd, and objects as the apiserver last counted them (it recounts each "
        "resource about once a minute, so a short phase may show 0); the etcd census below is exact.")
POD_SERIES = (("pods_created", "created"), ("pods_bound", "bound"), ("pods_running", "Running"),
              ("pods_succeeded", "Succeeded"))


def number(value: float) -> str:
    """Counts with thousands separators, seconds to 3 significant digits, no exponents (1.05e+05, 5e-06)."""
    if value == 0 or abs(value) >= 100:
        return f"{value:,.0f}"
    if abs(value) < 0.001:
        return "<0.001" if value > 0 else "-<0.001"
    return f"{value:.3g}"


def _html(frame: pd.DataFrame) -> str:
    return frame.to_html(index=False, escape=True, classes="data", float_format=number, na_rep="")


def headline_table(figures: pd.DataFrame) -> pd.DataFrame:
    """One row per case, the headline figures as columns (all classes together)."""
    overall = figures[figures["job_class"].fillna("") == ""]
    rows = []
    for case, mine in overall.groupby("case", sort=False):
        values = mine.drop_duplicates("metric").set_index("metric")["value"]
        implementation = mine["implementation"].iloc[0] if "implementation" in mine.columns else ""
        rows.append({"case": case, "implementation": implementation,
                     **{label: values.get(metric) for metric, label in HEADLINES}})
    return pd.DataFrame(rows)


def placement_table(figures: pd.DataFrame) -> pd.DataFrame:
    """Per case and class that required a topology level: Jobs judged, Jobs in one domain."""
    mine = figures[figures["metric"].isin(("topology_jobs_judged", "topology_jobs_in_one_domain"))]
    if mine.empty:
        return pd.DataFrame()
    table = mine.pivot_table(index=["case", "job_class"], columns="metric", values="value", aggfunc="first")
    table = table.reindex(columns=["topology_jobs_judged", "topology_jobs_in_one_domain"]).reset_index()
    table.columns.name = None
    return table.rename(columns={"topology_jobs_judged": "Jobs with every pod bound",
                                 "topology_jobs_in_one_domain": "in one domain"})


def figure(rates: pd.DataFrame, jobs: pd.DataFrame, case: str) -> bytes:
    fig = Figure(figsize=(13, 4))
    left, middle, right = fig.subplots(1, 3)
    mine = rates[rates["case"] == case]
    for series, label in POD_SERIES:
        counts = mine[mine["series"] == series].sort_values("second")
        left.step(counts["second"], counts["count"].cumsum(), where="post", label=f"pods {label}")
        rolling = counts.set_index("second")["count"].reindex(
            range(int(mine["second"].min()), int(mine["second"].max()) + 1), fill_value=0).rolling(5).mean() \
            if not counts.empty else pd.Series(dtype=float)
        middle.plot(rolling.index, rolling.values, label=f"pods {label}")
    left.set_xlabel("seconds after the start of generation")
    left.set_ylabel("pods (cumulative)")
    left.legend(fontsize=8)
    middle.set_xlabel("seconds after the start of generation")
    middle.set_ylabel("pods per second (5 s mean)")
    middle.legend(fontsize=8)
    jobs = jobs[jobs["case"] == case]
    waits = [(jobs[column] - jobs["created_s"]).dropna() for column in ("admitted_s", "first_running_s", "completed_s")]
    right.boxplot(waits, tick_labels=["to admission", "to first pod\nRunning", "to complete"], showfliers=False)
    right.set_ylabel("seconds after the Job's creation")
    fig.suptitle(case)
    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=90)
    return buffer.getvalue()


def section(tables: contract.Tables) -> contract.ReportSection | None:
    figures = tables.get(tabulating.FIGURES_TABLE)
    if figures is None or figures.empty or "case" not in figures.columns:
        return None
    parts = [f"<h2>jobs: batch Jobs through the queue onto KWOK nodes</h2><p>{html.escape(NOTE)}</p>",
             _html(headline_table(figures))]
    ratios = [{"case": case, "figure": metric, "ours_over_kueue": value}
              for case in figures["case"].unique() for metric, value in summarising.ratios_to_kueue(figures, case).items()]
    if ratios:
        parts.append("<h3>ours / Kueue, same run, same machine</h3>" + _html(pd.DataFrame(ratios)))
    kept = placement_table(figures)
    if not kept.empty:
        parts.append("<h3>Jobs that required one topology domain: how many ran in one (from their pods' nodes)</h3>"
                     + _html(kept))
    by_class = figures[(figures["job_class"].fillna("") != "") & figures["metric"].str.endswith("_p50_seconds")]
    if by_class["job_class"].nunique() > 1:
        pivot = by_class.pivot_table(index=["case", "job_class"], columns="metric", values="value").reset_index()
        parts.append("<h3>p50 latencies per class (s)</h3>" + _html(pivot))
    summary = tables.get("summary")
    if summary is not None and not summary.empty:
        for (case, phase), _ in figures.groupby(["case", "phase"], sort=False):
            load = resources.by_resource(summary, case, phase).head(12)
            cpu = resources.by_process(summary, case, phase)
            parts.append(f"<h3>{html.escape(str(case))}, phase {html.escape(str(phase))}: API load per resource</h3>"
                         + _html(load) + "<h3>CPU per process (mean cores busy in the phase)</h3>" + _html(cpu))
            queues = resources.controller_manager_queues(summary, case, phase).head(8)
            if not queues.empty:
                parts.append("<h3>kube-controller-manager's work queues (job: the job controller)</h3>"
                             + _html(queues))
            placing = resources.kube_scheduler(summary, case, phase)
            if placing:
                parts.append("<h3>kube-scheduler: attempts, pods waiting to be placed</h3>"
                             + _html(pd.DataFrame([placing])))
            controllers = resources.kueue_controllers(summary, case, phase)
            if not controllers.empty:
                parts.append("<h3>Kueue's reconcilers: workers, backlog, time in the work queue</h3>"
                             + _html(controllers))
    rates, jobs = tables.get(tabulating.RATES_TABLE), tables.get(tabulating.JOBS_TABLE)
    drawn = ()
    if rates is not None and jobs is not None and not rates.empty:
        drawn = tuple((f"jobs: pods over time and Job latencies ({case})", figure(rates, jobs, case))
                      for case in rates["case"].unique())
    return contract.ReportSection("".join(parts), drawn)
