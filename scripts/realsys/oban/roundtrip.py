#!/usr/bin/env python3
"""Round trip of qctl against Oban's own fetch and rules, driven by worker.py of this folder.

Steps (one line printed per check, `ok` or `FAIL`; exit 1 on any FAIL):
  1. load the release's schema from tests/fixtures/oban/<migration>/schema.sql into the (empty) database
  2. enqueue N jobs with the system's own insert, plus one job that fails its first run with no attempts left
  3. run two workers; when most jobs are done, stop one gracefully and kill -9 the other mid-job
  4. `$QCTL reap --timeout 3s`: the killed node's job is rescued as Oban's Lifeline plugin rescues an orphaned job
  5. start a fresh worker; every job must finish
  6. `$QCTL retry <id>` of the dead job; the fresh worker must run it
  7. audit the ledger (every job finished exactly once; the killed run may repeat), the system's own counts
     (counts.sql of the fixture) and `$QCTL stats`
  8. `$QCTL purge --older-than 0s --yes`; then new jobs must still run
  9. explain-claim --apply: 20,000 finished jobs and no index serving the fetch (its own, and migration 13's two
     pruner indexes); qctl flags Oban's fetch, builds an index, and the node's fetch then takes jobs through it
qctl runs with its own detection (--layout auto) unless QCTL_LAYOUT names a preset.
"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from roundtrip_legs import Ctx, System, explain_apply_leg, parse_args, round_trip, summary  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))

# release -> its fixture (migration level): the schema Oban's migrations make, its count
FIXTURES = {"v2.23.1": "m14", "v2.10.1": "m10"}
# releases before the Lifeline plugin (2.11)
NO_RESCUER = {"v2.10.1"}


def oban(version):
    """How Oban names its states (its own words); Oban's ledger has no id column."""
    return System("oban", HERE, done={"completed"}, dead={"discarded"}, running={"executing"}, fixture=FIXTURES[version],
                  ledger_order="started_at")


def rescuer_rules(version, before, after):
    """What Oban's Lifeline plugin does to an orphaned executing job with attempts left (Basic.rescue_jobs of 2.23):
    available at once; only the state changes, so the lost attempt counts and no error is recorded. Oban 2.10 has
    no rescuer: there qctl reap --timeout does what the later Lifeline does."""
    detail = json.dumps({"before": before, "after": after})
    return [
        (after["state"] == "available", f"reaped job is available ({after['state']}), as Lifeline leaves it", detail),
        (after["attempt"] == before["attempt"], "the lost attempt still counts (attempt kept)", detail),
        (after["errors"] == before["errors"], "no error recorded", detail),
        (after["attempted_by"] == before["attempted_by"], "attempted_by kept", detail),
        (not after["discarded"], "not discarded", detail),
    ]


def main():
    a = parse_args("oban")
    c = Ctx(a, oban(a.version))
    # before 2.11 Oban has no rescuer: without --timeout qctl judges nothing stale (null)
    return round_trip(c, rescuer_rules, apply_leg, stale_may_be_null=a.version in NO_RESCUER)


def apply_leg(c):
    """Finished jobs pile up (Oban keeps them until its Pruner deletes them) while no index serves the fetch: the
    fetch's (state, queue, priority, scheduled_at, id) index (before migration 11: queue first) is gone, and so are
    migration 13's (state, cancelled_at) and (state, discarded_at), whose leading state column would serve it too.
    qctl flags Oban's fetch and builds an index; the running node then fetches through it."""
    c.conn.execute("INSERT INTO oban_jobs (state, queue, worker, args, attempt, max_attempts, attempted_at, completed_at, "
                   "attempted_by, inserted_at, scheduled_at) "
                   "SELECT 'completed', 'default', 'Qctl.HistoryWorker', jsonb_build_object('key', 'history-' || g), 1, 20, "
                   "timezone('UTC', now()), timezone('UTC', now()), ARRAY['history', 'history'], timezone('UTC', now()), "
                   "timezone('UTC', now()) FROM generate_series(1, 20000) g")
    for ix in ("oban_jobs_state_queue_priority_scheduled_at_id_index", "oban_jobs_queue_state_priority_scheduled_at_id_index",
               "oban_jobs_state_cancelled_at_index", "oban_jobs_state_discarded_at_index"):
        c.conn.execute(f"DROP INDEX IF EXISTS {ix}")
    c.conn.analyze("oban_jobs")
    explain_apply_leg(c, "oban_jobs", "qctl explain-claim flags Oban's fetch once no index serves it", "fetch",
                      "the node still fetches", "Oban's fetch uses the new index")


if __name__ == "__main__":
    sys.exit(summary("oban", main))
