"""qctl round trip with Procrastinate's own client and workers (run by roundtrip.sh).

    python roundtrip.py DB_URL          (the venv's python; DB_URL must hold no Procrastinate tables)

Environment: QCTL (qctl binary, default `qctl`), QCTL_LAYOUT (optional --layout value;
default: qctl's own detection), RT_JOBS (default 50).

Prints one line per check ("ok   ..." / "FAIL ...") and exits 1 if any check failed.
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

HERE = os.path.dirname(os.path.abspath(__file__))
DB_URL = sys.argv[1]
os.environ["QCTL_RT_DSN"] = DB_URL
sys.path.insert(0, HERE)
import psycopg  # noqa: E402

import qctl_papp as m  # noqa: E402

VERSION = importlib.metadata.version("procrastinate")
VT = m.VERSION
QCTL = os.environ.get("QCTL", "qctl")
LAYOUT = os.environ.get("QCTL_LAYOUT")
N = int(os.environ.get("RT_JOBS", "50"))
TIMEOUT_S = 3
FAILS: list[str] = []
LOGDIR = os.path.join(os.environ.get("QCTL_REALSYS_CACHE", "/tmp"), "logs", f"procrastinate-{VERSION}")
os.makedirs(LOGDIR, exist_ok=True)
WORKERS: dict[str, subprocess.Popen] = {}


def check(name: str, ok: bool, detail: str = "") -> bool:
    print(("ok   " if ok else "FAIL ") + name + (f" -- {detail}" if detail else ""), flush=True)
    if not ok:
        FAILS.append(name)
    return ok


def note(text: str) -> None:
    print(f"note {text}", flush=True)


def sql(query: str, *args):
    with psycopg.connect(DB_URL, autocommit=True) as conn:
        cur = conn.execute(query, args or None)
        return cur.fetchall() if cur.description else None


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
        return json.loads(out.strip().splitlines()[-1] if "--stream" in args else out), ""
    except (json.JSONDecodeError, IndexError) as e:
        return None, f"exit {rc}, unreadable JSON ({e}): {out[:200]} {err}"


def start_worker(name: str, queues: str = "work", **opts) -> None:
    args = [sys.executable, os.path.join(HERE, "qctl_papp.py"), "worker", "--name", name,
            "--queues", queues, "--concurrency", "4"]
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
    """The system's own count (queries.sql count_jobs_status)."""
    return {s: n for n, s in sql("SELECT count(*) AS count, status FROM procrastinate_jobs GROUP BY status")}


def wait_until(pred, timeout: float, what: str) -> bool:
    end = time.time() + timeout
    while time.time() < end:
        if pred():
            return True
        time.sleep(0.25)
    return check(what, False, f"not within {timeout:.0f} s; statuses {counts()}")


async def stalled_jobs(seconds: float) -> list[int]:
    """Procrastinate's own view of stalled jobs (JobManager.get_stalled_jobs)."""
    async with m.app.open_async():
        if VT >= (3, 1):
            jobs = await m.app.job_manager.get_stalled_jobs(seconds_since_heartbeat=seconds)
        else:
            jobs = await m.app.job_manager.get_stalled_jobs(nb_seconds=int(seconds))
        return sorted(j.id for j in jobs)


async def own_rescue(seconds: float) -> list[int]:
    """The documented retry_stalled_jobs recipe."""
    async with m.app.open_async():
        if VT >= (3, 1):
            jobs = await m.app.job_manager.get_stalled_jobs(seconds_since_heartbeat=seconds)
        else:
            jobs = await m.app.job_manager.get_stalled_jobs(nb_seconds=int(seconds))
        for j in jobs:
            await m.app.job_manager.retry_job(j)
        return sorted(j.id for j in jobs)


async def cancel(job_id: int) -> None:
    """Procrastinate's own abort of a running job."""
    async with m.app.open_async():
        await m.app.job_manager.cancel_job_by_id_async(job_id, abort=True)


async def defer(keys: list[str], task=None) -> dict[str, int]:
    task = task or m.work
    out = {}
    async with m.app.open_async():
        for k in keys:
            if task is m.work:
                out[k] = await task.defer_async(key=k, secs=round(random.uniform(0.2, 1.0), 2))
            else:
                out[k] = await task.defer_async(key=k)
    return out


def qctl_totals() -> tuple[dict | None, str]:
    doc, err = qctl_json("stats", "--exact")
    if doc is None:
        return None, err
    tot = dict.fromkeys(("pending", "ready", "running", "stale", "done", "failed", "cancelled", "other"), 0)
    for q in doc.get("queues", []):
        for k in tot:
            tot[k] += int(q.get(k) or 0)
    return tot, ""


