"""Regenerates tests/fixtures/pgqueuer/v<VERSION>/{schema,rows,claim}.sql with the real system.

Run with the Python of a venv made by install.sh (it imports pgqueuer):

    VENV=$(scripts/realsys/pgqueuer/install.sh 1.6.0)
    $VENV/bin/python scripts/realsys/pgqueuer/make-rows.py --out tests/fixtures/pgqueuer/v1.6.0

What it does, against a scratch database fx_pgqueuer_<version> on 127.0.0.1:5432
(user postgres, superuser; dropped and made anew):

1. `PGDSN=... python -m pgqueuer install` (the installer), then
   `pg_dump --schema-only --no-owner --no-privileges` -> schema.sql.
2. ALTER DATABASE ... SET log_statement = 'all' for the claim capture.
3. The scenario, with the real client (Queries.enqueue, clear_queue,
   mark_job_as_cancelled) and real queue managers (qctl_pgq.py worker,
   subprocesses, default settings):
     idle_ready      entrypoint idle, served by no worker       -> queued, due now
     idle_scheduled  idle, execute_after 1 h (0.16+)             -> queued, due later
     idle_cancelled  mark_job_as_cancelled                       -> deleted, logged 'canceled'
     idle_deleted    clear_queue('trash')                        -> deleted (0.19+: logged 'deleted')
     doomed          picked by worker A, A killed -9             -> picked, heartbeat stale
     ok              run by worker B                             -> deleted, logged 'successful'
     boom            raised (on_failure default 'delete')        -> deleted, logged 'exception'
     boom_hold       raised, on_failure='hold' (1.x)             -> failed, kept
     flaky           raised, DatabaseRetryEntrypointExecutor (1.x) -> queued, attempts 1, +1 h
     live_running    picked by worker B at dump time             -> picked, heartbeat fresh
   The dump is taken 35 s after worker A died.
4. `pg_dump --data-only --column-inserts` of the PgQueuer tables, timestamps
   rewritten to now() +/- their interval to the dump time -> rows.sql.
5. claim.sql: the dequeue statement from the server log.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import importlib.metadata
import json
import os
import re
import signal
import subprocess
import sys
import time
from datetime import timedelta

HERE = os.path.dirname(os.path.abspath(__file__))
VERSION = importlib.metadata.version("pgqueuer")
VT = tuple(int(p) for p in VERSION.split(".")[:2])
PGLOG = os.environ.get("QCTL_PG_LOG", "/var/log/postgresql/postgresql-15-main.log")
SERVER = "postgresql://postgres@127.0.0.1:5432"


def sh(*args: str, **kw) -> str:
    return subprocess.run(args, check=True, capture_output=True, text=True, **kw).stdout


def psql(db: str, sql: str) -> str:
    return sh("psql", "-X", "-h", "127.0.0.1", "-U", "postgres", "-d", db, "-Atq",
              "-v", "ON_ERROR_STOP=1", "-c", sql).strip()


def strip_meta(text: str) -> str:
    return "".join(l for l in text.splitlines(keepends=True)
                   if not l.startswith("\\restrict") and not l.startswith("\\unrestrict"))


TS = re.compile(r"'(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)?[+-]\d\d(?::\d\d)?)'")


def relative_times(text: str, at: dt.datetime) -> str:
    def repl(m: re.Match) -> str:
        raw = m.group(1)
        if re.search(r"[+-]\d\d$", raw):
            raw += ":00"
        secs = (dt.datetime.fromisoformat(raw) - at).total_seconds()
        sign = "+" if secs >= 0 else "-"
        return f"(now() {sign} interval '{abs(secs):.3f} seconds')"
    return TS.sub(repl, text)


class Scenario:
    def __init__(self, db: str):
        self.db = db
        self.dsn = f"{SERVER}/{db}"
        self.workers: dict[str, subprocess.Popen] = {}

    def start_worker(self, name: str, entrypoints: str) -> None:
        log = open(f"/tmp/qctl-pgqueuer-{self.db}-{name}.log", "w")
        self.workers[name] = subprocess.Popen(
            [sys.executable, os.path.join(HERE, "qctl_pgq.py"), "worker",
             "--entrypoints", entrypoints, "--name", name],
            env={**os.environ, "QCTL_RT_DSN": self.dsn}, stdout=log, stderr=log)

    def kill(self, name: str) -> None:
        p = self.workers.pop(name)
        os.kill(p.pid, signal.SIGKILL)
        p.wait()

    def wait_sql(self, sql: str, want: str, timeout: float = 60) -> None:
        end = time.time() + timeout
        while time.time() < end:
            if psql(self.db, sql) == want:
                return
            time.sleep(0.2)
        raise SystemExit(f"timed out waiting for {sql!r} = {want!r} (is {psql(self.db, sql)!r})")

    async def run(self) -> dict[str, int]:
        import asyncpg
        from pgqueuer.db import AsyncpgDriver
        from pgqueuer.queries import Queries

        conn = await asyncpg.connect(self.dsn)
        q = Queries(AsyncpgDriver(conn))
        ids: dict[str, int] = {}

        async def enq(entrypoint: str, key: str, after: float | None = None, **extra) -> int:
            payload = json.dumps({"key": key, **extra}).encode()
            kw = {}
            if after is not None:
                kw["execute_after"] = timedelta(seconds=after)
            ids[key] = (await q.enqueue(entrypoint, payload, **kw))[0]
            return ids[key]

        def status(key: str) -> str:
            return f"SELECT coalesce((SELECT status::text FROM pgqueuer WHERE id = {ids[key]}), 'gone')"

        await enq("idle", "idle_ready")
        if VT >= (0, 16):  # execute_after
            await enq("idle", "idle_scheduled", after=3600)
        await enq("idle", "idle_cancelled")
        await q.mark_job_as_cancelled([ids["idle_cancelled"]])
        await enq("trash", "idle_deleted")
        await q.clear_queue("trash")

        await enq("doomed", "doomed")
        self.start_worker("worker-a", "doomed")
        self.wait_sql(status("doomed"), "picked")
        time.sleep(1)
        self.kill("worker-a")
        killed_at = time.time()

        await enq("work", "ok", secs=0.1)
        await enq("boom", "boom")
        b_entrypoints = "work,boom,hang"
        if VT >= (1, 0):
            await enq("boom_hold", "boom_hold")
            await enq("flaky", "flaky")
            b_entrypoints += ",boom_hold,flaky"
        self.start_worker("worker-b", b_entrypoints)
        self.wait_sql(status("ok"), "gone")
        self.wait_sql(status("boom"), "gone")
        if VT >= (1, 0):
            self.wait_sql(status("boom_hold"), "failed")
            self.wait_sql(f"SELECT status::text || attempts FROM pgqueuer WHERE id = {ids['flaky']}", "queued1")

        time.sleep(max(0.0, killed_at + 35 - time.time()))
        await enq("hang", "live_running")
        self.wait_sql(status("live_running"), "picked")
        time.sleep(0.5)
        await conn.close()
        return ids


def capture_claim(db: str, offset: int) -> tuple[str, str]:
    with open(PGLOG, encoding="utf-8", errors="replace") as f:
        f.seek(offset)
        text = f.read()
    entries = re.split(r"\n(?=\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)", text)
    for i, e in enumerate(entries):
        if f"@{db} " not in e.split("\n", 1)[0]:
            continue
        m = re.search(r"LOG:  (?:execute [^:]*|statement): (.*)", e, re.S)
        if m and "SKIP LOCKED" in m.group(1) and "'picked'" in m.group(1) and "UPDATE" in m.group(1):
            stmt = m.group(1)
            stmt = "\n".join(l[1:] if l.startswith("\t") else l for l in stmt.splitlines()).rstrip()
            pid = re.search(r"\[(\d+)\]", e).group(1)
            detail = ""
            for nxt in entries[i + 1:i + 20]:
                if f"[{pid}]" in nxt.split("\n", 1)[0] and "DETAIL:  parameters:" in nxt:
                    detail = nxt.split("DETAIL:  ", 1)[1].strip()
                    break
            return stmt, detail
    raise SystemExit("no dequeue statement found in the server log")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    db = "fx_pgqueuer_" + VERSION.replace(".", "_")
    os.makedirs(args.out, exist_ok=True)
    today = dt.date.today().isoformat()

    subprocess.run(["dropdb", "-h", "127.0.0.1", "-U", "postgres", "--if-exists", db], check=True)
    subprocess.run(["createdb", "-h", "127.0.0.1", "-U", "postgres", db], check=True)
    out = subprocess.run([sys.executable, "-m", "pgqueuer", "install"], check=True,
                         capture_output=True, text=True, env={**os.environ, "PGDSN": f"{SERVER}/{db}"})
    schema = strip_meta(sh("pg_dump", "-h", "127.0.0.1", "-U", "postgres", "--schema-only",
                           "--no-owner", "--no-privileges", db))
    with open(os.path.join(args.out, "schema.sql"), "w") as f:
        f.write(f"""-- System:  PgQueuer (Python), PyPI "pgqueuer" {VERSION}
