"""The legs that the SQL-played round trips (que, oban, river, good_job, solid_queue) walk alike.

Each system's roundtrip.py calls these legs in order and keeps what is its own between them: its states, its
rescuer's rules, what qctl reap must do there, the setup of its explain-claim leg and any check of its own tables.

  a = parse_args(system)                        the round trip's command line
  c = Ctx(a, System(...))                       the connection, the fixture's files, the workers, qctl
  check(ok, what, detail)                       one line, `ok` or `FAIL`; `failures` lists the failed ones
  schema_leg, enqueue_leg, kill_leg, ...        the legs in order, each described where it is defined
  round_trip(c, rescuer_rules, apply_leg)       all of them, for a system with no check of its own between them
  sys.exit(summary(system, main))               the round trip's last line: `roundtrip SYSTEM VERSION DATABASE: PASS|FAIL`
"""
import argparse
import json
import os
import signal
import subprocess
import sys
import time

from realsys_db import connect

REPO = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."))

failures = []


def check(ok, what, detail=""):
    """Print one check's line (`ok`, `FAIL` with the detail, or `note` when ok is "note"); returns whether it held."""
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


class System:
    """What a round trip needs to know of its system.

    name: the system's folder under scripts/realsys; here: that folder (its worker.py runs the jobs)
    done, dead, running: the system's own names of its states, as its worker.py's `jobs` reports them
    fixture: the folder under tests/fixtures/<name>/ that holds schema.sql and counts.sql (default: the version)
    ledger_order: how the ledger's runs are ordered (`id` where the ledger has one, else `started_at`)
    kind_in_logdir: the worker logs' folder ends in -<database> on PostgreSQL too (else only on the others)
    """

    def __init__(self, name, here, done, dead, running, fixture=None, ledger_order="id", kind_in_logdir=False):
        self.name, self.here = name, here
        self.done, self.dead, self.running = set(done), set(dead), set(running)
        self.fixture, self.ledger_order, self.kind_in_logdir = fixture, ledger_order, kind_in_logdir


def parse_args(system):
    """The round trip's command line; a.logdir becomes <logdir>/<system>-<version>."""
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
    a.logdir = os.path.join(a.logdir, f"{system}-{a.version}")
    return a


class Ctx:
    """One round trip's state: the connection (realsys_db), the fixture's files for this database (schema.sql and
    counts.sql on PostgreSQL, schema_<database>.sql and counts_<database>.sql elsewhere), the workers, qctl."""

    def __init__(self, a, system):
        self.a, self.s = a, system
        self.conn = connect(a.db)
        self.kind = self.conn.kind
        self.fx = os.path.join(REPO, "tests", "fixtures", system.name, system.fixture or a.version)
        self.suffix = "" if self.kind == "postgres" else "_" + self.kind
        self.logs = f"{a.logdir}-{self.kind}" if system.kind_in_logdir or self.kind != "postgres" else a.logdir
        a.logdir = self.logs
        os.makedirs(self.logs, exist_ok=True)
        self.procs = {}
        self.keys = [f"job-{i:03d}" for i in range(1, a.jobs + 1)]
        self.dead_key = "dead-001"
        print(f"# {system.name} {a.version}: qctl round trip against {a.db.split('@')[-1]}", flush=True)

    def worker(self, *args):
        return [self.a.python, os.path.join(self.s.here, "worker.py"), *args, "--db", self.a.db, "--version", self.a.version]

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

    def qctl_shown(self, *args):
        """Run qctl and print the command with its exit and output; returns (result, output)."""
        r, shown = self.qctl(*args)
        out = (r.stdout + r.stderr).strip()
        print(f"     $ {shown}\n       -> exit {r.returncode}: " + out.replace("\n", "\n          "), flush=True)
        return r, out

    def ledger(self):
        return self.conn.execute("SELECT job_key, worker, pid, started_at, finished_at FROM qctl_ledger "
                                 f"ORDER BY {self.s.ledger_order}").fetchall()

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

    def all_in(self, states, keys):
        """Whether every job of keys is in one of states (a job not there yet is not)."""
        jobs = self.jobs()
        return all(jobs.get(k, {}).get("state") in states for k in keys)


