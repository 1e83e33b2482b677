"""What a case says about a Workload's life after admission, and Kueue's rules for it (pure).

Three features, each a case family of the differential tester (docs/lifecycle.md has what each does in
Kueue and where):

- an execution limit per Workload (`maximumExecutionTimeSeconds`): deactivated once admitted that long;
- waitForPodsReady, a setting of the scheduler (like fair sharing, cases that differ in it run on clusters
  of their own): a Workload the case marks `podsReady` gets `PodsReady=True` from the tester once admitted
  (a bare Workload has no pods to say so), the others time out, are requeued after a backoff and deactivated
  past `backoffLimitCount`;
- AdmissionChecks of kqbench's check controller on ClusterQueues, with a rule per Workload
  (harness.workloads.checkrules: ready, ready-after, retry, reject).

The models are part of a case file (``cases``); ``problems`` names what Kueue's webhooks or config
validation would refuse, field by field.
"""

from __future__ import annotations

import pydantic

from harness.workloads import checkrules

Strict = pydantic.ConfigDict(extra="forbid", frozen=True)


class WaitForPodsReady(pydantic.BaseModel):
    """The scheduler's waitForPodsReady (Kueue's Configuration; the reference scheduler's setting), in
    seconds. blockAdmission stays off: which Workload it lets through first is a matter of timing."""

    model_config = Strict
    timeoutSeconds: int = pydantic.Field(ge=1)
    """From Admitted to PodsReady=True."""
    backoffBaseSeconds: int = pydantic.Field(default=1, ge=0)
    backoffMaxSeconds: int = pydantic.Field(default=4, ge=0)
    """0: no cap; below the base, the first backoff is the base all the same (Kueue accepts both)."""
    backoffLimitCount: int | None = pydantic.Field(default=None, ge=0)
    """Timeouts requeued before the next one deactivates (None: never deactivated)."""

    def key(self) -> tuple[int, int, int, int | None]:
        return self.timeoutSeconds, self.backoffBaseSeconds, self.backoffMaxSeconds, self.backoffLimitCount


class AdmissionCheck(pydantic.BaseModel):
    """An AdmissionCheck served by kqbench's check controller (controllerName kqbench.io/admission-check)."""

    model_config = Strict
    name: str


def workload_problems(where: str, maximum_execution_seconds: int | None, pods_ready: bool, check_rule: str | None,
                      wait_for_pods_ready: WaitForPodsReady | None):
    """A Workload's lifecycle fields; ``where`` is its path in the case file."""
    if maximum_execution_seconds is not None and maximum_execution_seconds < 1:
        yield (f"{where}.maximumExecutionTimeSeconds: {maximum_execution_seconds} is below 1 "
               "(Kueue's CRD: at least 1 second, or leave it out)")
    if pods_ready and wait_for_pods_ready is None:
        yield f"{where}.podsReady: needs the case's waitForPodsReady (nothing times out without it)"
    if check_rule is not None:
        try:
            checkrules.parse(check_rule)
        except checkrules.BadRule as error:
            yield f"{where}.checkRule: {error}"


def queue_problems(where: str, names: tuple[str, ...], known: set[str]):
    """A ClusterQueue's admissionChecks: each one of the case's AdmissionChecks, once."""
    for i, name in enumerate(names):
        if name not in known:
            yield f"{where}.admissionChecks[{i}]: {name!r} is not in admissionChecks"
        if name in names[:i]:
            yield f"{where}.admissionChecks[{i}]: {name!r} appears twice"

