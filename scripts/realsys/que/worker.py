#!/usr/bin/env python3
"""A Que locker with one worker, for Que v1.2.0 (schema 4), v1.4.1 (schema 5) or v2.4.1 (schema 7), on PostgreSQL.

Que is a Ruby gem and no Ruby runtime can be installed here, so this process plays `que` (Que::Locker with one
worker): it sends the statements Que sends, taken from lib/que/*.rb of the release (see SQL below):

  start     Poller.setup (pg_temp type and functions on the locker's connection), clean_lockers, register_locker
  poll      SQL[:poll_jobs]: walks que_jobs and takes pg_try_advisory_lock(id) in the locker's SESSION
  run       the job runs on another connection (Que's worker threads use the connection pool); it calls `finish`
            (SQL[:finish_job]); a job class with maximum_retry_count 0 that raises is expired (SQL[:expire_job])
  unlock    SELECT pg_advisory_unlock(v.i) FROM (VALUES (id)) v (i)   (Locker#unlock_jobs)
  stop      DELETE FROM que_lockers WHERE pid = pg_backend_pid()      (Locker#run_loop ensure)

A kill -9 ends both sessions: the advisory lock goes with them and the job is claimable again as it was; the dead
locker's que_lockers row stays until the next locker's clean_lockers.

usage:
  worker.py run      --db URL --version v2.4.1 --name w1 [--sleep 0.3]
  worker.py enqueue  --db URL --version v2.4.1 --keys k1,k2 [--fail-first k2]
  worker.py jobs     --db URL --version v2.4.1
"""
import json
import os
import signal
import socket
import sys
import time

import psycopg

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from worker_cli import parse_worker_args  # noqa: E402

VERSIONS = {"v1.2.0": None, "v1.4.1": 1, "v2.4.1": 2}  # release -> Que.job_schema_version (none before 1.3)
MAXIMUM_PRIORITY = 32767
JOB = "QctlRoundTripJob"
FAILING_JOB = "QctlRoundTripFailingJob"  # self.maximum_retry_count = 0: its first error expires it

# lib/que/poller.rb Poller.setup (identical in the three releases)
SETUP = """
CREATE TYPE pg_temp.que_query_result AS (
  locked boolean,
  remaining_priorities jsonb
);

CREATE FUNCTION pg_temp.lock_and_update_priorities(priorities jsonb, job que_jobs)
RETURNS pg_temp.que_query_result
AS $$
  WITH
    -- Take the lock in a CTE because we want to use the result
    -- multiple times while only taking the lock once.
    lock_taken AS (
      SELECT pg_try_advisory_lock((job).id) AS taken
    ),
    relevant AS (
      SELECT priority, count
      FROM (
        SELECT
          key::smallint AS priority,
          value::text::integer AS count
        FROM jsonb_each(priorities)
        ) t1
      WHERE priority >= (job).priority
      ORDER BY priority ASC
      LIMIT 1
    )
  SELECT
    (SELECT taken FROM lock_taken), -- R
    CASE (SELECT taken FROM lock_taken)
    WHEN false THEN
      -- Simple case - we couldn't lock the job, so don't update the
      -- priorities hash.
      priorities
    WHEN true THEN
      CASE count
      WHEN 1 THEN
        -- Remove the priority from the JSONB doc entirely, rather
        -- than leaving a zero entry in it.
        priorities - priority::text
      ELSE
        -- Decrement the value in the JSONB doc.
        jsonb_set(
          priorities,
          ARRAY[priority::text],
          to_jsonb(count - 1)
        )
      END
    END
  FROM relevant
$$
STABLE
LANGUAGE SQL;

CREATE FUNCTION pg_temp.que_highest_remaining_priority(priorities jsonb) RETURNS smallint AS $$
  SELECT max(key::smallint) FROM jsonb_each(priorities)
$$
STABLE
LANGUAGE SQL;
"""

CLEAN_LOCKERS = """
      DELETE FROM public.que_lockers
      WHERE pid = pg_backend_pid()
      OR NOT EXISTS (SELECT 1 FROM pg_stat_activity WHERE pid = public.que_lockers.pid)
    """


