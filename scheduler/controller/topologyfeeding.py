"""Feeding topology-aware scheduling: Topology objects and Nodes into the core's ``TopologyState``.

Kueue v0.17.0 watches every Node (and every scheduled Pod) whenever TAS is on, its default. Here the
Node informer starts only once some ResourceFlavor names a topology: a cluster without TAS flavors
keeps no copy of its nodes (at 100k nodes that copy is the scheduler's largest). Pods that Kueue did
not place are not watched (see ``domaintrees``).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable

from scheduler.api import groups
from scheduler.controller import informing, statuses
from scheduler.core import topologyconversion
from scheduler.core.queues import QueueManager
from scheduler.kube import client as kube

log = logging.getLogger(__name__)

NODES_PATH = "/api/v1/nodes"
EVENTS_PATH = "/api/v1/namespaces/default/events"
NO_NODE_REASON = "TopologyLevelsOnNoNode"
"""The Warning Event's reason on a TAS flavor whose Topology's levels no Ready node has."""
WAIT_FOR_FLAVOR_SECONDS = 1.0
"""How often, while no TAS flavor exists, the feed looks whether one appeared (it then lists nodes)."""


class TopologyFeed:
    def __init__(self, manager: QueueManager, client: kube.KubeClient, topologies_path: str,
                 touch: Callable[[], None]) -> None:
        self.manager, self.client, self.topologies_path, self.touch = manager, client, topologies_path, touch
        self._nodes: set[str] = set()
        self._topologies: set[str] = set()
        self._reported: set[str] = set()
        self._posting: set[asyncio.Task] = set()
        # Until the first node list, queues with TAS flavors wait instead of finding no nodes.
        manager.cache.topologies.nodes_known = False

    # -- handlers ------------------------------------------------------------------------------

    def _list_topologies(self, items: list[dict]) -> None:
        state = self.manager.cache.topologies
        listed = {topologyconversion.topology_from_dict(item) for item in items}
        for gone in self._topologies - {t.name for t in listed}:
            state.delete_topology(gone)
        self._topologies = {t.name for t in listed}
        for topology in listed:
            state.set_topology(topology)
        self._changed()
        self._report_flavors_without_nodes()

    def _topology_event(self, kind: str, obj: dict) -> None:
        topology = topologyconversion.topology_from_dict(obj)
        if kind == "DELETED":
            self._topologies.discard(topology.name)
            self.manager.cache.topologies.delete_topology(topology.name)
        else:
            self._topologies.add(topology.name)
            self.manager.cache.topologies.set_topology(topology)
        self._changed()
        self._report_flavors_without_nodes()

    def _list_nodes(self, items: list[dict]) -> None:
        state = self.manager.cache.topologies
        listed = set()
        for item in items:
            name = item["metadata"]["name"]
            listed.add(name)
            state.set_node(name, topologyconversion.node_from_dict(item))
        for gone in self._nodes - listed:
            state.set_node(gone, None)
        self._nodes = listed
        state.nodes_known = True
        self._changed()
        self._report_flavors_without_nodes()

    def _node_event(self, kind: str, obj: dict) -> None:
        name = obj["metadata"]["name"]
        if kind == "DELETED":
            self._nodes.discard(name)
            self.manager.cache.topologies.set_node(name, None)
        else:
            self._nodes.add(name)
            self.manager.cache.topologies.set_node(name, topologyconversion.node_from_dict(obj))
        self._changed()

    def _changed(self) -> None:
        self.manager.topology_changed()
        self.touch()

    def _report_flavors_without_nodes(self) -> None:
        """Log each TAS flavor whose Topology's levels no node has, once until that changes (Kueue says
        nothing: its pod sets get "no topology domains at level")."""
        state = self.manager.cache.topologies
        empty = set(state.flavors_without_nodes())
        for name in sorted(empty - self._reported):
            rf = state.flavors[name]
            levels = state.topologies[rf.topology_name].levels
            message = (f"no Ready node has every level of Topology {rf.topology_name} ({', '.join(levels)})"
                       + (f" and its nodeLabels {rf.node_labels}" if rf.node_labels else ""))
            log.warning("ResourceFlavor %s: %s", name, message)
            self._warn_on_flavor(name, message)
        self._reported = empty

    def _warn_on_flavor(self, name: str, message: str) -> None:
        """The same as a Warning Event on the ResourceFlavor, where `kubectl describe` shows it (in the
        background: an informer's handler does not wait for the API)."""
        if self.client is None:
            return
        task = asyncio.get_running_loop().create_task(self._post_warning(name, message))
        self._posting.add(task)
        task.add_done_callback(self._posting.discard)

    async def _post_warning(self, name: str, message: str) -> None:
        try:
            flavor = await self.client.request("GET", f"{groups.PATH}/resourceflavors/{name}")
            uid = (flavor.get("metadata") or {}).get("uid", "")
            await self.client.request("POST", EVENTS_PATH, statuses.warning_event(
                groups.API_VERSION, "ResourceFlavor", name, uid, NO_NODE_REASON, message, time.time()))
        except kube.FAILURES as error:
            log.warning("ResourceFlavor %s: the Warning Event was not written: %s", name, error)

    # -- running -------------------------------------------------------------------------------

    async def start(self, stop: asyncio.Event) -> tuple[list[informing.Informer], list[asyncio.Task]]:
        """List Topologies, and Nodes if a TAS flavor exists already (else once one does); returns the
        informers and their tasks once those started now have listed."""
        topologies = informing.Informer(self.client, self.topologies_path, self._list_topologies,
                                        self._topology_event)
        nodes = informing.Informer(self.client, NODES_PATH, self._list_nodes, self._node_event)
        tasks = [asyncio.create_task(topologies.run(stop))]
        await topologies.synced.wait()
        if self.manager.cache.topologies.flavors:
            tasks.append(asyncio.create_task(nodes.run(stop)))
            await nodes.synced.wait()
        else:
            tasks.append(asyncio.create_task(self._nodes_once_needed(nodes, stop)))
        return [topologies, nodes], tasks

    async def _nodes_once_needed(self, nodes: informing.Informer, stop: asyncio.Event) -> None:
        while not self.manager.cache.topologies.flavors:
            try:
                await asyncio.wait_for(stop.wait(), timeout=WAIT_FOR_FLAVOR_SECONDS)
                return
            except asyncio.TimeoutError:
                continue
        log.info("a ResourceFlavor names a topology: watching nodes")
        await nodes.run(stop)
