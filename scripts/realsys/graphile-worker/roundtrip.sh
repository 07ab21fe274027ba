#!/usr/bin/env bash
# Round trip of qctl with Graphile Worker's own client and workers.
#   scripts/realsys/graphile-worker/roundtrip.sh DB_URL [VERSION]      (VERSION default 0.18.0)
# DB_URL must be a scratch PostgreSQL database: its graphile_worker schema and qctl_ledger table are
# dropped and made again. qctl is $QCTL (default: the repo's target/release/qctl if built, else
# target/debug/qctl), run with $QCTL_LAYOUT (default "--layout auto", which must find the version by
# itself; QCTL_LAYOUT="--layout graphile-worker" tries the named preset). Graphile Worker is installed
# from npm by install.sh into ${QCTL_REALSYS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/qctl-realsys}.
#
#  1. graphile-worker's own installer (cli --schema-only) makes the schema; enqueue.js adds 50 jobs
#     with makeWorkerUtils().addJob: 44 plain, 5 in the named queue rt-q (the first one slow),
#     1 that fails its first run with maxAttempts 1. Every run is recorded in qctl_ledger.
#  2. Worker pool A (graphile-worker's run(), worker.js) starts; once the slow rt-q job is mid-run
#     (so A holds the queue rt-q too) and some jobs are done, A is killed with SIGKILL.
#  3. qctl stats must count what the system counts; after 3.5 s, qctl reap --timeout 3s must
#     release A's jobs AND A's lock on rt-q (else rt-q's jobs stall for 4 hours).
#  4. A fresh pool B must then run every job to completion exactly once (a job that was mid-run at
#     the kill also has its unfinished first run in the ledger: Graphile Worker is at-least-once),
#     leave nothing locked, and the system's own jobs table/view must agree with qctl.
#  5. qctl retry of the permanently failed job: B runs it. qctl purge --status failed of another
#     permanently failed job: it is deleted and B still runs a job added afterwards.
#  6. qctl explain-claim --apply (after 3,000 more jobs, half in named queues): B still claims and
#     runs new jobs, and any index --apply made is one the real claim uses.
# Prints one line per check; the last line is "roundtrip graphile-worker VERSION postgres: PASS" or
# "... FAIL (reason)"; exits non-zero if any check failed. Leaves no worker running.
set -uo pipefail
DB_URL=${1:?usage: roundtrip.sh DB_URL [VERSION]}
VERSION=${2:-0.18.0}
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../../.." && pwd)
if [ -z "${QCTL:-}" ]; then
  if [ -x "$ROOT/target/release/qctl" ]; then QCTL="$ROOT/target/release/qctl"; else QCTL="$ROOT/target/debug/qctl"; fi
fi
read -r -a LAYOUT <<<"${QCTL_LAYOUT:---layout auto}"
export QCTL_REALSYS_CACHE=${QCTL_REALSYS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/qctl-realsys}
CACHE=$QCTL_REALSYS_CACHE
verdict() { echo "roundtrip graphile-worker $VERSION postgres: $*"; }
NODE=$("$HERE/install.sh" "$VERSION" | tail -1) || { echo "FAIL install graphile-worker@$VERSION"; verdict "FAIL (install)"; exit 1; }
PKG="$CACHE/graphile-worker/$VERSION/node_modules/graphile-worker"
WORK=$(mktemp -d /tmp/gw-roundtrip.XXXXXX)
FAILS=0
PIDS=()

