#!/usr/bin/env bash
# Round trip of qctl against pg-boss's own client, workers and supervisor.
#
# Usage: roundtrip.sh DB_URL [VERSION]     (VERSION defaults to 12.38.0)
# QCTL names the qctl binary (default: the repo's target/release/qctl if built, else target/debug/qctl);
# pg-boss is installed from npm by install.sh into ${QCTL_REALSYS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/qctl-realsys}.
#
# DB_URL must be a scratch PostgreSQL database: the script drops and re-creates the schema pgboss and
# the table qctl_ledger in it. Steps (one line per check; exit 1 if any check fails):
#   1. pg-boss installs itself (PgBoss.start()), queues rt/rt_dlq/rt_fail/rt_retry are made, 50 jobs
#      are sent to rt; qctl finds the pg-boss layout and counts them as pg-boss does.
#   2. A real worker (boss.work, 4 at a time, jobs of 0.4 s) is killed -9 mid-job; after 3.5 s
#      `qctl reap --timeout 3s` requeues the jobs it held; a fresh worker runs everything. Every job
#      must have finished exactly once (a job cut short by the kill may have one unfinished run
#      before), nothing may be left queued or active, and pg-boss's own counts (countStates /
#      getQueueStats) and qctl stats must agree.
#   3. Dead letters (pg-boss 10+): a job of rt_fail (deadLetter rt_dlq, retryLimit 0, expire 2 s) is
#      taken by a worker that is killed -9; pg-boss's own supervisor fails it and copies it into
#      rt_dlq, where a real worker runs the copy. The same situation is then left to
#      `qctl reap` instead, which must do what the supervisor did (fail it, and copy it into rt_dlq).
#      pg-boss 9 has no dead-letter queues: its supervisor expires the job (state expired) instead.
#   3b. Stately collisions (pg-boss 10+): in rt_stately (policy stately, deadLetter rt_dlq, retries
#      left) one job waits in retry and a second, fetched, times out. pg-boss's supervisor fails the
#      second (its retry would break the queue's one-retry index) and copies it into rt_dlq; then the
#      same is left to `qctl reap`, which must report it dead-lettered and do the same.
#   4. `qctl retry` of a job that failed for good; the real worker then runs it to completion.
#   5. `qctl purge --older-than 0s` of the finished jobs; pg-boss then runs 5 new jobs as before, and
#      (12.38+) the queue's cached retained_count/total_count are not left above what is there.
#   6. `qctl explain-claim --apply` after 200 more jobs: a real worker still fetches and finishes
#      them, and any index --apply made is one the worker's fetch uses.
# The last line is "roundtrip pg-boss VERSION postgres: PASS" or "... FAIL (reason)"; exit 0 only on PASS.
set -uo pipefail
URL=${1:?usage: roundtrip.sh DB_URL [VERSION]}
VERSION=${2:-12.38.0}
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../../.." && pwd)
if [ -z "${QCTL:-}" ]; then
  if [ -x "$ROOT/target/release/qctl" ]; then QCTL="$ROOT/target/release/qctl"; else QCTL="$ROOT/target/debug/qctl"; fi
fi
export QCTL_REALSYS_CACHE=${QCTL_REALSYS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/qctl-realsys}
N=50
verdict() { echo "roundtrip pg-boss $VERSION postgres: $*"; }
NODE=$("$HERE/install.sh" "$VERSION" | tail -1) || { echo "FAIL install pg-boss $VERSION"; verdict "FAIL (install)"; exit 1; }
MAJOR=${VERSION%%.*}

FAILS=0
PIDS=()
ok() { echo "ok   $*"; }
fail() { echo "FAIL $*"; FAILS=$((FAILS + 1)); }
sql() { psql "$URL" -qAt -v ON_ERROR_STOP=1 -c "$1"; }
rt() { "$NODE" "$HERE/roundtrip-node.js" "$URL" "$VERSION" "$@"; }
q() { "$QCTL" -d "$URL" --layout pg-boss --color never "$@"; }
cleanup() { for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null; done; }
trap cleanup EXIT

