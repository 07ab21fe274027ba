#!/usr/bin/env python3
"""A GoodJob 4.19.2 process with one thread and lock_strategy :skiplocked, on PostgreSQL.

GoodJob is a Ruby gem and no Ruby runtime with it can be installed here, so this process plays `good_job start`
(GOOD_JOB_LOCK_STRATEGY=skiplocked, max_threads 1): it sends the statements GoodJob sends, taken from
app/models/good_job/*.rb at v4.19.2 (see SQL below):

  start     GoodJob::Process.find_or_create_record (lock_type NULL: no process advisory lock), then its heartbeat:
            Process#refresh (updated_at) every STALE_INTERVAL, 30 s, and Process.cleanup
  claim     Job.perform_with_skip_locked -> Lockable#with_skip_locked_claim: the candidate (unfinished, unlocked,
            due) FOR NO KEY UPDATE SKIP LOCKED, then locked_by_id = this process, locked_at, lock_type 1
  perform   Job#perform: a job already performed is marked interrupted (its open execution finished with
            error_event 0); an execution row is made, performed_at and executions_count + 1 written; the job runs;
            then finished_at (error and error_event 1 when it raised), locked_by_id, locked_at and lock_type cleared
  stop      the process row deleted (CapsuleTracker#unregister)

A kill -9 leaves the job locked by a process whose heartbeat stops: skiplocked workers never take it again until
GoodJob::Process.cleanup (or qctl reap) releases it.

usage:
  worker.py run      --db URL --name w1 [--sleep 0.3]
  worker.py enqueue  --db URL --keys k1,k2 [--fail-first k2]
  worker.py jobs     --db URL
"""
import json
import os
import signal
import socket
import sys
import threading
import time
import uuid

import psycopg

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from worker_cli import parse_worker_args  # noqa: E402

JOB = "QctlRoundTripJob"
FAILING_JOB = "QctlRoundTripFailingJob"  # raises on its first run; retry_on_unhandled_error false: discarded

NOW = "(now() AT TIME ZONE 'UTC')"

# Job.enqueue (app/models/good_job/job.rb): id = active_job_id, scheduled_at = now when not given
INSERT_JOB = f"""
INSERT INTO good_jobs (id, queue_name, priority, serialized_params, scheduled_at, created_at, updated_at,
                       active_job_id, job_class, executions_count)
VALUES (%(id)s, 'default', 0, %(params)s, {NOW}, {NOW}, {NOW}, %(id)s, %(cls)s, 0)
"""

# Lockable#with_skip_locked_claim, as captured in tests/fixtures/good_job/v4.19.2/claim_skiplocked.sql
CLAIM = f"""
WITH candidate AS MATERIALIZED (SELECT "good_jobs"."id" FROM "good_jobs" WHERE "good_jobs"."finished_at" IS NULL
  AND "good_jobs"."locked_by_id" IS NULL AND "good_jobs"."scheduled_at" <= {NOW}
  ORDER BY priority ASC NULLS LAST, "good_jobs"."created_at" ASC LIMIT 1 FOR NO KEY UPDATE SKIP LOCKED)
UPDATE "good_jobs" SET locked_by_id = %(pid)s, locked_at = {NOW}, lock_type = 1
FROM candidate WHERE "good_jobs".id = candidate.id RETURNING "good_jobs".*
"""

# GoodJob::Process.cleanup: inactive processes (lock_type NULL and updated_at older than EXPIRED_INTERVAL)
CLEANUP = f"""
WITH inactive AS (
  SELECT p.id FROM good_job_processes p
  WHERE p.lock_type IS NULL AND p.updated_at < {NOW} - interval '5 minutes'
), released AS (
  UPDATE good_jobs SET locked_by_id = NULL, locked_at = NULL FROM inactive WHERE good_jobs.locked_by_id = inactive.id
)
DELETE FROM good_job_processes USING inactive WHERE good_job_processes.id = inactive.id
"""


def run(a):
    stop = {"flag": False}
    signal.signal(signal.SIGTERM, lambda *_: stop.__setitem__("flag", True))
    conn = psycopg.connect(a.db, autocommit=True)
    side = psycopg.connect(a.db, autocommit=True)  # the ledger's own connection
    beat = psycopg.connect(a.db, autocommit=True)
    pid = str(uuid.uuid4())
    state = json.dumps({"hostname": socket.gethostname(), "pid": os.getpid(), "proctitle": "bin/good_job",
                        "preserve_job_records": True, "retry_on_unhandled_error": False})
    conn.execute(f"INSERT INTO good_job_processes (id, created_at, updated_at, state, lock_type) "
                 f"VALUES (%s, {NOW}, {NOW}, %s, NULL)", (pid, state))
    beat.execute(CLEANUP)

    def heartbeat():
        while not stop["flag"]:
            for _ in range(300):
                if stop["flag"]:
                    return
                time.sleep(0.1)
            beat.execute(f"UPDATE good_job_processes SET state = %s, updated_at = {NOW} WHERE id = %s", (state, pid))
            beat.execute(CLEANUP)

    threading.Thread(target=heartbeat, daemon=True).start()
    print(f"{a.name}: GoodJob 4.19.2 process {pid} (pid {os.getpid()}), lock strategy skiplocked", flush=True)
    try:
        while not stop["flag"]:
            cur = conn.execute(CLAIM, {"pid": pid})
            names = [d.name for d in cur.description]
            row = cur.fetchone()
            if not row:
                time.sleep(0.1)
                continue
            job = dict(zip(names, row))
            perform(a, conn, side, pid, job)
    finally:
        if stop["flag"]:
            conn.execute("DELETE FROM good_job_processes WHERE id = %s", (pid,))
    print(f"{a.name}: stopped", flush=True)


