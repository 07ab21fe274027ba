// Thin adapter over the pg-boss client API of majors 9, 10, 11 and 12, so that make-rows.js and
// roundtrip-node.js can drive any of them with one script. Each function calls pg-boss's own public
// API only; nothing here writes to pg-boss's tables.
//
//   9.x : CommonJS, PgBoss = require(), job ids only (complete(id)), no queue table, work() handler
//         gets one job, teamSize/teamConcurrency, noSupervisor/noScheduling, newJobCheckInterval.
//   10.x: CommonJS, queues must exist (createQueue), complete(name, id), work() handler gets an
//         array, supervise/schedule flags, maintenanceIntervalSeconds drives expiry.
//   11.x: CommonJS, as 10 plus superviseIntervalSeconds/monitorIntervalSeconds (expiry runs in the
//         monitor pass), partition option on createQueue.
//   12.x: ES module (import { PgBoss }), as 11 plus localConcurrency, heartbeatSeconds, flow().
'use strict'

const path = require('node:path')
const fs = require('node:fs')

const CACHE = process.env.QCTL_REALSYS_CACHE ||
  require('path').join(process.env.XDG_CACHE_HOME || require('path').join(require('os').homedir(), '.cache'), 'qctl-realsys')

function moduleDir (version) {
  return path.join(CACHE, 'pg-boss', version, 'node_modules', 'pg-boss')
}

function major (version) {
  return parseInt(String(version).split('.')[0], 10)
}

async function load (version) {
  const dir = moduleDir(version)
  const pkg = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'))
  if (pkg.version !== version) throw new Error(`pg-boss ${version} is not installed in ${dir} (found ${pkg.version}); run install.sh ${version}`)
  const mod = await import(dir + (major(version) >= 12 ? '/dist/index.js' : '/src/index.js'))
  const PgBoss = mod.PgBoss || mod.default
  const pgDir = path.join(path.dirname(dir), 'pg')
  const pg = require(pgDir)
  return { PgBoss, pg, version, major: major(version) }
}

// opts: supervise (bool), schedule (bool), fast (short supervisor intervals, for round trips)
function newBoss (sys, url, opts = {}) {
  const { supervise = false, schedule = false, fast = false, application = 'qctl-realsys' } = opts
  const m = sys.major
  const base = { connectionString: url, application_name: application, max: 4 }
  let config
  if (m === 9) {
    config = { ...base, noSupervisor: !supervise, noScheduling: !schedule }
    if (fast) Object.assign(config, { maintenanceIntervalSeconds: 1, newJobCheckInterval: 200 })
  } else if (m === 10) {
    config = { ...base, supervise, schedule }
    if (fast) Object.assign(config, { maintenanceIntervalSeconds: 1, pollingIntervalSeconds: 0.5 })
  } else {
    config = { ...base, supervise, schedule }
    if (fast) Object.assign(config, { superviseIntervalSeconds: 1, monitorIntervalSeconds: 1, pollingIntervalSeconds: 0.5 })
  }
  const boss = new sys.PgBoss(config)
  boss.on('error', err => { if (!/terminat|Connection terminated|ECONNRESET/.test(String(err && err.message))) console.error(`pg-boss error: ${err && err.message}`) })
  return boss
}

// pg-boss 9 has no queue table: queue options go on each job instead (see send()).
async function createQueue (sys, boss, name, options = {}) {
  if (sys.major === 9) return
  const o = { ...options }
  if (sys.major === 10) { delete o.partition; delete o.heartbeatSeconds }
  if (sys.major === 11) { delete o.heartbeatSeconds }
  await boss.createQueue(name, o)
}

async function send (sys, boss, name, data, options = {}) {
  const o = { ...options }
  if (sys.major < 12) delete o.group
  if (sys.major !== 9) delete o.onComplete
  return boss.send(name, data, o)
}

async function fetchOne (sys, boss, name) {
  if (sys.major === 9) {
    const job = await boss.fetch(name)
    return job || null
  }
  const jobs = await boss.fetch(name, { batchSize: 1 })
  return jobs[0] || null
}

async function fetchById (sys, boss, name, id, tries = 40) {
  // fetch until the wanted job comes (the queues used here hold one ready job at a time)
  for (let i = 0; i < tries; i++) {
    const job = await fetchOne(sys, boss, name)
    if (job && job.id === id) return job
    if (job) throw new Error(`fetched ${job.id} from ${name}, expected ${id}`)
    await sleep(50)
  }
  throw new Error(`job ${id} never became fetchable in ${name}`)
}

const complete = (sys, boss, name, id, data) => sys.major === 9 ? boss.complete(id, data) : boss.complete(name, id, data)
const fail = (sys, boss, name, id, data) => sys.major === 9 ? boss.fail(id, data) : boss.fail(name, id, data)
const cancel = (sys, boss, name, id) => sys.major === 9 ? boss.cancel(id) : boss.cancel(name, id)
const retry = (sys, boss, name, id) => {
  if (sys.major === 9) throw new Error('pg-boss 9 has no retry(); resume() only un-cancels')
  return boss.retry(name, id)
}

// Runs pg-boss's own supervisor expiry once (what the timer would do at its next tick).
async function superviseOnce (sys, boss, queues) {
  if (sys.major === 9) return boss.expire()
  if (sys.major === 10) return boss.expire()
  for (const q of queues) await boss.supervise(q)
}

// handler(job) -> promise; concurrency jobs at a time, one job per fetch.
async function work (sys, boss, name, concurrency, handler) {
  const m = sys.major
  if (m === 9) {
    return boss.work(name, { teamSize: concurrency, teamConcurrency: concurrency, newJobCheckInterval: 200 }, job => handler(job))
  }
  const each = jobs => Promise.all(jobs.map(handler))
  if (m === 12) {
    return boss.work(name, { localConcurrency: concurrency, batchSize: 1, pollingIntervalSeconds: 0.5 }, each)
  }
  const ids = []
  for (let i = 0; i < concurrency; i++) ids.push(await boss.work(name, { batchSize: 1, pollingIntervalSeconds: 0.5 }, each))
  return ids
}

// pg-boss's own per-state / per-queue counts, as its admin API reports them.
async function ownCounts (sys, boss, queues) {
  if (sys.major <= 10) {
    const s = await boss.countStates()
    const out = {}
    for (const q of queues) out[q] = s.queues[q] || {}
    return out
  }
  const out = {}
  for (const q of queues) {
    let st
    if (sys.major === 11) {
      st = await boss.getQueueStats(q) // runs plans.getQueueStats on the queue's table every time
    } else {
      // boss.getQueueStats() on 12 serves the counts the monitor cached in pgboss.queue, up to 60 s old
      // even with { force: true }; run the query it refreshes them with (plans.getQueueStats) instead.
      const plans = await import(moduleDir(sys.version) + '/dist/plans.js')
      const { table } = await boss.getQueue(q)
      const query = plans.getQueueStats('pgboss', table, [q])
      const { rows } = await boss.getDb().executeSql(query.text, query.values)
      st = rows[0] || {}
    }
    out[q] = { queuedCount: st.queuedCount, activeCount: st.activeCount, deferredCount: st.deferredCount, totalCount: st.totalCount, failedCount: st.failedCount, readyCount: st.readyCount, liveCount: st.liveCount }
  }
  return out
}

function sleep (ms) { return new Promise(resolve => setTimeout(resolve, ms)) }

module.exports = { CACHE, moduleDir, major, load, newBoss, createQueue, send, fetchOne, fetchById, complete, fail, cancel, retry, superviseOnce, work, ownCounts, sleep }
