#!/usr/bin/env bash
# Round trip of qctl with Delayed::Job's own client and workers: roundtrip.sh DB_URL [VERSION]
#   DB_URL: an empty PostgreSQL (postgres://...) or MariaDB/MySQL (mysql://...) database.
#   VERSION: v4.1.9 (Debian's ruby-delayed-job 4.1.9 with ruby-delayed-job-active-record 4.1.6, on ruby-rails 6.1).
# dj.rb of this folder is a tiny Active Record app: the gem's own migration template, Delayed::Job.enqueue and real
# Delayed::Worker processes; every run of a job writes a ledger row.
#   1. two slow jobs (ahead by priority) and six quick ones; two workers each lock a slow job and are killed with
#      kill -9 mid-job. Delayed::Worker.max_run_time is its default 4 hours, so only qctl frees the locks.
#   2. qctl reap --dry-run --timeout 2s and qctl reap --timeout 2s unlock both, attempts kept (a dead worker's run
#      is no failed attempt to Delayed::Job); Delayed::Job's own ready_to_run then finds every job.
#   3. a fresh worker (exit_on_complete) runs every job exactly once (the two slow ones ran once before, unfinished,
#      at the kill).
#   4. a job with max_attempts 1 that fails: failed_at set; qctl retry; the real worker runs it.
#   5. qctl purge --status failed of another failed job; Delayed::Job's own queries and a new job still work.
#   6. explain-claim --apply: without delayed_jobs_priority and with 20,000 other jobs (PostgreSQL: failed ones, kept
#      with destroy_failed_jobs = false; MySQL: jobs scheduled for tomorrow), qctl suggests an index,
#      builds it, the reserve's row search uses it and the real worker still reserves.
# qctl is $QCTL, else target/release/qctl of this repository if built, else target/debug/qctl.
# Prints one line per check; the last line is `roundtrip delayed_job VERSION DATABASE: PASS|FAIL (...)`; exits 0
# only when every check passed. Leaves no worker running.
set -uo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
REPO="$(cd "$HERE/../../.." && pwd)"
DB_URL="${1:?usage: roundtrip.sh DB_URL [VERSION]}"
VERSION="${2:-v4.1.9}"
if [ -z "${QCTL:-}" ]; then
  if [ -x "$REPO/target/release/qctl" ]; then QCTL="$REPO/target/release/qctl"; else QCTL="$REPO/target/debug/qctl"; fi
fi
case "$DB_URL" in
  postgres://*|postgresql://*) DATABASE=postgres; export DATABASE_URL="$DB_URL" ;;
  mysql://*|mariadb://*) DATABASE=mysql; export DATABASE_URL="mysql2://${DB_URL#*://}" ;;
  *) echo "roundtrip delayed_job $VERSION ${DB_URL%%:*}: FAIL (PostgreSQL or MariaDB/MySQL only)"; exit 2 ;;
esac
NAME="roundtrip delayed_job $VERSION $DATABASE"
if ! "$HERE/install.sh" "$VERSION" >/dev/null; then echo "$NAME: FAIL (install.sh failed)"; exit 1; fi

WORK=$(mktemp -d)
export QCTL_SLOW_FLAG="$WORK/slow" QCTL_SLOW_SECONDS=300
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null; done
  rm -rf "$WORK"
}
trap cleanup EXIT

