"""Position-exposure strategies: how users learn where their workload stands in the queue.

Each strategy is a publisher the controller notifies after every queue change; the aggregated
ones publish nothing (the visibility API computes positions on request).
"""
