// One real Graphile Worker pool, run by graphile-worker's own run() with the tasks below.
//   node worker.js DB_URL VERSION NAME [concurrency] [tasks,comma,separated]
// Environment: GW_CLOCK_OFFSET_MS shifts this process's clock and turns on useNodeTime (so the
// pool writes locked_at as if it were that far in the past); GW_RESET_LOCKED_MS sets
// min/maxResetLockedInterval (default: graphile-worker's own 8-10 minutes).
// Tasks that write the ledger (work, slow, fail_once, always_fail) record every run in
// qctl_ledger(job_key, worker, pid, started_at, finished_at); job_key is payload.key.
"use strict";
const { load, shiftClock } = require("./lib");

const [dbUrl, version, name, concurrencyArg, tasksArg] = process.argv.slice(2);
if (!dbUrl || !version || !name) {
  console.error("usage: node worker.js DB_URL VERSION NAME [concurrency] [tasks]");
  process.exit(2);
}
const offset = parseInt(process.env.GW_CLOCK_OFFSET_MS || "0", 10);
shiftClock(offset);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

(async () => {
  const { gw, pg } = await load(version);
  const ledger = new pg.Pool({ connectionString: dbUrl, max: 4 });
  const start = async (payload, helpers) => {
    const { rows } = await ledger.query(
      "insert into qctl_ledger(job_key, worker, pid, started_at) values ($1, $2, $3, clock_timestamp()) returning ctid::text as row",
      [payload.key, `${name}/${helpers.job.locked_by}`, process.pid],
    );
    return rows[0].row;
  };
  const finish = (row) =>
    ledger.query("update qctl_ledger set finished_at = clock_timestamp() where ctid = $1::tid", [row]);
  const all = {
    // fixture tasks
    hang: () => new Promise(() => {}),
    flaky: async () => {
      throw new Error("smtp: connection refused");
    },
    ok: async () => {},
    noop: async () => {},
    // round-trip tasks
    work: async (payload, helpers) => {
      const row = await start(payload, helpers);
      await sleep(payload.ms || 300);
      await finish(row);
    },
    slow: async (payload, helpers) => {
      const row = await start(payload, helpers);
      await sleep(payload.ms || 4000);
      await finish(row);
    },
    fail_once: async (payload, helpers) => {
      const row = await start(payload, helpers);
      const { rows } = await ledger.query("select count(*)::int n from qctl_ledger where job_key = $1", [payload.key]);
      if (rows[0].n <= 1) throw new Error("fail_once: first run fails");
      await finish(row);
    },
    always_fail: async (payload, helpers) => {
      await start(payload, helpers);
      throw new Error("always_fail");
    },
  };
  const wanted = tasksArg ? tasksArg.split(",") : Object.keys(all);
  const taskList = {};
  for (const t of wanted) taskList[t] = all[t];
  const resetMs = parseInt(process.env.GW_RESET_LOCKED_MS || "0", 10);
  const runner = await gw.run({
    connectionString: dbUrl,
    concurrency: parseInt(concurrencyArg || "4", 10),
    pollInterval: 200,
    taskList,
    useNodeTime: offset !== 0,
    ...(resetMs ? { minResetLockedInterval: resetMs, maxResetLockedInterval: resetMs + 1 } : {}),
  });
  console.log(JSON.stringify({ ready: name, pid: process.pid }));
  await runner.promise;
  await ledger.end();
})().catch((e) => {
  console.error(e);
  process.exit(1);
});
