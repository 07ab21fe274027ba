#!/usr/bin/env bash
# Round trip of qctl with real Quartz 2.3.2 scheduler nodes (Debian's libquartz2-java), clustered, JDBC job store.
#
# Usage: roundtrip.sh DB_URL [VERSION]     (VERSION: v2.3.2, the default, or v2.3.2-properties: the same Quartz with
#   org.quartz.jobStore.useProperties = true, every JobDataMap stored as java.util.Properties text)
#   DB_URL: a scratch database, postgres://... or mysql://...; Quartz's own tables_postgres.sql /
#   tables_mysql_innodb.sql (from the jar) are applied to it, and a ledger table rt_ledger is made.
# QCTL names the qctl binary (default: the repo's target/release/qctl if built, else target/debug/qctl).
# Steps (one line per check; exit 1 if any check fails):
#   1. Scheduler.scheduleJob: job-1..8 (requestRecovery, a trigger JobDataMap entry), norecover (no recovery,
#      first to run) and gone (a job class the first nodes lack). Node A (4 threads, check-in every second)
#      starts them; once 4 run it is killed -9. qctl's states add up to the triggers there are.
#   2. `qctl reap --timeout 10m` takes nothing (A's check-in is seconds old); `qctl reap --timeout 2s` does
#      what clusterRecover does: a recovery trigger per job that was mid-run and requests recovery (requeue),
#      norecover dropped (release) with its COMPLETE trigger and its non-durable job, A's fired rows and
#      state row gone; the dry run said the same.
#   3. A fresh node B finds nothing left to recover (no "ClusterManager: detected" in its log) and runs every
#      job: each job-i finishes exactly once (one that was mid-run at the kill ran twice, its second run a
#      recovery that sees QRTZ_FAILED_JOB_ORIG_TRIGGER_NAME and the trigger's own entry, read from the map qctl wrote
#      in the job store's form: serialized, or properties text with useProperties = true); norecover never
#      runs again; gone is in ERROR (failed).
#   4. `qctl retry` of gone: node C, which has the class, runs it.
#   5. `qctl purge` is refused (Quartz deletes its finished triggers itself); a new job still runs.
#   6. `qctl explain-claim --apply`: node C still acquires and runs new jobs, through any index it made (PostgreSQL:
#      pg_stat_user_indexes).
# The last line is "roundtrip quartz VERSION DATABASE: PASS" or "... FAIL (reason)"; exit 0 only on PASS.
set -uo pipefail
URL=${1:?usage: roundtrip.sh DB_URL [VERSION]}
VERSION=${2:-v2.3.2}
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../../.." && pwd)
if [ -z "${QCTL:-}" ]; then
  if [ -x "$ROOT/target/release/qctl" ]; then QCTL="$ROOT/target/release/qctl"; else QCTL="$ROOT/target/debug/qctl"; fi
fi
export QCTL_REALSYS_CACHE=${QCTL_REALSYS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/qctl-realsys}
case "$URL" in
  postgres:*|postgresql:*) DB=postgres ;;
  mysql:*|mariadb:*) DB=mysql ;;
  *) echo "roundtrip quartz $VERSION: FAIL (DB_URL must be postgres://... or mysql://...)"; exit 2 ;;
esac
verdict() { echo "roundtrip quartz $VERSION $DB: $*"; }
case "$VERSION" in
  *-properties) RELEASE=${VERSION%-properties}; USE_PROPERTIES=true ;;
  *) RELEASE=$VERSION; USE_PROPERTIES=false ;;
esac
CP=$("$HERE/install.sh" "$RELEASE" | tail -1) || { verdict "FAIL (install)"; exit 1; }
GONE_CP="$CP-gone"
LOG="$QCTL_REALSYS_CACHE/logs/quartz-$VERSION-$DB"
rm -rf "$LOG"; mkdir -p "$LOG"

