#!/usr/bin/env python3
"""A River client with one worker, for River v0.43.0 (main-line migration 7) or v0.9.0 (migration 4), on PostgreSQL.

River is a Go library and no Go module can be fetched here, so this process plays a River client
(river.NewClient with one queue, one worker) and the leader's maintenance services it needs:

  fetch      JobGetAvailable exactly as River's pgx driver sends it: the statement is read from
             tests/fixtures/river/<migration>/claim.sql (the sqlc constant of that release), with River's
             parameters: v0.43.0 now NULL (the database clock), max_attempted_by 100, the client ID, the queue, 1;
             v0.9.0 the client ID, the queue, 1
  complete   what JobSetStateIfRunningMany (v0.9.0: JobSetCompleteIfRunningMany) does for a finished job: running -> completed, finalized_at now
  error      what JobSetStateIfRunningMany (v0.9.0: JobSetStateIfRunning) does for an errored job (River's DefaultClientRetryPolicy): the error appended to errors;
             attempts left -> retryable, due after (errors+1)^4 s; attempts used -> discarded, finalized_at now
  schedule   what the JobScheduler's JobSchedule does for jobs without unique keys (these have none): due
             retryable and scheduled jobs -> available (River's default interval is 5 s; this loop checks each second)
  insert     what Client.Insert writes for a job with default options (JobInsertFastMany): state available,
             scheduled_at now, max_attempts 25, priority 1, queue default, metadata {}, tags {}
The complete, error, schedule and insert statements are written here from those statements' rules (cited per
statement), not copied from River. The JobRescuer is not run: qctl reap takes its place in the round trip.

usage:
  worker.py run      --db URL --version v0.43.0|v0.9.0 --name w1 [--sleep 0.3]
  worker.py enqueue  --db URL --version v0.43.0 --keys k1,k2 [--fail-first k2]
  worker.py jobs     --db URL --version v0.43.0
"""
import argparse
import datetime
import json
import os
import re
import signal
import socket
import time

import psycopg

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
# release -> its fixture (main-line migration level)
VERSIONS = {"v0.43.0": "m07", "v0.9.0": "m04"}
KIND = "qctl_round_trip"
FAILING_KIND = "qctl_round_trip_failing"  # its worker errors on the first run; inserted with max_attempts 1


def claim_sql(version):
    """JobGetAvailable of the release, from its fixture (comments stripped)."""
    text = open(os.path.join(REPO, "tests", "fixtures", "river", VERSIONS[version], "claim.sql")).read()
    return "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("--"))


# JobSetStateIfRunningMany (river_job.sql) for one finished job: only a running job changes.
COMPLETE = """
UPDATE river_job
SET state = 'completed', finalized_at = now()
WHERE id = $1 AND state = 'running'
"""

# JobSetStateIfRunningMany for one errored job, with the decision River's completer makes (job_executor.go
# reportError with DefaultClientRetryPolicy.NextRetry: (len(errors)+1)^4 s, jitter left out).
ERROR = """
UPDATE river_job
SET errors = array_append(errors, jsonb_build_object('at', now(), 'attempt', attempt, 'error', $2::text, 'trace', '')),
    state = CASE WHEN attempt >= max_attempts THEN 'discarded'::river_job_state ELSE 'retryable'::river_job_state END,
    finalized_at = CASE WHEN attempt >= max_attempts THEN now() END,
    scheduled_at = CASE WHEN attempt >= max_attempts THEN scheduled_at
                        ELSE now() + power(coalesce(cardinality(errors), 0) + 1, 4) * interval '1 second' END
WHERE id = $1 AND state = 'running'
"""

# JobSchedule for jobs without unique keys: due retryable and scheduled jobs become available.
SCHEDULE = """
WITH jobs_to_schedule AS (
    SELECT id FROM river_job
    WHERE state IN ('retryable', 'scheduled') AND priority >= 0 AND queue IS NOT NULL AND scheduled_at <= now()
    ORDER BY priority, scheduled_at, id
    LIMIT 10000
    FOR UPDATE
)
UPDATE river_job SET state = 'available'
FROM jobs_to_schedule WHERE river_job.id = jobs_to_schedule.id
"""

