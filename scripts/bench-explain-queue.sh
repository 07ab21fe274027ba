#!/usr/bin/env bash
# What judging a claim on the busiest queue costs explain-claim: the probe
# that finds the queue with the most ready jobs (a count of the ready jobs
# grouped by queue) against naming the queue with --queue, on PostgreSQL,
# with 1,000,000 ready jobs in five queues and 2,000,000 finished ones.
# The two alternate, RUNS times each; the script prints each median and
# their ratio. Usage: bash scripts/bench-explain-queue.sh [RUNS]
#   QCTL: the qctl binary (default: target/release/qctl, else target/debug/qctl)
#   QCTL_BENCH_PG: server URL without a database (default postgres://postgres@127.0.0.1:5432)
set -euo pipefail
RUNS=${1:-7}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
QCTL=${QCTL:-$ROOT/target/release/qctl}
[ -x "$QCTL" ] || QCTL=$ROOT/target/debug/qctl
SERVER=${QCTL_BENCH_PG:-postgres://postgres@127.0.0.1:5432}
DB=qctl_bench_explain_queue
psql "$SERVER/postgres" -qc "DROP DATABASE IF EXISTS $DB" -c "CREATE DATABASE $DB" >/dev/null
trap 'psql "$SERVER/postgres" -qc "DROP DATABASE IF EXISTS $DB" >/dev/null' EXIT
URL="$SERVER/$DB"
"$QCTL" -d "$URL" init >/dev/null
psql "$URL" -qc "INSERT INTO jobs (queue, status, payload, run_at)
  SELECT 'q' || (n % 5), 'pending', '{}', now() - interval '1 hour' FROM generate_series(1, 1000000) n;
  INSERT INTO jobs (queue, status, payload, updated_at)
  SELECT 'q1', 'done', '{}', now() - interval '2 days' FROM generate_series(1, 2000000) n;"
psql "$URL" -qc "VACUUM ANALYZE jobs"
time_of() { local s e; s=$(date +%s%N); "$QCTL" -d "$URL" explain-claim "$@" >/dev/null || true; e=$(date +%s%N); echo $(( (e - s) / 1000000 )); }
picked=() named=()
for _ in $(seq "$RUNS"); do
  picked+=("$(time_of)")
  named+=("$(time_of --queue q1)")
done
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
p=$(median "${picked[@]}") n=$(median "${named[@]}")
echo "explain-claim, the queue picked (busiest): median ${p} ms of ${RUNS} (${picked[*]})"
echo "explain-claim --queue q1:                  median ${n} ms of ${RUNS} (${named[*]})"
awk -v p="$p" -v n="$n" 'BEGIN { printf "ratio picked / named: %.2fx\n", p / n }'
