#!/usr/bin/env node
// Writes one pg-boss job in every state a pg-boss version has, with that version's own client,
// worker and supervisor, into DB_URL (schema pgboss), and optionally dumps them as rows.sql.
//
//   node make-rows.js DB_URL VERSION [--dump rows.sql]
//
// Run it with the node install.sh printed (pg-boss 11 and 12 need Node 22). The database should be
// empty (a fresh scratch database): pg-boss's start() installs its schema there.
//
// How each row is made (queue "email"; pg-boss 9 has no queue table, so the same settings go on
// each job instead):
//   stale-retry / stale-exhausted  sent, then taken by a real worker (boss.work in a child process)
//                                  that is killed with SIGKILL mid-job; then aged by hand (see AGE):
//                                  created/start/started (and heartbeat) times moved 2 hours back,
//                                  the only edit this script makes to pg-boss's rows.
//   timed-out                      sent with expireInSeconds 1, fetched, left 2 s, then pg-boss's own
//                                  supervisor expiry run once (boss.expire() on 9/10,
//                                  boss.supervise(queue) on 11/12): state expired (9) or failed
//                                  with the supervisor's output, and its dead-letter copy (10+)
//   retry                          sent, fetched, boss.fail() with retries left
//   live                           sent, fetched (left active, fresh)
//   completed                      sent, fetched, boss.complete() (on 9 with onComplete: true, which
//                                  also writes the __state__completed__email job)
//   failed                         sent with retryLimit 0, fetched, boss.fail(): failed, and on 10+
//                                  pg-boss's dead-letter copy in email_dlq
//   cancelled                      sent, boss.cancel()
//   ready / scheduled              sent (scheduled: startAfter 3600 s)
//   11+: queue "reports" created with partition: true (its own partition table); 12 also
//        heartbeatSeconds 300 on it, a job whose heartbeat was lost (worker killed -9, aged 10
//        minutes by hand), a live heartbeat job, and a flow (boss.flow) whose child is blocked on
//        its parent.
'use strict'

const { spawn, execFileSync } = require('node:child_process')
const fs = require('node:fs')
const L = require('./lib.js')

const AGE = '2 hours'

