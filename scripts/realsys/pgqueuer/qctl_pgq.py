"""A small PgQueuer app for qctl's real-worker checks (scripts/realsys/pgqueuer).

Works with PgQueuer 0.9 to 1.x. The database comes from QCTL_RT_DSN (a
postgres:// URL). Every job's payload is JSON {"key": ..., "secs": ...}; every
entrypoint records its run in qctl_ledger: one row when it starts, finished_at
set when it returns normally (an entrypoint that raises leaves it NULL).

    python qctl_pgq.py worker --entrypoints work,fail_once --name w1 \
        [--heartbeat-timeout 3] [--retry-timer 3] [--batch-size 10]
    python qctl_pgq.py enqueue ENTRYPOINT KEY [--secs S] [--after SECONDS] [--priority P]

--heartbeat-timeout is QueueManager.run(heartbeat_timeout=...) (PgQueuer 1.x:
the worker's staleness threshold, heartbeats every half of it); --retry-timer
is the per-entrypoint retry_timer (PgQueuer 0.9 - 0.26: a picked job whose
heartbeat is older is re-picked; 0, the default, never; heartbeats every half
of it).
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.metadata
import json
import logging
import os
import sys
from datetime import timedelta

import asyncpg
from pgqueuer.db import AsyncpgDriver
from pgqueuer.qm import QueueManager
from pgqueuer.queries import Queries

DSN = os.environ.get("QCTL_RT_DSN", "postgresql://postgres@127.0.0.1:5432/postgres")
VERSION = tuple(int(p) for p in importlib.metadata.version("pgqueuer").split(".")[:2])
WORKER = os.environ.get("QCTL_WORKER_NAME", "worker")

LEDGER_DDL = """
CREATE TABLE IF NOT EXISTS qctl_ledger (
    job_key text NOT NULL,
    worker text,
    pid int,
    started_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    finished_at timestamptz
)"""


async def _ledger(sql: str, *args):
    conn = await asyncpg.connect(DSN)
    try:
        return await conn.fetchval(sql, *args)
    finally:
        await conn.close()


def _payload(job) -> dict:
    return json.loads(job.payload) if job.payload else {}


async def _start(key: str):
    """Records the run; returns its started_at, which _finish uses to find the row."""
    return await _ledger("INSERT INTO qctl_ledger (job_key, worker, pid) VALUES ($1, $2, $3) "
                         "RETURNING started_at", key, WORKER, os.getpid())


async def _finish(key: str, started) -> None:
    await _ledger("UPDATE qctl_ledger SET finished_at = clock_timestamp() "
                  "WHERE job_key = $1 AND pid = $2 AND started_at = $3", key, os.getpid(), started)


async def work(job) -> None:
    p = _payload(job)
    started = await _start(p["key"])
    await asyncio.sleep(float(p.get("secs", 0.5)))
    await _finish(p["key"], started)


async def fail_once(job) -> None:
    p = _payload(job)
    runs = await _ledger("SELECT count(*) FROM qctl_ledger WHERE job_key = $1", p["key"])
    started = await _start(p["key"])
    if runs == 0:
        raise RuntimeError(f"{p['key']}: first run fails on purpose")
    await _finish(p["key"], started)


async def boom(job) -> None:
    p = _payload(job)
    await _start(p["key"])
    raise RuntimeError(f"{p['key']}: boom")


async def hang(job) -> None:
    p = _payload(job)
    started = await _start(p["key"])
    await asyncio.sleep(float(p.get("secs", 600)))
    await _finish(p["key"], started)


# name -> (function, options by release)
ENTRYPOINTS = {
    "work": work,
    "fail_once": fail_once,   # 1.x: on_failure='hold' (kept as 'failed'); 0.x: deleted, logged 'exception'
    "boom": boom,             # default on_failure: deleted, logged 'exception'
    "boom_hold": boom,        # 1.x: on_failure='hold'
    "flaky": boom,            # 1.x: DatabaseRetryEntrypointExecutor, back to 'queued' 1 h later
    "hang": hang,
    "doomed": hang,
}


def build_qm(conn, names: list[str], retry_timer: float | None):
    driver = AsyncpgDriver(conn)
    if VERSION >= (1, 0):
        from pgqueuer.executors import DatabaseRetryEntrypointExecutor
        qm = QueueManager(Queries(driver))
    else:
        qm = QueueManager(driver)
    for name in names:
        fn = ENTRYPOINTS[name]
        kw: dict = {}
        if VERSION >= (1, 0):
            if name in ("fail_once", "boom_hold"):
                kw["on_failure"] = "hold"
            if name == "flaky":
                kw["executor_factory"] = lambda params: DatabaseRetryEntrypointExecutor(
                    parameters=params, max_attempts=3, initial_delay=timedelta(hours=1),
                    max_delay=timedelta(hours=1))
        elif retry_timer is not None:
            kw["retry_timer"] = timedelta(seconds=retry_timer)
        qm.entrypoint(name, **kw)(fn)
    return qm


async def run_worker(args) -> None:
    conn = await asyncpg.connect(DSN)
    names = [n for n in args.entrypoints.split(",") if n]
    qm = build_qm(conn, names, args.retry_timer)
    kw: dict = {"batch_size": args.batch_size, "dequeue_timeout": timedelta(seconds=1)}
    if VERSION >= (1, 0) and args.heartbeat_timeout is not None:
        kw["heartbeat_timeout"] = timedelta(seconds=args.heartbeat_timeout)
    await qm.run(**kw)


async def enqueue(args) -> None:
    conn = await asyncpg.connect(DSN)
    q = Queries(AsyncpgDriver(conn))
    payload = json.dumps({"key": args.key, **({"secs": args.secs} if args.secs is not None else {})}).encode()
    kw: dict = {"priority": args.priority}
    if args.after:
        kw["execute_after"] = timedelta(seconds=args.after)
    ids = await q.enqueue(args.entrypoint, payload, **kw)
    print(ids[0])
    await conn.close()


def main() -> None:
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    w = sub.add_parser("worker")
    w.add_argument("--entrypoints", required=True)
    w.add_argument("--name", default=None)
    w.add_argument("--heartbeat-timeout", type=float, default=None)
    w.add_argument("--retry-timer", type=float, default=None)
    w.add_argument("--batch-size", type=int, default=10)
    e = sub.add_parser("enqueue")
    e.add_argument("entrypoint")
    e.add_argument("key")
    e.add_argument("--secs", type=float, default=None)
    e.add_argument("--after", type=float, default=None)
    e.add_argument("--priority", type=int, default=0)
    sub.add_parser("ledger")
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, stream=sys.stderr,
                        format="%(asctime)s %(name)s %(message)s")
    if args.cmd == "worker":
        global WORKER
        WORKER = args.name or WORKER
        asyncio.run(run_worker(args))
    elif args.cmd == "enqueue":
        asyncio.run(enqueue(args))
    else:
        asyncio.run(_ledger(LEDGER_DDL))


if __name__ == "__main__":
    main()