def schema_leg(c):
    """1. The database is empty and the fixture's schema loads into it."""
    n_tables = len(c.conn.tables())
    if n_tables:
        return check(False, "database is empty", f"{n_tables} tables already there; use a fresh database")
    schema = f"schema{c.suffix}.sql"
    r = c.conn.load_schema(os.path.join(c.fx, schema))
    return check(r.returncode == 0, f"schema {c.a.version} ({c.kind}) loaded from {os.path.relpath(c.fx, REPO)}/{schema}", r.stderr)


def enqueue_leg(c):
    """2. The system's own insert enqueues c.keys, and c.dead_key, which fails its only attempt."""
    r = sh(c.worker("enqueue", "--keys", ",".join(c.keys + [c.dead_key]), "--fail-first", c.dead_key))
    return check(r.returncode == 0,
                 f"enqueued {len(c.keys)} jobs and 1 job that fails its only attempt, with {c.s.name}'s own insert", r.stderr)


def kill_leg(c):
    """3. Two workers run jobs side by side; once most are done, worker-b stops gracefully and worker-a is killed
    with SIGKILL in the middle of a job. Returns the killed job's key (None if none was caught running), the jobs
    as they stand after the kill, and when the kill was."""
    wa, wb = c.start("worker-a"), c.start("worker-b")
    done_before = c.wait(lambda: sum(1 for v in c.jobs().values() if v["state"] in c.s.done) >= c.a.jobs * 0.6, 60)
    check(bool(done_before), "two workers ran jobs concurrently")
    busy = c.wait(lambda: c.conn.execute(
        "SELECT job_key FROM qctl_ledger WHERE worker = 'worker-a' AND finished_at IS NULL").fetchone(), 20, 0.02)
    wb.send_signal(signal.SIGTERM)
    os.kill(wa.pid, signal.SIGKILL)
    killed_key = busy[0] if busy else None
    wa.wait()
    wb.wait(timeout=30)
    check(killed_key is not None, f"worker-a killed with SIGKILL while running {killed_key}; worker-b stopped gracefully")
    return killed_key, c.jobs(), time.time()


def left_running_leg(c, st, killed_key):
    """3. The killed job is left in the system's running state by the dead worker."""
    if killed_key:
        check(st[killed_key]["state"] in c.s.running, f"{killed_key} is left {st[killed_key]['state']} by the dead worker",
              json.dumps(st[killed_key]))


# What qctl reap must do where the system rescues a dead worker's job by requeueing it.
REQUEUED = ("qctl reap requeued the killed worker's job", lambda r, out: r.returncode == 0 and "requeue" in out)


def reap_leg(c, st, killed_key, kill_time, rescuer_rules, expect=REQUEUED):
    """4. Once the killed job's worker is 3 s silent, `qctl reap --timeout 3s` does what expect says (what it must
    do, and the test of its result and output), and leaves the killed job as the system's own rescuer would:
    rescuer_rules(version, before, after) lists (ok, what, detail). Returns the jobs after the reap."""
    time.sleep(max(0.0, 3.5 - (time.time() - kill_time)))
    r, out = c.qctl_shown("reap", "--timeout", "3s")
    what, test = expect
    check(test(r, out), what, out)
    after = c.jobs()
    if killed_key:
        print(f"     {killed_key} after reap: {json.dumps(after[killed_key])}", flush=True)
        for ok, what, detail in rescuer_rules(c.a.version, st[killed_key], after[killed_key]):
            check(ok, what, detail)
    return after


def finish_leg(c, killed_key, killed_reruns=True):
    """5. The fresh worker finishes every job and leaves the dead one dead (or done). killed_reruns: the killed job
    is one of them, and the ledger shows worker-c running it to the end; else the system does not run it again by
    itself and it is left out. Returns the jobs as they then stand."""
    keys = [k for k in c.keys if killed_reruns or k != killed_key]

    def all_done():
        s = c.jobs()
        return all(s[k]["state"] in c.s.done for k in keys) and s[c.dead_key]["state"] in c.s.dead | c.s.done
    ok = c.wait(all_done, 90)
    st = c.jobs()
    pending = {k: v["state"] for k, v in st.items() if k in keys and v["state"] not in c.s.done}
    check(bool(ok), "the fresh worker finished every job, the killed one included" if killed_reruns else
          "the fresh worker finished every other job", f"not done: {pending}")
    if killed_key and killed_reruns:
        runs = [row for row in c.ledger() if row[0] == killed_key]
        check(any(row[1] == "worker-c" and row[4] for row in runs),
              f"the fresh worker ran {killed_key} to completion", str(runs))
    return st


