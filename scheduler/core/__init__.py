"""Pure queueing core of the reference scheduler: Kueue semantics, no I/O.

Entry points (import the modules, not names):

- ``queues.QueueManager``: the facade. Feed it objects (add/update/delete per kind) and
  transitions (``mark_evicted``, ``mark_finished``, ``cancel_admission``); ask it for
  visibility summaries (``summary_for_cluster_queue``, ``summary_for_local_queue``),
  ``position_of``, ``pending_in_order`` and per-ClusterQueue ``generation``.
- ``scheduling.run_cycle`` / ``decide_cycle``: one scheduling cycle -> ``decisions``.
- ``conversion``: Kueue-shaped dicts -> core objects (``WorkloadDecoder`` for bulk) and
  ``admission_to_dict`` back.
- ``positions``: the ``snapshot`` and ``indexed`` strategies, their registry, page
  validation (``InvalidPageError`` -> 400) and ``QueueNotFoundError`` (-> 404).
- ``queuestatus``: ClusterQueue/LocalQueue counts and Kueue's ``Active`` condition.
- ``activation`` (``spec.active``: stop/resume of a Workload) and ``draining`` (HoldAndDrain
  stops of queues): the status changes they call for.
"""