ok() { echo "ok   $*"; }
bad() { echo "FAIL $*"; FAILS=$((FAILS + 1)); }
check() { # check "description" "expected" "actual"
  if [ "$2" = "$3" ]; then ok "$1 ($3)"; else bad "$1: expected $2, got $3"; fi
}
sql() { psql "$DB_URL" -X -Atq -v ON_ERROR_STOP=1 -c "$1"; }
cleanup() {
  for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null; done
}
trap cleanup EXIT
qctl() { # runs qctl, output to $WORK/qctl.out, printed indented (JSON output is kept for tot, not printed)
  echo "       \$ qctl $*" >>"$WORK/qctl.log"
  "$QCTL" -d "$DB_URL" --color never "$@" >"$WORK/qctl.out" 2>&1
  local rc=$?
  cat "$WORK/qctl.out" >>"$WORK/qctl.log"
  case " $* " in
    *" --format json "*) grep -v '^[ {}\[\]]' "$WORK/qctl.out" | sed 's/^/       | /' ;;
    *) sed 's/^/       | /' "$WORK/qctl.out" ;;
  esac
  return $rc
}
start_pool() { # start_pool NAME -> pid in $POOL_PID
  (cd "$WORK" && exec "$NODE" "$HERE/worker.js" "$DB_URL" "$VERSION" "$1" 4 work,slow,fail_once,always_fail) \
    >"$WORK/pool-$1.log" 2>&1 &
  POOL_PID=$!
  PIDS+=("$POOL_PID")
}
tot() { # a total from the last qctl stats --format json
  python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['total'][sys.argv[2]])" "$WORK/qctl.out" "$1" 2>/dev/null || echo "?"
}
wait_for() { # wait_for SECONDS SQL  (until SQL returns t)
  local end=$((SECONDS + $1))
  while [ $SECONDS -lt $end ]; do
    [ "$(sql "$2")" = t ] && return 0
    sleep 0.2
  done
  return 1
}

echo "== Graphile Worker $VERSION round trip on $DB_URL with $QCTL ($("$QCTL" --version 2>&1))"
sql "set client_min_messages = warning; drop schema if exists graphile_worker cascade; drop table if exists qctl_ledger;
     create table qctl_ledger(job_key text, worker text, pid int, started_at timestamptz, finished_at timestamptz)" \
  || { echo "FAIL cannot prepare $DB_URL"; verdict "FAIL (cannot prepare the database)"; exit 1; }
(cd "$WORK" && "$NODE" "$PKG/dist/cli.js" -c "$DB_URL" --schema-only >"$WORK/install.log" 2>&1) \
  && ok "schema installed by graphile-worker@$VERSION (migration $(sql 'select max(id) from graphile_worker.migrations'))" \
  || { bad "graphile-worker --schema-only failed: $(tail -3 "$WORK/install.log")"; verdict "FAIL (install schema)"; exit 1; }
# The job and queue tables: graphile_worker.jobs/job_queues up to 0.15, _private_* from 0.16 on.
if [ "$(sql "select to_regclass('graphile_worker._private_jobs') is not null")" = t ]; then
  JOBS=graphile_worker._private_jobs QUEUES=graphile_worker._private_job_queues QCOL="q.id = j.job_queue_id"
elif [ "$(sql "select count(*) from information_schema.columns where table_schema='graphile_worker' and table_name='jobs' and column_name='job_queue_id'")" = 1 ]; then
  JOBS=graphile_worker.jobs QUEUES=graphile_worker.job_queues QCOL="q.id = j.job_queue_id"
else
  JOBS=graphile_worker.jobs QUEUES=graphile_worker.job_queues QCOL="q.queue_name = j.queue_name"
fi
# Jobs a worker would claim now, by the claim's own conditions (0.13: get_job; later: getJob(s) with is_available).
if [ "$QCOL" = "q.queue_name = j.queue_name" ]; then
  READY="select count(*) from $JOBS j where attempts < max_attempts and run_at <= now()
           and (locked_at is null or locked_at < now() - interval '4 hours')
           and (j.queue_name is null or exists (select 1 from $QUEUES q where $QCOL and (q.locked_at is null or q.locked_at < now() - interval '4 hours')))"
else
  READY="select count(*) from $JOBS j where is_available and run_at <= now()
           and (j.job_queue_id is null or j.job_queue_id in (select q.id from $QUEUES q where q.is_available))"
