"""The implementations' names, spelled once (pure constants).

Below every layer of the harness (the CRD label in `apiservice`, the scenario's default, the report's
comparisons, the benchmarks), so that each reads the name from here and not from the member that
carries it, which sits far above them.
"""

REFERENCE = "reference"
"""This project's scheduler (harness.implementations.reference, the `scheduler` package)."""
KUEUE = "kueue"
"""The real Kueue manager (harness.implementations.kueue)."""