# start_worker NAME QUEUE CONCURRENCY -> pid in $WPID
start_worker() {
  # node itself in the background (not a shell function), so that $! is the worker's own pid
  "$NODE" "$HERE/roundtrip-node.js" "$URL" "$VERSION" worker "$@" > "$LOG/worker-$1.log" 2>&1 &
  WPID=$!
  disown "$WPID" 2>/dev/null
  PIDS+=("$WPID")
}
kill9() { kill -9 "$1" 2>/dev/null; for _ in $(seq 50); do kill -0 "$1" 2>/dev/null || return 0; sleep 0.1; done; }
stop_worker() { kill -TERM "$1" 2>/dev/null; for _ in $(seq 50); do kill -0 "$1" 2>/dev/null || return 0; sleep 0.1; done; kill -9 "$1" 2>/dev/null; }
# wait_for SECONDS SQL: until SQL returns t
wait_for() {
  local deadline=$((SECONDS + $1))
  while [ $SECONDS -lt $deadline ]; do
    [ "$(sql "$2" 2>/dev/null)" = t ] && return 0
    sleep 0.2
  done
  return 1
}
# jq over a qctl JSON document, "ERR" when qctl failed
qjson() { local out; out=$(q "$@" --format json 2>"$LOG/qctl.err") || { echo "ERR"; return; }; echo "$out"; }
qerr() { tr '\n' ' ' < "$LOG/qctl.err"; }
stat_of() { jq -r --arg q "$2" --arg k "$3" '.queues[] | select(.queue == $q) | .[$k]' <<<"$1"; }

LOG=$(mktemp -d "${TMPDIR:-/tmp}/pgboss-roundtrip.XXXXXX")
echo "pg-boss $VERSION round trip on $URL (qctl: $("$QCTL" --version 2>&1); logs in $LOG)"

# --- 1. install, queues, jobs --------------------------------------------------------------------
sql "DROP SCHEMA IF EXISTS pgboss CASCADE; DROP TABLE IF EXISTS qctl_ledger" >/dev/null 2>&1
if rt setup "$N" > "$LOG/setup.log" 2>&1; then
  ok "setup: pg-boss $VERSION installed itself (schema version $(sql 'SELECT version FROM pgboss.version')), $N jobs sent to rt"
else
  fail "setup: $(tail -3 "$LOG/setup.log" | tr '\n' ' ')"; verdict "FAIL (setup)"; exit 1
fi
# state column and its values are the same in every version; its time columns are not
if [ "$MAJOR" = 9 ]; then STARTED=startedon; else STARTED=started_on; fi

auto=$("$QCTL" -d "$URL" --color never -v stats --format json 2>"$LOG/auto.err")
if [ $? -eq 0 ] && [ "$(jq -r .table <<<"$auto")" = pgboss.job ]; then ok "qctl --layout auto finds pg-boss's table"
else fail "qctl --layout auto does not find pg-boss $VERSION: $(grep -i 'error' "$LOG/auto.err" | head -2 | tr '\n' ' ')"; fi

s=$(qjson stats)
if [ "$s" = ERR ]; then fail "qctl stats: $(qerr)"
elif [ "$(stat_of "$s" rt pending)" = "$N" ] && [ "$(stat_of "$s" rt ready)" = "$N" ]; then ok "qctl stats: rt has $N pending, all ready"
else fail "qctl stats: rt pending=$(stat_of "$s" rt pending) ready=$(stat_of "$s" rt ready), want $N"; fi