def main() -> int:
    print(f"# Procrastinate {VERSION} round trip on {DB_URL.rsplit('/', 1)[-1]} with {QCTL}", flush=True)
    if one("SELECT to_regclass('procrastinate_jobs') IS NOT NULL"):
        print("roundtrip: the database already holds procrastinate_jobs; give an empty database", file=sys.stderr)
        return 2
    env = {**os.environ, "PYTHONPATH": HERE}
    subprocess.run([os.path.join(os.path.dirname(sys.executable), "procrastinate"),
                    "--app=qctl_papp.app", "schema", "--apply"], check=True, env=env,
                   capture_output=True)
    sql(m.LEDGER_DDL)
    check("schema installed by `procrastinate schema --apply`",
          one("SELECT to_regclass('procrastinate_jobs') IS NOT NULL"))

    # A job that runs until aborted, taken first; its abort is asked for once its worker is dead.
    abort_id = asyncio.run(defer(["rt-abort"], m.hang))["rt-abort"]
    keys = [f"rt-{i:03d}" for i in range(N)]
    ids = asyncio.run(defer(keys))
    check(f"{N} jobs deferred with Task.defer_async", counts().get("todo") == N + 1, str(counts()))

    hb = {"heartbeat": 0.5} if VT >= (3, 1) else {}
    start_worker("w1", "work,live", **hb)
    wait_until(lambda: counts().get("succeeded", 0) >= 10 and counts().get("doing", 0) >= 2
               and one("SELECT status::text FROM procrastinate_jobs WHERE id = %s", abort_id) == "doing",
               60, "worker w1 runs jobs")
    stop_worker("w1", signal.SIGKILL)
    doing = sorted(r[0] for r in sql("SELECT id FROM procrastinate_jobs WHERE status = 'doing'"))
    inflight = [i for i in doing if i != abort_id]
    check("kill -9 of worker w1 left jobs in 'doing'", len(inflight) >= 1 and abort_id in doing, f"ids {doing}")
    asyncio.run(cancel(abort_id))
    ab = sql("SELECT status::text, " + ("abort_requested" if VT >= (3, 0) else "NULL") +
             " FROM procrastinate_jobs WHERE id = %s", abort_id)
    note(f"abort asked of job {abort_id} after its worker died (JobManager.cancel_job_by_id_async(abort=True)): {ab}")
    # 3.x: abort_requested, still doing, so stalled, and retry_job fails it. 2.x: 'aborting', never stalled.
    stalled_expected = sorted(doing) if VT >= (3, 0) else inflight
    time.sleep(TIMEOUT_S + 1.5)

    own = asyncio.run(stalled_jobs(TIMEOUT_S))
    check(f"Procrastinate's get_stalled_jobs({TIMEOUT_S} s) sees exactly the killed worker's jobs"
          + ("" if VT >= (3, 0) else " but the aborting one"),
          own == stalled_expected, f"stalled {own}, expected {stalled_expected}")
    tot, err = qctl_totals()
    check("qctl stats runs", tot is not None, err)
    if tot is not None:
        check("qctl stats: running = Procrastinate's doing (and aborting)", tot["running"] == len(doing),
              f"qctl running {tot['running']}, doing {len(doing)}")
    doc, err = qctl_json("stats", "--timeout", f"{TIMEOUT_S}s")
    stale = sum(int(q.get("stale") or 0) for q in doc["queues"]) if doc else None
    check(f"qctl stats --timeout {TIMEOUT_S}s: stale = Procrastinate's stalled jobs", stale == len(own),
          err or f"qctl stale {stale}, stalled {len(own)}")

    rc, out, err = qctl("--format", "json", "reap", "--timeout", f"{TIMEOUT_S}s")
    reaped_ok = rc == 0
    try:
        rdoc = json.loads(out) if reaped_ok else None
    except json.JSONDecodeError:
        rdoc = None
    if check(f"qctl reap --timeout {TIMEOUT_S}s", rdoc is not None, f"exit {rc}: {err}"):
        got = sorted(j["id"] for j in rdoc.get("jobs", []))
        check("qctl reap rescued exactly the stalled jobs", got == stalled_expected,
              f"reaped {got}, stalled {stalled_expected}")
        check("after qctl reap, Procrastinate sees no stalled job",
              asyncio.run(stalled_jobs(TIMEOUT_S)) == [], str(asyncio.run(stalled_jobs(TIMEOUT_S))))
        rows = sql("SELECT id, status::text, attempts FROM procrastinate_jobs WHERE id = ANY(%s) ORDER BY id", inflight)
        check("reaped jobs are todo with attempts + 1, as retry_job leaves them",
              all(s == "todo" and a == 1 for _, s, a in rows), str(rows))
        actions = {j["id"]: j["action"] for j in rdoc.get("jobs", [])}
        st = one("SELECT status::text FROM procrastinate_jobs WHERE id = %s", abort_id)
        if VT >= (3, 0):
            check("the stalled job whose abort was asked is failed, as retry_job fails it, and reported so",
                  st == "failed" and actions.get(abort_id) == "dead_letter" and rdoc.get("dead_lettered") == 1,
                  f"status {st}, reported {actions.get(abort_id)}, dead_lettered {rdoc.get('dead_lettered')}")
        else:
            check("the aborting job of the dead worker is left aborting, as Procrastinate leaves it",
                  st == "aborting" and abort_id not in actions, f"status {st}, reported {actions.get(abort_id)}")
    else:
        note("rescuing with Procrastinate's own retry_stalled_jobs recipe to go on: "
             f"{asyncio.run(own_rescue(TIMEOUT_S))}")

    fail_id = asyncio.run(defer(["rt-fail"], m.fail_once))["rt-fail"]
    start_worker("w2")
    wait_until(lambda: counts().get("succeeded", 0) == N and counts().get("failed", 0) >= 1
               and not counts().get("todo") and not counts().get("doing"), 90,
               "fresh worker w2 finishes every job")
    c = counts()
    ab_failed = 1 if VT >= (3, 0) else 0
    check("every job succeeded once rescued, rt-fail failed" + (", rt-abort failed" if ab_failed else ", rt-abort aborting"),
          c.get("succeeded") == N and c.get("failed") == 1 + ab_failed and c.get("aborting", 0) == 1 - ab_failed,
          str(c))
    inflight_keys = {k for k, v in ids.items() if v in inflight}
    runs = {k: (n, f) for k, n, f in sql("SELECT job_key, count(*), count(finished_at) FROM qctl_ledger "
                                          "WHERE job_key LIKE 'rt-___' GROUP BY job_key")}
    # a job killed mid-run may have finished its body before the worker recorded it: it runs again
    bad = {k: runs.get(k) for k in keys
           if (k in inflight_keys and not (runs.get(k, (0, 0))[1] >= 1 and runs[k][0] <= 2))
           or (k not in inflight_keys and runs.get(k) != (1, 1))}
    check("ledger: every job ran to completion exactly once (a job killed mid-run at most twice)",
          not bad, f"(runs, finished) {bad}" if bad else "")
    reruns = {k for k, (n, _) in runs.items() if n > 1}
    check("ledger: only the jobs killed mid-run ran twice", reruns <= inflight_keys,
          f"ran twice {sorted(reruns)}, killed mid-run {sorted(inflight_keys)}")
    tot, err = qctl_totals()
    if check("qctl stats agrees with Procrastinate's count after the run", tot is not None
             and tot["done"] == c.get("succeeded", 0) and tot["failed"] == c.get("failed", 0)
             and tot["pending"] == 0 and tot["running"] == c.get("aborting", 0), err or str(tot)):
        pass

    rc, out, err = qctl("retry", str(fail_id))
    check(f"qctl retry {fail_id} (the failed job)", rc == 0, (out.strip().splitlines() or [""])[-1] + " " + err)
    row = sql("SELECT status::text, attempts FROM procrastinate_jobs WHERE id = %s", fail_id)
    note(f"rt-fail after qctl retry: {row}")
    wait_until(lambda: one("SELECT status::text FROM procrastinate_jobs WHERE id = %s", fail_id) == "succeeded",
               30, "the real worker runs the retried job")
    check("retried job succeeded, run twice in all (one failure, one success)",
          one("SELECT status::text FROM procrastinate_jobs WHERE id = %s", fail_id) == "succeeded"
          and sql("SELECT count(*), count(finished_at) FROM qctl_ledger WHERE job_key = 'rt-fail'") == [(2, 1)],
          str(sql("SELECT count(*), count(finished_at) FROM qctl_ledger WHERE job_key = 'rt-fail'")))
    if VT >= (3, 4):
        ev = [r[0] for r in sql("SELECT type::text FROM procrastinate_events WHERE job_id = %s ORDER BY id", fail_id)]
        check("events of the retried job read as Procrastinate's own retry writes them ('retried')",
              "retried" in ev, str(ev))

    time.sleep(1.2)
    before = counts()
    rc, out, err = qctl("purge", "--older-than", "1s", "--yes")
    after = counts()
    check("qctl purge --older-than 1s removes the succeeded jobs", rc == 0 and not after.get("succeeded"),
          f"exit {rc} {err} before {before} after {after}")
    orphans = one("SELECT count(*) FROM procrastinate_events e WHERE NOT EXISTS "
                  "(SELECT 1 FROM procrastinate_jobs j WHERE j.id = e.job_id)")
    check("purge left no orphan procrastinate_events", orphans == 0, f"{orphans} orphan events")
    post = asyncio.run(defer([f"rt-post-{i}" for i in range(5)]))
    ok = wait_until(lambda: one("SELECT count(*) FROM procrastinate_jobs WHERE id = ANY(%s) AND status = 'succeeded'",
                                list(post.values())) == 5, 30, "after purge, new jobs still run")
    if ok:
        check("after purge, new jobs still run", True)
    stop_worker("w2")
    tot, err = qctl_totals()
    c = counts()
    check("final: qctl stats agrees with Procrastinate's count", tot is not None
          and tot["done"] == c.get("succeeded", 0) and tot["pending"] == c.get("todo", 0)
          and tot["running"] == c.get("doing", 0) + c.get("aborting", 0), err or f"qctl {tot} procrastinate {c}")
    return 0


