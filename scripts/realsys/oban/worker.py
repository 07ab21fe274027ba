#!/usr/bin/env python3
"""An Oban node with one queue, for Oban v2.23.1 (migration 14) or v2.10.1 (migration 10), on PostgreSQL.

Oban is an Elixir library and no Hex package can be fetched here, so this process plays an Oban node
(Oban with queues: [default: 1]):

  fetch      the Basic engine's fetch_jobs exactly as Oban sends it: the statement is read from
             tests/fixtures/oban/<migration>/claim.sql (the release's Ecto query rendered by ecto_sql's rules),
             with Oban's parameters: v2.23.1 the queue, demand 1, 'executing', DateTime.utc_now(),
             [node, producer uuid], 1; v2.10.1 'executing', DateTime.utc_now(), [node], 1, the queue, demand 1
  complete   what Basic.complete_job does: state completed, completed_at now
  discard    what the executor does when a job errors on its last attempt (Basic.discard_job): state discarded,
             discarded_at now, the attempt's error appended to errors ({at, attempt, error}, Job.format_attempt)
  insert     what Oban.insert writes for a job with default options: state available, queue default,
             max_attempts 20, priority 0, meta {}, tags [], scheduled_at and inserted_at now (UTC)
The complete, discard and insert statements are written here from those functions' rules (lib/oban/engines/basic.ex,
lib/oban/job.ex of the release), not copied from Oban. The Lifeline plugin (2.11 on; 2.10 has no rescuer) is not
run: qctl reap takes its place.

usage:
  worker.py run      --db URL --version v2.23.1|v2.10.1 --name w1 [--sleep 0.3]
  worker.py enqueue  --db URL --version v2.23.1 --keys k1,k2 [--fail-first k2]
  worker.py jobs     --db URL --version v2.23.1
"""
import datetime
import json
import os
import signal
import socket
import sys
import time
import uuid

import psycopg

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from worker_cli import parse_worker_args  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
# release -> its fixture (migration level)
VERSIONS = {"v2.23.1": "m14", "v2.10.1": "m10"}
WORKER = "Qctl.RoundTripWorker"
FAILING_WORKER = "Qctl.RoundTripFailingWorker"  # raises on its first run; inserted with max_attempts 1


def claim_sql(version):
    """Basic.fetch_jobs of the release, from its fixture (comments stripped)."""
    text = open(os.path.join(REPO, "tests", "fixtures", "oban", VERSIONS[version], "claim.sql")).read()
    return "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("--"))


COMPLETE = """UPDATE oban_jobs SET state = 'completed', completed_at = $2 WHERE id = $1"""

DISCARD = """
UPDATE oban_jobs
SET state = 'discarded', discarded_at = $2,
    errors = array_append(errors, jsonb_build_object('at', $2, 'attempt', attempt, 'error', $3::text))
WHERE id = $1
"""

INSERT = """
INSERT INTO oban_jobs (state, queue, worker, args, meta, tags, errors, attempt, max_attempts, priority, inserted_at, scheduled_at)
VALUES ('available', 'default', $1, $2::jsonb, '{}', '{}', '{}', 0, $3, 0, $4, $4)
"""


def utc_now():
    # DateTime.utc_now(), stored in a timestamp without time zone
    return datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)


def run(a):
    stop = {"flag": False}
    signal.signal(signal.SIGTERM, lambda *_: stop.__setitem__("flag", True))
    conn = psycopg.connect(a.db, autocommit=True, cursor_factory=psycopg.RawCursor)
    side = psycopg.connect(a.db, autocommit=True)  # the ledger's own connection
    fetch = claim_sql(a.version)
    node, producer = socket.gethostname(), str(uuid.uuid4())
    print(f"{a.name}: Oban {a.version} node {node} producer {producer} pid {os.getpid()}", flush=True)
    while not stop["flag"]:
        with conn.transaction():  # Repo.transaction/2 around the fetch
            if fetch.lstrip().startswith("WITH"):  # 2.14 on: the CTE form
                params = ("default", 1, "executing", utc_now(), [node, producer], 1)
            else:  # the IN-subquery form
                params = ("executing", utc_now(), [node], 1, "default", 1)
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
            if job["worker"] == FAILING_WORKER and not job["errors"]:
                # its only attempt raised: attempt >= max_attempts -> discard
                conn.execute(DISCARD, (job["id"], utc_now(), "** (RuntimeError) qctl round trip: this job fails its first run"))
            else:
                conn.execute(COMPLETE, (job["id"], utc_now()))
    print(f"{a.name}: stopped", flush=True)


def main():
    a = parse_worker_args("v2.23.1", VERSIONS)
    if a.cmd == "run":
        return run(a)
    conn = psycopg.connect(a.db, autocommit=True, cursor_factory=psycopg.RawCursor)
    if a.cmd == "enqueue":
        conn.execute("""CREATE TABLE IF NOT EXISTS qctl_ledger (job_key text NOT NULL, worker text NOT NULL, pid int NOT NULL,
                        started_at timestamptz NOT NULL DEFAULT now(), finished_at timestamptz)""")
        for k in [k for k in a.keys.split(",") if k]:
            failing = k == a.fail_first
            conn.execute(INSERT, (FAILING_WORKER if failing else WORKER, json.dumps({"key": k}), 1 if failing else 20, utc_now()))
    elif a.cmd == "jobs":
        out = {}
        for jid, args, state, attempt, errors, attempted_by, discarded in conn.execute(
                "SELECT id, args, state::text, attempt, errors, attempted_by, discarded_at IS NOT NULL FROM oban_jobs ORDER BY id"):
            out[args.get("key", str(jid))] = {"id": jid, "state": state, "attempt": attempt, "errors": len(errors or []),
                                              "attempted_by": attempted_by, "discarded": discarded}
        print(json.dumps(out))


if __name__ == "__main__":
    main()