fi
# The system's own view of its jobs (graphile_worker.jobs: a table up to 0.15, the public view from 0.16).
COUNTS="select coalesce(sum((locked_at is null and attempts < max_attempts)::int),0)||' '||coalesce(sum((locked_at is not null)::int),0)||' '||coalesce(sum((locked_at is null and attempts >= max_attempts)::int),0) from graphile_worker.jobs"

"$NODE" "$HERE/enqueue.js" "$DB_URL" "$VERSION" roundtrip || { bad "enqueue failed"; verdict "FAIL (enqueue)"; exit 1; }
check "50 jobs enqueued with makeWorkerUtils().addJob" 50 "$(sql "select count(*) from $JOBS")"

# ---- pool A, killed mid-run
start_pool A; A_PID=$POOL_PID
if wait_for 30 "select exists(select 1 from qctl_ledger where job_key='q01' and finished_at is null)
                   and (select count(*) from qctl_ledger where finished_at is not null) >= 8
                   and exists(select 1 from qctl_ledger where job_key like 'w%' and finished_at is null)"; then
  kill -9 "$A_PID"; wait "$A_PID" 2>/dev/null
  ok "pool A killed with SIGKILL mid-run (pid $A_PID)"
else
  bad "pool A never had the slow rt-q job and a plain job mid-run: $(tail -5 "$WORK/pool-A.log")"; verdict "FAIL (pool A)"; exit 1
fi
# Mid-run at the kill: a run the ledger has not seen finish, or a job still locked (its handler may
# have finished, but the pool died before Graphile Worker recorded the completion: at-least-once).
MIDRUN=$(sql "select string_agg(k, ',' order by k) from (select job_key k from qctl_ledger where finished_at is null
              union select payload->>'key' from $JOBS where locked_at is not null) x")
LOCKED=$(sql "select count(*) from $JOBS where locked_at is not null")
echo "       jobs mid-run at the kill: $MIDRUN; locked rows: $LOCKED"
check "the dead pool's lock on named queue rt-q is held" t \
  "$(sql "select locked_at is not null from $QUEUES where queue_name='rt-q'")"

# ---- qctl stats against the system's own counts
read -r S_AV S_LK S_PF <<<"$(sql "$COUNTS")"
S_READY=$(sql "$READY")
if qctl "${LAYOUT[@]}" stats --format json; then
  Q_LAYOUT=$(sed -n 's/^  "table": "\(.*\)",$/\1/p' "$WORK/qctl.out")
  check "qctl ${LAYOUT[*]} reads the job table" "$JOBS" "$Q_LAYOUT"
  check "qctl stats pending = available jobs (locked_at null, attempts < max_attempts)" "$S_AV" "$(tot pending)"
  check "qctl stats running = locked jobs" "$S_LK" "$(tot running)"
  check "qctl stats failed = permanently failed jobs" "$S_PF" "$(tot failed)"
  check "qctl stats ready = jobs the claim would take now (the rt-q jobs wait behind the dead pool's queue lock)" "$S_READY" "$(tot ready)"
else
  bad "qctl ${LAYOUT[*]} stats failed"
fi

# ---- qctl reap
sleep 3.5
if qctl "${LAYOUT[@]}" stats --timeout 3s --format json; then
  check "qctl stats --timeout 3s: every locked job is stale" "$LOCKED" "$(tot stale)"
else
  bad "qctl stats --timeout 3s failed"
fi
if qctl "${LAYOUT[@]}" reap --timeout 3s; then ok "qctl reap --timeout 3s ran"; else bad "qctl reap --timeout 3s exited non-zero"; fi
check "no job locked after reap" 0 "$(sql "select count(*) from $JOBS where locked_at is not null")"
check "named queue rt-q released after reap (else its jobs stall until the 4-hour rule)" 0 \
  "$(sql "select count(*) from $QUEUES where locked_at is not null")"
check "attempts kept by reap (the lost run counts)" 0 \
  "$(sql "select count(*) from $JOBS j where payload->>'key' in (select unnest(string_to_array('$MIDRUN', ','))) and attempts <> 1")"

