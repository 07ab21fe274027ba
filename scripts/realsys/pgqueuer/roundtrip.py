"""qctl round trip with PgQueuer's own client and queue managers (run by roundtrip.sh).

    python roundtrip.py DB_URL          (the venv's python; DB_URL must hold no PgQueuer tables)

Environment: QCTL (qctl binary, default `qctl`), QCTL_LAYOUT (optional --layout value;
default: qctl's own detection), RT_JOBS (default 50).

Prints one line per check ("ok   ..." / "FAIL ...", "n/a  ..." where the release has no
such thing) and exits 1 if any check failed.
"""

from __future__ import annotations

import asyncio
import importlib.metadata
import json
import os
import random
import signal
import subprocess
import sys
import time
from datetime import timedelta

HERE = os.path.dirname(os.path.abspath(__file__))
DB_URL = sys.argv[1]
os.environ["QCTL_RT_DSN"] = DB_URL
sys.path.insert(0, HERE)
import asyncpg  # noqa: E402
from pgqueuer.db import AsyncpgDriver  # noqa: E402
from pgqueuer.queries import Queries  # noqa: E402

import qctl_pgq  # noqa: E402

VERSION = importlib.metadata.version("pgqueuer")
VT = qctl_pgq.VERSION
QCTL = os.environ.get("QCTL", "qctl")
LAYOUT = os.environ.get("QCTL_LAYOUT")
N = int(os.environ.get("RT_JOBS", "50"))
TIMEOUT_S = 3
FAILS: list[str] = []
LOGDIR = os.path.join(os.environ.get("QCTL_REALSYS_CACHE", "/tmp"), "logs", f"pgqueuer-{VERSION}")
os.makedirs(LOGDIR, exist_ok=True)
WORKERS: dict[str, subprocess.Popen] = {}
HAS_LOG = False             # set in main(): pgqueuer_log exists (not in 0.9, which has only pgqueuer_statistics)
HAS_FAILED = VT >= (1, 0)   # 'failed' status (on_failure='hold') and attempts


def check(name: str, ok: bool, detail: str = "") -> bool:
    print(("ok   " if ok else "FAIL ") + name + (f" -- {detail}" if detail else ""), flush=True)
    if not ok:
        FAILS.append(name)
    return ok


def note(text: str) -> None:
    print(f"note {text}", flush=True)


def run(coro):
    return asyncio.run(coro)


async def _q(query: str, *args):
    conn = await asyncpg.connect(DB_URL)
    try:
        return await conn.fetch(query, *args)
    finally:
        await conn.close()


def sql(query: str, *args):
    return [tuple(r) for r in run(_q(query, *args))]


def one(query: str, *args):
    rows = sql(query, *args)
    return rows[0][0] if rows else None