def retry_leg(c, st):
    """6. The job that failed its only attempt is dead-lettered; `qctl retry <id>` is accepted and the worker then
    runs it to completion."""
    dead_key = c.dead_key
    dead = st[dead_key]
    check(dead["state"] in c.s.dead, f"{dead_key} is dead-lettered ({dead['state']}) after its only attempt failed", json.dumps(dead))
    r, out = c.qctl_shown("retry", str(dead["id"]))
    check(r.returncode == 0, f"qctl retry {dead['id']} accepted", out)
    ok = c.wait(lambda: c.jobs()[dead_key]["state"] in c.s.done, 30)
    check(bool(ok), f"the worker ran the retried job {dead_key} to completion", json.dumps(c.jobs()[dead_key]))


def audit_leg(c, killed_key, stale_may_be_null=False, lock_race=False):
    """7. The ledger: each job ran once, to the end (the killed one exactly once more, to the end), the dead one
    twice (its failure, then after qctl retry); the system's own counts (counts.sql): every job done, nothing in
    another state; `qctl stats`: the same, nothing pending, running, failed or stale (stale_may_be_null: where
    qctl judges nothing stale without --timeout, null is as good as 0).

    lock_race: the system's locks do not follow its rows' MVCC (Que's advisory locks): a poll whose snapshot
    predates another worker's finish can lock the job just after that worker unlocks it and run it once more
    (Que's worker checks only that the row still exists, worker.rb check_job). A second run that starts after
    the first one finished is that race; two runs at once would still be a double claim."""
    keys, dead_key = c.keys, c.dead_key
    by = {}
    for k, w, pid, s, f in c.ledger():
        by.setdefault(k, []).append((w, f, s))
    bad = []
    for k in keys:
        runs = by.get(k, [])
        finished = [r_ for r_ in runs if r_[1]]
        if k != killed_key:
            ok_k = len(runs) == 1 and len(finished) == 1
            if lock_race and len(runs) == 2 and len(finished) == 2:
                first, second = sorted(runs, key=lambda r_: r_[2])
                ok_k = second[2] >= first[1]
        else:
            # the run the kill interrupted may have done its work (finished_at set) before the system recorded it:
            # at-least-once allows exactly one more run, which must finish
            ok_k = len(runs) == 2 and runs[-1][1] is not None
        if not ok_k:
            bad.append((k, runs))
    check(not bad, f"ledger: each of {len(keys)} jobs ran once to the end (the killed one: once more, to the end)", str(bad[:5]))
    dr = by.get(dead_key, [])
    check(len(dr) == 2 and all(f for _, f, _ in dr), f"ledger: {dead_key} ran twice (failed, then after qctl retry)", str(dr))
    counts = c.counts()
    total_done = sum(n for s, n in counts.items() if s in c.s.done)
    others = {s: n for s, n in counts.items() if s not in c.s.done and n}
    check(total_done == len(keys) + 1 and not others,
          f"{c.s.name}'s own counts (counts.sql): {len(keys) + 1} done, nothing else", json.dumps(counts))
    r, shown = c.qctl("--format", "json", "stats")
    try:
        tot = json.loads(r.stdout)["total"]
        ok = (tot["done"] == len(keys) + 1 and tot["running"] == 0 and tot["pending"] == 0 and tot["failed"] == 0
              and (tot["stale"] == 0 or (stale_may_be_null and tot["stale"] is None)))
        check(ok, f"qctl stats agrees: done {len(keys) + 1}, nothing pending/running/failed/stale", json.dumps(tot))
    except Exception as e:  # noqa: BLE001
        check(False, "qctl stats agrees with the system's counts", f"{shown} -> exit {r.returncode}: {(r.stdout + r.stderr).strip()} ({e})")


def purge_leg(c):
    """8. `qctl purge --older-than 0s --yes` deletes every finished job."""
    r, out = c.qctl_shown("purge", "--older-than", "0s", "--yes")
    left = sum(1 for v in c.jobs().values() if v["state"] in c.s.done)
    check(r.returncode == 0 and left == 0, f"qctl purge deleted every finished job ({left} left)", out)


