"""WorkloadChurn: creates Workloads, finishes admitted ones after their runtime, deletes finished ones."""

from __future__ import annotations

import datetime as dt
import itertools
import random
import time

from locust import task

from loadtests import churning, client, workloads
from scheduler.api import contenttypes


class WorkloadChurn(client.KubeUser):
    """Holds its share of pending depth: creations pause at the target and resume as admissions drain it."""

    abstract = False
    _slots = itertools.count()
    """Numbers this process's churn users 0, 1, ...: the next phase's users take over the same owners."""

    def on_start(self) -> None:
        churn = self.settings.churn
        self.ensure_namespace(churn.namespace)
        worker = getattr(self.environment.runner, "worker_index", 0)  # distributed: one set of slots per worker
        self.owner = f"churn-{worker}-{next(self._slots)}"
        self.ledger = churning.ChurnLedger(churn, owner=self.owner,
                                           rng=random.Random(f"{self.settings.seed}-{self.user_id}"),
                                           prefix=f"{self.owner}-{self.user_id.rsplit('-', 1)[-1]}")
        self.seen: dict[str, dict] = {}
        """Last listed object per name: a Finished merge patch must carry the other conditions."""
        self._pause = 0.0
        self._failed_in_a_row = 0

    def wait_time(self) -> float:
        return self._pause

    @task
    def step(self) -> None:
        churn = self.settings.churn
        action = self.ledger.next_action(time.monotonic())
        self._pause = 0.0
        if isinstance(action, churning.Wait):
            self._pause = min(action.seconds, churn.refresh_seconds)
        elif isinstance(action, churning.Create):
            obj = workloads.build(action.name, churn.namespace, action.queue, action.kind, self.owner,
                                  churn.priority_class)
            reply = self.call("POST", workloads.collection_path(churn.namespace), "churn", body=obj)
            if reply.ok:
                self.ledger.created(action, time.monotonic())
            else:
                self.ledger.create_failed(action)
        elif isinstance(action, churning.Refresh):
            self._refresh()
            reply = None
        elif isinstance(action, churning.Finish):
            patch = workloads.finished_patch(self.seen.get(action.name, {}), dt.datetime.now(dt.timezone.utc))
            reply = self.call("PATCH", workloads.object_path(churn.namespace, action.name) + "/status", "churn-finish",
                              body=patch, content_type=contenttypes.MERGE_PATCH, accept=(404,))
            if reply.status == 404:
                self.ledger.deleted(action.name)
            else:
                self.ledger.finished(action.name, reply.ok)
        elif isinstance(action, churning.Delete):
            reply = self.call("DELETE", workloads.object_path(churn.namespace, action.name), "churn", accept=(404,))
            if reply.ok or reply.status == 404:
                self.ledger.deleted(action.name)
                self.seen.pop(action.name, None)
        else:
            return
        if reply is not None and churning.should_back_off(reply.status):
            self._failed_in_a_row += 1
            self._pause = max(self._pause, churning.back_off_seconds(self._failed_in_a_row))
        else:
            self._failed_in_a_row = 0

    def _refresh(self) -> None:
        churn = self.settings.churn
        path = f"{workloads.collection_path(churn.namespace)}?labelSelector={workloads.CHURN_LABEL}%3D{self.owner}"
        reply = self.call("LIST", path, "churn-refresh")
        if not reply.ok:
            return
        items = reply.json().get("items") or []
        self.seen = {item["metadata"]["name"]: item for item in items}
        wall = dt.datetime.now(dt.timezone.utc)
        runtimes, ago = {}, {}
        for name, item in self.seen.items():
            if name not in self.ledger.tracked:  # only what it takes over needs them
                if (seconds := workloads.runtime_seconds(item)) is not None:
                    runtimes[name] = seconds
                if (seconds := workloads.admitted_seconds_ago(item, wall)) is not None:
                    ago[name] = seconds
        self.ledger.observed({name: workloads.phase(item) for name, item in self.seen.items()}, time.monotonic(),
                             runtimes, ago)
