"""Real Kueue (built from its Go module) as the scheduler under test, started as a local process."""

from harness.implementations import contract, names
from harness.implementations.kueue import fields, starting
from harness.toolchain import components
from scheduler.publishing import strategies

IMPLEMENTATION = contract.Implementation(
    name=names.KUEUE, start=starting.start_scheduler, running=starting.running_on, scheduler_fields=fields.KueueFields,
    needs=lambda section: (components.kueue(section.kueue_version),),
    # Kueue publishes positions only through its visibility API, which copies and sorts per request
    strategies=(strategies.AGGREGATED_SNAPSHOT, strategies.AGGREGATED_INDEXED))
