"""What kqbench's admission check controller does with one check of one Workload (pure).

A Workload names its rule in the annotation ``kqbench.io/check-rule`` (or, for a Job's Workload, its pod
template carries it: harness.workloads.checkcontrolling.rule_text); every check of ours it carries follows it. The rule acts only while the Workload holds quota (``QuotaReserved=True``) and the check is Pending, as a
check controller acts on a reservation (Kueue's ProvisioningRequest controller does):

- ``ready`` (also no annotation): Ready at once;
- ``ready-after=<seconds>s``: Ready that long after the reservation (the QuotaReserved condition's
  lastTransitionTime: a time taken from the object, not from when an event came);
- ``retry=<n>`` or ``retry=<n>,backoff=<seconds>s``: Retry, with ``requeueAfterSeconds`` the backoff (3 s
  unless given), while the check's ``retryCount`` (Kueue counts each Retry's eviction there) is below n;
  then Ready. Kueue holds the Workload, quota reserved, until lastTransitionTime + requeueAfterSeconds
  (whole seconds: 3 keeps that ahead of the controller's next look whatever the second's rounding), then
  evicts it;
- ``reject``: Rejected (Kueue deactivates the Workload).

A rule that does not parse leaves the check Pending with the error as its message: the check never passes,
and says why.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from harness.errors import KqbenchError

CONTROLLER_NAME = "kqbench.io/admission-check"
"""spec.controllerName of the AdmissionChecks this controller serves."""
RULE_ANNOTATION = "kqbench.io/check-rule"
DEFAULT_BACKOFF_SECONDS = 3
READY, RETRY, REJECTED = "Ready", "Retry", "Rejected"
SYNTAX = "ready, ready-after=<seconds>s, retry=<n>[,backoff=<seconds>s] or reject"

_READY_AFTER = re.compile(r"ready-after=(\d+(?:\.\d+)?)s")
_RETRY = re.compile(r"retry=(\d+)(?:,backoff=(\d+)s)?")


class BadRule(KqbenchError):
    """A check rule annotation that does not parse."""


@dataclass(frozen=True, slots=True)
class Rule:
    ready_after_seconds: float = 0.0
    retries: int = 0
    backoff_seconds: int = DEFAULT_BACKOFF_SECONDS
    reject: bool = False


def parse(text: str | None) -> Rule:
    """The rule an annotation names (None: no annotation, Ready at once); BadRule with one line if it is not one."""
    if text is None:
        return Rule()
    rule = text.strip()
    if rule == "ready":
        return Rule()
    if rule == "reject":
        return Rule(reject=True)
    if match := _READY_AFTER.fullmatch(rule):
        return Rule(ready_after_seconds=float(match[1]))
    if match := _RETRY.fullmatch(rule):
        return Rule(retries=int(match[1]),
                    backoff_seconds=int(match[2]) if match[2] is not None else DEFAULT_BACKOFF_SECONDS)
    raise BadRule(f"bad {RULE_ANNOTATION} {text!r}: expected {SYNTAX}")


@dataclass(frozen=True, slots=True)
class Verdict:
    """The state to write now (None: nothing yet), with its message and requeueAfterSeconds; or when to look again."""

    state: str | None = None
    message: str = ""
    requeue_after_seconds: int | None = None
    look_again_at: float | None = None


NOTHING = Verdict()


def decide(rule: Rule, retry_count: int, reserved_since: float, now: float) -> Verdict:
    """What a Pending check of a Workload holding quota since ``reserved_since`` becomes at ``now`` (POSIX s)."""
    if rule.reject:
        return Verdict(REJECTED, "kqbench: rejected by rule")
    if retry_count < rule.retries:
        return Verdict(RETRY, f"kqbench: retry {retry_count + 1} of {rule.retries}", rule.backoff_seconds)
    due = reserved_since + rule.ready_after_seconds
    if now < due:
        return Verdict(look_again_at=due)
    return Verdict(READY, "kqbench: ready by rule")
