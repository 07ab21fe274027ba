#!/usr/bin/env python3
"""Round trip of qctl against GoodJob's own SQL (a 4.19.2 skiplocked worker), driven by worker.py of this folder.

Steps (one line printed per check, `ok` or `FAIL`; exit 1 on any FAIL):
  1. load the version's schema from tests/fixtures/<system>/<version>/schema.sql into the (empty) database
  2. enqueue N jobs with the system's own insert, plus one job that fails its first run with no attempts left
  3. run two workers; when most jobs are done, stop one gracefully and kill -9 the other mid-job
  4. `$QCTL reap --timeout 3s`: as GoodJob::Process.cleanup with a 3 s heartbeat age, the killed process's job is
     released (locked_by_id cleared) and its process row deleted
  5. start a fresh worker; every job must finish
  6. `$QCTL retry <id>` of the dead job; the fresh worker must run it
  7. audit the ledger (every job finished exactly once; the killed run may repeat), the system's own counts
     (counts.sql of the fixture) and `$QCTL stats`
  8. `$QCTL purge --older-than 0s --yes`; then new jobs must still run
  9. explain-claim --apply: 20,000 finished jobs and none of good_jobs' unfinished-job indexes; qctl flags the
     dequeue, builds an index, and the worker's claim then takes jobs through it
qctl runs with its own detection (--layout auto) unless QCTL_LAYOUT names a preset.
"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from roundtrip_legs import (Ctx, System, after_purge_leg, audit_leg, check, enqueue_leg, explain_apply_leg,  # noqa: E402
                            finish_leg, kill_leg, left_running_leg, parse_args, purge_leg, reap_leg, retry_leg, schema_leg,
                            stop, summary)

HERE = os.path.dirname(os.path.abspath(__file__))

# How GoodJob's dashboard names its states (its own words); GoodJob's ledger has no id column.
GOOD_JOB = System("good_job", HERE, done={"succeeded"}, dead={"discarded"}, running={"running"}, ledger_order="started_at")


def rescuer_rules(version, before, after):
    """GoodJob::Process.cleanup releases the job: locked_by_id cleared, performed_at kept (the next worker records
    the interruption)."""
    return [
        (before["locked_by_id"] is not None and after["locked_by_id"] is None,
         "the killed worker's job is released (locked_by_id cleared), as GoodJob::Process.cleanup does",
         json.dumps([before, after])),
        (after["performed"], "the released job keeps performed_at, as GoodJob::Process.cleanup leaves it", json.dumps(after)),
    ]


def main():
    c = Ctx(parse_args(GOOD_JOB.name), GOOD_JOB)
    if not schema_leg(c) or not enqueue_leg(c):
        return 1
    killed_key, st, kill_time = kill_leg(c)
    left_running_leg(c, st, killed_key)
    reap_leg(c, st, killed_key, kill_time, rescuer_rules)
    left = c.conn.execute("SELECT count(*) FROM good_job_processes").fetchone()[0]
    check(left == 0, "the killed process's good_job_processes row is deleted, as GoodJob::Process.cleanup does",
          f"{left} process rows left")
    wc = c.start("worker-c")
    st = finish_leg(c, killed_key)
    retry_leg(c, st)
    audit_leg(c, killed_key)
    purge_leg(c)
    orphans = c.conn.execute("SELECT count(*) FROM good_job_executions e WHERE NOT EXISTS "
                             "(SELECT 1 FROM good_jobs j WHERE j.active_job_id = e.active_job_id)").fetchone()[0]
    check(orphans == 0, "the purged jobs' good_job_executions went with them, as cleanup_preserved_jobs does",
          f"{orphans} executions of purged jobs left")
    after_purge_leg(c)
    apply_leg(c)
    return stop(c, wc)


def apply_leg(c):
    """Finished jobs pile up (preserve_job_records) while every index on unfinished jobs is gone: qctl flags
    GoodJob's dequeue and builds an index; the running worker then claims through it."""
    c.conn.execute(f"INSERT INTO good_jobs (id, queue_name, priority, serialized_params, scheduled_at, performed_at, "
                   f"finished_at, created_at, updated_at, active_job_id, job_class, executions_count) "
                   f"SELECT g, 'default', 0, '{{}}', now(), now(), now(), now(), now(), g, 'QctlHistoryJob', 1 "
                   f"FROM (SELECT gen_random_uuid() AS g FROM generate_series(1, 20000)) s")
    dropped = [r[0] for r in c.conn.execute(
        "SELECT indexname FROM pg_indexes WHERE tablename = 'good_jobs' AND indexdef LIKE '%finished_at IS NULL%'").fetchall()]
    for ix in dropped:
        c.conn.execute(f"DROP INDEX {ix}")
    c.conn.analyze("good_jobs")
    explain_apply_leg(c, "good_jobs", f"qctl explain-claim flags GoodJob's dequeue once {len(dropped)} unfinished-job indexes are gone",
                      "dequeue", "the worker still claims", "GoodJob's skiplocked claim uses the new index")


if __name__ == "__main__":
    sys.exit(summary(GOOD_JOB.name, main))
