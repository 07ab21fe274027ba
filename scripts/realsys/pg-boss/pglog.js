#!/usr/bin/env node
// Prints the statements one database sent, read from PostgreSQL's stderr log (log_statement = 'all'
// set on that database with ALTER DATABASE ... SET log_statement = 'all'), from a byte offset on.
//
//   node pglog.js LOGFILE OFFSET DBNAME REGEX [--all] [--params] [--distinct]
//
// A statement is printed verbatim (as the client sent it, placeholders and all) when REGEX matches
// it; the first match only unless --all (--distinct: each different text once, with a count). With --params its DETAIL parameters line follows, as a
// "-- parameters:" comment. Statements are separated by a line holding only "-- ----".
'use strict'

const fs = require('node:fs')

const [file, offset, db, pattern, ...flags] = process.argv.slice(2)
if (!file || !db || !pattern) {
  console.error('usage: node pglog.js LOGFILE OFFSET DBNAME REGEX [--all] [--params]')
  process.exit(2)
}
const fd = fs.openSync(file, 'r')
const size = fs.fstatSync(fd).size
const start = parseInt(offset || '0', 10)
const buf = Buffer.alloc(Math.max(0, size - start))
fs.readSync(fd, buf, 0, buf.length, start)
const text = buf.toString('utf8')

// log_line_prefix '%m [%p] %q%u@%d ': background processes (checkpointer, ...) stop at %q, no user@db
const head = /^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+ \S+) \[(\d+)\] (?:(\S*)@(\S*) )?([A-Z]+):  (.*)$/
const entries = []
let cur = null
for (const line of text.split('\n')) {
  const m = head.exec(line)
  if (m) {
    cur = { pid: m[2], db: m[4], level: m[5], text: m[6] }
    entries.push(cur)
  } else if (cur) {
    cur.text += '\n' + line.replace(/^\t/, '') // the log indents continuation lines with a tab
  }
}

const re = new RegExp(pattern, 's')
const out = []
for (let i = 0; i < entries.length; i++) {
  const e = entries[i]
  if (e.db !== db || e.level !== 'LOG') continue
  const m = /^(?:statement|execute [^:]*): (.*)$/s.exec(e.text)
  if (!m || !re.test(m[1])) continue
  let s = m[1].replace(/^\n+/, '').replace(/\s+$/, '')
  if (flags.includes('--params')) {
    const next = entries.slice(i + 1).find(x => x.pid === e.pid)
    if (next && next.level === 'DETAIL' && next.text.startsWith('parameters: ')) s += '\n-- ' + next.text
  }
  out.push(s)
  if (!flags.includes('--all')) break
}
if (flags.includes('--distinct')) {
  const seen = new Map()
  for (const s of out) seen.set(s, (seen.get(s) || 0) + 1)
  out.length = 0
  for (const [s, n] of seen) out.push(`-- sent ${n} time(s):\n${s}`)
}
if (!out.length) {
  console.error(`no statement of ${db} matched /${pattern}/`)
  process.exit(1)
}
process.stdout.write(out.join('\n-- ----\n') + '\n')
