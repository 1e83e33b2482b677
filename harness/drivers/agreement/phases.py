"""The differential tester's phase: a batch of its cases played on the case's cluster and scheduler."""

from __future__ import annotations

from typing import Literal

from pydantic import field_validator

from harness.agreeing import cases
from harness.drivers.agreement import settings
from harness.scenarios import base, sections


class AgreementPhase(base.Model):
    """Play `cases` side by side, epoch after epoch, behind their gates (the protocol of
    `harness/drivers/agreement/playing.py`), and record every epoch's settled decisions.

    The cases share one scheduler setting (fair sharing, waitForPodsReady), and the scenario's
    `scheduler:` section runs it: `kqbench agree` builds such scenarios, one per batch and implementation.
    """

    kind: Literal["agreement"] = "agreement"
    cases: dict[str, cases.Case]
    """Prefix (`c007`) -> case: the prefix names every object of the case on the shared cluster."""

    @field_validator("cases")
    @classmethod
    def _cases_hold_together(cls, value: dict[str, cases.Case]) -> dict[str, cases.Case]:
        """What a case file's reader checks beyond the fields (names that refer to each other)."""
        return {prefix: cases.check(case) for prefix, case in value.items()}

    def check_scenario(self, scenario: sections.ScenarioFields) -> str | None:
        found = {settings.setting_of(case) for case in self.cases.values()}
        if len(found) > 1:
            return ("its cases differ in the scheduler's settings (fair sharing, waitForPodsReady): "
                    "give each setting a scenario of its own")
        if not found:
            return "it has no cases: give it at least one"
        fair_sharing, pods_ready = found.pop()
        section = scenario.scheduler
        if bool(getattr(section, "fair_sharing", False)) != (fair_sharing is not None):
            return f"its cases run with fair sharing {'on' if fair_sharing else 'off'}: set scheduler.fair_sharing so"
        if bool(getattr(section, "wait_for_pods_ready", False)) != (pods_ready is not None):
            return (f"its cases run with waitForPodsReady {'on' if pods_ready else 'off'}: "
                    "set scheduler.wait_for_pods_ready so")
        return None


PHASES = (AgreementPhase,)