async function main () {
  const args = process.argv.slice(2)
  if (args[0] === '--child-worker') return childWorker(args[1], args[2], args[3], args[4])
  const [url, version] = args
  const dumpIdx = args.indexOf('--dump')
  const dumpFile = dumpIdx >= 0 ? args[dumpIdx + 1] : null
  if (!url || !version) {
    console.error('usage: node make-rows.js DB_URL VERSION [--dump rows.sql]')
    process.exit(2)
  }

  const sys = await L.load(version)
  const m = sys.major
  const client = new sys.pg.Client({ connectionString: url })
  await client.connect()
  // instance rows (12.36+) already there belong to whoever installed the schema, not to this run
  const before = m >= 12
    ? (await client.query("SELECT id::text FROM pgboss.instance WHERE to_regclass('pgboss.instance') IS NOT NULL").catch(() => ({ rows: [] }))).rows.map(r => r.id)
    : []
  const boss = L.newBoss(sys, url, { supervise: false, schedule: false })
  await boss.start()
  const col = m === 9
    ? { started: 'startedon', created: 'createdon', startAfter: 'startafter' }
    : { started: 'started_on', created: 'created_on', startAfter: 'start_after' }

  const labels = []
  const label = (id, text) => { labels.push([id, text]); return id }

  // queue settings: on the queue from 10 on, on each job on 9
  const emailQueue = { deadLetter: 'email_dlq', retryLimit: 2, retryDelay: 60, expireInSeconds: 900 }
  const perJob = m === 9 ? { retryLimit: 2, retryDelay: 60, expireInSeconds: 900 } : {}
  const queueCalls = []
  const createQueue = async (name, options) => {
    await L.createQueue(sys, boss, name, options)
    if (m > 9) queueCalls.push([name, options])
  }
  await createQueue('email_dlq', {})
  await createQueue('email', m === 9 ? {} : emailQueue)
  if (m >= 11) await createQueue('reports', m >= 12 ? { partition: true, heartbeatSeconds: 300 } : { partition: true })
  const send = (data, options = {}) => L.send(sys, boss, 'email', data, { ...perJob, ...options })
  // pg-boss 9 turns retryLimit 0 into 1 when a retryDelay is set (attorney.applyRetryConfig)
  const noRetry = m === 9 ? { retryLimit: 0, retryDelay: 0 } : { retryLimit: 0 }

  // timed out, expired by pg-boss's own supervisor (before anything else is active in "email")
  const timedOut = await send({ to: 'timeout@example.com' }, { expireInSeconds: 1, ...noRetry })
  await L.fetchById(sys, boss, 'email', timedOut)
  await L.sleep(2200)
  await L.superviseOnce(sys, boss, ['email'])
  label(timedOut, m === 9
    ? 'send {expireInSeconds:1, retryLimit:0, retryDelay:0}, fetch, supervisor expire() after 2 s -> state expired'
    : 'send {expireInSeconds:1, retryLimit:0}, fetch, supervisor failJobsByTimeout after 2 s -> failed, output "job ... timed out", dead-letter copy in email_dlq')

  // stale: a real worker takes two jobs and is killed -9 mid-job
  const staleRetry = await send({ to: 'stale-retry@example.com' })
  const staleDead = await send({ to: 'stale-exhausted@example.com' }, noRetry)
  const taken = await runAndKillWorker(url, version, 'email', 2)
  for (const id of [staleRetry, staleDead]) if (!taken.includes(id)) throw new Error(`worker did not take ${id} (took ${taken})`)
  const heartbeat = m >= 12 ? ', heartbeat_on = heartbeat_on - interval \'' + AGE + '\'' : ''
  await client.query(`UPDATE pgboss.job SET ${col.created} = ${col.created} - interval '${AGE}', ${col.startAfter} = ${col.startAfter} - interval '${AGE}', ${col.started} = ${col.started} - interval '${AGE}'${heartbeat} WHERE id = ANY($1::uuid[])`, [[staleRetry, staleDead]])
  label(staleRetry, `send, taken by boss.work() in a child process killed -9 mid-job; times aged ${AGE} by hand -> active, stale, retries left`)
  label(staleDead, `send ${JSON.stringify(noRetry).replace(/"/g, '')}, taken by boss.work() in a child process killed -9 mid-job; times aged ${AGE} by hand -> active, stale, no retries left`)

  const retried = await send({ to: 'retry@example.com' })
  await L.fetchById(sys, boss, 'email', retried)
  await L.fail(sys, boss, 'email', retried, { message: 'smtp: connection refused' })
  label(retried, 'send, fetch, fail() with retries left -> retry, start after now + retryDelay 60 s')

  const live = await send({ to: 'live@example.com' })
  await L.fetchById(sys, boss, 'email', live)
  label(live, 'send, fetch -> active, fresh')

  const done = await send({ to: 'done@example.com' }, m === 9 ? { onComplete: true } : {})
  await L.fetchById(sys, boss, 'email', done)
  await L.complete(sys, boss, 'email', done, { sent: true })
  label(done, m === 9
    ? 'send {onComplete:true}, fetch, complete() -> completed (and the __state__completed__email job below)'
    : 'send, fetch, complete() -> completed')

  const failed = await send({ to: 'failed@example.com' }, noRetry)
  await L.fetchById(sys, boss, 'email', failed)
  await L.fail(sys, boss, 'email', failed, { message: 'bounced permanently' })
  label(failed, m === 9
    ? 'send {retryLimit:0, retryDelay:0}, fetch, fail() -> failed'
    : 'send {retryLimit:0}, fetch, fail() -> failed, dead-letter copy in email_dlq')

  const cancelled = await send({ to: 'cancelled@example.com' })
  await L.cancel(sys, boss, 'email', cancelled)
  label(cancelled, 'send, cancel() -> cancelled')

  label(await send({ to: 'ready@example.com' }), 'send -> created, ready now')
  label(await send({ to: 'scheduled@example.com' }, { startAfter: 3600 }), 'send {startAfter:3600} -> created, scheduled')

  if (m >= 11) {
    if (m >= 12) {
      // heartbeat lost: a real worker takes it and is killed -9; aged 10 minutes, past its 300 s
      // heartbeat but not its 900 s expiry
      const lost = await L.send(sys, boss, 'reports', { month: '2026-10' })
      const took = await runAndKillWorker(url, version, 'reports', 1)
      if (took[0] !== lost) throw new Error(`worker took ${took}, expected ${lost}`)
      await client.query(`UPDATE pgboss.job SET created_on = created_on - interval '10 minutes', start_after = start_after - interval '10 minutes', started_on = started_on - interval '10 minutes', heartbeat_on = heartbeat_on - interval '10 minutes' WHERE id = $1`, [lost])
      label(lost, 'send to reports (heartbeatSeconds 300), taken by boss.work() in a child process killed -9 mid-job; times aged 10 minutes by hand -> active, stale by heartbeat only, retries left')
      const hb = await L.send(sys, boss, 'reports', { month: '2026-11' })
      await L.fetchById(sys, boss, 'reports', hb)
      label(hb, 'send to reports (heartbeatSeconds 300), fetch -> active with heartbeat_on/heartbeat_seconds, live for 5 minutes after the load')
      await boss.flow([
        { ref: 'parent', name: 'reports', data: { step: 'parent' } },
        { ref: 'child', name: 'reports', data: { step: 'child' }, dependsOn: ['parent'] }
      ])
      const flow = await client.query("SELECT id::text, data->>'step' AS step, blocked, blocking FROM pgboss.job WHERE name = 'reports' AND data ? 'step'")
      for (const r of flow.rows) {
        label(r.id, r.step === 'parent'
          ? `boss.flow() parent -> created, blocking=${r.blocking}: its child waits for it`
          : `boss.flow() child (dependsOn parent) -> created, blocked=${r.blocked} until its parent completes`)
      }
    } else {
      label(await L.send(sys, boss, 'reports', { month: '2026-11' }), 'send to reports (own partition) -> created, ready')
    }
  }

  // dead-letter copies and completion jobs written by pg-boss itself
  const extra = await client.query(m === 9
    ? "SELECT id, name FROM pgboss.job WHERE name LIKE '\\_\\_state\\_\\_%'"
    : "SELECT id, name FROM pgboss.job WHERE name = 'email_dlq'")
  for (const r of extra.rows) label(r.id, m === 9 ? 'written by complete(): the onComplete job (name __state__completed__email)' : 'written by pg-boss: the dead-letter copy of a failed job')

  await boss.stop({ graceful: false, wait: true, timeout: 1000 }).catch(() => {})
  if (m === 9 || m === 10) await L.sleep(500)

  const summary = await client.query(`SELECT id::text, name, state::text FROM pgboss.job ORDER BY ${col.created}`)
  for (const r of summary.rows) {
    const l = labels.find(x => x[0] === r.id)
    console.log(`${r.id}  ${r.name.padEnd(28)} ${r.state.padEnd(10)} ${l ? l[1] : '(not made by this script)'}`)
  }

  if (dumpFile) {
    const now = (await client.query("SELECT to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.US') AS t")).rows[0].t
    fs.writeFileSync(dumpFile, dumpRows({ url, version, sys, labels, queueCalls, reference: now, skip: before }))
    console.error(`wrote ${dumpFile}`)
  }
  await client.end()
}

