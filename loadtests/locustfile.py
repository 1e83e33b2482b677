"""The built-in locustfile: every kqbench user. `kqbench load` uses it unless given another.

A locustfile of your own can import these classes (or subclass `loadtests.client.KubeUser`) and
run the same way; workers on other machines run `locust -f <this file> --worker --master-host H`.
"""

from loadtests.users.bystanders import Bystander
from loadtests.users.churn import WorkloadChurn
from loadtests.users.listwatch import Lister, Watcher
from loadtests.users.querying import PositionQuerier

__all__ = ["Bystander", "Lister", "PositionQuerier", "Watcher", "WorkloadChurn"]
