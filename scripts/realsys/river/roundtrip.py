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
import argparse
import json
import os
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from realsys_db import connect  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
SYSTEM = os.path.basename(HERE)
REPO = os.path.abspath(os.path.join(HERE, "..", "..", ".."))

# release -> its fixture (main-line migration level): the schema River's migrations make, its count
FIXTURES = {"v0.43.0": "m07", "v0.9.0": "m04"}

# How River names its states (its own words), and what qctl's reap must do.
CONF = dict(done={"completed"}, dead={"discarded"}, running={"running"})

failures = []


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


def check(ok, what, detail=""):
    if ok == "note":  # a difference worth knowing that is not a failure
        print("note " + what, flush=True)
        return True
    line = ("ok   " if ok else "FAIL ") + what
    if detail and not ok:
        line += "\n       " + detail.replace("\n", "\n       ")
    print(line, flush=True)
    if not ok:
        failures.append(what)
    return ok


def sh(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


class Ctx:
    def __init__(self, a):
        self.a = a
        self.conn = connect(a.db)
        self.kind = self.conn.kind
        self.fx = os.path.join(REPO, "tests", "fixtures", SYSTEM, FIXTURES[a.version])
        # the fixture's files for this database: schema.sql (PostgreSQL), schema_sqlite.sql
        self.suffix = "" if self.kind == "postgres" else "_" + self.kind
        self.logs = a.logdir if self.kind == "postgres" else f"{a.logdir}-{self.kind}"
        os.makedirs(self.logs, exist_ok=True)
        self.procs = {}

    def worker(self, *args):
        return [self.a.python, os.path.join(HERE, "worker.py"), *args, "--db", self.a.db, "--version", self.a.version]

    def start(self, name):
        log = open(os.path.join(self.logs, f"{name}.log"), "w")
        p = subprocess.Popen(self.worker("run", "--name", name, "--sleep", str(self.a.sleep)), stdout=log, stderr=subprocess.STDOUT)
        self.procs[name] = p
        return p

    def jobs(self):
        r = sh(self.worker("jobs"))
        if r.returncode != 0:
            raise RuntimeError(r.stderr)
        return json.loads(r.stdout)

    def qctl(self, *args):
        lay = ["--layout", self.a.layout] if self.a.layout else []
        cmd = [self.a.qctl, "-d", self.a.db, "--color", "never", *lay, *args]
        r = sh(cmd)
        return r, " ".join(["qctl", "-d", "$DB", *lay, *args])

    def ledger(self):
        rows = self.conn.execute("SELECT job_key, worker, pid, started_at, finished_at FROM qctl_ledger ORDER BY id").fetchall()
        return rows

    def wait(self, pred, timeout, step=0.2):
        end = time.time() + timeout
        while time.time() < end:
            v = pred()
            if v:
                return v
            time.sleep(step)
        return None

    def counts(self):
        sql = open(os.path.join(self.fx, f"counts{self.suffix}.sql")).read()
        return {s: n for s, n in self.conn.execute(sql).fetchall()}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--db", required=True)
    p.add_argument("--version", required=True)
    p.add_argument("--qctl", default=os.environ.get("QCTL", "qctl"))
    p.add_argument("--python", default=sys.executable)
    p.add_argument("--jobs", type=int, default=40)
    p.add_argument("--sleep", type=float, default=0.3)
    p.add_argument("--logdir", default="/tmp/qctl-realsys")
    p.add_argument("--layout", default=os.environ.get("QCTL_LAYOUT", ""),
                   help="pass --layout to qctl (default: none, i.e. qctl's own detection; env QCTL_LAYOUT)")
    a = p.parse_args()
    a.logdir = os.path.join(a.logdir, f"{SYSTEM}-{a.version}")
    c = Ctx(a)
    a.logdir = c.logs
    print(f"# {SYSTEM} {a.version}: qctl round trip against {a.db.split('@')[-1]}", flush=True)

    # 1. schema
    n_tables = len(c.conn.tables())
    if n_tables:
        check(False, "database is empty", f"{n_tables} tables already there; use a fresh database")
        return 1
    schema = f"schema{c.suffix}.sql"
    r = c.conn.load_schema(os.path.join(c.fx, schema))
    if not check(r.returncode == 0, f"schema {a.version} ({c.kind}) loaded from {os.path.relpath(c.fx, REPO)}/{schema}", r.stderr):
        return 1

    # 2. enqueue
    keys = [f"job-{i:03d}" for i in range(1, a.jobs + 1)]
    dead_key = "dead-001"
    r = sh(c.worker("enqueue", "--keys", ",".join(keys + [dead_key]), "--fail-first", dead_key))
    if not check(r.returncode == 0, f"enqueued {len(keys)} jobs and 1 job that fails its only attempt, with {SYSTEM}'s own insert",
                 r.stderr):
        return 1

    # 3. two workers; kill -9 one mid-job
    wa, wb = c.start("worker-a"), c.start("worker-b")
    done_before = c.wait(lambda: sum(1 for k, v in c.jobs().items() if v["state"] in CONF["done"]) >= a.jobs * 0.6, 60)
    check(bool(done_before), "two workers ran jobs concurrently")
    busy = c.wait(lambda: c.conn.execute(
        "SELECT job_key FROM qctl_ledger WHERE worker = 'worker-a' AND finished_at IS NULL").fetchone(), 20, 0.02)
    wb.send_signal(signal.SIGTERM)
    os.kill(wa.pid, signal.SIGKILL)
    killed_key = busy[0] if busy else None
    wa.wait()
    wb.wait(timeout=30)
    check(killed_key is not None, f"worker-a killed with SIGKILL while running {killed_key}; worker-b stopped gracefully")
    kill_time = time.time()
    st = c.jobs()
    if killed_key:
        check(st[killed_key]["state"] in CONF["running"], f"{killed_key} is left {st[killed_key]['state']} by the dead worker",
              json.dumps(st[killed_key]))

    # 4. reap
    time.sleep(max(0.0, 3.5 - (time.time() - kill_time)))
    r, shown = c.qctl("reap", "--timeout", "3s")
    out = (r.stdout + r.stderr).strip()
    print(f"     $ {shown}\n       -> exit {r.returncode}: " + out.replace("\n", "\n          "), flush=True)
    check(r.returncode == 0 and "requeue" in out, "qctl reap requeued the killed worker's job", out)
    after = c.jobs()
    if killed_key:
        print(f"     {killed_key} after reap: {json.dumps(after[killed_key])}", flush=True)
        for ok, what, detail in rescuer_rules(a.version, st[killed_key], after[killed_key]):
            check(ok, what, detail)

    # 5. fresh worker finishes everything
    wc = c.start("worker-c")
    def all_done():
        s = c.jobs()
        return all(s[k]["state"] in CONF["done"] for k in keys) and s[dead_key]["state"] in CONF["dead"] | CONF["done"]
    ok = c.wait(all_done, 90)
    st = c.jobs()
    pending = {k: v["state"] for k, v in st.items() if k in keys and v["state"] not in CONF["done"]}
    check(bool(ok), f"the fresh worker finished every job, the killed one included", f"not done: {pending}")
    if killed_key:
        runs = [row for row in c.ledger() if row[0] == killed_key]
        check(any(row[1] == "worker-c" and row[4] for row in runs),
              f"the fresh worker ran {killed_key} to completion", str(runs))

    # 6. retry the dead job
    dead = st[dead_key]
    check(dead["state"] in CONF["dead"], f"{dead_key} is dead-lettered ({dead['state']}) after its only attempt failed", json.dumps(dead))
    r, shown = c.qctl("retry", str(dead["id"]))
    out = (r.stdout + r.stderr).strip()
    print(f"     $ {shown}\n       -> exit {r.returncode}: " + out.replace("\n", "\n          "), flush=True)
    check(r.returncode == 0, f"qctl retry {dead['id']} accepted", out)
    ok = c.wait(lambda: c.jobs()[dead_key]["state"] in CONF["done"], 30)
    check(bool(ok), f"the worker ran the retried job {dead_key} to completion", json.dumps(c.jobs()[dead_key]))

    # 7. audit
    led = c.ledger()
    by = {}
    for k, w, pid, s, f in led:
        by.setdefault(k, []).append((w, f))
    bad = []
    for k in keys:
        runs = by.get(k, [])
        finished = [r_ for r_ in runs if r_[1]]
        if k != killed_key:
            ok_k = len(runs) == 1 and len(finished) == 1
        else:
            # the run the kill interrupted may have done its work (finished_at set) before the system recorded it:
            # at-least-once allows exactly one more run, which must finish
            ok_k = len(runs) == 2 and runs[-1][1] is not None
        if not ok_k:
            bad.append((k, runs))
    check(not bad, f"ledger: each of {len(keys)} jobs ran once to the end (the killed one: once more, to the end)", str(bad[:5]))
    dr = by.get(dead_key, [])
    check(len(dr) == 2 and all(f for _, f in dr), f"ledger: {dead_key} ran twice (failed, then after qctl retry)", str(dr))
    counts = c.counts()
    total_done = sum(n for s, n in counts.items() if s in CONF["done"])
    others = {s: n for s, n in counts.items() if s not in CONF["done"] and n}
    check(total_done == len(keys) + 1 and not others,
          f"{SYSTEM}'s own counts (counts.sql): {len(keys) + 1} done, nothing else", json.dumps(counts))
    r, shown = c.qctl("--format", "json", "stats")
    try:
        tot = json.loads(r.stdout)["total"]
        ok = (tot["done"] == len(keys) + 1 and tot["running"] == 0 and tot["pending"] == 0 and tot["failed"] == 0 and tot["stale"] == 0)
        check(ok, f"qctl stats agrees: done {len(keys) + 1}, nothing pending/running/failed/stale", json.dumps(tot))
    except Exception as e:  # noqa: BLE001
        check(False, "qctl stats agrees with the system's counts", f"{shown} -> exit {r.returncode}: {(r.stdout + r.stderr).strip()} ({e})")

    # 8. purge, then the system keeps working
    r, shown = c.qctl("purge", "--older-than", "0s", "--yes")
    out = (r.stdout + r.stderr).strip()
    print(f"     $ {shown}\n       -> exit {r.returncode}: " + out.replace("\n", "\n          "), flush=True)
    left = sum(1 for v in c.jobs().values() if v["state"] in CONF["done"])
    check(r.returncode == 0 and left == 0, f"qctl purge deleted every finished job ({left} left)", out)
    more = [f"after-{i}" for i in range(1, 4)]
    sh(c.worker("enqueue", "--keys", ",".join(more)))
    ok = c.wait(lambda: all(c.jobs().get(k, {}).get("state") in CONF["done"] for k in more), 30)
    check(bool(ok), "after the purge, new jobs are still claimed and finished by the worker", json.dumps(c.jobs()))

    # 9. explain-claim --apply
    apply_leg(c, wc)

    wc.send_signal(signal.SIGTERM)
    try:
        wc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        wc.kill()
    print(f"# {SYSTEM} {a.version}: {'all checks passed' if not failures else str(len(failures)) + ' check(s) failed'}"
          f" (worker logs in {a.logdir})", flush=True)
    return 1 if failures else 0


def apply_leg(c, wc):
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
    before = c.conn.indexes("river_job")
    r, shown = c.qctl("explain-claim")
    check(r.returncode == 1, "qctl explain-claim flags River's fetch once river_job_prioritized_fetching_index is gone",
          f"exit {r.returncode}: {(r.stdout + r.stderr)[-600:]}")
    r, shown = c.qctl("explain-claim", "--apply")
    after = c.conn.indexes("river_job")
    new = sorted(after - before)
    if not check(r.returncode == 0 and len(new) >= 1, f"qctl explain-claim --apply built {new} and finds the fetch fine",
                 f"exit {r.returncode}: {(r.stdout + r.stderr)[-600:]}"):
        return
    if c.kind == "postgres":
        scans = lambda: c.conn.execute("SELECT coalesce(sum(idx_scan), 0) FROM pg_stat_user_indexes "
                                       "WHERE indexrelname = ANY(%s)", (new,)).fetchone()[0]
        time.sleep(1.2)
        c.conn.execute("SELECT pg_stat_clear_snapshot()")
        first = scans()
    more = [f"apply-{i}" for i in range(1, 6)]
    sh(c.worker("enqueue", "--keys", ",".join(more)))
    ok = c.wait(lambda: all(c.jobs().get(k, {}).get("state") in CONF["done"] for k in more), 30)
    check(bool(ok), "after --apply, the worker still fetches every new job", json.dumps({k: c.jobs().get(k) for k in more}))
    if c.kind == "postgres":
        time.sleep(1.2)
        c.conn.execute("SELECT pg_stat_clear_snapshot()")
        used = scans() - first
        check(used > 0, f"River's fetch uses the new index {new}", f"{used} index scans")
    else:
        # SQLite keeps no per-index scan counter: ask its planner about the worker's very statement (claim_sqlite.sql).
        sys.path.insert(0, HERE)
        from worker import claim_sql
        fetch = claim_sql(c.a.version, c.kind)
        uses = [c.conn.raw.execute("EXPLAIN QUERY PLAN " + fetch, (None, "default", 1, "qctl", 100)).fetchall()]
        hit = [ix for ix in new if any(f"INDEX {ix}" in str(r[-1]) for r in uses[0])]
        check(bool(hit), f"River's fetch is planned through the new index {new}", str(uses[0]))

if __name__ == "__main__":
    rc = main()
    version = next((sys.argv[i + 1] for i, x in enumerate(sys.argv) if x == "--version"), "?")
    reason = f"{len(failures)} check(s) failed, first: {failures[0]}" if failures else "every check passed"
    if rc <= 1:
        db = next((sys.argv[i + 1] for i, x in enumerate(sys.argv) if x == "--db"), "?")
        kind = "sqlite" if db.startswith("sqlite:") else "postgres"
        print(f"roundtrip {SYSTEM} {version} {kind}: {'PASS' if rc == 0 else 'FAIL'} ({reason})", flush=True)
    sys.exit(rc)
