// Enqueue jobs with Graphile Worker's own client (makeWorkerUtils().addJob).
//   node enqueue.js DB_URL VERSION roundtrip          the round trip's 50 jobs (prints their keys)
//   node enqueue.js DB_URL VERSION add TASK KEY [QUEUE] [MAX_ATTEMPTS] [MS]
// Every payload carries {key, ms}: worker.js records the run under payload.key in qctl_ledger.
"use strict";
const { load } = require("./lib");

const [dbUrl, version, cmd, ...args] = process.argv.slice(2);
(async () => {
  const { gw } = await load(version);
  const utils = await gw.makeWorkerUtils({ connectionString: dbUrl });
  try {
    if (cmd === "roundtrip") {
      // 1 slow job heading the named queue rt-q (it is mid-run when its worker is killed),
      // 4 more behind it in rt-q, 44 plain jobs, 1 job that fails its first run (maxAttempts 1).
      await utils.addJob("slow", { key: "q01", ms: 6000 }, { queueName: "rt-q" });
      for (let i = 2; i <= 5; i++) {
        await utils.addJob("work", { key: `q0${i}`, ms: 300 }, { queueName: "rt-q" });
      }
      for (let i = 1; i <= 44; i++) {
        await utils.addJob("work", { key: `w${String(i).padStart(2, "0")}`, ms: 200 + ((i * 137) % 800) });
      }
      await utils.addJob("fail_once", { key: "f01" }, { maxAttempts: 1 });
    } else if (cmd === "bulk") {
      // N short jobs, every other one in one of 50 named queues, for explain-claim's index check.
      const n = parseInt(args[0] || "3000", 10);
      // A running pool locks queue rows as it claims: an add that meets it in a deadlock
      // (PostgreSQL picks a victim) is sent again.
      for (let i = 1; i <= n; i++) {
        for (let attempt = 1; ; attempt++) {
          try {
            await utils.addJob("work", { key: `b${i}`, ms: 1 }, i % 2 ? { queueName: `bq-${i % 50}` } : {});
            break;
          } catch (e) {
            console.error(`addJob b${i} (attempt ${attempt}): ${e.message}`);
            if (attempt >= 5) throw e;
          }
        }
      }
    } else if (cmd === "add") {
      const [task, key, queue, maxAttempts, ms] = args;
      const job = await utils.addJob(task, { key, ms: ms ? parseInt(ms, 10) : undefined }, {
        ...(queue && queue !== "-" ? { queueName: queue } : {}),
        ...(maxAttempts ? { maxAttempts: parseInt(maxAttempts, 10) } : {}),
      });
      console.log(job.id);
    } else {
      throw new Error(`unknown command ${cmd}`);
    }
  } finally {
    await utils.release();
  }
})().catch((e) => {
  console.error(e);
  process.exit(1);
});