# ---- pool B runs the rest
start_pool B; B_PID=$POOL_PID
if wait_for 30 "select not exists(select 1 from $JOBS where attempts < max_attempts or locked_at is not null)"; then
  ok "pool B ran every job (only permanently failed ones left)"
else
  bad "pool B did not finish within 30 s: $(sql "select string_agg(payload->>'key'||'(attempts '||attempts||'/'||max_attempts||coalesce(', locked by '||locked_by,'')||')', ' ' order by id) from $JOBS where attempts < max_attempts or locked_at is not null")"
  bad "locked queues: $(sql "select coalesce(string_agg(queue_name||' by '||locked_by, ', '), 'none') from $QUEUES where locked_at is not null")"
fi
check "every job ran to completion" 49 \
  "$(sql "select count(distinct job_key) from qctl_ledger where finished_at is not null and job_key <> 'f01'")"
check "no job completed twice (but one mid-run at the kill)" 0 \
  "$(sql "select count(*) from (select job_key from qctl_ledger where finished_at is not null group by 1 having count(*) > 1) x
          where job_key <> all(string_to_array('$MIDRUN', ','))")"
check "only jobs mid-run at the kill ran again (at-least-once)" "" \
  "$(sql "select coalesce(string_agg(job_key, ','), '') from (select job_key from qctl_ledger group by 1 having count(*) > 1) x
          where job_key <> all(string_to_array('$MIDRUN', ',')) and job_key <> 'f01'")"
check "nothing locked" "0 0" \
  "$(sql "select (select count(*) from $JOBS where locked_at is not null)||' '||(select count(*) from $QUEUES where locked_at is not null)")"
check "graphile_worker.jobs: 0 available, 0 locked, 1 permanently failed (f01)" "0 0 1" "$(sql "$COUNTS")"
if qctl "${LAYOUT[@]}" stats --format json; then
  check "qctl stats agree: pending running failed" "0 0 1" "$(tot pending) $(tot running) $(tot failed)"
else
  bad "qctl stats failed"
fi

# ---- qctl retry of the permanently failed job; B runs it
F_ID=$(sql "select id from $JOBS where payload->>'key'='f01'")
check "f01 permanently failed by its first run" "1 1" "$(sql "select attempts||' '||max_attempts from $JOBS where id=$F_ID")"
if qctl "${LAYOUT[@]}" retry "$F_ID"; then ok "qctl retry $F_ID ran"; else bad "qctl retry $F_ID exited non-zero"; fi
if wait_for 15 "select not exists(select 1 from $JOBS where id=$F_ID)"; then
  check "pool B ran the retried job to completion" 1 "$(sql "select count(*) from qctl_ledger where job_key='f01' and finished_at is not null")"
else
  bad "retried job $F_ID not run by pool B: $(sql "select 'attempts '||attempts||'/'||max_attempts||' run_at-now '||(run_at-now())||' locked '||coalesce(locked_by,'no') from $JOBS where id=$F_ID")"
fi

# ---- qctl purge of a permanently failed job; the system keeps working
P_ID=$("$NODE" "$HERE/enqueue.js" "$DB_URL" "$VERSION" add always_fail p01 - 1)
wait_for 15 "select exists(select 1 from $JOBS where id=$P_ID and attempts >= max_attempts and locked_at is null)" \
  && ok "p01 (id $P_ID) permanently failed by pool B" || bad "p01 did not fail"
