"""The built-in locustfile: every kqbench user. `kqbench load` uses it unless given another.

A locustfile of your own can import these classes (or subclass `loadtests.client.KubeUser`) and
run the same way; workers on other machines run `kqbench load --worker --master-host H` (with
`--locustfile` when the master runs another file).
"""

from loadtests.users.bystanders import Bystander
from loadtests.users.churn import WorkloadChurn
from loadtests.users.listwatch import Lister, Watcher
from loadtests.users.querying import PositionQuerier

__all__ = ["Bystander", "Lister", "PositionQuerier", "Watcher", "WorkloadChurn"]
