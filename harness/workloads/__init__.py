"""Pending Workloads written straight into etcd: their stored shape (`storing`, pure) and the load with its
waits (`bulkloading`)."""
