#!/usr/bin/env bash
# Round trip of qctl with Laravel's own database queue: roundtrip.sh DB_URL [VERSION]
#   DB_URL: an empty MariaDB/MySQL database (mysql://user@host:port/name); VERSION: v8.83.26 (Debian's).
# A minimal Laravel 8 app (app/: artisan, config, one job class, on Debian's framework autoloader) is copied to a
# temporary directory; its own artisan makes the tables (queue:table, queue:failed-table, migrate), dispatches the
# jobs (Laravel's dispatcher) and runs the workers (queue:work). Each run of a job writes a ledger row.
#   1. three slow jobs (tries 3, tries 1, no $tries = queue:work's default --tries=1) and six quick ones;
#      three workers each take a slow job and are killed with kill -9 mid-job. retry_after is an hour, so only
#      qctl frees the reservations.
#   2. qctl reap --dry-run --timeout 2s and qctl reap --timeout 2s: the tries-3 job is un-reserved; the other two are
#      out of tries, so they are failed as the next pop would fail them (MaxAttemptsExceededException): in
#      failed_jobs, where `php artisan queue:failed` lists them, and gone from jobs; qctl stats agrees.
#   3. a fresh worker (queue:work --stop-when-empty) runs every job left exactly once (the tries-3 job ran once
#      before, unfinished, at the kill) and never the failed ones.
#   4. qctl retry of a failed job: the real worker runs it; queue:failed no longer lists it.
#   5. qctl purge is refused (Laravel deletes finished jobs itself); queue:failed, queue:prune-failed and a new job
#      still work.
#   6. explain-claim --apply: with Laravel's queue index dropped and 20,000 jobs of another queue, qctl finds the
#      pop scanning and suggests an index, builds an index, Laravel's own pop (EXPLAIN) uses it and the real worker still claims.
# qctl is $QCTL, else target/release/qctl of this repository if built, else target/debug/qctl.
# Prints one line per check; the last line is `roundtrip laravel VERSION mysql: PASS|FAIL (...)`; exits 0 only when
# every check passed. Leaves no worker running.
set -uo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
REPO="$(cd "$HERE/../../.." && pwd)"
DB_URL="${1:?usage: roundtrip.sh DB_URL [VERSION]}"
VERSION="${2:-v8.83.26}"
if [ -z "${QCTL:-}" ]; then
  if [ -x "$REPO/target/release/qctl" ]; then QCTL="$REPO/target/release/qctl"; else QCTL="$REPO/target/debug/qctl"; fi
fi
NAME="roundtrip laravel $VERSION mysql"
case "$DB_URL" in
  mysql://*|mariadb://*) ;;
  *) echo "$NAME: FAIL (Laravel's database queue is run here on MariaDB/MySQL only)"; exit 2;;
esac
if ! "$HERE/install.sh" "$VERSION" >/dev/null; then echo "$NAME: FAIL (install.sh failed)"; exit 1; fi

