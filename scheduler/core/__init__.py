"""Pure queueing core of the reference scheduler: Kueue semantics, no I/O.

Entry points (import the modules, not names):

- ``queues.QueueManager``: the facade. Feed it objects (add/update/delete per kind) and
  transitions (``mark_evicted``, ``mark_finished``, ``cancel_admission``); ask it for
  visibility summaries (``summary_for_cluster_queue``, ``summary_for_local_queue``),
  ``position_of``, ``pending_in_order`` and per-ClusterQueue ``generation``. Two parts of it have
  modules of their own: ``pendinglists`` (where pending workloads wait, the positions index kept in
  step, and those visibility answers) and ``namespaces`` (labels and namespaceSelector matches).
- ``scheduling.run_cycle`` / ``decide_cycle``: one scheduling cycle -> ``decisions``.
- ``conversion``: Kueue-shaped dicts -> core objects (``WorkloadDecoder`` for bulk) and
  ``admission_to_dict`` back.
- ``positions``: the ``snapshot`` and ``indexed`` strategies, their registry, page
  validation (``InvalidPageError`` -> 400) and ``QueueNotFoundError`` (-> 404).
- ``queuestatus``: ClusterQueue/LocalQueue counts and Kueue's ``Active`` condition.
- ``activation`` (``spec.active``: stop/resume of a Workload) and ``draining`` (HoldAndDrain
  stops of queues): the status changes they call for.
"""
