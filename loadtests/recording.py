"""Every request's latency into an HDR histogram per request name, beside Locust's own statistics.

Three roles, each through Locust's documented event hooks (nothing here imports Locust):
- local runner: every `request` event is recorded;
- worker: the same, and each periodic report to the master carries what was recorded since the
  last one (encoded), then starts afresh, as Locust's own statistics do;
- master: the workers' reports are added up (HDR histograms merge exactly).
The engine writes the result as `frames.hdr` rows: one per request name, the histogram encoded.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd
from hdrh.histogram import HdrHistogram

from loadtests import histograms

REPORT_KEY = "kqbench_hdr"
"""Key of a worker's report that holds [verb, name, encoded histogram] triples."""
COLUMNS = ["verb", "name", "unit", "requests", "min_us", "max_us", "hdr"]


@dataclass(slots=True)
class Recorder:
    """HDR histograms by (verb, name): this process's requests, or (on a master) its workers'."""

    recorded: dict[tuple[str, str], HdrHistogram] = field(default_factory=dict)

    def install(self, events, role: str) -> None:
        """Listen to a Locust environment's `events`; `role` is local | worker | master."""
        if role in ("local", "worker"):
            events.request.add_listener(self.on_request)
        if role == "worker":
            events.report_to_master.add_listener(self.on_report_to_master)
        if role == "master":
            events.worker_report.add_listener(self.on_worker_report)

    def _histogram(self, verb: str, name: str) -> HdrHistogram:
        key = (verb or "", name)
        if key not in self.recorded:
            self.recorded[key] = histograms.new()
        return self.recorded[key]

    def on_request(self, request_type: str, name: str, response_time: float | None, **_kwargs) -> None:
        # Locust counts a request without a response time (None) but keeps no time for it; so do we.
        if response_time is not None:
            histograms.record(self._histogram(request_type, name), float(response_time))

    def on_report_to_master(self, client_id: str, data: dict) -> None:
        data[REPORT_KEY] = [[verb, name, histograms.encode(h)] for (verb, name), h in sorted(self.recorded.items())
                            if h.get_total_count()]
        self.recorded.clear()  # reports are deltas: the master adds them up

    def on_worker_report(self, client_id: str, data: dict) -> None:
        for verb, name, text in data.get(REPORT_KEY) or ():
            self._histogram(verb, name).decode_and_add(text.encode("ascii"))

    def frame(self) -> pd.DataFrame:
        """One row per request name: count, min and max (us) and the encoded histogram."""
        rows = [[verb, name, histograms.UNIT, int(h.get_total_count()), int(h.get_min_value()),
                 int(h.get_max_value()), histograms.encode(h)]
                for (verb, name), h in sorted(self.recorded.items()) if h.get_total_count()]
        return pd.DataFrame(rows, columns=COLUMNS).astype({"requests": "int64", "min_us": "int64", "max_us": "int64"})