def register_locker(jsv):
    if jsv is None:  # v1.2.0
        return ("INSERT INTO public.que_lockers (pid, worker_count, worker_priorities, ruby_pid, ruby_hostname, listening, queues)\n"
                "      VALUES (pg_backend_pid(), $1::integer, $2::integer[], $3::integer, $4::text, $5::boolean, $6::text[])")
    return ("INSERT INTO public.que_lockers (pid, worker_count, worker_priorities, ruby_pid, ruby_hostname, listening, queues, job_schema_version)\n"
            "      VALUES (pg_backend_pid(), $1::integer, $2::integer[], $3::integer, $4::text, $5::boolean, $6::text[], $7::integer)")


def poll_jobs(jsv):
    # lib/que/poller.rb SQL[:poll_jobs]; the job_schema_version lines arrived in 1.3
    f = "" if jsv is None else f"\n              AND job_schema_version = {jsv}"
    f2 = "" if jsv is None else f"\n                    AND job_schema_version = {jsv}"
    return f"""
        WITH RECURSIVE jobs AS (
          SELECT
            (j).*,
            l.locked,
            l.remaining_priorities
          FROM (
            SELECT j
            FROM public.que_jobs AS j
            WHERE queue = $1::text{f}
              AND NOT id = ANY($2::bigint[])
              AND priority <= pg_temp.que_highest_remaining_priority($3::jsonb)
              AND run_at <= now()
              AND finished_at IS NULL AND expired_at IS NULL
            ORDER BY priority, run_at, id
            LIMIT 1
          ) AS t1
          JOIN LATERAL (SELECT * FROM pg_temp.lock_and_update_priorities($3::jsonb, j)) AS l ON true
          UNION ALL (
            SELECT
              (j).*,
              l.locked,
              l.remaining_priorities
            FROM (
              SELECT
                remaining_priorities,
                (
                  SELECT j
                  FROM public.que_jobs AS j
                  WHERE queue = $1::text{f2}
                    AND NOT id = ANY($2::bigint[])
                    AND priority <= pg_temp.que_highest_remaining_priority(jobs.remaining_priorities)
                    AND run_at <= now()
                    AND finished_at IS NULL AND expired_at IS NULL
                    AND (priority, run_at, id) >
                      (jobs.priority, jobs.run_at, jobs.id)
                  ORDER BY priority, run_at, id
                  LIMIT 1
                ) AS j

              FROM jobs
              WHERE jobs.id IS NOT NULL AND jobs.remaining_priorities != '{{}}'::jsonb
              LIMIT 1
            ) AS t1
            JOIN LATERAL (SELECT * FROM pg_temp.lock_and_update_priorities(remaining_priorities, j)) AS l ON true
          )
        )
        SELECT *
        FROM jobs
        WHERE locked
      """


def insert_job(version, jsv):
    # lib/que/job.rb SQL[:insert_job]
    if version == "v1.2.0":
        return """
        INSERT INTO public.que_jobs
        (queue, priority, run_at, job_class, args, data)
        VALUES
        (
          coalesce($1, 'default')::text,
          coalesce($2, 100)::smallint,
          coalesce($3, now())::timestamptz,
          $4::text,
          coalesce($5, '[]')::jsonb,
          coalesce($6, '{}')::jsonb
        )
        RETURNING *
      """
    if version == "v1.4.1":
        return f"""
        INSERT INTO public.que_jobs
        (queue, priority, run_at, job_class, args, data, job_schema_version)
        VALUES
        (
          coalesce($1, 'default')::text,
          coalesce($2, 100)::smallint,
          coalesce($3, now())::timestamptz,
          $4::text,
          coalesce($5, '[]')::jsonb,
          coalesce($6, '{{}}')::jsonb,
          {jsv}
        )
        RETURNING *
      """
    return f"""
        INSERT INTO public.que_jobs
        (queue, priority, run_at, job_class, args, kwargs, data, job_schema_version)
        VALUES
        (
          coalesce($1, 'default')::text,
          coalesce($2, 100)::smallint,
          coalesce($3, now())::timestamptz,
          $4::text,
          coalesce($5, '[]')::jsonb,
          coalesce($6, '{{}}')::jsonb,
          coalesce($7, '{{}}')::jsonb,
          {jsv}
        )
        RETURNING *
      """


# lib/que/job_methods.rb
FINISH_JOB = """
      UPDATE public.que_jobs
      SET finished_at = now()
      WHERE id = $1::bigint
    """
