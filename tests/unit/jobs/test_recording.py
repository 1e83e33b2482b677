"""Watch events folded into per-Job and per-pod first times."""

from __future__ import annotations

from harness.drivers.jobs import plans, recording


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