# --- 2. kill -9 mid-job, qctl reap, fresh worker ----------------------------------------------
start_worker A rt 4; A=$WPID
if wait_for 30 "SELECT count(*) FILTER (WHERE finished_at IS NOT NULL) >= 8 AND count(*) FILTER (WHERE finished_at IS NULL) >= 1 FROM qctl_ledger WHERE worker = 'A'"; then
  kill9 "$A"
  # in flight: a run the ledger has not seen finish, or a job still active (its handler may have
  # finished, but the worker died before pg-boss recorded the completion: at-least-once)
  inflight=$(sql "SELECT string_agg(k, ',' ORDER BY k) FROM (SELECT job_key k FROM qctl_ledger WHERE worker = 'A' AND finished_at IS NULL
                  UNION SELECT data->>'key' FROM pgboss.job WHERE name = 'rt' AND state = 'active') x")
  active=$(sql "SELECT count(*) FROM pgboss.job WHERE name = 'rt' AND state = 'active'")
  ok "kill -9 worker A mid-job: $active jobs left active ($inflight had started)"
else
  fail "worker A did not start running jobs: $(tail -3 "$LOG/worker-A.log" | tr '\n' ' ')"; kill -9 "$A"; active=0; inflight=
fi

sleep 3.5
s=$(qjson stats --timeout 3s)
if [ "$s" = ERR ]; then fail "qctl stats --timeout 3s: $(qerr)"
elif [ "$(stat_of "$s" rt stale)" = "$active" ]; then ok "qctl stats --timeout 3s: $active stale"
else fail "qctl stats --timeout 3s: rt stale=$(stat_of "$s" rt stale), want $active"; fi

r=$(qjson reap --timeout 3s)
reaped=1
if [ "$r" = ERR ]; then fail "qctl reap --timeout 3s: $(qerr)"; reaped=0
elif [ "$(jq -r .requeued <<<"$r")" = "$active" ] && [ "$(jq -r .dead_lettered <<<"$r")" = 0 ]; then ok "qctl reap --timeout 3s: requeued $active, dead-lettered 0"
else fail "qctl reap --timeout 3s: requeued $(jq -r .requeued <<<"$r") dead-lettered $(jq -r .dead_lettered <<<"$r"), want $active and 0"; fi
left=$(sql "SELECT count(*) FROM pgboss.job WHERE name = 'rt' AND state = 'active'")
if [ "$left" = 0 ]; then ok "no rt job is active after the reap"; else fail "$left rt jobs still active after qctl reap (stuck until pg-boss's own expiry, 300 s)"; fi
sql "SELECT to_jsonb(j) FROM pgboss.job j WHERE name = 'rt' AND state = 'retry'" > "$LOG/reaped.json" 2>/dev/null

start_worker B rt 4; B=$WPID
# jobs qctl could not reap stay active until pg-boss's own expiry (300 s): do not wait for those
if wait_for $([ "$reaped" = 1 ] && echo 40 || echo 8) "SELECT count(*) FILTER (WHERE state = 'completed') = $N FROM pgboss.job WHERE name = 'rt'"; then ok "fresh worker B finished every rt job"
else fail "rt not finished: $(sql "SELECT string_agg(state || '=' || n, ' ') FROM (SELECT state::text, count(*) n FROM pgboss.job WHERE name = 'rt' GROUP BY 1) s")"; fi
stop_worker "$B"

twice=$(sql "SELECT string_agg(job_key, ',') FROM (SELECT job_key FROM qctl_ledger WHERE job_key LIKE 'rt-%' GROUP BY 1
              HAVING count(*) FILTER (WHERE finished_at IS NOT NULL) > 1 AND job_key <> ALL(string_to_array('$inflight', ','))) s")