def perform(a, conn, side, pid, job):
    started = time.monotonic()
    if job["performed_at"] is not None:
        # Job#perform: "Interrupted after starting perform at ..."
        err = f"GoodJob::InterruptedError: Interrupted after starting perform at '{job['performed_at']}'"
        conn.execute(f"UPDATE good_job_executions SET error = %s, finished_at = {NOW}, error_event = 0, "
                     f"duration = interval '0' WHERE active_job_id = %s AND finished_at IS NULL", (err, job["active_job_id"]))
    with conn.transaction():
        ex = conn.execute(
            f"INSERT INTO good_job_executions (active_job_id, job_class, queue_name, serialized_params, scheduled_at, "
            f"created_at, updated_at, process_id) VALUES (%s, %s, %s, %s, coalesce(%s, %s), {NOW}, {NOW}, %s) RETURNING id",
            (job["active_job_id"], job["job_class"], job["queue_name"], json.dumps(job["serialized_params"]),
             job["scheduled_at"], job["created_at"], pid)).fetchone()[0]
        conn.execute(f"UPDATE good_jobs SET performed_at = {NOW}, executions_count = coalesce(executions_count, 0) + 1, "
                     f"updated_at = {NOW} WHERE id = %s", (job["id"],))
    key = job["serialized_params"]["arguments"][0]
    lid = side.execute("INSERT INTO qctl_ledger (job_key, worker, pid) VALUES (%s, %s, %s) RETURNING ctid",
                       (key, a.name, os.getpid())).fetchone()[0]
    time.sleep(a.sleep)
    side.execute("UPDATE qctl_ledger SET finished_at = now() WHERE ctid = %s", (lid,))
    failed = job["job_class"] == FAILING_JOB and (job["serialized_params"].get("executions") or 0) == 0
    err = f"RuntimeError: {key} failed" if failed else None
    duration = f"{time.monotonic() - started} seconds"
    with conn.transaction():
        conn.execute(f"UPDATE good_job_executions SET finished_at = {NOW}, error = %s, error_event = %s, "
                     f"duration = %s::interval, updated_at = {NOW} WHERE id = %s", (err, 1 if failed else None, duration, ex))
        conn.execute(f"UPDATE good_jobs SET locked_by_id = NULL, locked_at = NULL, lock_type = NULL, error = %s, "
                     f"error_event = %s, finished_at = {NOW}, updated_at = {NOW} WHERE id = %s",
                     (err, 1 if failed else None, job["id"]))


def main():
    a = parse_worker_args("v4.19.2", ["v4.19.2"])
    if a.cmd == "run":
        return run(a)
    conn = psycopg.connect(a.db, autocommit=True)
    if a.cmd == "enqueue":
        conn.execute("""CREATE TABLE IF NOT EXISTS qctl_ledger (job_key text NOT NULL, worker text NOT NULL, pid int NOT NULL,
                        started_at timestamptz NOT NULL DEFAULT now(), finished_at timestamptz)""")
        for k in [k for k in a.keys.split(",") if k]:
            jid = str(uuid.uuid4())
            cls = FAILING_JOB if k == a.fail_first else JOB
            params = {"job_class": cls, "job_id": jid, "provider_job_id": None, "queue_name": "default",
                      "priority": None, "arguments": [k], "executions": 0, "exception_executions": {},
                      "locale": "en", "timezone": "UTC", "enqueued_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
            conn.execute(INSERT_JOB, {"id": jid, "params": json.dumps(params), "cls": cls})
    elif a.cmd == "jobs":
        # GoodJob's dashboard states (JobsFilter#states scopes at v4.19.2), per job
        out = {}
        for jid, params, state, locked_by, performed in conn.execute(f"""
                SELECT j.id, j.serialized_params,
                       CASE WHEN j.finished_at IS NOT NULL AND j.error IS NULL THEN 'succeeded'
                            WHEN j.finished_at IS NOT NULL THEN 'discarded'
                            WHEN j.performed_at IS NOT NULL THEN 'running'
                            WHEN j.scheduled_at > {NOW} THEN 'scheduled'
                            ELSE 'queued' END,
                       j.locked_by_id::text, j.performed_at IS NOT NULL
                FROM good_jobs j ORDER BY j.created_at"""):
            out[((params or {}).get("arguments") or [str(jid)])[0]] = {"id": str(jid), "state": state, "locked_by_id": locked_by, "performed": performed}
        print(json.dumps(out))


if __name__ == "__main__":
    sys.exit(main())