def qctl(*args: str) -> tuple[int, str, str]:
    cmd = [QCTL, "-d", DB_URL, "--color", "never"]
    if LAYOUT:
        cmd += ["--layout", LAYOUT]
    p = subprocess.run(cmd + list(args), capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr.strip()


def qctl_json(*args: str):
    rc, out, err = qctl("--format", "json", *args)
    if rc not in (0, 1):
        return None, f"exit {rc}: {err}"
    try:
        return json.loads(out), ""
    except json.JSONDecodeError as e:
        return None, f"exit {rc}, unreadable JSON ({e}): {out[:200]} {err}"


def qctl_totals():
    doc, err = qctl_json("stats", "--exact")
    if doc is None:
        return None, err
    tot = dict.fromkeys(("pending", "ready", "running", "stale", "done", "failed", "cancelled", "other"), 0)
    for q in doc.get("queues", []):
        for k in tot:
            tot[k] += int(q.get(k) or 0)
    return tot, ""


def start_worker(name: str, entrypoints: str, **opts) -> None:
    args = [sys.executable, os.path.join(HERE, "qctl_pgq.py"), "worker", "--name", name,
            "--entrypoints", entrypoints, "--batch-size", "4"]
    for k, v in opts.items():
        args += [f"--{k.replace('_', '-')}", str(v)]
    log = open(os.path.join(LOGDIR, f"{name}.log"), "w")
    WORKERS[name] = subprocess.Popen(args, env=os.environ, stdout=log, stderr=log)


def stop_worker(name: str, sig: int = signal.SIGTERM) -> None:
    p = WORKERS.pop(name)
    os.kill(p.pid, sig)
    try:
        p.wait(timeout=20)
    except subprocess.TimeoutExpired:
        os.kill(p.pid, signal.SIGKILL)
        p.wait()


def counts() -> dict[str, int]:
    """The system's own count: Queries.queue_size(), summed per status."""
    async def f():
        conn = await asyncpg.connect(DB_URL)
        try:
            sizes = await Queries(AsyncpgDriver(conn)).queue_size()
        finally:
            await conn.close()
        out: dict[str, int] = {}
        for s in sizes:
            out[str(s.status)] = out.get(str(s.status), 0) + s.count
        return out
    return run(f())


def wait_until(pred, timeout: float, what: str) -> bool:
    end = time.time() + timeout
    while time.time() < end:
        if pred():
            return True
        time.sleep(0.25)
    return check(what, False, f"not within {timeout:.0f} s; queue {counts()}")


def enqueue(entrypoint: str, keys: list[str], secs: bool = True) -> dict[str, int]:
    async def f():
        conn = await asyncpg.connect(DB_URL)
        try:
            q = Queries(AsyncpgDriver(conn))
            payloads = [json.dumps({"key": k, **({"secs": round(random.uniform(0.2, 1.0), 2)} if secs else {})}).encode()
                        for k in keys]
            ids = await q.enqueue([entrypoint] * len(keys), payloads, [0] * len(keys))
            return dict(zip(keys, ids))
        finally:
            await conn.close()
    return run(f())


def history() -> dict[str, int]:
    """Finished jobs as PgQueuer keeps them: the latest pgqueuer_log status of each job gone from the
    table (Queries.job_status), or pgqueuer_statistics before 0.19."""
    if HAS_LOG:
        rows = sql("SELECT status::text, count(*) FROM (SELECT DISTINCT ON (job_id) job_id, status FROM pgqueuer_log "
                   "ORDER BY job_id, created DESC, id DESC) s WHERE NOT EXISTS (SELECT 1 FROM pgqueuer p "
                   "WHERE p.id = s.job_id) GROUP BY 1")
    else:
        rows = sql("SELECT status::text, sum(count)::bigint FROM pgqueuer_statistics GROUP BY 1")
    return {k: int(v) for k, v in rows}


def finished_ledger() -> int:
    return one("SELECT count(*) FROM qctl_ledger WHERE finished_at IS NOT NULL") or 0


def main() -> int:
    print(f"# PgQueuer {VERSION} round trip on {DB_URL.rsplit('/', 1)[-1]} with {QCTL}", flush=True)
    if one("SELECT to_regclass('pgqueuer') IS NOT NULL"):
        print("roundtrip: the database already holds pgqueuer; give an empty database", file=sys.stderr)
        return 2
    subprocess.run([sys.executable, "-m", "pgqueuer", "install"], check=True, capture_output=True,
                   env={**os.environ, "PGDSN": DB_URL})
    sql(qctl_pgq.LEDGER_DDL)
    global HAS_LOG
    HAS_LOG = bool(one("SELECT to_regclass('pgqueuer_log') IS NOT NULL"))
    check("schema installed by `python -m pgqueuer install`", one("SELECT to_regclass('pgqueuer') IS NOT NULL"))

    keys = [f"rt-{i:03d}" for i in range(N)]
    ids = enqueue("work", keys)
    check(f"{N} jobs enqueued with Queries.enqueue", counts().get("queued") == N, str(counts()))

    # w1 heartbeats every 1.5 s: 1.x heartbeat_timeout 3 s, 0.x retry_timer 3 s on its entrypoint
    hb = {"heartbeat_timeout": TIMEOUT_S} if VT >= (1, 0) else {"retry_timer": TIMEOUT_S}
    start_worker("w1", "work", **hb)
    wait_until(lambda: finished_ledger() >= 10 and counts().get("picked", 0) >= 1, 60, "worker w1 runs jobs")
    stop_worker("w1", signal.SIGKILL)
    inflight = sorted(r[0] for r in sql("SELECT id FROM pgqueuer WHERE status = 'picked'"))
    check("kill -9 of worker w1 left jobs 'picked'", len(inflight) >= 1, f"ids {inflight}")
    time.sleep(TIMEOUT_S + 1.5)

    own = sorted(r[0] for r in sql(
        f"SELECT id FROM pgqueuer WHERE status = 'picked' AND heartbeat < NOW() - interval '{TIMEOUT_S} seconds'"))
    check(f"PgQueuer's stale rule (picked, heartbeat older than {TIMEOUT_S} s) sees exactly w1's jobs",
          own == inflight, f"stale {own}, in flight {inflight}")
    tot, err = qctl_totals()
    if check("qctl stats runs", tot is not None, err):
        check("qctl stats: running = PgQueuer's picked", tot["running"] == len(inflight),
              f"qctl running {tot['running']}, picked {len(inflight)}")
    doc, err = qctl_json("stats", "--timeout", f"{TIMEOUT_S}s")
    stale = sum(int(q.get("stale") or 0) for q in doc["queues"]) if doc else None
    check(f"qctl stats --timeout {TIMEOUT_S}s: stale = PgQueuer's stale jobs", stale == len(own),
          err or f"qctl stale {stale}, PgQueuer {len(own)}")

    log_before = one("SELECT count(*) FROM pgqueuer_log") if HAS_LOG else None
    rc, out, err = qctl("--format", "json", "reap", "--timeout", f"{TIMEOUT_S}s")
    try:
        rdoc = json.loads(out) if rc == 0 else None
    except json.JSONDecodeError:
        rdoc = None
    reaped = check(f"qctl reap --timeout {TIMEOUT_S}s", rdoc is not None, f"exit {rc}: {err}")
    if reaped:
        got = sorted(j["id"] for j in rdoc.get("jobs", []))
        check("qctl reap rescued exactly the stale jobs", got == inflight, f"reaped {got}, stale {inflight}")
        has_qm = one("SELECT count(*) FROM information_schema.columns WHERE table_name = 'pgqueuer' "
                     "AND column_name = 'queue_manager_id'")
        rows = sql("SELECT id, status::text, " + ("queue_manager_id" if has_qm else "NULL::uuid") +
                   " FROM pgqueuer WHERE id = ANY($1::bigint[]) ORDER BY id", inflight)
        check("reaped jobs are queued with no owner", all(s == "queued" and w is None for _, s, w in rows), str(rows))
        if HAS_LOG:
            added = sql("SELECT job_id, status::text FROM pgqueuer_log ORDER BY id OFFSET $1", log_before)
            check("qctl reap logged each job it put back 'queued' in pgqueuer_log, as PgQueuer logs a job back in the queue",
                  sorted(j for j, _ in added) == inflight and all(st == "queued" for _, st in added), str(added[:5]))
    # w2 never re-picks stale jobs itself (1.x heartbeat_timeout 1 h; 0.x retry_timer 0, the default),
    # so what it runs of w1's jobs is what qctl reap gave back -- unless reap failed: then w2 is
    # PgQueuer's own rescuer (heartbeat_timeout / retry_timer 3 s) so that the rest can go on.
    entry = "work,fail_once,boom_hold" if HAS_FAILED else "work,fail_once"
    if reaped:
        start_worker("w2", entry, **({"heartbeat_timeout": 3600} if VT >= (1, 0) else {}))
    else:
        note("letting PgQueuer's own dequeue re-pick the stale jobs (heartbeat_timeout / retry_timer 3 s) to go on")
        start_worker("w2", entry, **hb)
    fail_id = enqueue("fail_once", ["rt-fail"], secs=False)["rt-fail"]

    def settled() -> bool:
        c = counts()
        return not c.get("queued") and not c.get("picked")
    wait_until(settled, 90, "fresh worker w2 finishes every job")
    c = counts()
    if HAS_FAILED:
        check("every job done once rescued; rt-fail held 'failed' (on_failure='hold')", c == {"failed": 1}, str(c))
    else:
        check("every job done once rescued; rt-fail deleted (0.x keeps no failed job)", c == {}, str(c))
    if HAS_LOG:
        succ = one("SELECT count(DISTINCT job_id) FROM pgqueuer_log WHERE status = 'successful' "
                   "AND job_id = ANY($1::bigint[])", list(ids.values()))
        check("pgqueuer_log: every job logged 'successful'", succ == N, f"{succ} of {N}")
    else:
        succ = one("SELECT coalesce(sum(count), 0) FROM pgqueuer_statistics WHERE status = 'successful'")
        check("pgqueuer_statistics: every job counted 'successful'", succ == N, f"{succ} of {N}")
    inflight_keys = {k for k, v in ids.items() if v in inflight}
    runs = {k: (n, f) for k, n, f in sql("SELECT job_key, count(*), count(finished_at) FROM qctl_ledger "
                                          "WHERE job_key LIKE 'rt-___' GROUP BY job_key")}
    bad = {k: runs.get(k) for k in keys
           if (k in inflight_keys and not (runs.get(k, (0, 0))[1] >= 1 and runs[k][0] <= 2))
           or (k not in inflight_keys and runs.get(k) != (1, 1))}
    check("ledger: every job ran to completion exactly once (a job killed mid-run at most twice)",
          not bad, f"(runs, finished) {bad}" if bad else "")
    reruns = {k for k, (n, _) in runs.items() if n > 1}
    check("ledger: only the jobs killed mid-run ran twice", reruns <= inflight_keys,
          f"ran twice {sorted(reruns)}, killed mid-run {sorted(inflight_keys)}")
    if HAS_LOG and reaped:
        # Back in the queue, then picked anew by the fresh worker: queued, picked, queued, picked,
        # successful (PgQueuer's own re-pick, which hands the job straight to its worker, leaves out
        # the middle 'queued').
        hist = {r[0]: r[1] for r in sql("SELECT job_id, array_agg(status::text ORDER BY id) FROM pgqueuer_log "
                                        "WHERE job_id = ANY($1::bigint[]) GROUP BY job_id", inflight)}
        odd = {j: h for j, h in hist.items() if h != ["queued", "picked", "queued", "picked", "successful"]}
        check("pgqueuer_log of reaped jobs reads queued, picked, queued (qctl reap), picked, successful",
              not odd and len(hist) == len(inflight), str(dict(list(odd.items())[:3])))
    tot, err = qctl_totals()
    done = history()
    check("qctl stats agrees with PgQueuer's queue_size and its history after the run", tot is not None
          and tot["pending"] == 0 and tot["running"] == 0
          and tot["failed"] == c.get("failed", 0) + done.get("exception", 0)
          and tot["done"] == done.get("successful", 0),
          err or f"qctl {tot} pgqueuer {c}, history {done}")

    if HAS_FAILED:
        rc, out, err = qctl("retry", str(fail_id))
        check(f"qctl retry {fail_id} (the held failed job)", rc == 0,
              (out.strip().splitlines() or [""])[-1] + " " + err)
        note(f"rt-fail after qctl retry: {sql('SELECT status::text, attempts FROM pgqueuer WHERE id = $1', fail_id)}; "
             f"log rows for it: {[r[0] for r in sql('SELECT status::text FROM pgqueuer_log WHERE job_id = $1 ORDER BY id', fail_id)]}")
        wait_until(lambda: one("SELECT count(*) FROM pgqueuer WHERE id = $1", fail_id) == 0, 30,
                   "the real worker runs the retried job")
        check("retried job ran again and succeeded (two runs: one failure, one success)",
              sql("SELECT count(*), count(finished_at) FROM qctl_ledger WHERE job_key = 'rt-fail'") == [(2, 1)]
              and one("SELECT count(*) FROM pgqueuer_log WHERE job_id = $1 AND status = 'successful'", fail_id) == 1,
              str(sql("SELECT count(*), count(finished_at) FROM qctl_ledger WHERE job_key = 'rt-fail'")))
        log = [r[0] for r in sql("SELECT status::text FROM pgqueuer_log WHERE job_id = $1 ORDER BY id", fail_id)]
        check("pgqueuer_log of the retried job reads as `pgq requeue` writes it (a 'queued' row after 'failed')",
              "queued" in log[log.index("failed"):] if "failed" in log else False, str(log))
    else:
        rc, out, err = qctl("retry", "--all")
        print(f"n/a  qctl retry: PgQueuer {VERSION} keeps no failed job (failures are deleted and logged); "
              f"qctl retry --all says: exit {rc} {(out.strip().splitlines() or [''])[-1]} {err}", flush=True)

    # purge: PgQueuer deletes finished jobs itself; only held failures (1.x) stay to purge
    if HAS_FAILED:
        hold = enqueue("boom_hold", ["rt-hold"], secs=False)["rt-hold"]
        wait_until(lambda: one("SELECT status::text FROM pgqueuer WHERE id = $1", hold) == "failed", 30,
                   "a boom_hold job is held failed")
        time.sleep(1.2)
        rc, out, err = qctl("purge", "--status", "failed", "--older-than", "1s", "--yes")
        check("qctl purge --status failed --older-than 1s removes the held failed job",
              rc == 0 and one("SELECT count(*) FROM pgqueuer WHERE id = $1", hold) == 0, f"exit {rc} {err} {out.strip()}")
    rc, out, err = qctl("purge", "--older-than", "1s", "--yes")
    if rc == 2 and "no done state" in err:
        print(f"n/a  qctl purge --older-than 1s (status done): PgQueuer deletes finished jobs itself; qctl says: {err}",
              flush=True)
    else:
        check("qctl purge --older-than 1s (done: PgQueuer keeps none) runs", rc == 0, f"exit {rc} {err} {out.strip()}")
    post = enqueue("work", [f"rt-post-{i}" for i in range(5)])
    wait_until(lambda: one("SELECT count(*) FROM pgqueuer WHERE id = ANY($1::bigint[])", list(post.values())) == 0
               and one("SELECT count(*) FROM qctl_ledger WHERE job_key LIKE 'rt-post-%' AND finished_at IS NOT NULL") == 5,
               30, "after purge, new jobs still run")
    check("after purge, new jobs still run",
          one("SELECT count(*) FROM qctl_ledger WHERE job_key LIKE 'rt-post-%' AND finished_at IS NOT NULL") == 5)
    stop_worker("w2")
    time.sleep(1)
    tot, err = qctl_totals()
    c = counts()
    done = history()
    check("final: qctl stats agrees with PgQueuer's queue_size and its history", tot is not None
          and tot["pending"] == c.get("queued", 0) and tot["running"] == c.get("picked", 0)
          and tot["failed"] == c.get("failed", 0) + done.get("exception", 0)
          and tot["done"] == done.get("successful", 0)
          and tot["cancelled"] == done.get("canceled", 0) + done.get("deleted", 0),
          err or f"qctl {tot} pgqueuer {c}, history {done}")
    return 0


def apply_leg() -> None:
    """explain-claim --apply: held failures pile up (on_failure='hold') while the dequeue's indexes on
    queued jobs are gone; qctl flags the dequeue and builds an index; the real worker then dequeues
    through it."""
    if not HAS_FAILED:
        print(f"n/a  explain-claim --apply: PgQueuer {VERSION} deletes every finished or failed job, so its table "
              "holds only the backlog and running jobs: no history for a dequeue to walk", flush=True)
        return
    sql("INSERT INTO pgqueuer (priority, entrypoint, payload, status) "
        "SELECT 0, 'send_email', NULL, 'failed' FROM generate_series(1, 20000)")  # the entrypoint explain-claim checks
    for ix in ("pgqueuer_priority_id_id1_idx", "pgqueuer_ep_prio_id_idx", "pgqueuer_ep_ea_idx"):
        sql(f"DROP INDEX IF EXISTS {ix}")
    sql("ANALYZE pgqueuer")
    before = {r[0] for r in sql("SELECT indexname FROM pg_indexes WHERE tablename = 'pgqueuer'")}
    rc, out, err = qctl("explain-claim")
    check("qctl explain-claim flags the dequeue once its indexes are gone", rc == 1, f"exit {rc}: {out[-400:]} {err}")
    rc, out, err = qctl("explain-claim", "--apply")
    new = sorted({r[0] for r in sql("SELECT indexname FROM pg_indexes WHERE tablename = 'pgqueuer'")} - before)
    if not check("qctl explain-claim --apply builds an index and then finds the dequeue fine",
                 rc == 0 and len(new) >= 1, f"exit {rc}, new {new}: {out[-600:]} {err}"):
        return
    scans = lambda: one("SELECT coalesce(sum(idx_scan), 0) FROM pg_stat_user_indexes WHERE indexrelname = ANY($1)", new)
    time.sleep(1.2)
    first = scans()
    start_worker("w3", "work")
    post = enqueue("work", [f"rt-apply-{i}" for i in range(5)])
    ok = wait_until(lambda: one("SELECT count(*) FROM pgqueuer WHERE id = ANY($1::bigint[])", list(post.values())) == 0,
                    30, "after --apply, the real worker still dequeues")
    stop_worker("w3")
    time.sleep(1.2)
    if ok:
        check("after --apply, the real worker still dequeues every job", True)
        used = scans() - first
        check(f"the worker's dequeue uses the new index {new}", used > 0, f"{used} index scans")


def finish(rc: int) -> int:
    print(f"# {len(FAILS)} check(s) failed" if FAILS else "# all checks passed", flush=True)
    reason = f"{len(FAILS)} check(s) failed, first: {FAILS[0]}" if FAILS else "every check passed"
    print(f"roundtrip pgqueuer {VERSION} postgres: {'PASS' if rc == 0 and not FAILS else 'FAIL'} ({reason})",
          flush=True)
    return 0 if rc == 0 and not FAILS else 1


if __name__ == "__main__":
    try:
        rc = main()
        if rc == 0:
            apply_leg()
        rc = finish(rc) if rc < 2 else rc
    finally:
        for name in list(WORKERS):
            stop_worker(name, signal.SIGKILL)
    sys.exit(rc)
