"""What the control plane did, measured from the real processes: never estimated.

Entry points:
- `collector.Collector(cluster).start()`, `.mark_phase(name)`, `.stop()` -> `frames.Frames`
  (apiserver and etcd /metrics scraped in a background thread, process RSS/CPU, per-phase
  deltas, rates, quantiles and the SLO verdicts, as tidy pandas DataFrames).
- `census.summarise(etcdreading.read_sizes(url))` -> `census.Census` (object sizes in etcd).

Pure modules (no I/O): catalog, samples, prommath, summarising, slo, census, frames.
Edges: scraping (HTTP), etcdreading (etcd JSON gateway), sampling (psutil), collector (thread).
"""