missing=$(sql "SELECT count(*) FROM generate_series(0, $N - 1) i WHERE NOT EXISTS (SELECT 1 FROM qctl_ledger WHERE job_key = 'rt-' || i AND finished_at IS NOT NULL)")
rerun=$(sql "SELECT coalesce(string_agg(job_key, ',' ORDER BY job_key), '') FROM (SELECT job_key FROM qctl_ledger WHERE job_key LIKE 'rt-%' GROUP BY 1 HAVING count(*) > 1) s")
if [ -z "$twice" ] && [ "$missing" = 0 ]; then ok "every rt job finished, exactly once but for those in flight at the kill"; else fail "rt jobs not finished exactly once: ${twice:-none twice}, $missing never"; fi
extra=$(comm -23 <(tr ',' '\n' <<<"$rerun" | sed '/^$/d' | sort) <(tr ',' '\n' <<<"$inflight" | sed '/^$/d' | sort) | tr '\n' ' ')
if [ -z "$extra" ]; then ok "only jobs cut short by the kill ran twice (${rerun:-none})"; else fail "jobs that were not in flight at the kill ran again: $extra"; fi

own=$(rt counts rt rt_dlq rt_fail rt_retry 2>"$LOG/counts.err")
echo "$own" > "$LOG/own-counts-1.json"
s=$(qjson stats)
if [ -z "$own" ]; then fail "pg-boss's own counts: $(tail -2 "$LOG/counts.err" | tr '\n' ' ')"
elif [ "$s" = ERR ]; then fail "qctl stats after the round trip: $(qerr)"
else
  # pg-boss 9/10 count states (countStates); 11/12 count queued/active (getQueueStats), no finished jobs
  case "$MAJOR" in
    9|10) own_pr=$(jq -r '"\((.rt.created // 0) + (.rt.retry // 0))/\(.rt.active // 0)/\(.rt.completed // 0)"' <<<"$own")
          mine="$(stat_of "$s" rt pending)/$(stat_of "$s" rt running)/$(stat_of "$s" rt done)"; what=pending/running/done ;;
    *) own_pr=$(jq -r '"\(.rt.queuedCount)/\(.rt.activeCount)"' <<<"$own")
       mine="$(stat_of "$s" rt pending)/$(stat_of "$s" rt running)"; what=pending/running ;;
  esac
  if [ "$mine" = "$own_pr" ]; then ok "pg-boss's own counts and qctl stats agree: rt $what = $mine"
  else fail "pg-boss's own counts (rt $what $own_pr) and qctl stats ($mine) disagree"; fi
  truth=$(sql "SELECT count(*) FROM pgboss.job WHERE name = 'rt' AND state = 'completed'")
  if [ "$(stat_of "$s" rt done)" = "$truth" ] && [ "$truth" = "$N" ]; then ok "qctl stats: rt done = $N"; else fail "qctl stats: rt done = $(stat_of "$s" rt done), table has $truth completed"; fi
fi

# --- 3. dead letters ------------------------------------------------------------------------------
# hang_and_kill KEY NAME: send KEY to rt_fail, let a real worker take it, kill it -9; id in $JID
hang_and_kill() {
  JID=$(rt send rt_fail "$1" hang 2>>"$LOG/send.err")
  start_worker "$2" rt_fail 1; local w=$WPID
  if wait_for 15 "SELECT EXISTS (SELECT 1 FROM qctl_ledger WHERE job_key = '$1')"; then kill9 "$w"; return 0; fi
  kill -9 "$w"; return 1
}
if hang_and_kill dlq-1 C; then
  "$NODE" "$HERE/roundtrip-node.js" "$URL" "$VERSION" supervisor > "$LOG/supervisor.log" 2>&1 & S=$!; disown "$S"; PIDS+=("$S")
  if [ "$MAJOR" = 9 ]; then
    if wait_for 20 "SELECT state = 'expired' FROM pgboss.job WHERE id = '$JID'"; then ok "pg-boss 9's supervisor expired the job whose worker was killed (state expired; 9 has no dead-letter queues)"
    else fail "pg-boss 9's supervisor did not expire $JID: $(sql "SELECT state FROM pgboss.job WHERE id = '$JID'")"; fi
  elif wait_for 20 "SELECT state = 'failed' FROM pgboss.job WHERE id = '$JID'" && wait_for 5 "SELECT EXISTS (SELECT 1 FROM pgboss.job WHERE name = 'rt_dlq' AND data->>'key' = 'dlq-1')"; then
    ok "pg-boss's supervisor failed the timed-out job and copied it into rt_dlq"
    start_worker D rt_dlq 1; D=$WPID
    if wait_for 15 "SELECT EXISTS (SELECT 1 FROM qctl_ledger WHERE job_key = 'dlq-1' AND worker = 'D' AND finished_at IS NOT NULL)"; then ok "a real worker ran the dead-letter copy"; else fail "the dead-letter copy of dlq-1 was not run"; fi
    stop_worker "$D"
  else
    fail "pg-boss's supervisor did not fail/copy $JID: $(sql "SELECT state FROM pgboss.job WHERE id = '$JID'")"
  fi
  stop_worker "$S"
