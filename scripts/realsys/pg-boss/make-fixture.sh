#!/usr/bin/env bash
# Regenerates the pg-boss fixture files of one version with that version's own installer, client,
# worker and supervisor:
#   schema.sql  PgBoss.start() (supervise/schedule off) on an empty database, pg_dump --schema-only,
#               plus the rows the installer wrote (pgboss.version) as INSERTs
#   rows.sql    make-rows.js (see there)
#   claim.sql   the fetch statement boss.work()/boss.fetch() sent, read from the server log
#   rescue.sql  the expiry statement(s) pg-boss's supervisor sent when run once over every queue of
#               the loaded fixture, read from the server log
# fixture.toml and counts.sql are written by hand from the version's source and are not touched.
#
# Usage: make-fixture.sh VERSION [OUTDIR]
#   OUTDIR defaults to tests/fixtures/pg-boss/vVERSION of this checkout.
# Needs: a local PostgreSQL the current user may create databases on (PGHOST/PGUSER, default
# 127.0.0.1/postgres) whose stderr log is readable at $PG_LOG (default
# /var/log/postgresql/postgresql-15-main.log); log_statement is set on the scratch database only.
set -euo pipefail
VERSION=${1:?usage: make-fixture.sh VERSION [OUTDIR]}
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../../.." && pwd)
OUT=${2:-$ROOT/tests/fixtures/pg-boss/v$VERSION}
export PGHOST=${PGHOST:-127.0.0.1} PGUSER=${PGUSER:-postgres}
PG_LOG=${PG_LOG:-/var/log/postgresql/postgresql-15-main.log}
DB=fx_pg_boss_${VERSION//[.-]/_}
URL="postgres://$PGUSER@$PGHOST:${PGPORT:-5432}/$DB"
NODE=$("$HERE/install.sh" "$VERSION" | tail -1)
MAJOR=${VERSION%%.*}
mkdir -p "$OUT"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"; dropdb --if-exists "$DB" >/dev/null 2>&1 || true' EXIT

fresh_db() {
  dropdb --if-exists "$DB" >/dev/null 2>&1
  createdb "$DB"
  psql -q -d "$DB" -c "ALTER DATABASE $DB SET log_statement = 'all'"
}

# --- schema.sql ------------------------------------------------------------------------------
fresh_db
"$NODE" -e '
  const L = require(process.argv[1] + "/lib.js")
  ;(async () => {
    const sys = await L.load(process.argv[2])
    const boss = L.newBoss(sys, process.argv[3], { supervise: false, schedule: false })
    await boss.start()
    await boss.stop({ graceful: false, wait: true, timeout: 1000 }).catch(() => {})
    setTimeout(() => process.exit(0), 300)
  })().catch(e => { console.error(e); process.exit(1) })' "$HERE" "$VERSION" "$URL"
SCHEMA_VERSION=$(psql -At -d "$DB" -c "SELECT version FROM pgboss.version")
pg_dump --schema-only --no-owner --no-privileges -d "$DB" | grep -v '^\\\(un\)\?restrict ' > "$TMP/schema.sql"
PGTZ=UTC pg_dump --data-only --column-inserts --no-owner --no-privileges --schema=pgboss -d "$DB" 2>/dev/null | grep '^INSERT INTO' > "$TMP/data.sql" || true
case "$MAJOR" in
  9) HOW_NODE="Node $("$NODE" --version) (engines: node >= 16)" ;;
  10) HOW_NODE="Node $("$NODE" --version) (engines: node >= 20)" ;;
  11) HOW_NODE="Node $("$NODE" --version) (engines: node >= 22; npm package node@22)" ;;
  *) HOW_NODE="Node $("$NODE" --version) (engines: node >= 22.12; npm package node@22)" ;;
esac
{
  echo "-- ====================================================================================="
  echo "-- System:  pg-boss (Node.js), npm package \"pg-boss\""
  echo "-- Version: $VERSION (npm), schema version $SCHEMA_VERSION (row in pgboss.version); run with $HOW_NODE"
  echo "-- Date:    $(date -u +%Y-%m-%d)"
  echo "-- Dialect: PostgreSQL $(psql -At -c 'SHOW server_version' | cut -d' ' -f1)"
  echo "-- How:     scripts/realsys/pg-boss/make-fixture.sh $VERSION:"
  echo "--          npm install pg-boss@$VERSION; createdb; new PgBoss({connectionString, supervise/schedule off}).start(),"
  echo "--          which runs pg-boss's own installer (contractor.create -> plans.create) in one transaction; then"
  echo "--          pg_dump --schema-only --no-owner --no-privileges (psql \\restrict lines stripped)."
  echo "--          The rows the installer wrote are appended at the end as INSERTs."
  echo "-- ====================================================================================="
  cat "$TMP/schema.sql"
  echo
  echo "-- Rows written by the installer (pg_dump --data-only --column-inserts):"
  cat "$TMP/data.sql"
  echo
} > "$OUT/schema.sql"

