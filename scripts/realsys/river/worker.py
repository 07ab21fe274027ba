#!/usr/bin/env python3
"""A River client with one worker, for River v0.43.0 (main-line migration 7) or v0.9.0 (migration 4), on PostgreSQL;
and for v0.43.0 on SQLite, with the statements of River's SQLite driver (riverdriver/riversqlite, see SQLITE below).

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
import datetime
import json
import os
import re
import signal
import socket
import time

import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
from realsys_db import connect, now_utc  # noqa: E402
from worker_cli import parse_worker_args  # noqa: E402
# release -> its fixture (main-line migration level)
VERSIONS = {"v0.43.0": "m07", "v0.9.0": "m04"}
KIND = "qctl_round_trip"
FAILING_KIND = "qctl_round_trip_failing"  # its worker errors on the first run; inserted with max_attempts 1


def claim_sql(version, kind="postgres"):
    """JobGetAvailable of the release, from its fixture (comments stripped): claim.sql, or claim_sqlite.sql."""
    name = "claim.sql" if kind == "postgres" else f"claim_{kind}.sql"
    text = open(os.path.join(REPO, "tests", "fixtures", "river", VERSIONS[version], name)).read()
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


# SQLite: River's SQLite driver at v0.43.0 (riverdriver/riversqlite/river_sqlite_driver.go and
# internal/dbsqlc/river_job.sql), its sqlc named parameters written as SQLite's :name. Times: the driver's own
# "now" parameters go through timeString (UTC, "2006-01-02 15:04:05.999"; sqlite_time below) and are NULL here (the
# database clock), while JobSetStateIfRunning's FinalizedAt and ScheduledAt are the executor's time.Now() (internal/
# jobexecutor, internal/jobcompleter: no UTC(), no rounding), which the database/sql driver writes. River's CLI and driver
# tests use modernc.org/sqlite, whose default (no _time_format in the DSN) is time.Time.String(): "2006-01-02
# 15:04:05.999999999 -0700 MST", then the monotonic clock reading " m=+<seconds>" (go_time below; the zone here is UTC).
SQLITE = {
    # JobSetStateIfRunningMany: one JobSetStateIfRunning per job, in one transaction
    "set_state": """
UPDATE river_job
SET
    attempt      = CASE WHEN (cast(:state AS text) <> 'retryable' AND :state <> 'scheduled' OR (metadata -> 'cancel_attempted_at') IS NULL) AND cast(:attempt_do_update AS boolean)
                        THEN :attempt
                        ELSE attempt END,
    errors       = CASE WHEN cast(:errors_do_update AS boolean)
                        THEN jsonb(json_insert(json(coalesce(errors, jsonb('[]'))), '$[#]', json(:error)))
                        ELSE errors END,
    finalized_at = CASE WHEN ((:state = 'retryable' OR :state = 'scheduled') AND (metadata -> 'cancel_attempted_at') iS NOT NULL)
                        THEN coalesce(cast(:now AS text), datetime('now', 'subsec'))
                        WHEN cast(:finalized_at_do_update AS boolean)
                        THEN :finalized_at
                        ELSE finalized_at END,
    metadata     = CASE WHEN cast(:metadata_do_merge AS boolean)
                        THEN jsonb_patch(json(metadata), json(:metadata_updates))
                        ELSE metadata END,
    scheduled_at = CASE WHEN (cast(:state AS text) <> 'retryable' AND :state <> 'scheduled' OR (metadata -> 'cancel_attempted_at') IS NULL) AND cast(:scheduled_at_do_update AS boolean)
                        THEN :scheduled_at
                        ELSE scheduled_at END,
    state        = CASE WHEN ((:state = 'retryable' OR :state = 'scheduled') AND (metadata -> 'cancel_attempted_at') IS NOT NULL)
                        THEN 'cancelled'
                        ELSE :state END
WHERE id = :id
    AND state = 'running'
RETURNING *""",
    # JobSchedule: JobScheduleGetEligible, then JobScheduleSetAvailable for the jobs without a unique key
    "schedule_eligible": """
SELECT *
FROM river_job
WHERE
    state IN ('retryable', 'scheduled')
    AND scheduled_at <= coalesce(cast(:now AS text), datetime('now', 'subsec'))
ORDER BY
    priority,
    scheduled_at,
    id