else
  fail "worker C never took dlq-1"
fi

if hang_and_kill dlq-2 C2; then
  sleep 2.5  # past rt_fail's expireInSeconds 2: stale by pg-boss's own rule, so no --timeout is needed
  r=$(qjson reap --queue rt_fail)
  if [ "$r" = ERR ]; then fail "qctl reap --queue rt_fail: $(qerr)"
  elif [ "$(jq -r .dead_lettered <<<"$r")" = 1 ]; then ok "qctl reap (by pg-boss's own expiry) dead-lettered the job"
  else fail "qctl reap --queue rt_fail: dead-lettered $(jq -r .dead_lettered <<<"$r") requeued $(jq -r .requeued <<<"$r"), want 1 and 0"; fi
  want_state=failed; [ "$MAJOR" = 9 ] && want_state=expired
  got=$(sql "SELECT state FROM pgboss.job WHERE id = '$JID'")
  if [ "$got" = "$want_state" ]; then ok "qctl reap left dlq-2 $got, as pg-boss's supervisor does"; else fail "qctl reap left dlq-2 '$got'; pg-boss's supervisor makes it $want_state"; fi
  if [ "$MAJOR" != 9 ]; then
    if [ "$(sql "SELECT EXISTS (SELECT 1 FROM pgboss.job WHERE name = 'rt_dlq' AND data->>'key' = 'dlq-2')")" = t ]; then
      ok "qctl reap copied dlq-2 into rt_dlq, as pg-boss's supervisor does"
      start_worker D2 rt_dlq 1; D2=$WPID
      if wait_for 15 "SELECT EXISTS (SELECT 1 FROM qctl_ledger WHERE job_key = 'dlq-2' AND worker = 'D2' AND finished_at IS NOT NULL)"; then ok "a real worker ran qctl's dead-letter copy of dlq-2"; else fail "qctl's dead-letter copy of dlq-2 was not run by a real worker"; fi
      stop_worker "$D2"
    else fail "qctl reap wrote no copy of dlq-2 into rt_dlq (pg-boss's supervisor does: the job never reaches its dead-letter queue)"; fi
  fi
else
  fail "worker C2 never took dlq-2"
fi