# postgres://user@host:port/db -> jdbc:postgresql://host:port/db?user=user (and mariadb alike)
rest=${URL#*://}; userhost=${rest%%/*}; name=${rest#*/}; name=${name%%\?*}
user=${userhost%%@*}; hostport=${userhost#*@}
host=${hostport%%:*}; port=${hostport##*:}; [ "$port" = "$hostport" ] && port=""
if [ "$DB" = postgres ]; then
  JDBC="jdbc:postgresql://$host:${port:-5432}/$name?user=$user"
  DELEGATE=org.quartz.impl.jdbcjobstore.PostgreSQLDelegate
  TABLES=tables_postgres.sql
  sql() { PGOPTIONS=--client-min-messages=warning psql "$URL" -qAt -v ON_ERROR_STOP=1 -F ' ' -c "$1"; }
  sqlf() { PGOPTIONS=--client-min-messages=error psql "$URL" -q -v ON_ERROR_STOP=1 >/dev/null; }
else
  JDBC="jdbc:mariadb://$host:${port:-3306}/$name?user=$user"
  DELEGATE=org.quartz.impl.jdbcjobstore.StdJDBCDelegate
  TABLES=tables_mysql_innodb.sql
  sql() { mariadb -h "$host" -P "${port:-3306}" -u "$user" -N -B "$name" -e "$1" | tr '\t' ' '; }
  sqlf() { mariadb -h "$host" -P "${port:-3306}" -u "$user" "$name"; }
fi

FAILS=0
PIDS=()
ok() { echo "ok   $*"; }
fail() { echo "FAIL $*"; FAILS=$((FAILS + 1)); }
check() { if [ "$1" = "$2" ]; then ok "$3"; else fail "$3: got '$1', want '$2'"; fi; }
q() { "$QCTL" -d "$URL" --layout quartz --color never "$@"; }
json() { python3 -c "import json,sys; d=json.load(sys.stdin); print($1)"; }
cleanup() { for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null; done; }
trap cleanup EXIT
java_rt() { java -cp "$1" -Drt.useProperties=$USE_PROPERTIES -Dorg.slf4j.simpleLogger.defaultLogLevel=info realsys.Rt "${@:2}"; }
# start_node NAME CLASSPATH -> pid in $NPID
start_node() {
  java -cp "$2" -Drt.useProperties=$USE_PROPERTIES -Dorg.slf4j.simpleLogger.defaultLogLevel=info realsys.Rt node "$JDBC" "$DELEGATE" "$1" 1000 4 \
    >"$LOG/node-$1.log" 2>&1 &
  NPID=$!
  PIDS+=("$NPID")
}
stop_node() { kill -TERM "$1" 2>/dev/null; for _ in $(seq 150); do kill -0 "$1" 2>/dev/null || return 0; sleep 0.1; done; kill -9 "$1"; }
# wait_for SECONDS SQL WANT: until the query returns WANT
wait_for() {
  local until=$((SECONDS + $1)) got
  while [ $SECONDS -lt $until ]; do
    got=$(sql "$2" 2>/dev/null)
    [ "$got" = "$3" ] && return 0
    sleep 0.3
  done
  return 1
}
n() { sql "SELECT count(*) FROM $1"; }

# ----- 1. the system's own tables and jobs; node A killed mid-job ------------------------------------------------
unzip -p /usr/share/java/quartz2.jar "org/quartz/impl/jdbcjobstore/$TABLES" | sqlf || { verdict "FAIL (tables)"; exit 1; }
sql "CREATE TABLE rt_ledger (job VARCHAR(200), node VARCHAR(200), event VARCHAR(10), recovering INT,
     orig_trigger VARCHAR(200), tval VARCHAR(200), at BIGINT)" >/dev/null
N=8
java_rt "$CP:$GONE_CP" schedule "$JDBC" "$DELEGATE" "$N" 8000 >"$LOG/schedule.log" 2>&1 ||
  { tail -5 "$LOG/schedule.log"; verdict "FAIL (Scheduler.scheduleJob)"; exit 1; }
check "$(n QRTZ_TRIGGERS)" "$((N + 2))" "Scheduler.scheduleJob stored $((N + 2)) triggers"
# The job store's form, told by the first byte of a job's JOB_DATA: '#' (properties text) or 0xAC (serialized).
if [ "$DB" = postgres ]; then first_byte="encode(substr(JOB_DATA, 1, 1), 'hex')"; else first_byte="LOWER(HEX(SUBSTRING(JOB_DATA, 1, 1)))"; fi
form() { [ "$1" = 23 ] && echo properties || echo serialized; }
FORM=$([ "$USE_PROPERTIES" = true ] && echo properties || echo serialized)
check "$(form "$(sql "SELECT $first_byte FROM QRTZ_JOB_DETAILS WHERE JOB_NAME = 'job-1'")")" "$FORM" \
  "Quartz stored the JobDataMaps as $FORM"
check "$(q --format json doctor | json 'd["layout"]')" quartz "qctl --layout auto finds Quartz"

start_node node-a "$CP"
A=$NPID
if wait_for 60 "SELECT count(*) FROM rt_ledger WHERE event = 'start'" 4; then
  ok "node A started 4 jobs"
else
  fail "node A started 4 jobs: $(n rt_ledger) ledger rows"
fi
kill -9 "$A"; sleep 0.3
MID=$(sql "SELECT job FROM rt_ledger WHERE node = 'node-a' AND job LIKE 'job-%' AND event = 'start'
           AND job NOT IN (SELECT job FROM rt_ledger WHERE event = 'done') ORDER BY job" | tr '\n' ' ')
NMID=$(echo $MID | wc -w)
echo "#    killed node A -9 while running: norecover $MID"
check "$(sql "SELECT count(*) FROM rt_ledger WHERE job = 'norecover' AND event = 'start'")" 1 "norecover was mid-run at the kill"
# Every trigger in exactly one state.
stats=$(q --format json stats --exact)
check "$(echo "$stats" | json 'sum(d["total"][k] for k in ("pending","running","done","failed","cancelled","other"))')" \
  "$(n QRTZ_TRIGGERS)" "qctl stats: the states add up to the triggers there are"
check "$(echo "$stats" | json 'd["total"]["running"]')" \
  "$(sql "SELECT count(DISTINCT TRIGGER_NAME) FROM QRTZ_FIRED_TRIGGERS WHERE STATE = 'EXECUTING'")" \
  "qctl stats: the triggers with a firing in progress are running"

# ----- 2. qctl reap --timeout ---------------------------------------------------------------------------------------
check "$(q --format json reap --dry-run --timeout 10m | json 'd["requeued"] + d["dead_lettered"] + d["released"]')" 0 \
  "qctl reap --timeout 10m: node A checked in seconds ago, nothing is stale yet"
sleep 3
dry=$(q --format json reap --dry-run --timeout 2s)
real=$(q --format json reap --timeout 2s)
echo "#    reap: $(echo "$real" | json '[(j["id"], j["action"]) for j in d["jobs"]]')"
check "$(echo "$real" | json '(d["requeued"], d["dead_lettered"], d["released"])')" "($NMID, 0, 1)" \
  "qctl reap --timeout 2s: requeued the recovering jobs node A ran, released norecover"
check "$(echo "$dry" | json '(d["requeued"], d["dead_lettered"], d["released"])')" \
  "$(echo "$real" | json '(d["requeued"], d["dead_lettered"], d["released"])')" "reap --dry-run said the same"
check "$(n "QRTZ_FIRED_TRIGGERS WHERE INSTANCE_NAME = 'node-a'")" 0 "node A's fired rows are gone"
check "$(n "QRTZ_SCHEDULER_STATE WHERE INSTANCE_NAME = 'node-a'")" 0 "node A's state row is gone"
check "$(n "QRTZ_TRIGGERS WHERE TRIGGER_GROUP = 'RECOVERING_JOBS' AND TRIGGER_STATE = 'WAITING'")" "$NMID" \
  "a WAITING recovery trigger per job that was mid-run"
check "$(sql "SELECT $first_byte FROM QRTZ_TRIGGERS WHERE TRIGGER_GROUP = 'RECOVERING_JOBS'" | while read -r b; do form "$b"; done | sort -u)" \
  "$FORM" "the recovery triggers' JobDataMaps are $FORM, as the job store writes them"
check "$(echo "$real" | json '(d["left"], d["left_jobs"])')" "(0, [])" "qctl reap left no stale firing"
check "$(n "QRTZ_TRIGGERS WHERE TRIGGER_STATE = 'COMPLETE'")" 0 "the COMPLETE one-shot triggers of node A are deleted"
check "$(n "QRTZ_JOB_DETAILS WHERE JOB_NAME = 'norecover'")" 0 "norecover's non-durable job is deleted with its trigger"
check "$(q --format json stats --exact | json 'd["total"]["stale"]')" 0 "nothing stale after the reap"

# ----- 3. a fresh node runs everything ------------------------------------------------------------------------------
start_node node-b "$CP"
B=$NPID
if wait_for 120 "SELECT count(DISTINCT job) FROM rt_ledger WHERE job LIKE 'job-%' AND event = 'done'" "$N"; then
  ok "node B finished every job-i"
else
  fail "node B finished every job-i: $(sql "SELECT count(DISTINCT job) FROM rt_ledger WHERE job LIKE 'job-%' AND event = 'done'") of $N"
fi
sleep 1
if grep -q "ClusterManager: detected" "$LOG/node-node-b.log"; then
  fail "node B found a failed instance to recover: qctl's reap left work behind"
else
  ok "node B found nothing left to recover"
fi
check "$(sql "SELECT count(*) FROM (SELECT job FROM rt_ledger WHERE job LIKE 'job-%' AND event = 'done' GROUP BY job HAVING count(*) <> 1) x")" 0 \
  "every job-i finished exactly once"
for j in $(sql "SELECT DISTINCT job FROM rt_ledger WHERE job LIKE 'job-%' ORDER BY job"); do
  starts=$(sql "SELECT count(*) FROM rt_ledger WHERE job = '$j' AND event = 'start'")
  case " $MID " in
    *" $j "*)
      check "$starts" 2 "$j (mid-run at the kill) ran once more"
      check "$(sql "SELECT concat(node, ' ', recovering, ' ', orig_trigger, ' ', tval) FROM rt_ledger
                    WHERE job = '$j' AND event = 'start' AND node <> 'node-a'")" \
        "node-b 1 $j tval-${j#job-}" "$j ran as a recovery with QRTZ_FAILED_JOB_ORIG_TRIGGER_NAME and its trigger's own data" ;;
    *) check "$starts" 1 "$j ran once" ;;
  esac
done
check "$(sql "SELECT count(*) FROM rt_ledger WHERE job = 'norecover'")" 1 "norecover (released) never ran again"
check "$(sql "SELECT TRIGGER_STATE FROM QRTZ_TRIGGERS WHERE TRIGGER_NAME = 'gone'")" ERROR "gone's trigger is in ERROR"
check "$(q --format json stats --exact | json '(d["total"]["failed"], d["total"]["running"], d["total"]["stale"])')" "(1, 0, 0)" \
  "qctl stats: gone failed, nothing running or stale"
check "$(n "QRTZ_TRIGGERS WHERE TRIGGER_NAME <> 'gone'")" 0 "Quartz deleted every finished trigger"

# ----- 4. qctl retry --------------------------------------------------------------------------------------------------
stop_node "$B"
start_node node-c "$CP:$GONE_CP"
C=$NPID
q retry QuartzScheduler:rt.gone >"$LOG/retry.out" 2>&1; rc=$?
check "$rc" 0 "qctl retry QuartzScheduler:rt.gone"
if wait_for 60 "SELECT count(*) FROM rt_ledger WHERE job = 'gone' AND event = 'done'" 1; then
  ok "node C ran gone after qctl retry"
else
  fail "node C ran gone after qctl retry ($(cat "$LOG/retry.out"))"
fi

# ----- 5. purge -------------------------------------------------------------------------------------------------------
out=$(q purge --older-than 0s --yes 2>&1); rc=$?
if [ "$rc" = 2 ] && echo "$out" | grep -q "Quartz deletes completed triggers itself"; then
  ok "qctl purge is refused: Quartz deletes completed triggers itself"
else
  fail "qctl purge: exit $rc: $out"
fi
java_rt "$CP" add "$JDBC" "$DELEGATE" after-purge 0 >>"$LOG/schedule.log" 2>&1
wait_for 60 "SELECT count(*) FROM rt_ledger WHERE job = 'after-purge' AND event = 'done'" 1 &&
  ok "a new job still runs" || fail "a new job still runs"

# ----- 6. explain-claim --apply ---------------------------------------------------------------------------------------
indexes() {
  if [ "$DB" = postgres ]; then sql "SELECT indexname FROM pg_indexes WHERE tablename = 'qrtz_triggers' ORDER BY 1"
  else sql "SELECT DISTINCT INDEX_NAME FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'QRTZ_TRIGGERS' ORDER BY 1"; fi
}
# History to plan for: 20,000 triggers waiting a year out (as Scheduler.scheduleJob stores a SimpleTrigger).
if [ "$DB" = postgres ]; then
  sql "INSERT INTO QRTZ_JOB_DETAILS VALUES ('QuartzScheduler', 'future', 'hist', NULL, 'realsys.Rt\$LedgerJob', true, false, false, false, '')
       ;INSERT INTO QRTZ_TRIGGERS (SCHED_NAME, TRIGGER_NAME, TRIGGER_GROUP, JOB_NAME, JOB_GROUP, NEXT_FIRE_TIME, PREV_FIRE_TIME,
          PRIORITY, TRIGGER_STATE, TRIGGER_TYPE, START_TIME, END_TIME, MISFIRE_INSTR, JOB_DATA)
        SELECT 'QuartzScheduler', 'future-' || i, 'hist', 'future', 'hist', t, -1, 5, 'WAITING', 'SIMPLE', t, 0, 0, ''
        FROM generate_series(1, 20000) i, LATERAL (SELECT (extract(epoch FROM now()) * 1000)::bigint + 31536000000 + i * 1000 AS t) x
       ;INSERT INTO QRTZ_SIMPLE_TRIGGERS SELECT 'QuartzScheduler', 'future-' || i, 'hist', 0, 0, 0 FROM generate_series(1, 20000) i
       ;ANALYZE QRTZ_TRIGGERS" >/dev/null
else
  sql "SET SESSION max_recursive_iterations = 100000;
       INSERT INTO QRTZ_JOB_DETAILS VALUES ('QuartzScheduler', 'future', 'hist', NULL, 'realsys.Rt\$LedgerJob', '1', '0', '0', '0', '');
       INSERT INTO QRTZ_TRIGGERS (SCHED_NAME, TRIGGER_NAME, TRIGGER_GROUP, JOB_NAME, JOB_GROUP, NEXT_FIRE_TIME, PREV_FIRE_TIME,
          PRIORITY, TRIGGER_STATE, TRIGGER_TYPE, START_TIME, END_TIME, MISFIRE_INSTR, JOB_DATA)
        WITH RECURSIVE s (i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < 20000)
        SELECT 'QuartzScheduler', CONCAT('future-', i), 'hist', 'future', 'hist', t, -1, 5, 'WAITING', 'SIMPLE', t, 0, 0, ''
        FROM (SELECT i, CAST(UNIX_TIMESTAMP(NOW(3)) * 1000 AS SIGNED) + 31536000000 + i * 1000 AS t FROM s) x;
       INSERT INTO QRTZ_SIMPLE_TRIGGERS SELECT SCHED_NAME, TRIGGER_NAME, TRIGGER_GROUP, 0, 0, 0 FROM QRTZ_TRIGGERS WHERE TRIGGER_GROUP = 'hist';
       ANALYZE TABLE QRTZ_TRIGGERS" >/dev/null
fi
check "$(n "QRTZ_TRIGGERS WHERE TRIGGER_GROUP = 'hist'")" 20000 "20,000 triggers waiting a year out"
before=$(indexes)
q explain-claim >"$LOG/explain.out" 2>&1; rc=$?
echo "#    explain-claim: exit $rc: $(grep -m3 -E 'error|warn|ok' "$LOG/explain.out" | tr '\n' ' ')"
# PostgreSQL: pgjdbc sends Quartz's setBigDecimal as numeric, which defeats Quartz's bigint indexes (Quartz #612).
[ "$DB" = postgres ] && check "$rc $(grep -c 'error\[driver_binding\]' "$LOG/explain.out")" "1 1" \
  "qctl explain-claim flags the acquire query as pgjdbc binds it (numeric)"
q explain-claim --apply >"$LOG/apply.out" 2>&1; rc=$?
new=$(comm -13 <(echo "$before") <(indexes) | tr '\n' ' ')
check "$rc" 0 "qctl explain-claim --apply (made: ${new:-nothing})"
if [ "$DB" = postgres ] && [ -n "$new" ]; then
  scans() { sql "SELECT coalesce(sum(idx_scan), 0) FROM pg_stat_user_indexes WHERE indexrelname IN ($(printf "'%s'," $new | sed 's/,$//'))"; }
  first=$(scans)
fi
for i in 1 2 3; do java_rt "$CP" add "$JDBC" "$DELEGATE" "after-apply-$i" 0 >>"$LOG/schedule.log" 2>&1; done
wait_for 60 "SELECT count(*) FROM rt_ledger WHERE job LIKE 'after-apply-%' AND event = 'done'" 3 &&
  ok "after --apply, node C still acquires and runs new jobs" || fail "after --apply, node C still acquires and runs new jobs"
if [ "$DB" = postgres ] && [ -n "$new" ]; then
  sleep 1.2
  used=$(( $(scans) - first ))
  [ "$used" -gt 0 ] && ok "Quartz's acquire query uses the new index ($used scans)" || fail "Quartz's acquire query uses the new index: $used scans"
fi
stop_node "$C"

if [ "$FAILS" = 0 ]; then verdict "PASS"; exit 0; fi
verdict "FAIL ($FAILS check(s) failed; node logs in $LOG)"
exit 1