// A real worker in a child process: it takes `count` jobs from `queue` and never finishes them.
// Returns the ids it reported running, after it has been killed with SIGKILL.
function runAndKillWorker (url, version, queue, count) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [__filename, '--child-worker', url, version, queue, String(count)], { stdio: ['ignore', 'pipe', 'inherit'] })
    const ids = []
    let buf = ''
    const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error(`worker took ${ids.length} of ${count} jobs in 20 s`)) }, 20000)
    child.stdout.on('data', d => {
      buf += d
      let i
      while ((i = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, i); buf = buf.slice(i + 1)
        const mm = /^RUNNING (\S+)/.exec(line)
        if (mm) ids.push(mm[1])
        if (ids.length === count) {
          clearTimeout(timer)
          setTimeout(() => child.kill('SIGKILL'), 300)
        }
      }
    })
    child.on('exit', (code, signal) => {
      clearTimeout(timer)
      if (signal === 'SIGKILL' && ids.length === count) resolve(ids)
      else reject(new Error(`worker exited ${code} ${signal} after ${ids.length} jobs`))
    })
  })
}

async function childWorker (url, version, queue, count) {
  const sys = await L.load(version)
  const boss = L.newBoss(sys, url, { supervise: false, schedule: false, application: 'qctl-realsys-worker' })
  await boss.start()
  await L.work(sys, boss, queue, parseInt(count, 10), job => {
    process.stdout.write(`RUNNING ${job.id}\n`)
    return new Promise(() => {}) // mid-job forever, until SIGKILL
  })
}

