"""Objects written straight into a cluster's etcd, for set-up a run does not measure (100k nodes, a
million pending Workloads), shared by harness.nodes and harness.workloads.

- `etcdwriting`: many transactions in flight over etcd's v3 API, one object per revision;
- `bulkserving`: waiting until kube-apiserver serves what was written (its watch cache at etcd's revision).
"""