EXPIRE_JOB = """
      UPDATE public.que_jobs
      SET error_count = error_count + 1,
          expired_at = now()
      WHERE id = $1::bigint
    """


def run(a):
    stop = {"flag": False}
    signal.signal(signal.SIGTERM, lambda *_: stop.__setitem__("flag", True))
    jsv = VERSIONS[a.version]
    locker = psycopg.connect(a.db, autocommit=True, cursor_factory=psycopg.RawCursor)
    pool = psycopg.connect(a.db, autocommit=True, cursor_factory=psycopg.RawCursor)  # the worker's connection
    side = psycopg.connect(a.db, autocommit=True)  # the ledger's own connection
    locker.execute(SETUP)
    locker.execute(CLEAN_LOCKERS)
    params = [1, [None], os.getpid(), socket.gethostname(), False, ["default"]]
    if jsv is not None:
        params.append(jsv)
    locker.execute(register_locker(jsv), params)
    backend = locker.info.backend_pid
    print(f"{a.name}: Que {a.version} locker pid {os.getpid()} backend {backend}", flush=True)
    poll = poll_jobs(jsv)
    try:
        while not stop["flag"]:
            cur = locker.execute(poll, ("default", "{}", json.dumps({str(MAXIMUM_PRIORITY): 1})))
            names = [d.name for d in cur.description]
            rows = [dict(zip(names, r)) for r in cur.fetchall()]
            if not rows:
                time.sleep(0.1)
                continue
            for job in rows:
                key = (job["args"] or [str(job["id"])])[0]
                lid = side.execute("INSERT INTO qctl_ledger (job_key, worker, pid) VALUES (%s, %s, %s) RETURNING ctid",
                                   (key, a.name, os.getpid())).fetchone()[0]
                time.sleep(a.sleep)
                side.execute("UPDATE qctl_ledger SET finished_at = now() WHERE ctid = %s", (lid,))
                if job["job_class"] == FAILING_JOB and job["error_count"] == 0:
                    # handle_error: error_count (0 + 1) > maximum_retry_count (0) -> expire
                    pool.execute(EXPIRE_JOB, (job["id"],))
                else:
                    pool.execute(FINISH_JOB, (job["id"],))
                ok = locker.execute(f"SELECT pg_advisory_unlock(v.i) FROM (VALUES ({int(job['id'])})) v (i)").fetchone()[0]
                assert ok, "Tried to unlock a job we hadn't locked!"
    finally:
        if stop["flag"]:
            locker.execute("DELETE FROM public.que_lockers WHERE pid = pg_backend_pid()")
    print(f"{a.name}: stopped", flush=True)


def main():
    a = parse_worker_args("v2.4.1", VERSIONS)
    if a.cmd == "run":
        return run(a)
    conn = psycopg.connect(a.db, autocommit=True, cursor_factory=psycopg.RawCursor)
    jsv = VERSIONS[a.version]
    if a.cmd == "enqueue":
        conn.execute("""CREATE TABLE IF NOT EXISTS qctl_ledger (job_key text NOT NULL, worker text NOT NULL, pid int NOT NULL,
                        started_at timestamptz NOT NULL DEFAULT now(), finished_at timestamptz)""")
        sql = insert_job(a.version, jsv)
        for k in [k for k in a.keys.split(",") if k]:
            cls = FAILING_JOB if k == a.fail_first else JOB
            p = ["default", None, None, cls, json.dumps([k])]
            p += [None, None] if a.version == "v2.4.1" else [None]
            conn.execute(sql, p)
    elif a.cmd == "jobs":
        out = {}
        for jid, args, state, errs, ecount in conn.execute("""
                SELECT j.id, j.args,
                       CASE WHEN locks.id IS NOT NULL AND j.finished_at IS NULL AND j.expired_at IS NULL THEN 'working'
                            ELSE public.que_determine_job_state(j) END,
                       j.last_error_message, j.error_count
                FROM public.que_jobs AS j
                LEFT JOIN (SELECT DISTINCT (classid::bigint << 32) + objid::bigint AS id FROM pg_locks
                           WHERE locktype = 'advisory') locks USING (id)
                ORDER BY j.id"""):
            out[(args or [str(jid)])[0]] = {"id": jid, "state": state, "error_count": ecount, "last_error": errs}
        print(json.dumps(out))


if __name__ == "__main__":
    main()
