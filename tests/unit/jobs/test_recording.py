"""Watch events folded into per-Job and per-pod first times."""

from __future__ import annotations

from harness.drivers.jobs import figures as figs, plans, recording


def job_obj(name="j", suspend=True, conditions=()):
    return {"metadata": {"namespace": "ns", "name": name}, "spec": {"suspend": suspend},
            "status": {"conditions": [{"type": t, "status": "True"} for t in conditions]}}


def workload_obj(job="j", admitted=False, finished=False):
    conditions = ([{"type": "Admitted", "status": "True"}] if admitted else []) + \
                 ([{"type": "Finished", "status": "True"}] if finished else [])
    return {"metadata": {"namespace": "ns", "name": f"job-{job}-abcde",
                         "ownerReferences": [{"kind": "Job", "name": job}]},
            "status": {"conditions": conditions, **({"admission": {"clusterQueue": "cq"}} if admitted else {})}}


def pod_obj(name="p0", job="j", node="", phase="Pending"):
    return {"metadata": {"namespace": "ns", "name": name, "labels": {plans.JOB_NAME_LABEL: job}},
            "spec": {"nodeName": node} if node else {}, "status": {"phase": phase}}


def recorder_with_job() -> recording.Recorder:
    recorder = recording.Recorder()
    record = recording.JobRecord("ns", "j", "small", "cq", pods=2, created=1.0)
    recorder.jobs[record.key] = record
    return recorder


def test_a_jobs_life_is_recorded_at_the_first_sight_of_each_step():
    r = recorder_with_job()
    r.on_workload(workload_obj(admitted=True), 2.0)
    r.on_workload(workload_obj(admitted=True), 2.5)
    r.on_job(job_obj(suspend=False), 3.0)
    r.on_pod(pod_obj(), 4.0)
    r.on_pod(pod_obj(node="n1"), 4.5)
    r.on_pod(pod_obj(node="n1", phase="Running"), 5.0)
    r.on_pod(pod_obj("p1", node="n2", phase="Running"), 5.5)  # first seen already running
    r.on_pod(pod_obj(node="n1", phase="Succeeded"), 9.0)
    assert not r.done()
    r.on_job(job_obj(suspend=False, conditions=("Complete",)), 10.0)
    r.on_workload(workload_obj(admitted=True, finished=True), 11.0)
    job = r.jobs[("ns", "j")]
    assert (job.admitted, job.unsuspended, job.first_running, job.completed, job.workload_finished) == (2.0, 3.0, 5.0, 10.0, 11.0)
    assert not job.failed and job.suspensions == 0
    p0, p1 = r.pods[("ns", "p0")], r.pods[("ns", "p1")]
    assert (p0.created, p0.bound, p0.running, p0.succeeded) == (4.0, 4.5, 5.0, 9.0)
    assert (p1.created, p1.bound, p1.running) == (5.5, 5.5, 5.5)
    assert r.done()


def test_objects_of_other_jobs_are_ignored_and_a_suspension_after_running_counts():
    r = recorder_with_job()
    assert r.on_pod(pod_obj(job="other"), 1.0) is None and not r.pods
    assert r.on_workload({"metadata": {"namespace": "ns", "name": "bare"}}, 1.0) is None
    r.on_job(job_obj(suspend=False), 2.0)
    r.on_job(job_obj(suspend=True), 3.0)
    r.on_job(job_obj(suspend=False), 4.0)
    r.on_job(job_obj(suspend=False, conditions=("Failed",)), 5.0)
    job = r.jobs[("ns", "j")]
    assert job.suspensions == 1 and job.unsuspended == 2.0 and job.failed and job.completed == 5.0


def at(obj: dict, revision: int) -> dict:
    """obj as stored at etcd revision `revision`."""
    return {**obj, "metadata": {**obj["metadata"], "resourceVersion": str(revision)}}


def test_a_step_delivered_late_by_its_watch_is_timed_by_the_first_newer_revision_seen():
    # the Workload watch lags: admission (rev 10) arrives at 6.0, after the pod watch showed the pod
    # Running (rev 14) at 5.0; by arrival the Job would run before it was admitted
    r = recorder_with_job()
    r.on_created(r.jobs[("ns", "j")], at(job_obj(), 5), 1.0)
    r.on_job(at(job_obj(suspend=False), 11), 4.0)
    r.on_pod(at(pod_obj(), 12), 4.2)
    r.on_pod(at(pod_obj(node="n1"), 13), 4.6)
    r.on_pod(at(pod_obj(node="n1", phase="Running"), 14), 5.0)
    r.on_workload(at(workload_obj(admitted=True), 10), 6.0)
    r.on_job(at(job_obj(suspend=False, conditions=("Complete",)), 20), 9.0)
    job = r.jobs[("ns", "j")]
    assert job.admitted == 6.0 and job.first_running == 5.0, "arrival times until settled"
    r.settle()
    assert (job.created, job.admitted, job.unsuspended, job.first_running, job.completed) == (1.0, 4.0, 4.0, 5.0, 9.0)
    pod = r.pods[("ns", "p0")]
    assert (pod.created, pod.bound, pod.running) == (4.2, 4.6, 5.0)


def test_a_job_that_freed_quota_is_complete_before_the_next_one_starts_once_settled():
    # A completes (rev 20) and B is unsuspended in its room (rev 22); the Job watch shows B first
    r = recording.Recorder()
    for name in ("a", "b"):
        record = recording.JobRecord("ns", name, "small", "cq", pods=1, created=0.0)
        r.jobs[record.key] = record
    r.on_job(at(job_obj("a", suspend=False), 3), 1.0)
    r.on_job(at(job_obj("b", suspend=False), 22), 8.0)
    r.on_job(at(job_obj("a", suspend=False, conditions=("Complete",)), 20), 8.5)
    intervals = [(j.unsuspended, j.completed) for j in r.jobs.values()]
    assert figs.most_at_once(intervals, end=10.0) == 2, "by arrival both ran at once"
    r.settle()
    assert r.jobs[("ns", "a")].completed == 8.0
    assert figs.most_at_once([(j.unsuspended, j.completed) for j in r.jobs.values()], end=10.0) == 1


def test_the_revision_clock_gives_the_earliest_arrival_at_or_after_a_revision():
    clock = recording.RevisionClock()
    for revision, now in ((5, 1.0), (9, 3.0), (7, 4.0), (12, 2.5)):
        clock.saw(revision, now)
    assert [clock.time_of(r) for r in (5, 6, 7, 9, 10, 12)] == [1.0, 2.5, 2.5, 2.5, 2.5, 2.5]
    clock.saw(6, 0.5)  # a newer sighting after a query is taken into account
    assert clock.time_of(3) == 0.5 and clock.time_of(7) == 2.5
    assert recording.revision_of({"metadata": {"resourceVersion": "42"}}) == 42
    assert recording.revision_of({"metadata": {}}) is None
