"""Reading run folders into plots, a regression gate and machine-readable exports.

- `comparing`: `kqbench compare` (pure: summaries + thresholds -> rows with verdicts and intervals).
- `trends`: nightly series and their change points with commit ranges (pure).
- `historyplot`: the nightly series as one PNG, change points marked.
- `plotting`: matplotlib figures as PNG bytes; an absent metric gives a "not measured" panel.
- `exporting`: perfdash PerfData JSON and JUnit XML of the SLO checks (pure).
- `rendering`: one self-contained report.html (images base64-embedded) plus the exports.

The report lists no driver: the CLI and the runner hand it the registry's drivers (`rendering.render`,
`rendering.load`), whose questions, figures, sections and exports it shows; drivers use `plotting` and
`palettes` as a library.
"""
