"""A small Procrastinate app for qctl's real-worker checks (scripts/realsys/procrastinate).

Works with Procrastinate 2.x and 3.x. The database comes from QCTL_RT_DSN (a
libpq URL or key=value string). Every task records its run in qctl_ledger:
one row when it starts, finished_at set when it returns normally (a task that
raises leaves finished_at NULL).

    python qctl_papp.py worker --queues work,live --concurrency 4 --name w1 \
        [--heartbeat 0.5] [--stalled-timeout 3]
    python qctl_papp.py ledger          # create qctl_ledger if missing

--heartbeat and --stalled-timeout set update_heartbeat_interval and
stalled_worker_timeout; they exist from Procrastinate 3.1 (earlier releases
have no heartbeats and ignore them).
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.metadata
import logging
import os
import sys

import procrastinate
import psycopg
from procrastinate import RetryStrategy

DSN = os.environ.get("QCTL_RT_DSN", "postgresql://postgres@127.0.0.1:5432/postgres")
VERSION = tuple(int(p) for p in importlib.metadata.version("procrastinate").split(".")[:2])

# kwargs={} because 2.x opens its LISTEN connection with the pool's kwargs, which must be a mapping
app = procrastinate.App(connector=procrastinate.PsycopgConnector(conninfo=DSN, kwargs={}))

LEDGER_DDL = """
CREATE TABLE IF NOT EXISTS qctl_ledger (
    job_key text NOT NULL,
    worker text,
    pid int,
    started_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    finished_at timestamptz
)"""


async def _ledger(sql: str, *args) -> None:
    async with await psycopg.AsyncConnection.connect(DSN, autocommit=True) as conn:
        await conn.execute(sql, args)


async def _start(context, key: str):
    """Records the run; returns its started_at, which _finish uses to find the row."""
    async with await psycopg.AsyncConnection.connect(DSN, autocommit=True) as conn:
        cur = await conn.execute(
            "INSERT INTO qctl_ledger (job_key, worker, pid) VALUES (%s, %s, %s) RETURNING started_at",
            (key, str(context.worker_name), os.getpid()),
        )
        (started,) = await cur.fetchone()
    return started


async def _finish(key: str, started) -> None:
    await _ledger(
        "UPDATE qctl_ledger SET finished_at = clock_timestamp() "
        "WHERE job_key = %s AND pid = %s AND started_at = %s",
        key,
        os.getpid(),
        started,
    )


async def _should_abort(context) -> bool:
    if hasattr(context, "should_abort_async"):
        return await context.should_abort_async()
    return context.should_abort()


@app.task(name="work", queue="work", pass_context=True)
async def work(context, key: str, secs: float = 0.5) -> None:
    """An ordinary job: runs secs seconds and finishes."""
    started = await _start(context, key)
    await asyncio.sleep(secs)
    await _finish(key, started)


@app.task(name="fail_once", queue="work", pass_context=True)
async def fail_once(context, key: str) -> None:
    """Fails (no retry strategy, so the job ends 'failed') unless it ran before."""
    async with await psycopg.AsyncConnection.connect(DSN, autocommit=True) as conn:
        cur = await conn.execute("SELECT count(*) FROM qctl_ledger WHERE job_key = %s", (key,))
        (runs,) = await cur.fetchone()
    started = await _start(context, key)
    if runs == 0:
        raise RuntimeError(f"{key}: first run fails on purpose")
    await _finish(key, started)


@app.task(name="boom", queue="work", pass_context=True)
async def boom(context, key: str) -> None:
    """Always fails, with no retry strategy: the job ends 'failed'."""
    await _start(context, key)
    raise RuntimeError(f"{key}: boom")


@app.task(
    name="flaky",
    queue="work",
    pass_context=True,
    retry=RetryStrategy(max_attempts=3, wait=3600),
)
async def flaky(context, key: str) -> None:
    """Fails; its retry strategy puts it back to 'todo', due 1 h later."""
    await _start(context, key)
    raise RuntimeError(f"{key}: flaky")


@app.task(name="hang", queue="live", pass_context=True)
async def hang(context, key: str, secs: float = 600) -> None:
    """Runs until aborted (or secs pass)."""
    started = await _start(context, key)
    loop = asyncio.get_running_loop()
    end = loop.time() + secs
    while loop.time() < end:
        if await _should_abort(context):
            raise procrastinate.exceptions.JobAborted()
        await asyncio.sleep(0.2)
    await _finish(key, started)


async def _ensure_ledger() -> None:
    await _ledger(LEDGER_DDL)


def main() -> None:
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="cmd", required=True)
    w = sub.add_parser("worker")
    w.add_argument("--queues", default="")
    w.add_argument("--concurrency", type=int, default=1)
    w.add_argument("--name", default=None)
    w.add_argument("--heartbeat", type=float, default=None)
    w.add_argument("--stalled-timeout", type=float, default=None)
    sub.add_parser("ledger")
    args = parser.parse_args()

    logging.basicConfig(level=logging.INFO, stream=sys.stderr,
                        format="%(asctime)s %(name)s %(message)s")
    if args.cmd == "ledger":
        asyncio.run(_ensure_ledger())
        return
    opts: dict = {
        "queues": [q for q in args.queues.split(",") if q] or None,
        "concurrency": args.concurrency,
        "name": args.name,
    }
    if VERSION >= (3, 0):
        opts["fetch_job_polling_interval"] = 0.5
        opts["abort_job_polling_interval"] = 0.5
    else:
        opts["timeout"] = 0.5
    if VERSION >= (3, 1):
        if args.heartbeat is not None:
            opts["update_heartbeat_interval"] = args.heartbeat
        if args.stalled_timeout is not None:
            opts["stalled_worker_timeout"] = args.stalled_timeout

    async def run() -> None:
        async with app.open_async():
            await app.run_worker_async(**opts)

    asyncio.run(run())


if __name__ == "__main__":
    main()