-- Version: {VERSION} (tag v{VERSION} of janbjorge/pgqueuer)
-- Date:    {today}
-- Dialect: PostgreSQL (dumped from PostgreSQL 15)
-- How:     scripts/realsys/pgqueuer/install.sh {VERSION} (pip install pgqueuer=={VERSION} asyncpg),
--          createdb {db}; PGDSN=postgresql://postgres@127.0.0.1:5432/{db} python -m pgqueuer install
--          (the package's own install DDL), then
--          pg_dump --schema-only --no-owner --no-privileges {db} (psql \\restrict lines removed).
--          PgQueuer writes no version marker: releases are told apart by the catalog
--          (queue_manager_id from 0.14, execute_after 0.16, pgqueuer_log 0.19, dedupe_key 0.20,
--          headers 0.24, the 'failed' status label and attempts 1.0, bigint ids 1.1.1).
--
""" + schema)

    psql("postgres", f"ALTER DATABASE {db} SET log_statement = 'all'")
    offset = os.path.getsize(PGLOG)
    psql(db, "CREATE TABLE IF NOT EXISTS qctl_ledger (job_key text NOT NULL, worker text, pid int, "
             "started_at timestamptz NOT NULL DEFAULT clock_timestamp(), finished_at timestamptz)")
    sc = Scenario(db)
    try:
        ids = asyncio.run(sc.run())
        at = dt.datetime.fromisoformat(psql(db, "SELECT to_char(clock_timestamp() AT TIME ZONE 'UTC', "
                                                "'YYYY-MM-DD HH24:MI:SS.US') || '+00:00'"))
        tables = [t for t in psql(db, "SELECT string_agg(tablename, ' ' ORDER BY tablename) FROM pg_tables "
                                      "WHERE schemaname = 'public' AND tablename LIKE 'pgqueuer%'").split()]
        dump_args = ["pg_dump", "-h", "127.0.0.1", "-U", "postgres", "--data-only", "--column-inserts"]
        for t in tables:
            dump_args += ["-t", f"public.{t}"]
        data = strip_meta(sh(*dump_args, db, env={**os.environ, "PGTZ": "UTC"}))
    finally:
        for name in list(sc.workers):
            sc.kill(name)
    psql("postgres", f"ALTER DATABASE {db} RESET ALL")

    body = [l for l in relative_times(data, at).splitlines()
            if l.startswith("INSERT INTO") or l.startswith("SELECT pg_catalog.setval")]
    lines = [f"""-- PgQueuer {VERSION}: rows as PgQueuer itself wrote them (load after schema.sql).
-- Made by scripts/realsys/pgqueuer/make-rows.py on {today}: jobs enqueued with the real client
-- (Queries.enqueue, mark_job_as_cancelled, clear_queue) and run by real queue managers
-- (qctl_pgq.py worker, QueueManager.run with its defaults); worker-a (entrypoint doomed) was
-- killed with SIGKILL while running doomed; worker-b was alive at dump time.
-- Dumped with pg_dump --data-only --column-inserts 35 s after worker-a died; every timestamp
-- rewritten as now() +/- the interval it had to the dump time. No triggers write rows here
-- (the only trigger sends NOTIFY), so the rows load as they are.
-- Jobs (id: key; finished jobs are deleted from pgqueuer and live on in the log/statistics):"""]
    for k, v in sorted(ids.items(), key=lambda kv: kv[1]):
        lines.append(f"--   {v}: {k}")
    lines += body
    with open(os.path.join(args.out, "rows.sql"), "w") as f:
        f.write("\n".join(lines) + "\n")

    claim, detail = capture_claim(db, offset)
    with open(os.path.join(args.out, "claim.sql"), "w") as f:
        f.write(f"""-- PgQueuer {VERSION}: the queue manager's dequeue statement, captured from the PostgreSQL server
-- log on {today} (ALTER DATABASE {db} SET log_statement = 'all') while `qctl_pgq.py worker`
-- (QueueManager.run, no concurrency limits) ran; made by scripts/realsys/pgqueuer/make-rows.py.
-- Verbatim as asyncpg sent it (a prepared statement), with its own placeholders $1 ...
-- The server logged these values with it (this worker's entrypoints, batch size, uuid):
--   {detail}
""" + claim + ("" if claim.endswith(";") else ";") + "\n")
    print(f"wrote {args.out}: schema.sql rows.sql claim.sql (db {db} kept for checks)")


if __name__ == "__main__":
    main()