def apply_leg() -> None:
    """explain-claim --apply: with the index serving the claim gone and a long history, qctl flags the
    fetch and builds an index; the real worker then claims through it."""
    sql("INSERT INTO procrastinate_jobs (queue_name, task_name, args, status) "
        "SELECT 'default', 'work', '{}', 'succeeded' FROM generate_series(1, 20000)")  # the queue explain-claim checks
    # Every index on todo jobs goes: the fetch's own two, and the unique queueing_lock one (any
    # index partial on todo can feed the fetch); the last is put back, as Procrastinate made it,
    # once qctl has built its index.
    sfx = "_v1" if VT >= (3, 0) else ""
    unique = one("SELECT indexdef FROM pg_indexes WHERE indexname = %s", f"procrastinate_jobs_queueing_lock_idx{sfx}")
    for ix in (f"procrastinate_jobs_priority_idx{sfx}", f"procrastinate_jobs_id_lock_idx{sfx}",
               f"procrastinate_jobs_queueing_lock_idx{sfx}"):
        sql(f"DROP INDEX IF EXISTS {ix}")
    sql("ANALYZE procrastinate_jobs")
    before = {r[0] for r in sql("SELECT indexname FROM pg_indexes WHERE tablename = 'procrastinate_jobs'")}
    rc, out, err = qctl("explain-claim")
    check("qctl explain-claim flags the fetch once its index is gone", rc == 1, f"exit {rc}: {out[-400:]} {err}")
    rc, out, err = qctl("explain-claim", "--apply")
    new = sorted({r[0] for r in sql("SELECT indexname FROM pg_indexes WHERE tablename = 'procrastinate_jobs'")} - before)
    if not check("qctl explain-claim --apply builds an index and then finds the fetch fine",
                 rc == 0 and len(new) >= 1, f"exit {rc}, new {new}: {out[-600:]} {err}"):
        return
    sql(unique)
    scans = lambda: one("SELECT coalesce(sum(idx_scan), 0) FROM pg_stat_user_indexes WHERE indexrelname = ANY(%s)", new)
    time.sleep(1.2)
    first = scans()
    post = asyncio.run(defer([f"rt-apply-{i}" for i in range(5)]))
    start_worker("w3")
    ok = wait_until(lambda: one("SELECT count(*) FROM procrastinate_jobs WHERE id = ANY(%s) AND status = 'succeeded'",
                                list(post.values())) == 5, 30, "after --apply, the real worker still claims")
    stop_worker("w3")
    time.sleep(1.2)
    if ok:
        check("after --apply, the real worker still claims every job", True)
        used = scans() - first
        check(f"the worker's fetch uses the new index {new}", used > 0, f"{used} index scans")


def finish(rc: int) -> int:
    print(f"# {len(FAILS)} check(s) failed" if FAILS else "# all checks passed", flush=True)
    reason = f"{len(FAILS)} check(s) failed, first: {FAILS[0]}" if FAILS else "every check passed"
    print(f"roundtrip procrastinate {VERSION} postgres: {'PASS' if rc == 0 and not FAILS else 'FAIL'} ({reason})",
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
