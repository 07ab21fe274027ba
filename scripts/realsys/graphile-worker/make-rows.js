// Write the rows of tests/fixtures/graphile-worker/v<VERSION>/rows.sql with Graphile Worker itself.
//   node make-rows.js DB_URL VERSION [OUT_FILE]
// DB_URL must be an empty scratch database. Everything below is done by graphile-worker's own
// code: runMigrations() installs the schema, makeWorkerUtils().addJob() enqueues,
// permanentlyFailJobs() and graphile_worker.remove_job() are its admin functions, and two real
// worker pools (worker.js: graphile-worker's run()) claim, fail, complete and hold jobs:
//
//   live pool (real clock, tasks hang/flaky/ok): runs for ~32 s so that 'flaky' fails four
//     times (25 attempts) and once (1 attempt), 'ok' completes (its row is deleted) and 'hang'
//     holds its job and the named queue 'serial-q'; a second job is then queued behind it in
//     'serial-q'. The pool is then killed with SIGKILL, so its locks stay as they are (live:
//     locked seconds ago).
//   dead pool (tasks hang, clock shifted 5 hours back with graphile-worker's own useNodeTime
//     option): claims three jobs due 5.5 hours ago, one of them in the named queue 'reports-q';
//     it is killed with SIGKILL while running them, so those jobs and that queue stay locked
//     with locked_at 5 hours in the past: stale, past the 4-hour rule.
//
// The job tables are then dumped with pg_dump --data-only --column-inserts --disable-triggers and
// every timestamp is rewritten relative to the dump's now(), so the rows age correctly whenever
// they are loaded. Prints the SQL to OUT_FILE (or stdout).
"use strict";
const { spawn, execFileSync } = require("child_process");
const fs = require("fs");
const path = require("path");
const { load } = require("./lib");

