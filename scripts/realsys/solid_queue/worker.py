#!/usr/bin/env python3
"""A Solid Queue 1.5.0 worker (one thread, queues: default), on PostgreSQL, MySQL/MariaDB or SQLite.

Solid Queue is a Ruby gem and cannot be installed here (Debian has no package), so this process plays a
`bin/jobs` worker: it sends the statements Solid Queue sends, taken from app/models/solid_queue/*.rb and
lib/solid_queue/*.rb at v1.5.0 (see SQL below):

  enqueue   Job.enqueue: the job row, then Job::Executable#prepare_for_execution -> dispatch: a ready execution
  start     Processes::Registrable#register: a solid_queue_processes row (kind Worker), heart-beating every
            process_heartbeat_interval (60 s) by Process#heartbeat (last_heartbeat_at)
  poll      ReadyExecution.claim -> select_and_lock: the ready candidates of queue default (QueueSelector), FOR
            UPDATE SKIP LOCKED (non_blocking_lock; on SQLite Arel drops the lock clause and the transaction, begun
            IMMEDIATE, holds the database's one write lock), then
            ClaimedExecution.claiming (claimed rows) and the ready rows deleted, in one transaction
  perform   ClaimedExecution#perform: finished (Job#finished!: finished_at, preserve_finished_jobs) or
            failed_with (a failed execution with the error as JSON), the claim deleted
  stop      Process#deregister: the process row deleted

A kill -9 leaves the claim, and a process row whose heartbeat stops: the supervisor's Process.prune (or qctl
reap) fails the claim with ProcessPrunedError.

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

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from realsys_db import connect  # noqa: E402
from worker_cli import parse_worker_args  # noqa: E402

JOB = "QctlRoundTripJob"
FAILING_JOB = "QctlRoundTripFailingJob"  # raises on its first run (no retry_on): a failed execution
# Active Record binds Time.now.utc (default_timezone :utc) in datetime columns: a naive UTC time.
NOW = "%s"


def q(db, name):
    """A quoted identifier as Arel quotes it for that adapter."""
    return f"`{name}`" if db.kind == "mysql" else f'"{name}"'


def marks(n):
    return ", ".join(["%s"] * n)


def poll_sql(db):
    """select_candidates of ReadyExecution for queue default, as Arel renders it for that adapter (claim*.sql of the fixture)."""
    t = q(db, "solid_queue_ready_executions")
    lock = "" if db.kind == "sqlite" else " FOR UPDATE SKIP LOCKED"
    return (f'SELECT {t}.{q(db, "id")}, {t}.{q(db, "job_id")} FROM {t} WHERE {t}.{q(db, "queue_name")} = %s '
            f'ORDER BY {t}.{q(db, "priority")} ASC, {t}.{q(db, "job_id")} ASC LIMIT %s{lock}')


def run(a):
    stop = {"flag": False}
    signal.signal(signal.SIGTERM, lambda *_: stop.__setitem__("flag", True))
    conn = connect(a.db)
    side = connect(a.db)  # the ledger's own connection
    beat = connect(a.db)
    name = f"worker-{uuid.uuid4().hex[:20]}"
    pid = conn.insert(
        f"INSERT INTO solid_queue_processes (kind, last_heartbeat_at, supervisor_id, pid, hostname, metadata, "
        f"created_at, name) VALUES ('Worker', {NOW}, NULL, %s, %s, %s, {NOW}, %s)",
        (conn.now(), os.getpid(), socket.gethostname(),
         json.dumps({"polling_interval": 0.1, "queues": "default", "thread_pool_size": 1}), conn.now(), name))

    def heartbeat():
        while not stop["flag"]:
            for _ in range(600):
                if stop["flag"]:
                    return
                time.sleep(0.1)
            beat.execute(f"UPDATE solid_queue_processes SET last_heartbeat_at = {NOW} WHERE id = %s", (beat.now(), pid))

    threading.Thread(target=heartbeat, daemon=True).start()
    print(f"{a.name}: Solid Queue 1.5.0 worker process {pid} ({name}, pid {os.getpid()})", flush=True)
    try:
        while not stop["flag"]:
            with conn.transaction():
                rows = conn.execute(poll_sql(conn), ("default", 1)).fetchall()
                if rows:
                    ids = [r[1] for r in rows]
                    conn.execute(f"INSERT INTO solid_queue_claimed_executions (job_id, process_id, created_at) VALUES "
                                 + ", ".join(["(%s, %s, %s)"] * len(ids)), [v for j in ids for v in (j, pid, conn.now())])
                    claimed = [r[0] for r in conn.execute(
                        f"SELECT job_id FROM solid_queue_claimed_executions WHERE job_id IN ({marks(len(ids))}) AND process_id = %s",
                        (*ids, pid)).fetchall()]
                    took = [r[0] for r in rows if r[1] in claimed]
                    if took:
                        conn.execute(f"DELETE FROM solid_queue_ready_executions WHERE id IN ({marks(len(took))})", took)
            if not rows:
                time.sleep(0.1)
                continue
            for job_id in claimed:
                perform(a, conn, side, job_id)
    finally:
        if stop["flag"]:
            conn.execute("DELETE FROM solid_queue_processes WHERE id = %s", (pid,))
    print(f"{a.name}: stopped", flush=True)


def perform(a, conn, side, job_id):
    cls, args = conn.execute("SELECT class_name, arguments FROM solid_queue_jobs WHERE id = %s", (job_id,)).fetchone()
    args = json.loads(args)
    key = args["arguments"][0]
    lid = side.insert("INSERT INTO qctl_ledger (job_key, worker, pid) VALUES (%s, %s, %s)", (key, a.name, os.getpid()))
    time.sleep(a.sleep)
    side.execute("UPDATE qctl_ledger SET finished_at = %s WHERE id = %s", (side.now(), lid))
    # The failing job raises on its first run only (FailedExecution#retry resets the executions counters, so the
    # ledger tells a retried run).
    runs = side.execute("SELECT count(*) FROM qctl_ledger WHERE job_key = %s", (key,)).fetchone()[0]
    failed = cls == FAILING_JOB and runs == 1
    with conn.transaction():
        if failed:
            error = json.dumps({"exception_class": "RuntimeError", "message": f"{key} failed", "backtrace": []})
            conn.execute(f"INSERT INTO solid_queue_failed_executions (job_id, error, created_at) VALUES (%s, %s, {NOW})",
                         (job_id, error, conn.now()))
        else:
            conn.execute(f"UPDATE solid_queue_jobs SET finished_at = {NOW}, updated_at = {NOW} WHERE id = %s",
                         (conn.now(), conn.now(), job_id))
        conn.execute("DELETE FROM solid_queue_claimed_executions WHERE job_id = %s", (job_id,))


def main():
    a = parse_worker_args("v1.5.0", ["v1.5.0"])
    if a.cmd == "run":
        return run(a)
    conn = connect(a.db)
    if a.cmd == "enqueue":
        conn.execute(conn.ledger_ddl())
        for k in [k for k in a.keys.split(",") if k]:
            ajid = str(uuid.uuid4())
            cls = FAILING_JOB if k == a.fail_first else JOB
            args = {"job_class": cls, "job_id": ajid, "provider_job_id": None, "queue_name": "default",
                    "priority": None, "arguments": [k], "executions": 0, "exception_executions": {},
                    "locale": "en", "timezone": "UTC", "scheduled_at": None,
                    "enqueued_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
            with conn.transaction():
                now = conn.now()
                jid = conn.insert(
                    f"INSERT INTO solid_queue_jobs (queue_name, class_name, arguments, priority, active_job_id, "
                    f"scheduled_at, concurrency_key, created_at, updated_at) VALUES ('default', %s, %s, 0, %s, {NOW}, "
                    f"NULL, {NOW}, {NOW})", (cls, json.dumps(args), ajid, now, now, now))
                conn.execute(f"INSERT INTO solid_queue_ready_executions (job_id, queue_name, priority, created_at) "
                             f"VALUES (%s, 'default', 0, {NOW})", (jid, now))
    elif a.cmd == "jobs":
        # Job#status (app/models/solid_queue/job/executable.rb): the execution that holds the job, else finished
        out = {}
        for jid, args, state in conn.execute("""
                SELECT j.id, j.arguments,
                       CASE WHEN EXISTS (SELECT 1 FROM solid_queue_failed_executions e WHERE e.job_id = j.id) THEN 'failed'
                            WHEN EXISTS (SELECT 1 FROM solid_queue_claimed_executions e WHERE e.job_id = j.id) THEN 'in_progress'
                            WHEN EXISTS (SELECT 1 FROM solid_queue_ready_executions e WHERE e.job_id = j.id) THEN 'pending'
                            WHEN EXISTS (SELECT 1 FROM solid_queue_scheduled_executions e WHERE e.job_id = j.id) THEN 'scheduled'
                            WHEN EXISTS (SELECT 1 FROM solid_queue_blocked_executions e WHERE e.job_id = j.id) THEN 'blocked'
                            WHEN j.finished_at IS NOT NULL THEN 'finished'
                            ELSE 'unknown' END
                FROM solid_queue_jobs j ORDER BY j.id""").fetchall():
            key = ((json.loads(args) if args else {}).get("arguments") or [str(jid)])[0]
            out[key] = {"id": jid, "state": state}
        print(json.dumps(out))


if __name__ == "__main__":
    sys.exit(main())