// pg_dump --data-only --column-inserts of the job tables (and, on 12, pgboss.instance and
// pgboss.job_dependency); partition names become the parent pgboss.job, and every timestamptz
// literal becomes now() +/- its distance from `reference` (the server's now() at the dump).
function dumpRows ({ url, version, sys, labels, queueCalls, reference, skip = [] }) {
  const m = sys.major
  const out = execFileSync('pg_dump', ['--data-only', '--column-inserts', '--no-owner', '--no-privileges', '--schema=pgboss', '-d', url],
    { env: { ...process.env, PGTZ: 'UTC' }, maxBuffer: 64 << 20 }).toString()
  const ref = micros(reference)
  const jobTable = /^INSERT INTO pgboss\.(job|job_common|j[0-9a-f]{56}) \(/
  const keep = m >= 12 ? /^INSERT INTO pgboss\.(instance|job_dependency) \(/ : null
  const lines = out.split('\n')
    .filter(l => jobTable.test(l) || (keep && keep.test(l)))
    .filter(l => !skip.some(id => l.includes(`VALUES ('${id}'`)))
  const rewrite = l => l
    .replace(jobTable, 'INSERT INTO pgboss.job (')
    .replace(/'(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)?)\+00'/g, (_, t) => relative(t, ref))
  const jobs = lines.filter(l => jobTable.test(l)).map(rewrite)
  const others = lines.filter(l => !jobTable.test(l)).map(rewrite)

  const date = new Date().toISOString().slice(0, 10)
  const head = [
    `-- pg-boss ${version}: one job in every state this version has, as pg-boss ${version} itself wrote them.`,
    `-- Made ${date} by scripts/realsys/pg-boss/make-rows.js (npm pg-boss@${version}, node ${process.version}) against a scratch`,
    '-- database holding a fresh PgBoss.start() install, then pg_dump --data-only --column-inserts --schema=pgboss,',
    '-- keeping the job rows' + (m >= 12 ? ', pgboss.job_dependency and pgboss.instance' : '') + '. Rewritten: every timestamptz literal became now() +/- its',
    '-- distance from the server time of the dump (so the rows age with the load time)' + (m >= 10 ? ', and partition table names' : '') + (m >= 10 ? '\n-- became the parent pgboss.job (rows route by LIST (name)).' : '.'),
    `-- Edited by hand (the only edits): the two stale rows had their created/start/started${m >= 12 ? '/heartbeat' : ''} times moved ${AGE} back`,
    '-- (the worker that held them really was killed -9, but pg-boss only judges them stale 15 minutes later)' + (m >= 12 ? ',\n-- and the heartbeat-lost row its times moved 10 minutes back. The live heartbeat row turns stale 5 minutes after\n-- the load. The instances of the killed workers keep stopped_on NULL, as a crash leaves them.' : '.'),
    '-- Timestamps inside JSON values (data/output) are left as written.',
    '-- Load after schema.sql (psql -v ON_ERROR_STOP=1 -f schema.sql -f rows.sql).',
    '--',
    '-- Rows (id -> how it was made):',
    ...labels.map(([id, text]) => `--   ${id}  ${text}`)
  ]
  const queues = queueCalls.map(([name, options]) => {
    // the options object exactly as each version's manager.createQueue builds it
    const json = m === 10
      ? JSON.stringify(Object.fromEntries(['policy', 'retryLimit', 'retryDelay', 'retryBackoff', 'expireInSeconds', 'retentionMinutes', 'deadLetter']
        .map(k => [k, k === 'policy' ? 'standard' : options[k]]).filter(([, v]) => v !== undefined)))
      : JSON.stringify({ ...options, policy: 'standard' })
    return m === 10
      ? `SELECT pgboss.create_queue('${name}', '${json}'::json);`
      : `SELECT pgboss.create_queue('${name}', '${json}'::jsonb);`
  })
  const qhead = m === 9
    ? []
    : ['', `-- The queues, created as boss.createQueue() does it (pgboss.create_queue(name, options), which also makes${m === 10 ? '\n-- each queue\'s own partition' : ' the\n-- partition of a queue created with partition: true'}):`]
  return [...head, ...qhead, ...queues, '', '-- Jobs:', ...jobs, ...(others.length ? ['', '-- pg-boss\'s own bookkeeping rows written during the run:', ...others] : []), ''].join('\n')
}

// microseconds since the epoch of a UTC 'YYYY-MM-DD HH:MM:SS[.ffffff]' literal
function micros (t) {
  const [whole, frac = ''] = t.split('.')
  return Date.parse(whole.replace(' ', 'T') + 'Z') * 1000 + parseInt(frac.padEnd(6, '0').slice(0, 6), 10)
}

function relative (t, ref) {
  const d = (micros(t) - ref) / 1e6
  if (Math.abs(d) < 0.0005) return 'now()'
  return `(now() ${d < 0 ? '-' : '+'} interval '${Math.abs(d).toFixed(3)} seconds')`
}

main().catch(err => { console.error(err.stack || err); process.exit(1) })
