#!/usr/bin/env python3
"""Round trip of qctl against Que's own SQL, driven by worker.py of this folder.

Steps (one line printed per check, `ok` or `FAIL`; exit 1 on any FAIL):
  1. load the version's schema from tests/fixtures/<system>/<version>/schema.sql into the (empty) database
  2. enqueue N jobs with the system's own insert, plus one job that fails its first run with no attempts left
  3. run two workers; when most jobs are done, stop one gracefully and kill -9 the other mid-job
  4. `$QCTL reap --timeout 3s` (Que: expect a refusal that says why)
  5. start a fresh worker; every job must finish
  6. `$QCTL retry <id>` of the dead job; the fresh worker must run it
  7. audit the ledger (every job finished exactly once; the killed run may repeat), the system's own counts
     (counts.sql of the fixture) and `$QCTL stats`
  8. `$QCTL purge --older-than 0s --yes`; then new jobs must still run
  9. explain-claim --apply: 20,000 finished jobs and no que_poll_idx; qctl flags the poll, builds an index, and
     the locker's poll then takes jobs through it
qctl runs with its own detection (--layout auto) unless QCTL_LAYOUT names a preset.
"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from roundtrip_legs import (Ctx, System, after_purge_leg, audit_leg, check, enqueue_leg, explain_apply_leg,  # noqa: E402
                            finish_leg, kill_leg, parse_args, purge_leg, reap_leg, retry_leg, schema_leg, stop, summary)

HERE = os.path.dirname(os.path.abspath(__file__))

# How Que names its states (its own words); Que's ledger has no id column.
QUE = System("que", HERE, done={"finished"}, dead={"expired"}, running={"working"}, ledger_order="started_at")

# What qctl reap must do: Que's locks are advisory locks of the locker's session, gone with it.
REFUSES = ("qctl reap refuses, saying the dead worker's advisory locks ended with its session",
           lambda r, out: r.returncode != 0 and ("advisory" in out or "session" in out))

DEAD_LOCKERS = "SELECT pid FROM que_lockers WHERE pid NOT IN (SELECT pid FROM pg_stat_activity)"


def rescuer_rules(version, before, after):
    """Que has no rescuer: nothing to compare."""
    return []


def main():
    c = Ctx(parse_args(QUE.name), QUE)
    if not schema_leg(c) or not enqueue_leg(c):
        return 1
    killed_key, st, kill_time = kill_leg(c)
    if killed_key:
        check(st[killed_key]["state"] in ("ready", "errored"),
              f"{killed_key} is claimable again at once ({st[killed_key]['state']}): its advisory lock ended with the "
              "killed locker's session", json.dumps(st[killed_key]))
        dead_lockers = c.conn.execute(DEAD_LOCKERS).fetchall()
        check(len(dead_lockers) == 1, "the killed locker's que_lockers row is still there (until the next locker starts)",
              str(dead_lockers))
    reap_leg(c, st, killed_key, kill_time, rescuer_rules, expect=REFUSES)
    wc = c.start("worker-c")
    gone = c.wait(lambda: not c.conn.execute(DEAD_LOCKERS).fetchone(), 15)
    check(bool(gone), "the fresh locker's clean_lockers removed the dead locker's que_lockers row")
    st = finish_leg(c, killed_key)
    retry_leg(c, st)
    # on Que, qctl stats may give stale as null as well as 0
    audit_leg(c, killed_key, stale_may_be_null=True, lock_race=True)
    purge_leg(c)
    after_purge_leg(c)
    apply_leg(c)
    return stop(c, wc)


def apply_leg(c):
    """Finished jobs pile up (Que's `finish` keeps them) while the poll's index is gone: qctl flags the poll
    and builds an index; the running locker then polls through it."""
    cols = [r[0] for r in c.conn.execute(
        "SELECT column_name FROM information_schema.columns WHERE table_name = 'que_jobs'").fetchall()]
    extra = ", job_schema_version" if "job_schema_version" in cols else ""
    jsv = {"v1.2.0": "", "v1.4.1": ", 1", "v2.4.1": ", 2"}[c.a.version]
    c.conn.execute(f"INSERT INTO que_jobs (job_class, args, finished_at{extra}) "
                   f"SELECT 'QctlHistoryJob', '[]', now(){jsv} FROM generate_series(1, 20000)")
    for ix in ("que_poll_idx", "que_poll_idx_with_job_schema_version"):
        c.conn.execute(f"DROP INDEX IF EXISTS {ix}")
    c.conn.analyze("que_jobs")
    explain_apply_leg(c, "que_jobs", "qctl explain-claim flags Que's poll once que_poll_idx is gone", "poll",
                      "the locker still takes", "Que's poll uses the new index")


if __name__ == "__main__":
    sys.exit(summary(QUE.name, main))
