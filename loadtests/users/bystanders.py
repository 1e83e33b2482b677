"""Bystander: unrelated GET/PATCH/LIST on ConfigMaps in its own namespace; its latency is what a design costs everyone else."""

from __future__ import annotations

import random

from locust import task

from loadtests import client
from loadtests.users import pacing
from scheduler.api import contenttypes


class Bystander(client.KubeUser):
    abstract = False

    def on_start(self) -> None:
        bystander = self.settings.bystander
        self.rng = random.Random(f"{self.settings.seed}-{self.user_id}")
        self.base = f"/api/v1/namespaces/{bystander.namespace}/configmaps"
        self.ensure_namespace(bystander.namespace)
        self.names = [f"{self.user_id}-{i}" for i in range(max(1, bystander.configmaps))]
        for name in self.names:
            self.call("POST", self.base, "bystander-setup", accept=(409,),
                      body={"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": {"v": "0"}})
        self.serial = 0

    def wait_time(self) -> float:
        return pacing.paced(self, self.settings.bystander.per_second)

    @task(6)
    def get(self) -> None:
        self.call("GET", f"{self.base}/{self.rng.choice(self.names)}", "bystander")

    @task(3)
    def patch(self) -> None:
        self.serial += 1
        value = str(self.serial).rjust(self.settings.bystander.value_bytes, "x")
        self.call("PATCH", f"{self.base}/{self.rng.choice(self.names)}", "bystander",
                  body={"data": {"v": value}}, content_type=contenttypes.MERGE_PATCH)

    @task(1)
    def list(self) -> None:
        self.call("LIST", self.base, "bystander")