const [dbUrl, version, outFile] = process.argv.slice(2);
if (!dbUrl || !version) {
  console.error("usage: node make-rows.js DB_URL VERSION [OUT_FILE]");
  process.exit(2);
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const HOUR = 3600 * 1000;

function startPool(name, tasks, concurrency, env) {
  const logFile = path.join(require("os").tmpdir(), `gw-make-rows-${name}-${process.pid}.log`);
  const out = fs.openSync(logFile, "w");
  const child = spawn(process.execPath, [path.join(__dirname, "worker.js"), dbUrl, version, name, String(concurrency), tasks], {
    stdio: ["ignore", out, out],
    env: { ...process.env, ...env },
  });
  child.logFile = logFile;
  return child;
}

async function waitFor(what, fn, ms = 30000) {
  const t0 = Date.now();
  for (;;) {
    if (await fn()) return;
    if (Date.now() - t0 > ms) throw new Error(`timed out waiting for ${what}`);
    await sleep(250);
  }
}

function kill9(child) {
  return new Promise((resolve) => {
    child.once("exit", resolve);
    process.kill(child.pid, "SIGKILL");
  });
}

(async () => {
  const { gw, pg, pkg } = await load(version);
  await gw.runMigrations({ connectionString: dbUrl });
  const db = new pg.Client({ connectionString: dbUrl });
  await db.connect();
  const { rows: [{ priv }] } = await db.query(
    "select to_regclass('graphile_worker._private_jobs') is not null as priv",
  );
  // <= 0.15: graphile_worker.jobs / job_queues / tasks (0.13: no tasks); >= 0.16: _private_*
  const T = priv
    ? { jobs: "_private_jobs", queues: "_private_job_queues", tasks: "_private_tasks" }
    : { jobs: "jobs", queues: "job_queues", tasks: (await db.query("select to_regclass('graphile_worker.tasks') t")).rows[0].t ? "tasks" : null };
  const jobByRow = async (row) =>
    (await db.query(`select * from graphile_worker.${T.jobs} where payload->>'row' = $1`, [row])).rows[0];

  const utils = await gw.makeWorkerUtils({ connectionString: dbUrl });
  const add = (task, row, spec = {}) => utils.addJob(task, { row }, spec);
  const now = Date.now();

  // ---- live pool's jobs
  await add("send_email", "ready");
  await add("send_email", "scheduled", { runAt: new Date(now + HOUR) });
  await add("send_email", "scheduled-keyed", { runAt: new Date(now + 10 * 60 * 1000), jobKey: "welcome:42" });
  await add("flaky", "retrying", { maxAttempts: 25 });
  await add("flaky", "failed", { maxAttempts: 1 });
  await add("hang", "running-live-queued", { queueName: "serial-q" });
  await add("ok", "done");
  const manual = await add("send_email", "failed-manually");
  await utils.permanentlyFailJobs([manual.id]);
  await add("send_email", "removed", { jobKey: "remove-me" });
  await db.query("select graphile_worker.remove_job('remove-me')");

  const live = startPool("live", "hang,flaky,ok", 3, {});
  await waitFor("the live pool to run its jobs", async () => {
    const hang = await jobByRow("running-live-queued");
    const done = await jobByRow("done");
    const failed = await jobByRow("failed");
    const retrying = await jobByRow("retrying");
    return hang && hang.locked_at && !done && failed && failed.attempts === 1 && !failed.locked_at &&
      retrying && retrying.attempts >= 4 && !retrying.locked_at;
  }, 60000);
  await add("ok", "blocked-behind-queue", { queueName: "serial-q" });
  await sleep(1000);
  const blocked = await jobByRow("blocked-behind-queue");
  if (!blocked || blocked.locked_at) throw new Error("the job queued behind serial-q was claimed");
  await kill9(live);

  // ---- dead pool's jobs: due 5.5 hours ago, claimed by a pool whose clock is 5 hours behind
  const past = new Date(Date.now() - 5.5 * HOUR);
  await add("hang", "stale-queued", { queueName: "reports-q", runAt: past, maxAttempts: 25 });
  await add("hang", "stale-exhausted", { runAt: past, maxAttempts: 1 });
  await add("hang", "stale", { runAt: past, maxAttempts: 25 });
  const dead = startPool("dead", "hang", 3, { GW_CLOCK_OFFSET_MS: String(-5 * HOUR) });
  await waitFor("the dead pool to lock its three jobs", async () => {
    const { rows } = await db.query(
      `select count(*)::int n from graphile_worker.${T.jobs} where payload->>'row' like 'stale%' and locked_at is not null`,
    );
    return rows[0].n === 3;
  });
  await sleep(300);
  await kill9(dead);
  await utils.release();

  // ---- dump and make every time relative to the dump's now()
  const { rows: [{ t0 }] } = await db.query("select extract(epoch from now())::float8 as t0");
  await db.end();
  const tables = [T.queues, T.jobs, T.tasks].filter(Boolean).map((t) => ["-t", `graphile_worker.${t}`]).flat();
  const u = new URL(dbUrl);
  const dump = execFileSync("pg_dump", [
    "--data-only", "--column-inserts", "--disable-triggers", "--no-owner", "--no-privileges",
    ...tables, dbUrl,
  ], { encoding: "utf8" });
  const rel = (lit) => {
    const s = Date.parse(lit.replace(" ", "T").replace(/\+00$/, "Z")) / 1000;
    const d = Math.round((t0 - s) * 1000) / 1000;
    return d >= 0 ? `(now() - interval '${d.toFixed(3)} seconds')` : `(now() + interval '${(-d).toFixed(3)} seconds')`;
  };
  const body = dump
    .split("\n")
    .filter((l) => !/^\\(un)?restrict /.test(l))
    .join("\n")
    .replace(/'(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)?\+00)'/g, (_, lit) => rel(lit));
  const header = [
    `-- Graphile Worker ${pkg.version} (npm graphile-worker@${pkg.version}): rows as graphile-worker itself wrote them; load after schema.sql.`,
    `-- Made by scripts/realsys/graphile-worker/make-rows.js on ${new Date().toISOString().slice(0, 10)} against PostgreSQL`,
    `-- (${execFileSync("psql", [dbUrl, "-Atc", "show server_version"], { encoding: "utf8" }).trim()}), then dumped with pg_dump --data-only --column-inserts --disable-triggers`,
    `-- -t graphile_worker.{${[T.queues, T.jobs, T.tasks].filter(Boolean).join(",")}}; every timestamp rewritten as now() +/- the offset it had`,
    "-- from the dump's now(), so the rows age correctly whenever they are loaded. payload.row names each row:",
    "--   ready                  send_email, no pool runs that task          unlocked, attempts 0, due        -> pending, ready",
    "--   scheduled              send_email runAt +1h                         unlocked, attempts 0             -> pending, not due",
    "--   scheduled-keyed        send_email runAt +10m, jobKey 'welcome:42'   unlocked, attempts 0             -> pending, not due",
    "--   retrying               flaky (throws), maxAttempts 25, failed 4+ times by the live pool; run_at = exp backoff -> pending, not due",
    "--   failed                 flaky, maxAttempts 1, failed once by the live pool: attempts = max_attempts -> permanently failed",
    "--   failed-manually        send_email, then workerUtils.permanentlyFailJobs([id]): attempts = max_attempts, 'Manually marked as failed'",
    "--   running-live-queued    hang, queueName 'serial-q': locked seconds ago by the live pool, which also holds serial-q -> running (live)",
    "--   blocked-behind-queue   ok, queueName 'serial-q', added after serial-q was locked  -> pending, not ready (its queue is locked)",
    "--   stale-queued           hang, queueName 'reports-q', maxAttempts 25: locked 5 h ago by the dead pool, which also holds",
    "--                          reports-q -> running, stale (> 4 h), attempts left",
    "--   stale-exhausted        hang, maxAttempts 1: locked 5 h ago by the dead pool -> running, stale, attempts used up",
    "--   stale                  hang, maxAttempts 25: locked 5 h ago by the dead pool -> running, stale, attempts left",
    "--   (done)                 ok: completed by the live pool, so graphile-worker DELETED it: no row",
    "--   (removed)              send_email jobKey 'remove-me', then graphile_worker.remove_job('remove-me'): deleted, no row",
    "-- The live pool ran with graphile-worker's defaults and was killed with SIGKILL once the rows above were written;",
    "-- the dead pool ran with useNodeTime and its Date shifted 5 hours back (so it stamped locked_at 5 h in the past)",
    "-- and was killed with SIGKILL while its three jobs were running. Those three rows keep the real created_at (seconds",
    "-- before the dump): only run_at (5.5 h back, given to addJob) and locked_at/queue lock (5 h back) are in the past.",
    "-- Up to 0.16 locked_by is one id per worker (worker-...); from 0.17 on, one id per pool (pool-...).",
    "",
  ].join("\n");
  const sql = header + body;
  if (outFile) fs.writeFileSync(outFile, sql);
  else process.stdout.write(sql);
  console.error(`make-rows: ${version}: wrote ${outFile || "stdout"}; live pool log ${live.logFile}, dead pool log ${dead.logFile}`);
})().catch((e) => {
  console.error(e);
  process.exit(1);
});
