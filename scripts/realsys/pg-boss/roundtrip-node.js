#!/usr/bin/env node
// The pg-boss side of roundtrip.sh: every step that needs pg-boss's own client, workers or
// supervisor. Each subcommand prints plain lines (or one JSON document) for roundtrip.sh to check.
//
//   node roundtrip-node.js URL VERSION setup N          install pg-boss, make the queues and the
//                                                     ledger, send N jobs to "rt"
//   node roundtrip-node.js URL VERSION worker NAME QUEUE CONCURRENCY
//                                                     a real worker (boss.work) until SIGTERM
//   node roundtrip-node.js URL VERSION supervisor      pg-boss's own supervisor, 1 s intervals, until SIGTERM
//   node roundtrip-node.js URL VERSION send QUEUE KEY [MODE]   MODE: ok | fail-first | hang
//   node roundtrip-node.js URL VERSION bulk QUEUE N      send N short jobs (keys bulk-0..)
//   node roundtrip-node.js URL VERSION counts QUEUE...  pg-boss's own counts (JSON)
//   node roundtrip-node.js URL VERSION retry-own QUEUE ID      pg-boss's own boss.retry (10+)
//   node roundtrip-node.js URL VERSION take QUEUE KEY [fail]   send KEY, fetch it with pg-boss's own
//                                                     fetch and leave it active (its worker gone);
//                                                     with fail, boss.fail it instead (a retry)
//
// Queues (pg-boss 9 has no queue table: the same settings go on each job):
//   rt       retryLimit 2, expireInSeconds 300 (long: only qctl reap rescues in the round trip;
//            no heartbeat: pg-boss 12 takes heartbeatSeconds >= 10 only, too slow for the round trip)
//   rt_dlq   the dead-letter queue
//   rt_fail  deadLetter rt_dlq, retryLimit 0, expireInSeconds 2 (pg-boss's supervisor fails it fast)
//   rt_retry retryLimit 0 (a failed job stays failed until retried)
//   rt_stately policy stately (10+: one job per state), deadLetter rt_dlq, retryLimit 2,
//            retryDelay 3600 (a failed job waits in retry), expireInSeconds 2
// Every job records each run in qctl_ledger(job_key, worker, pid, started_at, finished_at).
'use strict'

const L = require('./lib.js')

const QUEUES = {
  rt: { retryLimit: 2, retryDelay: 0, expireInSeconds: 300 },
  rt_dlq: { retryLimit: 2, expireInSeconds: 300 },
  rt_fail: { deadLetter: 'rt_dlq', retryLimit: 0, expireInSeconds: 2 },
  rt_retry: { retryLimit: 0, retryDelay: 0, expireInSeconds: 300 },
  rt_stately: { policy: 'stately', deadLetter: 'rt_dlq', retryLimit: 2, retryDelay: 3600, expireInSeconds: 2 }
}