# --- 3b. stately collisions ---------------------------------------------------------------------
if [ "$MAJOR" != 9 ]; then
  # take KEY [fail]: a job of rt_stately fetched by pg-boss's own fetch and left active (or failed)
  take() { rt take rt_stately "$@" 2>>"$LOG/take.err"; }
  in_dlq() { sql "SELECT EXISTS (SELECT 1 FROM pgboss.job WHERE name = 'rt_dlq' AND data->>'key' = '$1')"; }
  WAITING=$(take st-wait fail)
  if [ "$(sql "SELECT state FROM pgboss.job WHERE id = '$WAITING'")" = retry ]; then ok "rt_stately: st-wait failed once and waits in retry (retryDelay 3600)"
  else fail "rt_stately: st-wait is not waiting in retry: $(sql "SELECT state FROM pgboss.job WHERE id = '$WAITING'") $(tail -2 "$LOG/take.err" | tr '\n' ' ')"; fi
  JID=$(take st-own)
  "$NODE" "$HERE/roundtrip-node.js" "$URL" "$VERSION" supervisor > "$LOG/supervisor-stately.log" 2>&1 & S=$!; disown "$S"; PIDS+=("$S")
  if wait_for 20 "SELECT state = 'failed' FROM pgboss.job WHERE id = '$JID'" && wait_for 5 "SELECT EXISTS (SELECT 1 FROM pgboss.job WHERE name = 'rt_dlq' AND data->>'key' = 'st-own')"; then
    ok "pg-boss's supervisor failed the timed-out stately job whose retry would collide, and copied it into rt_dlq"
  else fail "pg-boss's supervisor did not fail/copy st-own: $(sql "SELECT state FROM pgboss.job WHERE id = '$JID'")"; fi
  # pg-boss 11's fetch skips the singleton keys its monitor last cached as active
  # (queue.singletons_active): let the monitor see st-own gone before stopping it.
  if [ "$(sql "SELECT count(*) FROM information_schema.columns WHERE table_schema = 'pgboss' AND table_name = 'queue' AND column_name = 'singletons_active'")" = 1 ]; then
    wait_for 10 "SELECT singletons_active IS NULL FROM pgboss.queue WHERE name = 'rt_stately'" || fail "pg-boss's monitor kept st-own in rt_stately's singletons_active"
  fi
  stop_worker "$S"
  JID=$(take st-qctl)
  sleep 2.5  # past rt_stately's expireInSeconds 2
  r=$(qjson reap --queue rt_stately)
  if [ "$r" = ERR ]; then fail "qctl reap --queue rt_stately: $(qerr)"
  elif [ "$(jq -r '.dead_lettered, .requeued' <<<"$r" | paste -sd/)" = 1/0 ] && [ "$(jq -r '.jobs[0].action' <<<"$r")" = dead_letter ]; then
    ok "qctl reap reported the colliding stately job dead-lettered"
  else fail "qctl reap --queue rt_stately: dead-lettered $(jq -r .dead_lettered <<<"$r") requeued $(jq -r .requeued <<<"$r"), want 1 and 0"; fi
  got=$(sql "SELECT state || ' ' || (completed_on IS NOT NULL) FROM pgboss.job WHERE id = '$JID'")
  if [ "$got" = "failed true" ]; then ok "qctl reap left st-qctl failed and completed, as pg-boss's supervisor does"; else fail "qctl reap left st-qctl '$got'; pg-boss's supervisor makes it failed, completed"; fi
  if [ "$(sql "SELECT state FROM pgboss.job WHERE id = '$WAITING'")" = retry ]; then ok "st-wait still waits in retry"; else fail "st-wait left retry: $(sql "SELECT state FROM pgboss.job WHERE id = '$WAITING'")"; fi
  if [ "$(in_dlq st-qctl)" = t ]; then
    ok "qctl reap copied st-qctl into rt_dlq, as pg-boss's supervisor does"
    start_worker D3 rt_dlq 1; D3=$WPID
    if wait_for 15 "SELECT count(*) = 2 FROM qctl_ledger WHERE job_key IN ('st-own', 'st-qctl') AND worker = 'D3' AND finished_at IS NOT NULL"; then ok "a real worker ran both dead-letter copies (pg-boss's and qctl's)"
    else fail "the dead-letter copies of st-own/st-qctl were not both run: $(sql "SELECT string_agg(job_key, ',') FROM qctl_ledger WHERE worker = 'D3' AND finished_at IS NOT NULL")"; fi
    stop_worker "$D3"
  else fail "qctl reap wrote no copy of st-qctl into rt_dlq (pg-boss's supervisor does)"; fi
fi