# mysql://user[:password]@host:port/name
rest=${DB_URL#*://}
userinfo=${rest%%@*}; hostpart=${rest#*@}
export QCTL_DB_USER=${userinfo%%:*}
export QCTL_DB_PASSWORD=$([ "$userinfo" != "${userinfo#*:}" ] && echo "${userinfo#*:}")
hostport=${hostpart%%/*}
export QCTL_DB_HOST=${hostport%%:*}
export QCTL_DB_PORT=$([ "$hostport" != "${hostport#*:}" ] && echo "${hostport#*:}" || echo 3306)
export QCTL_DB_NAME=${hostpart#*/}
export QCTL_RETRY_AFTER=3600 QCTL_SLOW_SECONDS=300

WORK=$(mktemp -d)
APP="$WORK/app"
cp -r "$HERE/app" "$APP"
mkdir -p "$APP/storage/logs" "$APP/storage/framework/cache/data" "$APP/bootstrap/cache" "$APP/database/migrations"
export QCTL_SLOW_FLAG="$WORK/slow"
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null; done
  rm -rf "$WORK"
}
trap cleanup EXIT

FAILED=0
check() { # check CONDITION-EXIT-CODE MESSAGE
  if [ "$1" = 0 ]; then echo "ok   $2"; else echo "FAIL $2"; FAILED=1; fi
}
sql() { MYSQL_PWD="$QCTL_DB_PASSWORD" mariadb -h "$QCTL_DB_HOST" -P "$QCTL_DB_PORT" -u "$QCTL_DB_USER" -N -B "$QCTL_DB_NAME" -e "$1"; }
artisan() { (cd "$APP" && php artisan "$@"); }
qctl() { "$QCTL" --database "$DB_URL" "$@"; }
json() { python3 -c "import json,sys; d=json.load(sys.stdin); print(eval(sys.argv[1], {}, {'d': d}))" "$1"; }
# Runs one worker until the queue is empty (at most 120 s).
drain() { (cd "$APP" && timeout 120 php artisan queue:work database --stop-when-empty --sleep=0.2 >>"$WORK/drain.log" 2>&1); }
finished() { sql "SELECT count(*) FROM ledger WHERE job_key = '$1' AND finished_at IS NOT NULL"; }
started() { sql "SELECT count(*) FROM ledger WHERE job_key = '$1'"; }

# ---- setup: Laravel's own migrations, the ledger ----
artisan queue:table >/dev/null && artisan queue:failed-table >/dev/null && artisan migrate --force >/dev/null
check $? "php artisan queue:table, queue:failed-table, migrate"
sql "CREATE TABLE ledger (id BIGINT AUTO_INCREMENT PRIMARY KEY, job_key VARCHAR(64) NOT NULL, pid INT, attempt INT, started_at DOUBLE, finished_at DOUBLE)"
found=$(qctl --format json doctor | json "d['layout']")
check $([ "$found" = laravel ]; echo $?) "qctl --layout auto finds laravel ($found)"
verbose=$(qctl -v stats 2>&1 >/dev/null)
echo "$verbose" | grep -q "version: Laravel 8 to 13"
check $? "qctl -v names the release line (Laravel 8 to 13, read from the catalog)"

# ---- 1. slow jobs held by workers killed mid-job ----
artisan qctl:dispatch slow-retry --tries=3 >/dev/null
artisan qctl:dispatch slow-once --tries=1 >/dev/null
artisan qctl:dispatch slow-default >/dev/null
QUICK=(quick-1 quick-2 quick-3 quick-4 quick-5 quick-6)
for k in "${QUICK[@]}"; do artisan qctl:dispatch "$k" --tries=2 >/dev/null; done
check $([ "$(sql 'SELECT count(*) FROM jobs')" = 9 ]; echo $?) "9 jobs dispatched with Laravel's dispatcher"
declare -A UUID
for k in slow-retry slow-once slow-default; do
  UUID[$k]=$(sql "SELECT JSON_UNQUOTE(JSON_EXTRACT(payload, '\$.uuid')) FROM jobs WHERE LOCATE('$k', payload) > 0 LIMIT 1")
done
touch "$QCTL_SLOW_FLAG"
for i in 1 2 3; do
  (cd "$APP" && exec php artisan queue:work database --sleep=0.2 >>"$WORK/worker-$i.log" 2>&1) &
  PIDS+=($!)
done
for _ in $(seq 1 300); do
  [ "$(sql "SELECT count(*) FROM ledger WHERE job_key LIKE 'slow-%'")" = 3 ] && break
  sleep 0.2
done
check $([ "$(sql "SELECT count(*) FROM ledger WHERE job_key LIKE 'slow-%' AND finished_at IS NULL")" = 3 ]; echo $?) \
  "three queue:work workers are each mid-way through a slow job"
for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null; done
for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null; done
PIDS=()
rm -f "$QCTL_SLOW_FLAG"
check $([ "$(sql 'SELECT count(*) FROM jobs WHERE reserved_at IS NOT NULL')" = 3 ]; echo $?) \
  "kill -9: three reservations left behind (retry_after is an hour, so no worker would take them soon)"
running=$(qctl --format json stats | json "d['total']['running']")
check $([ "$running" = 3 ]; echo $?) "qctl stats: 3 running ($running)"

# ---- 2. qctl reap --timeout ----
sleep 3
dry=$(qctl --format json reap --dry-run --timeout 2s)
real=$(qctl --format json reap --timeout 2s)
check $([ "$(echo "$dry" | json "(d['requeued'], d['dead_lettered'])")" = "(1, 2)" ]; echo $?) \
  "reap --dry-run --timeout 2s: requeue the tries-3 job, fail the two out of tries ($(echo "$dry" | json "(d['requeued'], d['dead_lettered'])"))"
check $([ "$(echo "$real" | json "(d['requeued'], d['dead_lettered'])")" = "(1, 2)" ]; echo $?) \
  "reap --timeout 2s did what its dry run said"
for k in slow-once slow-default; do
  n=$(sql "SELECT count(*) FROM failed_jobs WHERE uuid = '${UUID[$k]}' AND connection = 'database' AND queue = 'default' AND LOCATE('MaxAttemptsExceededException', exception) > 0")
  check $([ "$n" = 1 ]; echo $?) "$k is in failed_jobs as Laravel's worker fails it (uuid, connection, MaxAttemptsExceededException)"
done
listed=$(artisan queue:failed 2>&1)
echo "$listed" | grep -q "${UUID[slow-once]}" && echo "$listed" | grep -q "${UUID[slow-default]}"
check $? "php artisan queue:failed lists both"
check $([ "$(sql "SELECT count(*) FROM jobs WHERE LOCATE('slow-once', payload) > 0 OR LOCATE('slow-default', payload) > 0")" = 0 ]; echo $?) \
  "the failed jobs are gone from jobs"
stats=$(qctl --format json stats | json "(d['total']['pending'], d['total']['running'], d['total']['failed'])")
check $([ "$stats" = "(7, 0, 2)" ]; echo $?) "qctl stats after the reap: 7 pending, 0 running, 2 failed ($stats)"

# ---- 3. a fresh worker ----
drain
ok=0
for k in "${QUICK[@]}" slow-retry; do
  [ "$(finished "$k")" = 1 ] || { ok=1; echo "     $k finished $(finished "$k") times"; }
done
check $ok "a fresh queue:work ran every remaining job to completion exactly once"
check $([ "$(started slow-retry)" = 2 ]; echo $?) "slow-retry ran once more after the kill (2 starts, 1 finish)"
check $([ "$(started slow-once)$(finished slow-once)$(started slow-default)$(finished slow-default)" = 1010 ]; echo $?) \
  "the failed jobs never ran again"
check $([ "$(sql 'SELECT count(*) FROM jobs')" = 0 ]; echo $?) "nothing is stuck in jobs"

# ---- 4. qctl retry ----
fid=$(sql "SELECT id FROM failed_jobs WHERE uuid = '${UUID[slow-once]}'")
qctl retry "$fid" >/dev/null
check $? "qctl retry $fid (slow-once)"
drain
check $([ "$(finished slow-once)" = 1 ]; echo $?) "the real worker ran the retried job"
listed=$(artisan queue:failed 2>&1)
echo "$listed" | grep -q "${UUID[slow-once]}"
check $([ $? = 1 ]; echo $?) "queue:failed no longer lists it"
echo "$listed" | grep -q "${UUID[slow-default]}"
check $? "queue:failed still lists slow-default"

# ---- 5. qctl purge ----
out=$(qctl purge --status failed --older-than 0s --yes 2>&1)
rc=$?
check $([ $rc = 2 ] && echo "$out" | grep -q "does not run on"; echo $?) "qctl purge is refused, naming Laravel's own tool (exit $rc)"
check $([ "$(sql 'SELECT count(*) FROM failed_jobs')" = 1 ]; echo $?) "failed_jobs untouched"
artisan queue:prune-failed --hours=1 >/dev/null
check $? "php artisan queue:prune-failed still runs"
artisan qctl:dispatch after-purge >/dev/null && drain
check $([ "$(finished after-purge)" = 1 ]; echo $?) "a new job still runs"

# ---- 6. explain-claim --apply ----
sql "ALTER TABLE jobs DROP INDEX jobs_queue_index"
sql "INSERT INTO jobs (queue, payload, attempts, reserved_at, available_at, created_at)
     WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 20000)
     SELECT 'bulk', '{}', 0, NULL, UNIX_TIMESTAMP() + 86400, UNIX_TIMESTAMP() FROM n" 2>/dev/null ||
  sql "INSERT INTO jobs (queue, payload, attempts, reserved_at, available_at, created_at)
     SELECT 'bulk', '{}', 0, NULL, UNIX_TIMESTAMP() + 86400, UNIX_TIMESTAMP() FROM seq_1_to_20000"