async function main () {
  const [url, version, cmd, ...rest] = process.argv.slice(2)
  const sys = await L.load(version)
  const perJob = name => {
    if (sys.major !== 9) return {}
    const { deadLetter, ...o } = QUEUES[name] // no dead letters in 9
    return o
  }

  if (cmd === 'setup') {
    const n = parseInt(rest[0] || '50', 10)
    const boss = L.newBoss(sys, url)
    await boss.start()
    const queues = ['rt_dlq', 'rt', 'rt_fail', 'rt_retry']
    if (sys.major >= 10) queues.push('rt_stately') // 9 has no queue policies
    for (const name of queues) await L.createQueue(sys, boss, name, QUEUES[name])
    const pg = new sys.pg.Client({ connectionString: url })
    await pg.connect()
    await pg.query('CREATE TABLE IF NOT EXISTS qctl_ledger (job_key text, worker text, pid int, started_at timestamptz, finished_at timestamptz)')
    await pg.end()
    for (let i = 0; i < n; i++) await L.send(sys, boss, 'rt', { key: `rt-${i}`, ms: 400 }, perJob('rt'))
    await boss.stop({ graceful: false, wait: true, timeout: 1000 }).catch(() => {})
    console.log(`sent ${n}`)
    return exit(0)
  }

  if (cmd === 'worker') {
    const [name, queue, concurrency] = rest
    const pool = new sys.pg.Pool({ connectionString: url, max: 4 })
    const boss = L.newBoss(sys, url, { application: `rt-${name}` })
    await boss.start()
    await L.work(sys, boss, queue, parseInt(concurrency || '1', 10), async job => {
      const { key, ms = 200 } = job.data || {}
      // a dead-letter copy carries the failed job's data; its worker just runs it
      const mode = queue === 'rt_dlq' ? 'ok' : (job.data || {}).mode || 'ok'
      const { rows } = await pool.query('INSERT INTO qctl_ledger (job_key, worker, pid, started_at) VALUES ($1, $2, $3, clock_timestamp()) RETURNING started_at::text AS started, (SELECT count(*) FROM qctl_ledger WHERE job_key = $1)::int AS before', [key, name, process.pid])
      if (mode === 'hang') return new Promise(() => {})
      await L.sleep(ms)
      if (mode === 'fail-first' && rows[0].before === 0) throw new Error(`first run of ${key} fails`)
      await pool.query('UPDATE qctl_ledger SET finished_at = clock_timestamp() WHERE job_key = $1 AND pid = $2 AND started_at = $3::timestamptz', [key, process.pid, rows[0].started])
      return { ran: key }
    })
    console.log('ready')
    process.on('SIGTERM', async () => {
      await boss.stop({ graceful: true, wait: true, timeout: 5000 }).catch(() => {})
      await pool.end().catch(() => {})
      exit(0)
    })
    return
  }

  if (cmd === 'supervisor') {
    const boss = L.newBoss(sys, url, { supervise: true, fast: true, application: 'rt-supervisor' })
    await boss.start()
    console.log('ready')
    process.on('SIGTERM', async () => {
      await boss.stop({ graceful: false, wait: true, timeout: 1000 }).catch(() => {})
      exit(0)
    })
    return
  }

  if (cmd === 'send') {
    const [queue, key, mode = 'ok'] = rest
    const boss = L.newBoss(sys, url)
    await boss.start()
    const id = await L.send(sys, boss, queue, { key, ms: 200, mode }, perJob(queue))
    console.log(id)
    await boss.stop({ graceful: false, wait: true, timeout: 1000 }).catch(() => {})
    return exit(0)
  }

  if (cmd === 'bulk') {
    const [queue, n] = rest
    const boss = L.newBoss(sys, url)
    await boss.start()
    for (let i = 0; i < parseInt(n, 10); i++) await L.send(sys, boss, queue, { key: `bulk-${i}`, ms: 0 }, perJob(queue))
    await boss.stop({ graceful: false, wait: true, timeout: 1000 }).catch(() => {})
    return exit(0)
  }

  if (cmd === 'counts') {
    const boss = L.newBoss(sys, url)
    await boss.start()
    const counts = await L.ownCounts(sys, boss, rest)
    console.log(JSON.stringify(counts))
    await boss.stop({ graceful: false, wait: true, timeout: 1000 }).catch(() => {})
    return exit(0)
  }

  if (cmd === 'retry-own') {
    const [queue, id] = rest
    const boss = L.newBoss(sys, url)
    await boss.start()
    console.log(JSON.stringify(await L.retry(sys, boss, queue, id)))
    await boss.stop({ graceful: false, wait: true, timeout: 1000 }).catch(() => {})
    return exit(0)
  }

  if (cmd === 'take') {
    const [queue, key, then = 'leave'] = rest
    const boss = L.newBoss(sys, url)
    await boss.start()
    const id = await L.send(sys, boss, queue, { key, ms: 200 }, perJob(queue))
    if (!id) throw new Error(`pg-boss did not take ${key} into ${queue}`)
    await L.fetchById(sys, boss, queue, id)
    if (then === 'fail') await L.fail(sys, boss, queue, id, { message: `${key} failed` })
    console.log(id)
    await boss.stop({ graceful: false, wait: true, timeout: 1000 }).catch(() => {})
    return exit(0)
  }

  throw new Error(`unknown command ${cmd}`)
}

function exit (code) { setTimeout(() => process.exit(code), 100) }

main().catch(err => { console.error(err.stack || err); process.exit(1) })
