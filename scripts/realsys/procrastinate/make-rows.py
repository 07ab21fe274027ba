"""Regenerates tests/fixtures/procrastinate/v<VERSION>/{schema,rows,claim}.sql with the real system.

Run with the Python of a venv made by install.sh (it imports procrastinate):

    VENV=$(scripts/realsys/procrastinate/install.sh 3.10.0)
    $VENV/bin/python scripts/realsys/procrastinate/make-rows.py \
        --out tests/fixtures/procrastinate/v3.10.0

What it does, against a scratch database fx_procrastinate_<version> on
127.0.0.1:5432 (user postgres, superuser; dropped and made anew):

1. `procrastinate --app=qctl_papp.app schema --apply` (the installer), then
   `pg_dump --schema-only --no-owner --no-privileges` -> schema.sql.
2. Per-database logging for the claim capture (ALTER DATABASE ... SET
   log_statement = 'all', and auto_explain with log_nested_statements, loaded
   through session_preload_libraries, so the statement inside the
   procrastinate_fetch_job function is logged too).
3. The scenario, with the real client (Task.defer_async, cancel_job_by_id_async)
   and real workers (qctl_papp.py worker, subprocesses):
     idle_ready       queue idle, no worker on it                 -> todo, due now
     idle_scheduled   queue idle, schedule_in 1 h                 -> todo, scheduled
     idle_cancelled   cancelled before it ran                     -> cancelled
     ok               ran on worker B                             -> succeeded
     boom             raised, no retry strategy                   -> failed
     flaky            raised, RetryStrategy(max_attempts=3, wait=3600) -> todo, attempts 1, +1 h
     doomed_a         running on worker A, A killed -9            -> doing, stale
     doomed_b         as doomed_a, then abort requested           -> doing + abort_requested (3.x) / aborting (2.x)
     live_aborted     running on B, abort requested               -> aborted
     live_running     running on B at dump time                   -> doing, live
   Worker A (queue doomed) runs with the default heartbeat settings; the dump
   is taken 35 s after A was killed, so A's heartbeat (3.1+) and the 'started'
   events of its jobs (2.x, 3.0) are past the 30 s default, while
   live_running started a moment before the dump and B's heartbeat is fresh.
4. `pg_dump --data-only --column-inserts` of procrastinate_workers (3.1+),
   procrastinate_jobs and procrastinate_events, every timestamp rewritten
   to now() +/- an interval measured from the dump time -> rows.sql.
5. claim.sql from the server log: the worker's fetch call and the statement
   auto_explain logged inside the fetch function.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import importlib.metadata
import os
import re
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
VERSION = importlib.metadata.version("procrastinate")
VT = tuple(int(p) for p in VERSION.split(".")[:2])
PGLOG = os.environ.get("QCTL_PG_LOG", "/var/log/postgresql/postgresql-15-main.log")
SERVER = "postgresql://postgres@127.0.0.1:5432"


def sh(*args: str, **kw) -> str:
    return subprocess.run(args, check=True, capture_output=True, text=True, **kw).stdout


def psql(db: str, sql: str) -> str:
    return sh("psql", "-X", "-h", "127.0.0.1", "-U", "postgres", "-d", db, "-Atq",
              "-v", "ON_ERROR_STOP=1", "-c", sql).strip()


def strip_meta(text: str) -> str:
    # pg_dump >= 15.14 writes \restrict / \unrestrict lines, which only psql understands.
    return "".join(l for l in text.splitlines(keepends=True)
                   if not l.startswith("\\restrict") and not l.startswith("\\unrestrict"))


TS = re.compile(r"'(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)?[+-]\d\d(?::\d\d)?)'")


def relative_times(text: str, at: dt.datetime) -> str:
    def repl(m: re.Match) -> str:
        raw = m.group(1)
        if re.search(r"[+-]\d\d$", raw):
            raw += ":00"
        t = dt.datetime.fromisoformat(raw)
        secs = (t - at).total_seconds()
        sign = "+" if secs >= 0 else "-"
        return f"(now() {sign} interval '{abs(secs):.3f} seconds')"
    return TS.sub(repl, text)


class Scenario:
    def __init__(self, db: str):
        self.db = db
        self.dsn = f"{SERVER}/{db}"
        os.environ["QCTL_RT_DSN"] = self.dsn
        sys.path.insert(0, HERE)
        import qctl_papp  # noqa: E402  (reads QCTL_RT_DSN at import)
        self.m = qctl_papp
        self.workers: dict[str, subprocess.Popen] = {}

    def start_worker(self, name: str, queues: str, concurrency: int) -> None:
        log = open(f"/tmp/qctl-procrastinate-{self.db}-{name}.log", "w")
        self.workers[name] = subprocess.Popen(
            [sys.executable, os.path.join(HERE, "qctl_papp.py"), "worker",
             "--queues", queues, "--concurrency", str(concurrency), "--name", name],
            env={**os.environ, "QCTL_RT_DSN": self.dsn}, stdout=log, stderr=log)

    def kill(self, name: str) -> None:
        p = self.workers.pop(name)
        os.kill(p.pid, signal.SIGKILL)
        p.wait()

    def status(self, job_id: int) -> str:
        return psql(self.db, f"SELECT status FROM procrastinate_jobs WHERE id = {job_id}")

    def wait_status(self, job_id: int, want: set[str], timeout: float = 60) -> None:
        end = time.time() + timeout
        while time.time() < end:
            if self.status(job_id) in want:
                return
            time.sleep(0.2)
        raise SystemExit(f"job {job_id} never reached {want} (is {self.status(job_id)})")

    async def run(self) -> dict[str, int]:
        m = self.m
        ids: dict[str, int] = {}
        async with m.app.open_async():
            ids["idle_ready"] = await m.work.configure(queue="idle").defer_async(key="idle_ready")
            ids["idle_scheduled"] = await m.work.configure(
                queue="idle", schedule_in={"hours": 1}).defer_async(key="idle_scheduled")
            ids["idle_cancelled"] = await m.work.configure(queue="idle").defer_async(key="idle_cancelled")
            await m.app.job_manager.cancel_job_by_id_async(ids["idle_cancelled"])
            ids["doomed_a"] = await m.hang.configure(queue="doomed").defer_async(key="doomed_a")
            ids["doomed_b"] = await m.hang.configure(queue="doomed").defer_async(key="doomed_b")

            self.start_worker("worker-a", "doomed", 2)
            self.wait_status(ids["doomed_a"], {"doing"})
            self.wait_status(ids["doomed_b"], {"doing"})
            time.sleep(1)
            self.kill("worker-a")
            killed_at = time.time()
            await m.app.job_manager.cancel_job_by_id_async(ids["doomed_b"], abort=True)

            ids["ok"] = await m.work.defer_async(key="ok", secs=0.1)
            ids["boom"] = await m.boom.defer_async(key="boom")
            ids["flaky"] = await m.flaky.defer_async(key="flaky")
            ids["live_aborted"] = await m.hang.defer_async(key="live_aborted")
            self.start_worker("worker-b", "work,live", 4)
            self.wait_status(ids["ok"], {"succeeded"})
            self.wait_status(ids["boom"], {"failed"})
            self.wait_status(ids["live_aborted"], {"doing"})
            await m.app.job_manager.cancel_job_by_id_async(ids["live_aborted"], abort=True)
            self.wait_status(ids["live_aborted"], {"aborted"})
            end = time.time() + 60
            while not (self.status(ids["flaky"]) == "todo"
                       and psql(self.db, f"SELECT attempts FROM procrastinate_jobs WHERE id = {ids['flaky']}") == "1"):
                if time.time() > end:
                    raise SystemExit("flaky never went back to todo")
                time.sleep(0.2)

            time.sleep(max(0.0, killed_at + 35 - time.time()))
            ids["live_running"] = await m.hang.defer_async(key="live_running")
            self.wait_status(ids["live_running"], {"doing"})
            time.sleep(0.5)
        return ids


def capture_claim(db: str, offset: int) -> tuple[str, str]:
    """The worker's fetch call and the statement inside the fetch function, from the server log."""
    with open(PGLOG, encoding="utf-8", errors="replace") as f:
        f.seek(offset)
        text = f.read()
    entries = re.split(r"\n(?=\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)", text)
    call = inner = None
    for e in entries:
        if f"@{db} " not in e.split("\n", 1)[0]:
            continue
        if call is None and re.search(r"LOG:  execute [^:]*: .*procrastinate_fetch_job", e, re.S):
            call = e
        if inner is None and "CONTEXT:  SQL statement \"WITH candidate" in e:
            inner = e
        if call and inner:
            break
    if not call or not inner:
        raise SystemExit("no fetch statement found in the server log")
    call_stmt = re.sub(r"^.*?LOG:  execute [^:]*: ", "", call, flags=re.S)
    inner_stmt = inner.split('SQL statement "', 1)[1].rsplit('"', 1)[0]
    inner_stmt = "\n".join(l[1:] if l.startswith("\t") else l for l in inner_stmt.splitlines())
    return call_stmt.rstrip(), inner_stmt.rstrip()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True, help="fixture directory to write")
    args = ap.parse_args()
    db = "fx_procrastinate_" + VERSION.replace(".", "_")
    os.makedirs(args.out, exist_ok=True)
    today = dt.date.today().isoformat()

    subprocess.run(["dropdb", "-h", "127.0.0.1", "-U", "postgres", "--if-exists", db], check=True)
    subprocess.run(["createdb", "-h", "127.0.0.1", "-U", "postgres", db], check=True)
    env = {**os.environ, "QCTL_RT_DSN": f"{SERVER}/{db}", "PYTHONPATH": HERE}
    subprocess.run([os.path.join(os.path.dirname(sys.executable), "procrastinate"),
                    "--app=qctl_papp.app", "schema", "--apply"], check=True, env=env)
    schema = strip_meta(sh("pg_dump", "-h", "127.0.0.1", "-U", "postgres", "--schema-only",
                           "--no-owner", "--no-privileges", db))
    with open(os.path.join(args.out, "schema.sql"), "w") as f:
        f.write(f"""-- System:  Procrastinate (Python), PyPI "procrastinate" {VERSION}
-- Version: {VERSION} (git tag {VERSION} of procrastinate-org/procrastinate)
-- Date:    {today}
-- Dialect: PostgreSQL (dumped from PostgreSQL 15)
-- How:     scripts/realsys/procrastinate/install.sh {VERSION} (pip install procrastinate=={VERSION} psycopg[binary]),
--          createdb {db}; procrastinate --app=qctl_papp.app schema --apply
--          (applies procrastinate/sql/schema.sql of the package), then
--          pg_dump --schema-only --no-owner --no-privileges {db} (psql \\restrict lines removed).
--          Procrastinate writes no version marker: releases are told apart by the catalog
--          (procrastinate_workers and procrastinate_jobs.worker_id from 3.1, abort_requested and
--          the _v1/_v2 function names from 3.0, the 'retried' event label from 3.4).
--
""" + schema)

    for stmt in (f"ALTER DATABASE {db} SET log_statement = 'all'",
                 f"ALTER DATABASE {db} SET session_preload_libraries = 'auto_explain'",
                 f"ALTER DATABASE {db} SET auto_explain.log_min_duration = 0",
                 f"ALTER DATABASE {db} SET auto_explain.log_nested_statements = on"):
        psql("postgres", stmt)
    offset = os.path.getsize(PGLOG)

    psql(db, "CREATE TABLE IF NOT EXISTS qctl_ledger (job_key text NOT NULL, worker text, pid int, "
             "started_at timestamptz NOT NULL DEFAULT clock_timestamp(), finished_at timestamptz)")
    sc = Scenario(db)
    try:
        ids = asyncio.run(sc.run())
        at = dt.datetime.fromisoformat(psql(db, "SELECT to_char(clock_timestamp() AT TIME ZONE 'UTC', "
                                                "'YYYY-MM-DD HH24:MI:SS.US') || '+00:00'"))
        tables = ["procrastinate_jobs", "procrastinate_events"]
        if VT >= (3, 1):
            tables.insert(0, "procrastinate_workers")
        dump_args = ["pg_dump", "-h", "127.0.0.1", "-U", "postgres", "--data-only", "--column-inserts"]
        for t in tables:
            dump_args += ["-t", f"public.{t}"]
        data = strip_meta(sh(*dump_args, db, env={**os.environ, "PGTZ": "UTC"}))
    finally:
        for name in list(sc.workers):
            sc.kill(name)
    for stmt in (f"ALTER DATABASE {db} RESET ALL",):
        psql("postgres", stmt)

    body = [l for l in relative_times(data, at).splitlines()
            if l.startswith("INSERT INTO") or l.startswith("SELECT pg_catalog.setval")]
    by_id = {v: k for k, v in ids.items()}
    lines = [f"""-- Procrastinate {VERSION}: rows as Procrastinate itself wrote them (load after schema.sql).
-- Made by scripts/realsys/procrastinate/make-rows.py on {today}: jobs deferred with the real client
-- (Task.defer_async, cancel_job_by_id_async) and run by real workers (qctl_papp.py worker);
-- worker-a (queue doomed) was killed with SIGKILL while running doomed_a and doomed_b, then abort
-- was requested for doomed_b; worker-b (queues work, live) was alive at dump time.
-- Dumped with pg_dump --data-only --column-inserts 35 s after worker-a died; every timestamp
-- rewritten as now() +/- the interval it had to the dump time, so the fixture ages as it loads.
-- procrastinate_events rows are written by triggers on procrastinate_jobs; to load the dumped
-- events as they were, triggers are off for this session (session_replication_role = replica, as
-- pg_dump --disable-triggers would do; needs a superuser). Without it every todo job would get a
-- second 'deferred' event.
-- Jobs (id: key):"""]
    for k, v in sorted(ids.items(), key=lambda kv: kv[1]):
        lines.append(f"--   {v}: {k}")
    lines.append("SET session_replication_role = replica;")
    lines += body
    lines.append("SET session_replication_role = DEFAULT;")
    with open(os.path.join(args.out, "rows.sql"), "w") as f:
        f.write("\n".join(lines) + "\n")

    call, inner = capture_claim(db, offset)
    fn = re.search(r"procrastinate_fetch_job\w*", call).group(0)
    # the function's own variables, in its argument order, become $1, $2 (the outer call's order)
    inner_sql = inner.replace("target_queue_names", "$1::varchar[]").replace("p_worker_id", "$2::bigint")
    argtext = ("arguments target_queue_names and p_worker_id written as the call's $1 and $2"
               if "p_worker_id" in inner else "argument target_queue_names written as the call's $1")
    with open(os.path.join(args.out, "claim.sql"), "w") as f:
        f.write(f"""-- Procrastinate {VERSION}: the worker's claim, captured from the PostgreSQL server log on {today}
-- (ALTER DATABASE {db} SET log_statement = 'all' and auto_explain.log_nested_statements) while
-- `qctl_papp.py worker` (App.run_worker_async) ran; made by scripts/realsys/procrastinate/make-rows.py.
-- The worker sends (verbatim, psycopg server-side parameters):
--
""" + "".join(f"--   {l}\n" for l in call.splitlines()) + f"""--
-- {fn} is PL/pgSQL; the statement below is the one it runs (logged by auto_explain as
-- "SQL statement"), with its {argtext} (casts added so the statement can be planned on its own).
""" + inner_sql + ";\n")
    print(f"wrote {args.out}: schema.sql rows.sql claim.sql (db {db} kept for checks)")


if __name__ == "__main__":
    main()
