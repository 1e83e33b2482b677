"""One run = one folder `results/runs/<run-id>/`; everything in it carries a schema version.

- `runs`: run ids, the folder, `run.json` (scenario as resolved, versions, machine, git sha, times).
- `tables`: tidy tables as parquet + CSV (`observations`: case, source, metric, labels, phase, t, value).
- `summaries`: `summary.json`, the few numbers a gate reads (estimates with 95% intervals, within-run ratios);
  `headlines`: the numbers the measurements add to every case's (the drivers add theirs).
- `history`: the nightly history, one small file per night with its git sha (`results/history/<scenario>/`).

Readers refuse files written by a newer kqbench.
"""