def after_purge_leg(c):
    """8. After the purge, new jobs are still claimed and run to the end."""
    more = [f"after-{i}" for i in range(1, 4)]
    sh(c.worker("enqueue", "--keys", ",".join(more)))
    ok = c.wait(lambda: c.all_in(c.s.done, more), 30)
    check(bool(ok), "after the purge, new jobs are still claimed and finished by the worker", json.dumps(c.jobs()))


def explain_apply_leg(c, table, flagged, claim, still, used, planned=None):
    """9. Run after the system's own setup (finished jobs piled up, the index its claim reads dropped, `table`
    analyzed): `qctl explain-claim` flags the claim (exit 1; flagged says what); `--apply` builds at least one
    index on `table` and then finds the claim (its name: claim) fine; new jobs are still claimed and finished
    (still says by whom); and the claim reads the new index: on PostgreSQL its idx_scan grows (used says what),
    elsewhere planned(new) asks the database's own planner and returns (ok, what, detail)."""
    before = c.conn.indexes(table)
    r, _ = c.qctl("explain-claim")
    check(r.returncode == 1, flagged, f"exit {r.returncode}: {(r.stdout + r.stderr)[-600:]}")
    r, _ = c.qctl("explain-claim", "--apply")
    new = sorted(c.conn.indexes(table) - before)
    if not check(r.returncode == 0 and len(new) >= 1, f"qctl explain-claim --apply built {new} and finds the {claim} fine",
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
    ok = c.wait(lambda: c.all_in(c.s.done, more), 30)
    check(bool(ok), f"after --apply, {still} every new job", json.dumps({k: c.jobs().get(k) for k in more}))
    if c.kind == "postgres":
        time.sleep(1.2)
        c.conn.execute("SELECT pg_stat_clear_snapshot()")
        n = scans() - first
        check(n > 0, f"{used} {new}", f"{n} index scans")
    else:
        check(*planned(new))


def round_trip(c, rescuer_rules, apply_leg, stale_may_be_null=False):
    """Every leg in order, for a system that adds no check of its own between them (its own: rescuer_rules for the
    reap, apply_leg(c) for the explain-claim leg, stale_may_be_null for the audit). Returns the exit code."""
    if not schema_leg(c) or not enqueue_leg(c):
        return 1
    killed_key, st, kill_time = kill_leg(c)
    left_running_leg(c, st, killed_key)
    reap_leg(c, st, killed_key, kill_time, rescuer_rules)
    wc = c.start("worker-c")
    st = finish_leg(c, killed_key)
    retry_leg(c, st)
    audit_leg(c, killed_key, stale_may_be_null)
    purge_leg(c)
    after_purge_leg(c)
    apply_leg(c)
    return stop(c, wc)


def stop(c, wc):
    """The end: the fresh worker stopped (SIGTERM, then SIGKILL after 15 s); returns the exit code."""
    wc.send_signal(signal.SIGTERM)
    try:
        wc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        wc.kill()
    print(f"# {c.s.name} {c.a.version}: {'all checks passed' if not failures else str(len(failures)) + ' check(s) failed'}"
          f" (worker logs in {c.logs})", flush=True)
    return 1 if failures else 0


def summary(system, main):
    """Run main and print the round trip's last line, `roundtrip SYSTEM VERSION DATABASE: PASS|FAIL (reason)`, when
    it ran to a verdict (exit 0 or 1); returns its exit code."""
    rc = main()
    argv = sys.argv
    version = next((argv[i + 1] for i, x in enumerate(argv) if x == "--version"), "?")
    db = next((argv[i + 1] for i, x in enumerate(argv) if x == "--db"), "?")
    kind = "sqlite" if db.startswith("sqlite:") else "mysql" if db.startswith(("mysql:", "mariadb:")) else "postgres"
    reason = f"{len(failures)} check(s) failed, first: {failures[0]}" if failures else "every check passed"
    if rc <= 1:
        print(f"roundtrip {system} {version} {kind}: {'PASS' if rc == 0 else 'FAIL'} ({reason})", flush=True)
    return rc
