#!/usr/bin/env python3
"""Round trip of qctl against River's own fetch and rules, driven by worker.py of this folder.

Steps (one line printed per check, `ok` or `FAIL`; exit 1 on any FAIL):
  1. load the release's schema from tests/fixtures/river/<migration>/schema.sql (SQLite: schema_sqlite.sql) into the
     (empty) database
  2. enqueue N jobs with the system's own insert, plus one job that fails its first run with no attempts left
  3. run two workers; when most jobs are done, stop one gracefully and kill -9 the other mid-job
  4. `$QCTL reap --timeout 3s`: the killed worker's job is rescued as River's JobRescuer rescues a stuck job
  5. start a fresh worker; every job must finish
  6. `$QCTL retry <id>` of the dead job; the fresh worker must run it
  7. audit the ledger (every job finished exactly once; the killed run may repeat), the system's own counts
     (counts.sql of the fixture) and `$QCTL stats`
  8. `$QCTL purge --older-than 0s --yes`; then new jobs must still run
  9. explain-claim --apply: 20,000 finished jobs and no river_job_prioritized_fetching_index; qctl flags River's
     fetch, builds an index, and the worker's fetch then takes jobs through it
qctl runs with its own detection (--layout auto) unless QCTL_LAYOUT names a preset.
"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from roundtrip_legs import Ctx, System, explain_apply_leg, parse_args, round_trip, summary  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))

# release -> its fixture (main-line migration level): the schema River's migrations make, its count
FIXTURES = {"v0.43.0": "m07", "v0.9.0": "m04"}


def river(version):
    """How River names its states (its own words)."""
    return System("river", HERE, done={"completed"}, dead={"discarded"}, running={"running"}, fixture=FIXTURES[version])


def rescuer_rules(version, before, after):
    """What River's JobRescuer does to a stuck job with attempts left (internal/maintenance/job_rescuer.go and
    JobRescueMany of the release): retryable, the lost attempt kept, one error appended, river:rescue_count 1 (from
    0.26 on; none before);
    the JobScheduler then makes it available once due ((errors+1)^4 s: 1 s for a job with no error before)."""
    detail = json.dumps({"before": before, "after": after})
    return [
        (after["state"] in ("retryable", "available"), f"reaped job is retryable ({after['state']}), as JobRescuer leaves it", detail),
        (after["attempt"] == before["attempt"], "the lost attempt still counts (attempt kept)", detail),
        (after["errors"] == before["errors"] + 1, "one error appended", detail),
        (after["rescue_count"] == (1 if version == "v0.43.0" else None),
         "river:rescue_count is 1 in metadata" if version == "v0.43.0" else "no river:rescue_count (it arrives in 0.26)", detail),
        (not after["finalized"], "not finalized", detail),
    ]


def main():
    a = parse_args("river")
    c = Ctx(a, river(a.version))
    return round_trip(c, rescuer_rules, apply_leg)


def apply_leg(c):
    """Finished jobs pile up (River keeps them until its JobCleaner deletes them, a day later by default) while the
    fetch's index (river_job_prioritized_fetching_index: state, queue, priority, scheduled_at, id) is gone: qctl
    flags River's fetch and builds an index; the running worker then fetches through it."""
    if c.kind == "postgres":
        c.conn.execute("INSERT INTO river_job (args, kind, max_attempts, metadata, priority, queue, scheduled_at, state, tags, "
                       "attempt, attempted_at, finalized_at) "
                       "SELECT jsonb_build_object('key', 'history-' || g), 'qctl_history', 25, '{}', 1, 'default', now(), "
                       "'completed', '{}', 1, now(), now() FROM generate_series(1, 20000) g")
    else:
        with c.conn.transaction():
            c.conn.executemany("INSERT INTO river_job (args, kind, max_attempts, metadata, priority, queue, scheduled_at, state, tags, "
                               "attempt, attempted_at, finalized_at) VALUES (jsonb(%s), 'qctl_history', 25, jsonb('{}'), 1, 'default', "
                               "datetime('now', 'subsec'), 'completed', jsonb('[]'), 1, datetime('now', 'subsec'), datetime('now', 'subsec'))",
                               [(json.dumps({"key": f"history-{g}"}),) for g in range(1, 20001)])
    c.conn.execute("DROP INDEX IF EXISTS river_job_prioritized_fetching_index")
    c.conn.analyze("river_job")

    def planned(new):
        # SQLite keeps no per-index scan counter: ask its planner about the worker's very statement (claim_sqlite.sql).
        sys.path.insert(0, HERE)
        from worker import claim_sql
        fetch = claim_sql(c.a.version, c.kind)
        uses = c.conn.raw.execute("EXPLAIN QUERY PLAN " + fetch, (None, "default", 1, "qctl", 100)).fetchall()
        hit = [ix for ix in new if any(f"INDEX {ix}" in str(r[-1]) for r in uses)]
        return bool(hit), f"River's fetch is planned through the new index {new}", str(uses)
    explain_apply_leg(c, "river_job", "qctl explain-claim flags River's fetch once river_job_prioritized_fetching_index is gone",
                      "fetch", "the worker still fetches", "River's fetch uses the new index", planned)


if __name__ == "__main__":
    sys.exit(summary("river", main))