# A failure is aged by greatest(updated_at, run_at): failJob leaves updated_at and moves run_at
# exp(attempts) s past the failure (2.7 s for p01), so a failure under a second old is never purged.
qctl "${LAYOUT[@]}" purge --status failed --older-than 1s --yes >/dev/null 2>&1
check "a failure under a second old is not purged by --older-than 1s" 1 "$(sql "select count(*) from $JOBS where id=$P_ID")"
sleep 3.8
if qctl "${LAYOUT[@]}" purge --status failed --older-than 1s --yes; then ok "qctl purge --status failed --older-than 1s ran"; else bad "qctl purge exited non-zero"; fi
check "purged job deleted" 0 "$(sql "select count(*) from $JOBS where id=$P_ID")"
Z_ID=$("$NODE" "$HERE/enqueue.js" "$DB_URL" "$VERSION" add work z01 - 25 100)
wait_for 15 "select not exists(select 1 from $JOBS where id=$Z_ID)" \
  && check "a job added after the purge runs" 1 "$(sql "select count(*) from qctl_ledger where job_key='z01' and finished_at is not null")" \
  || bad "job z01 added after the purge was not run"

# ---- qctl explain-claim --apply; the real pool still claims, with any index it made
"$NODE" "$HERE/enqueue.js" "$DB_URL" "$VERSION" bulk 3000 >"$WORK/bulk.log" 2>&1 || bad "bulk enqueue failed: $(tail -2 "$WORK/bulk.log")"
grep -q "attempt" "$WORK/bulk.log" && echo "       bulk enqueue retried: $(grep -c attempt "$WORK/bulk.log") addJob(s) ($(head -1 "$WORK/bulk.log"))"
IDX_BEFORE=$(sql "select coalesce(string_agg(indexrelid::regclass::text, ',' order by 1), '') from pg_index where indrelid in ('$JOBS'::regclass, '$QUEUES'::regclass)")
if qctl "${LAYOUT[@]}" explain-claim --apply; then ok "qctl explain-claim --apply: the hot queries are ok"
else bad "qctl explain-claim --apply exited non-zero"; fi
NEW_IDX=$(sql "select coalesce(string_agg(indexrelid::regclass::text, ',' order by 1), '') from pg_index
               where indrelid in ('$JOBS'::regclass, '$QUEUES'::regclass) and indexrelid::regclass::text <> all(string_to_array('$IDX_BEFORE', ','))")
check "every index on the job tables is valid" 0 "$(sql "select count(*) from pg_index where indrelid in ('$JOBS'::regclass, '$QUEUES'::regclass) and not indisvalid")"
SCANS_BEFORE=$(sql "select coalesce(sum(idx_scan), 0) from pg_stat_user_indexes where indexrelid::regclass::text = any(string_to_array('$NEW_IDX', ','))")
if wait_for 60 "select not exists(select 1 from $JOBS where attempts < max_attempts or locked_at is not null)"; then
  ok "pool B ran the 3,000 jobs added for the index check"
else
  bad "pool B left $(sql "select count(*) from $JOBS where attempts < max_attempts or locked_at is not null") jobs after explain-claim --apply"
fi
if [ -n "$NEW_IDX" ]; then
  sleep 1
  SCANS_AFTER=$(sql "select pg_stat_force_next_flush(); select coalesce(sum(idx_scan), 0) from pg_stat_user_indexes where indexrelid::regclass::text = any(string_to_array('$NEW_IDX', ','))" 2>/dev/null | tail -1)
  if [ "${SCANS_AFTER:-0}" -gt "${SCANS_BEFORE:-0}" ]; then ok "the real pool's claim used the index --apply made ($NEW_IDX)"
  else bad "the index --apply made ($NEW_IDX) was never used by the real pool"; fi
else
  ok "explain-claim --apply found nothing to create: Graphile Worker's own indexes serve its claim"
fi

# ---- stop B gracefully
kill -TERM "$B_PID"; for _ in $(seq 50); do kill -0 "$B_PID" 2>/dev/null || break; sleep 0.2; done
check "pool B shut down cleanly, nothing locked" "0 0" \
  "$(sql "select (select count(*) from $JOBS where locked_at is not null)||' '||(select count(*) from $QUEUES where locked_at is not null)")"

if [ $FAILS -eq 0 ]; then rm -rf "$WORK"; verdict "PASS"; exit 0; fi
verdict "FAIL ($FAILS check(s) failed, logs in $WORK)"
exit 1