# --- rows.sql and claim.sql ------------------------------------------------------------------
OFFSET=$(stat -c %s "$PG_LOG")
(cd "$HERE" && "$NODE" make-rows.js "$URL" "$VERSION" --dump "$OUT/rows.sql") 2>&1 | grep -v '^pg_dump: \(warning\|detail\|hint\)'
sleep 0.5
case "$MAJOR" in
  9) CLAIM_RE='WITH nextJob as.*SKIP LOCKED.*startedOn = now\(\)' ;;
  *) CLAIM_RE='WITH.*next (as|AS) \(.*SKIP LOCKED.*started_on = ' ;;
esac
{
  echo "-- pg-boss $VERSION: the statement boss.work() sends to claim jobs (manager.fetch -> plans.fetchNextJob),"
  echo "-- exactly as the server received it: read from the PostgreSQL log (log_statement = 'all' on the scratch"
  echo "-- database) while make-rows.js's worker (boss.work('email', ...), one job per fetch) ran."
  case "$MAJOR" in
    9) echo "-- Placeholders: \$1 = queue name as a LIKE pattern (_ and % escaped), \$2 = batch size." ;;
    10) echo "-- Placeholders: \$1 = queue name, \$2 = batch size (the logged values follow as a comment)." ;;
    *) echo "-- No placeholders: pg-boss $MAJOR inlines the queue name, its table (job_common, or the queue's own"
       echo "-- partition) and the batch size into the text." ;;
  esac
  node "$HERE/pglog.js" "$PG_LOG" "$OFFSET" "$DB" "$CLAIM_RE" --params
} > "$OUT/claim.sql"

# --- rescue.sql: pg-boss's own supervisor over the loaded fixture ---------------------------------
fresh_db
psql -q -v ON_ERROR_STOP=1 -d "$DB" -f "$OUT/schema.sql" -f "$OUT/rows.sql" >/dev/null
OFFSET=$(stat -c %s "$PG_LOG")
"$NODE" -e '
  const L = require(process.argv[1] + "/lib.js")
  ;(async () => {
    const sys = await L.load(process.argv[2])
    const boss = L.newBoss(sys, process.argv[3], { supervise: false, schedule: false })
    await boss.start()
    if (sys.major <= 10) await boss.expire()
    else await boss.supervise()
    await boss.stop({ graceful: false, wait: true, timeout: 1000 }).catch(() => {})
    setTimeout(() => process.exit(0), 300)
  })().catch(e => { console.error(e); process.exit(1) })' "$HERE" "$VERSION" "$URL"
sleep 0.5
case "$MAJOR" in
  9) RESCUE_RE='startedOn \+ expireIn\) < now\(\)' ;;
  10) RESCUE_RE='job failed by timeout in active state' ;;
  *) RESCUE_RE='"job timed out"|"job heartbeat timeout"' ;;
esac
{
  echo "-- pg-boss $VERSION: the supervisor's expiry of active jobs past their deadline, exactly as pg-boss sent it,"
  echo "-- read from the PostgreSQL log while pg-boss's own supervisor ran once over this fixture"
  case "$MAJOR" in
    9) echo "-- (boss.expire(), what each maintenance job runs: plans.expire wrapped in plans.locked). The deadline is each"
       echo "-- job's own expireIn (default interval '15 minutes'); nothing else is a parameter." ;;
    10) echo "-- (boss.expire(), what each maintenance tick runs: plans.failJobsByTimeout wrapped in plans.locked). The"
        echo "-- deadline is each job's own expire_in (default interval '15 minutes'); nothing else is a parameter." ;;
    11) echo "-- (boss.supervise(): per job table, plans.failJobsByTimeout(schema, table, queues) wrapped in plans.locked)."
        echo "-- The deadline is each job's own expire_seconds (default 900); the queue names of each table are inlined." ;;
    *) echo "-- (boss.supervise(): per job table, plans.failJobsByTimeout and plans.failJobsByHeartbeat, each wrapped in"
       echo "-- plans.locked). The deadlines are each job's own expire_seconds (default 900) and heartbeat_seconds (none"
       echo "-- by default); the queue names of each table and the batch limit (EXPIRY_BATCH_SIZE 1000) are inlined." ;;
  esac
  echo "-- Run it with psql -f against a database holding the fixture: it does what the supervisor does."
  node "$HERE/pglog.js" "$PG_LOG" "$OFFSET" "$DB" "$RESCUE_RE" --all --params
} > "$OUT/rescue.sql"

echo "pg-boss $VERSION (schema $SCHEMA_VERSION): wrote $OUT/{schema,rows,claim,rescue}.sql" >&2
