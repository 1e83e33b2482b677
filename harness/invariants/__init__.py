"""What must hold in the queueing objects whatever happened, read from the API (never from the scheduler).

- `checking`: pure checks over lists of ClusterQueues, Cohorts, LocalQueues and Workloads (dicts as
  the API returns them), and the admission history kept between checks;
- `reading`: lists the objects (one consistent LIST each) and runs the checks after a phase,
  re-reading the queue statuses that the scheduler only refreshes every few seconds.
"""
