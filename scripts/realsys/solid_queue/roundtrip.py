#!/usr/bin/env python3
"""Round trip of qctl against Solid Queue's own SQL (a 1.5.0 worker), driven by worker.py of this folder.

Steps (one line printed per check, `ok` or `FAIL`; exit 1 on any FAIL):
  1. load the version's schema from tests/fixtures/<system>/<version>/schema.sql (schema_mysql.sql, schema_sqlite.sql)
     into the (empty) database: PostgreSQL, MySQL/MariaDB or SQLite, as --db names it
  2. enqueue N jobs with the system's own insert, plus one job that fails its first run with no attempts left
  3. run two workers; when most jobs are done, stop one gracefully and kill -9 the other mid-job
  4. `$QCTL reap --timeout 3s`: as Process#prune with process_alive_threshold 3 s, the killed worker's claim is
     failed with ProcessPrunedError (Solid Queue never runs a pruned claim again by itself)
  5. start a fresh worker; every other job must finish
  6. `$QCTL retry <id>` of the dead job and of the pruned one; the fresh worker must run both
  7. audit the ledger (every job finished exactly once; the killed run may repeat), the system's own counts
     (counts.sql of the fixture) and `$QCTL stats`
  8. `$QCTL purge --older-than 0s --yes`; then new jobs must still run
  9. explain-claim --apply: a backlog of 20,000 ready executions in a queue no worker serves and no poll index;
     qctl flags the worker's poll, builds an index, and the worker's poll then takes jobs through it (PostgreSQL:
     the index's scan counter grows; MariaDB and SQLite keep no such counter: their planner's EXPLAIN of the poll)
qctl runs with its own detection (--layout auto) unless QCTL_LAYOUT names a preset.
"""
import json
import os
import sys
import uuid

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from roundtrip_legs import (Ctx, System, after_purge_leg, audit_leg, check, enqueue_leg, explain_apply_leg,  # noqa: E402
                            finish_leg, kill_leg, left_running_leg, parse_args, purge_leg, reap_leg, retry_leg, schema_leg,
                            stop, summary)

HERE = os.path.dirname(os.path.abspath(__file__))

# How Solid Queue names its states (Job#status, Mission Control's words); its worker logs go to <logdir>-<database>
# on every database.
SOLID_QUEUE = System("solid_queue", HERE, done={"finished"}, dead={"failed"}, running={"in_progress"}, kind_in_logdir=True)

# What qctl reap must do: fail the dead worker's claim, as Process#prune does.
FAILS = ("qctl reap failed the killed worker's claim", lambda r, out: r.returncode == 0 and "dead-lettered 1 " in out)


def rescuer_rules(version, before, after):
    """Process#prune fails a dead worker's claims (fail_all_claimed_executions_with ProcessPrunedError)."""
    return [(after["state"] == "failed", "the killed worker's claim is failed, as Process#prune does", json.dumps([before, after]))]


def main():
    c = Ctx(parse_args(SOLID_QUEUE.name), SOLID_QUEUE)
    if not schema_leg(c) or not enqueue_leg(c):
        return 1
    killed_key, st, kill_time = kill_leg(c)
    left_running_leg(c, st, killed_key)
    after = reap_leg(c, st, killed_key, kill_time, rescuer_rules, expect=FAILS)
    if killed_key:
        err = c.conn.execute("SELECT error FROM solid_queue_failed_executions WHERE job_id = %s", (after[killed_key]["id"],)).fetchone()
        check(bool(err) and "ProcessPrunedError" in err[0], "its failed execution says SolidQueue::Processes::ProcessPrunedError",
              str(err))
    wc = c.start("worker-c")
    st = finish_leg(c, killed_key, killed_reruns=False)
    if killed_key:
        check(st[killed_key]["state"] in SOLID_QUEUE.dead, f"{killed_key} stays failed: Solid Queue runs a pruned claim only when retried",
              json.dumps(st[killed_key]))
    retry_leg(c, st)
    if killed_key:
        r, out = c.qctl_shown("retry", str(st[killed_key]["id"]))
        ok = c.wait(lambda: c.jobs()[killed_key]["state"] in SOLID_QUEUE.done, 30)
        check(r.returncode == 0 and bool(ok), f"qctl retry of the pruned {killed_key}: the worker ran it to completion",
              json.dumps(c.jobs()[killed_key]))
    audit_leg(c, killed_key)
    purge_leg(c)
    after_purge_leg(c)
    apply_leg(c)
    return stop(c, wc)


def apply_leg(c):
    """A backlog of another queue, no worker serving it, while the poll indexes are gone: qctl flags the worker's
    poll of queue default and builds an index; the running worker then polls through it."""
    now = c.conn.now()
    with c.conn.transaction():
        c.conn.executemany("INSERT INTO solid_queue_jobs (queue_name, class_name, arguments, priority, active_job_id, scheduled_at, "
                           "created_at, updated_at) VALUES ('backlog', 'QctlBacklogJob', '{\"arguments\": [\"backlog\"]}', 0, %s, %s, %s, %s)",
                           [(str(uuid.uuid4()), now, now, now) for _ in range(20000)])
        c.conn.execute("INSERT INTO solid_queue_ready_executions (job_id, queue_name, priority, created_at) "
                       "SELECT id, 'backlog', 0, created_at FROM solid_queue_jobs WHERE queue_name = 'backlog'")
    dropped = sorted(ix for ix in c.conn.indexes("solid_queue_ready_executions") if "poll" in ix)
    for ix in dropped:
        c.conn.drop_index("solid_queue_ready_executions", ix)
    c.conn.analyze("solid_queue_ready_executions")

    def planned(new):
        # MariaDB and SQLite keep no per-index scan counters by default: ask the database's own planner about the
        # worker's very statement instead.
        sys.path.insert(0, HERE)
        from worker import poll_sql
        uses = [c.conn.plan_uses(poll_sql(c.conn), ("default", 1), ix) for ix in new]
        return any(u for u, _ in uses), f"Solid Queue's poll is planned through the new index {new}", " / ".join(d for _, d in uses)
    explain_apply_leg(c, "solid_queue_ready_executions", f"qctl explain-claim flags Solid Queue's poll once {dropped} are gone",
                      "poll", "the worker still claims", "Solid Queue's poll uses the new index", planned)


if __name__ == "__main__":
    sys.exit(summary(SOLID_QUEUE.name, main))
