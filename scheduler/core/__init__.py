"""Pure queueing core of the reference scheduler: Kueue semantics, no I/O.

Entry points (import the modules, not names):

- ``queues.QueueManager``: the facade, the one door for changes. Feed it objects (add/update/delete
  per kind) and transitions (``mark_evicted``, ``mark_finished``, ``cancel_admission``); it tells
  each part: ``clusterqueuecache`` (flavors, topologies, ClusterQueues and Cohorts with their quota
  tree, admitted workloads and their usage: ``manager.cache``), ``pendinglists`` (where pending
  workloads wait, kept in step with the positions index: ``manager.pending_lists``),
  ``parkedretries`` (when parked workloads come back: ``manager.retries``) and ``namespaces``
  (labels and namespaceSelector matches).
- ``pendingreading.PendingReader``: the one interface for reading pending lists and positions
  (visibility summaries, ``position_of``, ``pending_in_order``, per-ClusterQueue ``generation``);
  the visibility server and the publishers are handed ``manager.pending_lists`` as one.
- ``scheduling.run_cycle`` / ``decide_cycle``: one scheduling cycle -> ``decisions``.
- ``conversion``: Kueue-shaped dicts -> core objects (``WorkloadDecoder`` for bulk) and
  ``admission_to_dict`` back.
- ``positions``: the ``snapshot`` and ``indexed`` strategies, their registry, page
  validation (``InvalidPageError`` -> 400) and ``QueueNotFoundError`` (-> 404).
- ``queuestatus``: ClusterQueue/LocalQueue counts and Kueue's ``Active`` condition.
- ``activation`` (``spec.active``: stop/resume of a Workload) and ``draining`` (HoldAndDrain
  stops of queues): the status changes they call for.
"""