sql "ANALYZE TABLE jobs" >/dev/null
artisan qctl:dispatch after-apply >/dev/null
qctl explain-claim >"$WORK/explain.txt" 2>&1
grep -q "CREATE INDEX" "$WORK/explain.txt"
check $? "qctl explain-claim finds Laravel's pop reading the table from the start without its queue index, and suggests one"
before=$(sql "SELECT GROUP_CONCAT(DISTINCT INDEX_NAME) FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'jobs'")
qctl explain-claim --apply >"$WORK/apply.txt" 2>&1
rc=$?
after=$(sql "SELECT GROUP_CONCAT(DISTINCT INDEX_NAME) FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'jobs'")
check $([ $rc = 0 ] && [ "$after" != "$before" ]; echo $?) "qctl explain-claim --apply built an index ($before -> $after) and finds the pop fine (exit $rc)"
new=$(sql "SELECT INDEX_NAME FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'jobs' AND INDEX_NAME NOT IN ('PRIMARY') LIMIT 1")
plan=$(sql "EXPLAIN select * from \`jobs\` where \`queue\` = 'default' and ((\`reserved_at\` is null and \`available_at\` <= UNIX_TIMESTAMP()) or (\`reserved_at\` <= UNIX_TIMESTAMP() - 3600)) order by \`id\` asc limit 1 FOR UPDATE SKIP LOCKED")
echo "$plan" | grep -q "$new"
check $? "Laravel's own pop (EXPLAIN) uses $new"
drain
check $([ "$(finished after-apply)" = 1 ]; echo $?) "the real worker still claims and runs a job"
sql "DELETE FROM jobs WHERE queue = 'bulk'"

if [ $FAILED = 0 ]; then echo "$NAME: PASS"; exit 0; fi
echo "--- worker logs"; tail -5 "$WORK"/*.log "$WORK"/*.txt 2>/dev/null
echo "$NAME: FAIL (see the FAIL lines above)"
exit 1