FAILED=0
check() { # check EXIT-CODE MESSAGE
  if [ "$1" = 0 ]; then echo "ok   $2"; else echo "FAIL $2"; FAILED=1; fi
}
sql() {
  if [ $DATABASE = postgres ]; then
    PGOPTIONS=--client-min-messages=warning psql "$DB_URL" -qAt -v ON_ERROR_STOP=1 -c "$1"
  else
    rest=${DB_URL#*://}; userinfo=${rest%%@*}; hostpart=${rest#*@}; hostport=${hostpart%%/*}
    port=3306; [ "$hostport" != "${hostport#*:}" ] && port=${hostport#*:}
    pass=""; [ "$userinfo" != "${userinfo#*:}" ] && pass=${userinfo#*:}
    MYSQL_PWD="$pass" mariadb -h "${hostport%%:*}" -P "$port" -u "${userinfo%%:*}" -N -B "${hostpart#*/}" -e "$1"
  fi
}
dj() { ruby "$HERE/dj.rb" "$@"; }
qctl() { "$QCTL" --database "$DB_URL" "$@"; }
json() { python3 -c "import json,sys; d=json.load(sys.stdin); print(eval(sys.argv[1], {}, {'d': d}))" "$1"; }
drain() { timeout 120 ruby "$HERE/dj.rb" drain >>"$WORK/drain.log" 2>&1; }
finished() { sql "SELECT count(*) FROM ledger WHERE job_key = '$1' AND finished_at IS NOT NULL"; }
started() { sql "SELECT count(*) FROM ledger WHERE job_key = '$1'"; }

# ---- setup ----
dj migrate >/dev/null
check $? "delayed_jobs from the gem's own migration template, and a ledger"
found=$(qctl --format json doctor | json "d['layout']")
check $([ "$found" = delayed_job ]; echo $?) "qctl --layout auto finds delayed_job ($found)"
verbose=$(qctl -v stats 2>&1 >/dev/null)
echo "$verbose" | grep -q "version: Delayed::Job 4.1 to 4.2"
check $? "qctl -v names the release line (Delayed::Job 4.1 to 4.2, read from the catalog)"

# ---- 1. workers killed mid-job ----
dj enqueue slow-1 slow-2 --priority -5 >/dev/null
QUICK=(quick-1 quick-2 quick-3 quick-4 quick-5 quick-6)
dj enqueue "${QUICK[@]}" >/dev/null
check $([ "$(sql 'SELECT count(*) FROM delayed_jobs')" = 8 ]; echo $?) "8 jobs enqueued with Delayed::Job.enqueue"
touch "$QCTL_SLOW_FLAG"
for i in 1 2; do
  ruby "$HERE/dj.rb" work "w$i" >>"$WORK/worker-$i.log" 2>&1 &
  PIDS+=($!)
done
for _ in $(seq 1 300); do
  [ "$(sql "SELECT count(*) FROM ledger WHERE job_key LIKE 'slow-%'")" = 2 ] && break
  sleep 0.2
done
check $([ "$(sql "SELECT count(*) FROM ledger WHERE job_key LIKE 'slow-%' AND finished_at IS NULL")" = 2 ]; echo $?) \
  "two Delayed::Worker processes are each mid-way through a slow job"
for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null; done
for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null; done
PIDS=()
rm -f "$QCTL_SLOW_FLAG"
check $([ "$(sql 'SELECT count(*) FROM delayed_jobs WHERE locked_at IS NOT NULL')" = 2 ]; echo $?) \
  "kill -9: two locks left behind (max_run_time is 4 hours, so no worker would take them soon)"
counts=$(dj counts)
check $([ "$counts" = "total=8 ready_to_run=6 failed=0 locked=2" ]; echo $?) "Delayed::Job's own queries: $counts"
running=$(qctl --format json stats | json "d['total']['running']")
check $([ "$running" = 2 ]; echo $?) "qctl stats: 2 running ($running)"

# ---- 2. qctl reap --timeout ----
sleep 3
dry=$(qctl --format json reap --dry-run --timeout 2s)
real=$(qctl --format json reap --timeout 2s)
check $([ "$(echo "$dry" | json "(d['requeued'], d['dead_lettered'])")" = "(2, 0)" ]; echo $?) \
  "reap --dry-run --timeout 2s: unlock both ($(echo "$dry" | json "(d['requeued'], d['dead_lettered'])"))"
check $([ "$(echo "$real" | json "(d['requeued'], d['dead_lettered'])")" = "(2, 0)" ]; echo $?) "reap --timeout 2s did what its dry run said"
check $([ "$(sql "SELECT count(*) FROM delayed_jobs WHERE locked_at IS NULL AND locked_by IS NULL AND attempts = 0 AND failed_at IS NULL")" = 8 ]; echo $?) \
  "every job unlocked, attempts kept at 0"
counts=$(dj counts)
check $([ "$counts" = "total=8 ready_to_run=8 failed=0 locked=0" ]; echo $?) "Delayed::Job's ready_to_run finds all 8: $counts"

# ---- 3. a fresh worker ----
drain
ok=0
for k in "${QUICK[@]}" slow-1 slow-2; do
  [ "$(finished "$k")" = 1 ] || { ok=1; echo "     $k finished $(finished "$k") times"; }
done
check $ok "a fresh Delayed::Worker ran every job to completion exactly once"
check $([ "$(started slow-1)$(started slow-2)" = 22 ]; echo $?) "the two killed jobs ran once more (2 starts, 1 finish each)"
check $([ "$(sql 'SELECT count(*) FROM delayed_jobs')" = 0 ]; echo $?) "nothing is stuck in delayed_jobs"

# ---- 4. qctl retry ----
touch "$WORK/fail"
id=$(dj enqueue fails-1 --max-attempts 1 --fail-flag "$WORK/fail")
drain
check $([ "$(sql "SELECT count(*) FROM delayed_jobs WHERE id = $id AND failed_at IS NOT NULL AND attempts = 1")" = 1 ]; echo $?) \
  "a job with max_attempts 1 that raised is failed for good (failed_at set, kept: destroy_failed_jobs = false)"
failed=$(qctl --format json stats | json "d['total']['failed']")
check $([ "$failed" = 1 ]; echo $?) "qctl stats: 1 failed ($failed)"
rm -f "$WORK/fail"
qctl retry "$id" >/dev/null
check $? "qctl retry $id"
drain
check $([ "$(finished fails-1)" = 1 ] && [ "$(sql 'SELECT count(*) FROM delayed_jobs')" = 0 ]; echo $?) \
  "the real worker ran the retried job to completion (and deleted it)"

# ---- 5. qctl purge ----
touch "$WORK/fail"
dj enqueue fails-2 --max-attempts 1 --fail-flag "$WORK/fail" >/dev/null
drain
rm -f "$WORK/fail"
sleep 1.5
purged=$(qctl --format json purge --status failed --older-than 1s --yes | json "d['purged']")
check $([ "$purged" = 1 ]; echo $?) "qctl purge --status failed --older-than 1s deleted the failed job ($purged)"
counts=$(dj counts)
check $([ "$counts" = "total=0 ready_to_run=0 failed=0 locked=0" ]; echo $?) "Delayed::Job's own queries still run: $counts"
dj enqueue after-purge >/dev/null && drain
check $([ "$(finished after-purge)" = 1 ]; echo $?) "a new job still runs"

# ---- 6. explain-claim --apply ----
if [ $DATABASE = postgres ]; then
  sql "DROP INDEX delayed_jobs_priority"
  sql "INSERT INTO delayed_jobs (priority, attempts, handler, run_at, failed_at, created_at, updated_at)
       SELECT 0, 1, '--- !ruby/struct:LedgerJob
key: bulk
', now() AT TIME ZONE 'UTC', now() AT TIME ZONE 'UTC', now() AT TIME ZONE 'UTC', now() AT TIME ZONE 'UTC' FROM generate_series(1, 20000)"
  sql "ANALYZE delayed_jobs"
else
  sql "DROP INDEX delayed_jobs_priority ON delayed_jobs"
  sql "INSERT INTO delayed_jobs (priority, attempts, handler, run_at, failed_at, created_at, updated_at)
       SELECT 0, 0, '--- !ruby/struct:LedgerJob\nkey: bulk\n', UTC_TIMESTAMP() + INTERVAL 1 DAY, NULL, UTC_TIMESTAMP(), UTC_TIMESTAMP() FROM seq_1_to_20000"
  sql "ANALYZE TABLE delayed_jobs" >/dev/null
fi
dj enqueue after-apply >/dev/null
qctl explain-claim >"$WORK/explain.txt" 2>&1
grep -q "CREATE INDEX" "$WORK/explain.txt"
check $? "qctl explain-claim finds the reserve reading 20,000 other jobs without delayed_jobs_priority, and suggests an index"
qctl explain-claim --apply >"$WORK/apply.txt" 2>&1
rc=$?
if [ $DATABASE = postgres ]; then
  new=$(sql "SELECT indexname FROM pg_indexes WHERE tablename = 'delayed_jobs' AND indexname <> 'delayed_jobs_pkey' LIMIT 1")
  plan=$(sql "EXPLAIN SELECT delayed_jobs.id FROM delayed_jobs WHERE (((run_at <= now() AT TIME ZONE 'UTC' AND (locked_at IS NULL OR locked_at < now() AT TIME ZONE 'UTC' - interval '4 hours')) OR locked_by = 'host:x pid:0') AND failed_at IS NULL) ORDER BY priority ASC, run_at ASC LIMIT 1 FOR UPDATE SKIP LOCKED")
else
  new=$(sql "SELECT INDEX_NAME FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'delayed_jobs' AND INDEX_NAME <> 'PRIMARY' LIMIT 1")
  plan=$(sql "EXPLAIN SELECT id FROM delayed_jobs WHERE (((run_at <= UTC_TIMESTAMP() AND (locked_at IS NULL OR locked_at < UTC_TIMESTAMP() - INTERVAL 4 HOUR)) OR locked_by = 'host:x pid:0') AND failed_at IS NULL) ORDER BY priority ASC, run_at ASC LIMIT 1")
fi
check $([ $rc = 0 ] && [ -n "$new" ]; echo $?) "qctl explain-claim --apply built $new and finds the reserve fine (exit $rc)"
echo "$plan" | grep -q "$new"
check $? "Delayed::Job's reserve (its row search, EXPLAIN) uses $new"
drain
check $([ "$(finished after-apply)" = 1 ]; echo $?) "the real worker still reserves and runs a job"
sql "DELETE FROM delayed_jobs WHERE handler LIKE '%key: bulk%'" >/dev/null

if [ $FAILED = 0 ]; then echo "$NAME: PASS"; exit 0; fi
echo "--- logs"; tail -5 "$WORK"/*.log "$WORK"/*.txt 2>/dev/null
echo "$NAME: FAIL (see the FAIL lines above)"
exit 1