# --- 4. qctl retry of a failed job ----------------------------------------------------------------
JID=$(rt send rt_retry retry-1 fail-first 2>>"$LOG/send.err")
start_worker E rt_retry 1; E=$WPID
if wait_for 15 "SELECT state = 'failed' FROM pgboss.job WHERE id = '$JID'"; then
  ok "retry-1 failed on its first run (retryLimit 0)"
  before=$(sql "SELECT to_jsonb(j) FROM pgboss.job j WHERE id = '$JID'" 2>/dev/null)
  if out=$(q retry "$JID" 2>&1); then ok "qctl retry $JID: $(tr '\n' ' ' <<<"$out")"; retried=1; else fail "qctl retry $JID: $(tr '\n' ' ' <<<"$out")"; retried=0; fi
  { echo "$before"; sql "SELECT to_jsonb(j) FROM pgboss.job j WHERE id = '$JID'"; } > "$LOG/retried.json" 2>/dev/null
  if wait_for $([ "$retried" = 1 ] && echo 15 || echo 1) "SELECT state = 'completed' FROM pgboss.job WHERE id = '$JID'"; then
    runs=$(sql "SELECT count(*) || '/' || count(finished_at) FROM qctl_ledger WHERE job_key = 'retry-1'")
    if [ "$runs" = 2/1 ]; then ok "the real worker ran the retried job to completion (2 runs, the second finished)"; else fail "retry-1 runs/finished = $runs, want 2/1"; fi
  else
    fail "the retried job did not complete: it is $(sql "SELECT state FROM pgboss.job WHERE id = '$JID'")"
  fi
else
  fail "retry-1 did not fail first: $(sql "SELECT state FROM pgboss.job WHERE id = '$JID'")"
fi
stop_worker "$E"

# --- 5. qctl purge, and pg-boss keeps working -----------------------------------------------------
done_before=$(sql "SELECT count(*) FROM pgboss.job WHERE state = 'completed'")
sleep 1
if out=$(q purge --older-than 0s --yes 2>&1); then ok "qctl purge --older-than 0s: $(tr '\n' ' ' <<<"$out")"; else fail "qctl purge --older-than 0s: $(tr '\n' ' ' <<<"$out")"; fi
done_after=$(sql "SELECT count(*) FROM pgboss.job WHERE state = 'completed'")
if [ "$done_after" = 0 ]; then ok "purge deleted all $done_before completed jobs"; else fail "purge left $done_after of $done_before completed jobs"; fi
for i in 0 1 2 3 4; do rt send rt "purge-$i" >/dev/null 2>>"$LOG/send.err"; done
start_worker F rt 2; F=$WPID
if wait_for 20 "SELECT count(*) = 5 FROM qctl_ledger WHERE job_key LIKE 'purge-%' AND finished_at IS NOT NULL" && wait_for 5 "SELECT count(*) = 5 FROM pgboss.job WHERE data->>'key' LIKE 'purge-%' AND state = 'completed'"; then
  ok "after the purge pg-boss sends, runs and completes new jobs as before"
else fail "after the purge: $(sql "SELECT count(*) FROM qctl_ledger WHERE job_key LIKE 'purge-%' AND finished_at IS NOT NULL") of 5 new jobs ran"; fi
stop_worker "$F"
if [ "$(sql "SELECT count(*) FROM information_schema.columns WHERE table_schema = 'pgboss' AND table_name = 'queue' AND column_name = 'retained_count'")" = 1 ]; then
  cached=$(sql "SELECT coalesce(retained_count::text, 'null') || ' ' || total_count FROM pgboss.queue WHERE name = 'rt'")
  there=$(sql "SELECT count(*) FILTER (WHERE state IN ('completed', 'cancelled')) || ' ' || count(*) FROM pgboss.job WHERE name = 'rt'")
  read -r c_ret c_tot <<<"$cached"; read -r t_ret t_tot <<<"$there"
  if { [ "$c_ret" = null ] || [ "$c_ret" -le "$t_ret" ]; } && [ "$c_tot" -le "$t_tot" ]; then ok "pgboss.queue's cached counts for rt (retained/total $c_ret/$c_tot) are not above what is there ($t_ret/$t_tot)"
  else fail "pgboss.queue's cached counts for rt (retained/total $c_ret/$c_tot) stay above what is there ($t_ret/$t_tot) after the purge"; fi
