"""Reading run folders into plots, a regression gate and machine-readable exports.

- `comparing`: `kqbench compare` (pure: summaries + thresholds -> rows and a verdict).
- `plotting`: matplotlib figures as PNG bytes; an absent metric gives a "not measured" panel.
- `exporting`: perfdash PerfData JSON and JUnit XML of the SLO checks (pure).
- `rendering`: one self-contained report.html (images base64-embedded) plus the exports.
"""
