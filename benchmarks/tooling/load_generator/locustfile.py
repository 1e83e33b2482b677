"""One user class for the load-generator benchmark: GET one small ConfigMap, as fast as allowed.

The per-user rate comes from KQBENCH_BENCH_RATE (requests/s per user; 0 = no wait), which the
benchmark sets for its single engine process (no workers, so the environment is enough).
"""

import os

from locust import constant, constant_throughput, task

from loadtests import client

PATH = "/api/v1/namespaces/default/configmaps/kqbench-bench"
RATE = float(os.environ.get("KQBENCH_BENCH_RATE", "0"))


class CheapGet(client.KubeUser):
    abstract = False
    wait_time = constant_throughput(RATE) if RATE > 0 else constant(0)

    @task
    def get(self) -> None:
        self.call("GET", PATH, "bench")