LIMIT :max""",
    "schedule_available": "UPDATE river_job SET state = 'available' WHERE id IN ({ids}) RETURNING *",
    # Client.Insert: JobInsertFastMany, one JobInsertFast per job
    "insert": """
INSERT INTO river_job(
    id, args, created_at, kind, max_attempts, metadata, priority, queue, scheduled_at, state, tags, unique_key, unique_states
) VALUES (
    cast(:id AS integer),
    jsonb(:args),
    coalesce(cast(:created_at AS text), datetime('now', 'subsec')),
    :kind,
    :max_attempts,
    jsonb(:metadata),
    :priority,
    :queue,
    coalesce(cast(:scheduled_at AS text), datetime('now', 'subsec')),
    :state,
    jsonb(:tags),
    CASE WHEN length(cast(:unique_key AS blob)) = 0 THEN NULL ELSE :unique_key END,
    :unique_states
)
ON CONFLICT (unique_key)
    WHERE unique_key IS NOT NULL
        AND unique_states IS NOT NULL
        AND CASE state
                WHEN 'available' THEN unique_states & (1 << 0)
                WHEN 'cancelled' THEN unique_states & (1 << 1)
                WHEN 'completed' THEN unique_states & (1 << 2)
                WHEN 'discarded' THEN unique_states & (1 << 3)
                WHEN 'pending'   THEN unique_states & (1 << 4)
                WHEN 'retryable' THEN unique_states & (1 << 5)
                WHEN 'running'   THEN unique_states & (1 << 6)
                WHEN 'scheduled' THEN unique_states & (1 << 7)
                ELSE 0
            END >= 1
    DO UPDATE SET kind = EXCLUDED.kind