fi
own=$(rt counts rt rt_dlq rt_fail rt_retry 2>>"$LOG/counts.err")
echo "$own" > "$LOG/own-counts-2.json"
if [ -n "$own" ]; then ok "pg-boss's own counts still work after the purge: rt $(jq -c .rt <<<"$own")"; else fail "pg-boss's own counts fail after the purge: $(tail -2 "$LOG/counts.err")"; fi
s=$(qjson stats)
if [ "$s" = ERR ]; then fail "qctl stats at the end: $(qerr)"
else
  stuck=$(jq -r '[.queues[] | .running + .stale] | add' <<<"$s")
  if [ "$stuck" = 0 ]; then ok "qctl stats at the end: nothing running or stale"; else fail "qctl stats at the end: $stuck running/stale"; fi
fi

# --- 6. qctl explain-claim --apply, and the real worker's fetch --------------------------------
if rt bulk rt 200 > "$LOG/bulk.log" 2>&1; then ok "200 more jobs sent to rt"; else fail "bulk send: $(tail -2 "$LOG/bulk.log" | tr '\n' ' ')"; fi
idx() { sql "SELECT coalesce(string_agg(i.indexrelid::regclass::text, ',' ORDER BY 1), '') FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'pgboss' AND (c.relname = 'job' OR c.relispartition)"; }
before=$(idx)
if out=$(q explain-claim --apply 2>&1); then ok "qctl explain-claim --apply: the hot queries are ok"
else fail "qctl explain-claim --apply exit non-zero: $(tail -4 <<<"$out" | tr '\n' ' ')"; fi
echo "$out" > "$LOG/explain-apply.txt"
new_idx=$(comm -13 <(tr ',' '\n' <<<"$before" | sort) <(idx | tr ',' '\n' | sort) | paste -sd, -)
invalid=$(sql "SELECT count(*) FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'pgboss' AND NOT i.indisvalid")
if [ "$invalid" = 0 ]; then ok "every index on pg-boss's tables is valid"; else fail "$invalid invalid indexes on pg-boss's tables after --apply"; fi
scans() { sql "SELECT coalesce(sum(idx_scan), 0) FROM pg_stat_user_indexes WHERE indexrelid::regclass::text = any(string_to_array('$new_idx', ','))"; }
s_before=$(scans)
start_worker G rt 4; G=$WPID
if wait_for 60 "SELECT count(*) FILTER (WHERE state = 'completed') = 200 FROM pgboss.job WHERE name = 'rt' AND data->>'key' LIKE 'bulk-%'"; then ok "after explain-claim --apply a real worker fetched and finished the 200 jobs"
else fail "after explain-claim --apply: $(sql "SELECT count(*) FROM pgboss.job WHERE name = 'rt' AND data->>'key' LIKE 'bulk-%' AND state = 'completed'") of 200 jobs finished"; fi
stop_worker "$G"
if [ -n "$new_idx" ]; then
  sleep 1
  s_after=$(sql "SELECT pg_stat_force_next_flush()" >/dev/null 2>&1; scans)
  if [ "$s_after" -gt "$s_before" ]; then ok "the worker's fetch used the index --apply made ($new_idx)"; else fail "the index --apply made ($new_idx) was never used by the worker's fetch"; fi
else
  ok "explain-claim --apply found nothing to create: pg-boss's own indexes serve its fetch"
fi

cleanup
if [ "$FAILS" -gt 0 ]; then verdict "FAIL ($FAILS check(s) failed, logs in $LOG)"; exit 1; fi
rm -rf "$LOG"
verdict "PASS"