# Client.Insert with default InsertOpts (JobInsertFastMany's columns).
INSERT = """
INSERT INTO river_job (args, kind, max_attempts, metadata, priority, queue, scheduled_at, state, tags)
VALUES ($1::jsonb, $2, $3, '{}', 1, 'default', now(), 'available', '{}')
"""


def client_id():
    # client.go defaultClientIDWithHost: the host name, then the start time
    host = re.sub(r"[^a-zA-Z0-9]", "_", socket.gethostname())
    return host + "_" + datetime.datetime.now(datetime.timezone.utc).strftime("%Y_%m_%dT%H_%M_%S_%f")


def run(a):
    stop = {"flag": False}
    signal.signal(signal.SIGTERM, lambda *_: stop.__setitem__("flag", True))
    conn = psycopg.connect(a.db, autocommit=True, cursor_factory=psycopg.RawCursor)
    side = psycopg.connect(a.db, autocommit=True)  # the ledger's own connection
    fetch = claim_sql(a.version)
    me = client_id()
    print(f"{a.name}: River {a.version} client {me} pid {os.getpid()}", flush=True)
    last_schedule = 0.0
    while not stop["flag"]:
        if time.time() - last_schedule >= 1.0:
            conn.execute(SCHEDULE)
            last_schedule = time.time()
        params = (None, 100, me, "default", 1) if "$5" in fetch else (me, "default", 1)
        cur = conn.execute(fetch, params)
        names = [d.name for d in cur.description]
        rows = [dict(zip(names, r)) for r in cur.fetchall()]
        if not rows:
            time.sleep(0.1)
            continue
        for job in rows:
            key = job["args"].get("key", str(job["id"]))
            lid = side.execute("INSERT INTO qctl_ledger (job_key, worker, pid) VALUES (%s, %s, %s) RETURNING ctid",
                               (key, a.name, os.getpid())).fetchone()[0]
            time.sleep(a.sleep)
            side.execute("UPDATE qctl_ledger SET finished_at = now() WHERE ctid = %s", (lid,))
            if job["kind"] == FAILING_KIND and not job["errors"]:
                conn.execute(ERROR, (job["id"], "qctl round trip: this job fails its first run"))
            else:
                conn.execute(COMPLETE, (job["id"],))
    print(f"{a.name}: stopped", flush=True)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("cmd", choices=["run", "enqueue", "jobs"])
    p.add_argument("--db", required=True)
    p.add_argument("--version", default="v0.43.0", choices=sorted(VERSIONS))
    p.add_argument("--name", default="w")
    p.add_argument("--sleep", type=float, default=0.3)
    p.add_argument("--keys", default="")
    p.add_argument("--fail-first", default="")
    a = p.parse_args()
    if a.cmd == "run":
        return run(a)
    conn = psycopg.connect(a.db, autocommit=True, cursor_factory=psycopg.RawCursor)
    if a.cmd == "enqueue":
        conn.execute("""CREATE TABLE IF NOT EXISTS qctl_ledger (job_key text NOT NULL, worker text NOT NULL, pid int NOT NULL,
                        started_at timestamptz NOT NULL DEFAULT now(), finished_at timestamptz)""")
        for k in [k for k in a.keys.split(",") if k]:
            failing = k == a.fail_first
            conn.execute(INSERT, (json.dumps({"key": k}), FAILING_KIND if failing else KIND, 1 if failing else 25))
    elif a.cmd == "jobs":
        out = {}
        for jid, args, state, attempt, errors, metadata, finalized in conn.execute(
                "SELECT id, args, state::text, attempt, errors, metadata, finalized_at IS NOT NULL FROM river_job ORDER BY id"):
            out[args.get("key", str(jid))] = {"id": jid, "state": state, "attempt": attempt,
                                              "errors": len(errors or []), "last_error": (errors or [{}])[-1].get("error"),
                                              "rescue_count": (metadata or {}).get("river:rescue_count"),
                                              "finalized": finalized}
        print(json.dumps(out))


if __name__ == "__main__":
    main()
