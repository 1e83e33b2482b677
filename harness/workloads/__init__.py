"""Pending Workloads written straight into etcd: their stored shape (`storing`, pure) and the load with its
waits (`bulkloading`).
And what stands in for a Job's reconciler on a Workload without one (`bareworkloads`: the
Finished condition, an evicted Workload's quota release)."""