RETURNING *""",
}


def sqlite_time(t):
    """riversqlite's timeString: UTC, rounded to the millisecond, "2006-01-02 15:04:05.999" (trailing zeros dropped)."""
    t = t + datetime.timedelta(microseconds=500)
    t = t.replace(microsecond=t.microsecond // 1000 * 1000)
    frac = f"{t.microsecond // 1000:03d}".rstrip("0")
    return t.strftime("%Y-%m-%d %H:%M:%S") + ("." + frac if frac else "")


START = time.monotonic()


def go_time(t):
    """time.Now().String() of a Go process in UTC, as modernc.org/sqlite writes a time.Time by default."""
    frac = f"{t.microsecond:06d}000".rstrip("0")
    return (t.strftime("%Y-%m-%d %H:%M:%S") + ("." + frac if frac else "") + " +0000 UTC"
            + f" m=+{time.monotonic() - START + 0.001:.9f}")


def sqlite_set_state(conn, job_id, state, *, error=None, finalized_at=None, scheduled_at=None):
    """JobSetStateIfRunningMany for one job, with the parameters riversqlite fills in (Error and MetadataUpdates "{}"
    when not used)."""
    with conn.transaction():
        conn.raw.execute(SQLITE["set_state"], {
            "id": job_id, "state": state, "now": None,
            "attempt_do_update": False, "attempt": 0,
            "errors_do_update": error is not None, "error": json.dumps(error) if error is not None else "{}",
            "finalized_at_do_update": finalized_at is not None, "finalized_at": finalized_at,
            "metadata_do_merge": False, "metadata_updates": "{}",
            "scheduled_at_do_update": scheduled_at is not None, "scheduled_at": scheduled_at,
        }).fetchall()


def sqlite_schedule(conn):
    with conn.transaction():
        cur = conn.raw.execute(SQLITE["schedule_eligible"], {"now": None, "max": 10000})
        names = [d[0] for d in cur.description]
        ids = [dict(zip(names, r))["id"] for r in cur.fetchall()
               if dict(zip(names, r))["unique_key"] is None]
        if ids:
            conn.raw.execute(SQLITE["schedule_available"].format(ids=", ".join("?" * len(ids))), ids).fetchall()


def run_sqlite(a):
    """The same client on SQLite: JobGetAvailable from claim_sqlite.sql (?1 now NULL, ?2 queue, ?3 limit, ?4 client ID,
    ?5 max_attempted_by 100); the completer's JobSetStateIfRunningMany; the scheduler's JobSchedule."""
    stop = {"flag": False}
    signal.signal(signal.SIGTERM, lambda *_: stop.__setitem__("flag", True))
    conn = connect(a.db)
    side = connect(a.db)  # the ledger's own connection
    fetch = claim_sql(a.version, "sqlite")
    me = client_id()
    print(f"{a.name}: River {a.version} client {me} (SQLite driver) pid {os.getpid()}", flush=True)
    last_schedule = 0.0
    while not stop["flag"]:
        if time.time() - last_schedule >= 1.0:
            sqlite_schedule(conn)
            last_schedule = time.time()
        cur = conn.raw.execute(fetch, (None, "default", 1, me, 100))
        names = [re.sub(r"^json\((\w+)\)$", r"\1", d[0]) for d in cur.description]
        rows = [dict(zip(names, r)) for r in cur.fetchall()]
        if not rows:
            time.sleep(0.1)
            continue
        for job in rows:
            args = json.loads(job["args"])
            errors = json.loads(job["errors"]) if job["errors"] else []
            key = args.get("key", str(job["id"]))
            lid = side.insert("INSERT INTO qctl_ledger (job_key, worker, pid) VALUES (%s, %s, %s)", (key, a.name, os.getpid()))
            time.sleep(a.sleep)
            side.execute("UPDATE qctl_ledger SET finished_at = %s WHERE id = %s", (sqlite_time(now_utc()), lid))
            now = now_utc()
            if job["kind"] == FAILING_KIND and not errors:
                # job_executor.go reportError with DefaultClientRetryPolicy, as ERROR above
                err = {"at": now.strftime("%Y-%m-%dT%H:%M:%S.%fZ"), "attempt": job["attempt"],
                       "error": "qctl round trip: this job fails its first run", "trace": ""}
                if job["attempt"] >= job["max_attempts"]:
                    sqlite_set_state(conn, job["id"], "discarded", error=err, finalized_at=go_time(now))
                else:
                    sqlite_set_state(conn, job["id"], "retryable", error=err,
                                     scheduled_at=go_time(now + datetime.timedelta(seconds=(len(errors) + 1) ** 4)))
            else:
                sqlite_set_state(conn, job["id"], "completed", finalized_at=go_time(now))
    print(f"{a.name}: stopped", flush=True)


def client_id():
    # client.go defaultClientIDWithHost: the host name, then the start time
    host = re.sub(r"[^a-zA-Z0-9]", "_", socket.gethostname())
    return host + "_" + datetime.datetime.now(datetime.timezone.utc).strftime("%Y_%m_%dT%H_%M_%S_%f")


def run(a):
    if a.db.startswith("sqlite:"):
        return run_sqlite(a)
    import psycopg
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
    a = parse_worker_args("v0.43.0", VERSIONS)
    if a.cmd == "run":
        return run(a)
    if a.db.startswith("sqlite:"):
        return main_sqlite(a)
    import psycopg
    conn = psycopg.connect(a.db, autocommit=True, cursor_factory=psycopg.RawCursor)
    if a.cmd == "enqueue":
        ledger = connect(a.db)
        ledger.execute(ledger.ledger_ddl())
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


def main_sqlite(a):
    conn = connect(a.db)
    if a.cmd == "enqueue":
        conn.execute(conn.ledger_ddl())
        for k in [k for k in a.keys.split(",") if k]:
            failing = k == a.fail_first
            with conn.transaction():
                conn.raw.execute(SQLITE["insert"], {
                    "id": None, "args": json.dumps({"key": k}), "created_at": None, "kind": FAILING_KIND if failing else KIND,
                    "max_attempts": 1 if failing else 25, "metadata": "{}", "priority": 1, "queue": "default",
                    "scheduled_at": None, "state": "available", "tags": "[]", "unique_key": None, "unique_states": None}).fetchall()
    elif a.cmd == "jobs":
        out = {}
        for jid, args, state, attempt, errors, metadata, finalized in conn.execute(
                "SELECT id, json(args), state, attempt, json(errors), json(metadata), finalized_at IS NOT NULL FROM river_job ORDER BY id").fetchall():
            args, errors, metadata = json.loads(args), json.loads(errors) if errors else [], json.loads(metadata) if metadata else {}
            out[args.get("key", str(jid))] = {"id": jid, "state": state, "attempt": attempt,
                                              "errors": len(errors), "last_error": (errors or [{}])[-1].get("error"),
                                              "rescue_count": metadata.get("river:rescue_count"), "finalized": bool(finalized)}
        print(json.dumps(out))


if __name__ == "__main__":
    main()
