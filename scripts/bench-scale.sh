#!/usr/bin/env bash
# How each qctl command's cost grows with the table: the same commands on a
# 1,000,000-row and a 10,000,000-row table of qctl's own layout, side by
# side, on SQLite, PostgreSQL and MySQL/MariaDB.
#
# Each table holds, whatever its size, the same live work: 100,000 stale
# running jobs (workers dead an hour ago, every third on its last
# attempt), 10,000 ready jobs in three queues and 1,000 failed ones; the
# rest is finished history. The commands, each a whole `qctl` process:
#
#   stats                    target: <= 1.3x from 1M to 10M, < 100 ms at 10M
#   claim                    target: <= 1.3x (median of the claims)
#   reap --timeout 10m       the 100,000 stale jobs; target <= 1.3x (the
#                            stale jobs are restored, untimed, after each)
#   explain-claim --query all, doctor    growth, for the record
#
# The two tables exist at once and every round runs each command on both,
# in alternating order; the ratio is of the medians. Peak resident memory
# of every command at the largest size comes from /usr/bin/time (target
# < 50 MB). Then stats once more with the stale jobs finished (the backlog
# of a calm day: its time at 10M rows is what the history costs, the
# 100,000 stale jobs' exact count aside). Then, on the largest table, two checks: `explain-claim` with
# init's indexes dropped (a full scan) finishes soon after a 1 s
# statement timeout and says "at least N rows examined"; and an `enqueue --from-file`
# of as many lines as the largest table has rows, for its peak memory.
#
# Usage: bash scripts/bench-scale.sh [--backend sqlite|postgres|mysql]...
#   SIZES              table sizes (default "1000000 10000000")
#   QCTL               a qctl binary to measure (default: build target/release/qctl)
#   ROUNDS             rounds per command (default 5; claims: 4x that)
#   ENQUEUE_CHECK      0 skips the enqueue memory check (default 1)
#   STALE              stale jobs to reap (default 100000)
#   QCTL_BENCH_SERVER  libpq keyword string without dbname
#                      (default: host=127.0.0.1 port=5432 user=postgres)
#   QCTL_BENCH_MYSQL   server URL without a database
#                      (default: mysql://root@127.0.0.1:3306)
#   BENCH_DIR          SQLite files and the JSONL input (default: target/bench-scale);
#                      a 10M run needs about 4 GB there, removed at the end
#
# Exit status: 0 every target met, 1 a target missed, 2 an error.

set -euo pipefail
export LC_ALL=C
cd "$(dirname "$0")/.."

backends=()
while (($#)); do
    case $1 in
        --backend) backends+=("$2"); shift 2 ;;
        *) echo "unknown argument $1" >&2; exit 2 ;;
    esac
done
((${#backends[@]})) || backends=(sqlite postgres mysql)
read -r -a sizes <<<"${SIZES:-1000000 10000000}"
rounds=${ROUNDS:-5}
enqueue_check=${ENQUEUE_CHECK:-1}
pg=${QCTL_BENCH_SERVER:-host=127.0.0.1 port=5432 user=postgres}
my=${QCTL_BENCH_MYSQL:-mysql://root@127.0.0.1:3306}
target_dir=${CARGO_TARGET_DIR:-target}
bench_dir=${BENCH_DIR:-$target_dir/bench-scale}
mkdir -p "$bench_dir"
bench_dir=$(cd "$bench_dir" && pwd)
stale=${STALE:-100000}
ready=10000
failed=1000

[[ -x /usr/bin/time ]] || { echo "bench-scale: GNU time is needed (apt-get install time)" >&2; exit 2; }
if [[ -n ${QCTL:-} ]]; then
    qctl=$(realpath "$QCTL")
else
    cargo build --release --quiet
    qctl="$PWD/$target_dir/release/qctl"
fi
prefix="qctl_scale_$$"

my_hostport=${my#*@}
my_user=${my#mysql://}; my_user=${my_user%@*}
mariadb=(mariadb -u "$my_user" -h "${my_hostport%:*}" -P "${my_hostport##*:}" -N -B)
psql_() { PGOPTIONS="-c client_min_messages=warning" psql -X -q -v ON_ERROR_STOP=1 "$pg dbname=$1" "${@:2}"; }

cleanup() {
    for b in "${backends[@]}"; do
        for n in "${sizes[@]}"; do
            case $b in
                sqlite) rm -f "$bench_dir/$prefix-$n.db"{,-wal,-shm} ;;
                postgres) psql_ postgres -c "DROP DATABASE IF EXISTS ${prefix}_$n WITH (FORCE)" || true ;;
                mysql) "${mariadb[@]}" -e "DROP DATABASE IF EXISTS ${prefix}_$n" || true ;;
            esac
        done
    done
    rm -f "$bench_dir/$prefix.jsonl"
}
trap cleanup EXIT

median() { sort -g | awk '{v[NR]=$1} END {print (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2}'; }
# Verdicts are printed from command substitutions (subshells): a missed
# target is recorded in a file, which outlives them.
missed=$(mktemp)
check() { # label value limit
    if awk -v v="$2" -v l="$3" 'BEGIN {exit !(v <= l)}'; then echo "met"; else echo "$*" >>"$missed"; echo "MISSED"; fi
}

url() { # backend size
    case $1 in
        sqlite) echo "sqlite:$bench_dir/$prefix-$2.db" ;;
        postgres) echo "$pg dbname=${prefix}_$2" ;;
        mysql) echo "$my/${prefix}_$2" ;;
    esac
}

# Runs SQL on one table's database.
run_sql() { # backend size sql
    case $1 in
        sqlite) sqlite3 "$bench_dir/$prefix-$2.db" "$3" >/dev/null ;;
        postgres) psql_ "${prefix}_$2" -c "$3" >/dev/null ;;
        mysql) "${mariadb[@]}" "${prefix}_$2" -e "$3" >/dev/null ;;
    esac
}

# Prints one query's rows on one table's database.
query_sql() { # backend size sql
    case $1 in
        sqlite) sqlite3 -separator ' ' "$bench_dir/$prefix-$2.db" "$3" ;;
        postgres) psql_ "${prefix}_$2" -At -F ' ' -c "$3" ;;
        mysql) "${mariadb[@]}" "${prefix}_$2" -e "$3" | tr '\t' ' ' ;;
    esac
}

# The ids of each table's stale jobs, "first last" by "backend size": one
# INSERT made them, so they are consecutive, but MySQL's AUTO_INCREMENT
# leaves gaps between statements, so their place is read, not computed.
declare -A stale_ids

# A fresh `qctl init` table of n rows: history, then the live work.
build() { # backend n
    local b=$1 n=$2 done=$(($2 - stale - ready - failed)) series ago worker queue
    case $b in
        sqlite) rm -f "$bench_dir/$prefix-$n.db"{,-wal,-shm} ;;
        postgres) psql_ postgres -c "DROP DATABASE IF EXISTS ${prefix}_$n" -c "CREATE DATABASE ${prefix}_$n" ;;
        mysql) "${mariadb[@]}" -e "DROP DATABASE IF EXISTS ${prefix}_$n; CREATE DATABASE ${prefix}_$n" ;;
    esac
    "$qctl" -q -d "$(url "$b" "$n")" init >/dev/null
    case $b in
        sqlite)
            series() { echo "(WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < $1) SELECT i FROM s)"; }
            ago() { echo "(unixepoch() - $1)"; }
            worker="'dead-' || (i % 16)"
            queue="CASE i % 3 WHEN 0 THEN 'default' WHEN 1 THEN 'emails' ELSE 'reports' END" ;;
        postgres)
            series() { echo "(SELECT i FROM generate_series(1, $1) i)"; }
            ago() { echo "(now() - interval '$1 seconds')"; }
            worker="'dead-' || (i % 16)"
            queue="(ARRAY['default', 'emails', 'reports'])[1 + i % 3]" ;;
        mysql)
            series() { echo "(SELECT seq AS i FROM seq_1_to_$1)"; }
            ago() { echo "(UTC_TIMESTAMP(6) - INTERVAL $1 SECOND)"; }
            worker="CONCAT('dead-', i % 16)"
            queue="ELT(1 + i % 3, 'default', 'emails', 'reports')" ;;
    esac
    # History first, in chunks of at most 2M rows (one transaction each).
    local from=0 step=2000000
    while ((from < done)); do
        local k=$((done - from < step ? done - from : step))
        run_sql "$b" "$n" "INSERT INTO jobs (queue, status, payload, attempts, run_at, created_at, updated_at)
            SELECT $queue, 'done', '{\"n\": 1}', 1, $(ago 86400), $(ago 86400), $(ago 86400) FROM $(series "$k") s"
        from=$((from + k))
    done
    run_sql "$b" "$n" "INSERT INTO jobs (queue, status, payload, attempts, max_attempts, run_at, locked_by, locked_at, locked_until, created_at, updated_at)
        SELECT 'default', 'running', '{}', CASE WHEN i % 3 = 0 THEN 3 ELSE 1 END, 3, $(ago 3600), $worker, $(ago 3600), $(ago 1800), $(ago 3600), $(ago 3600) FROM $(series $stale) s"
    stale_ids[$b $n]=$(query_sql "$b" "$n" "SELECT min(id), max(id) FROM jobs WHERE status = 'running'")
    run_sql "$b" "$n" "INSERT INTO jobs (queue, status, payload, run_at, created_at, updated_at)
        SELECT $queue, 'pending', '{}', $(ago 60), $(ago 60), $(ago 60) FROM $(series $ready) s"
    run_sql "$b" "$n" "INSERT INTO jobs (queue, status, payload, attempts, run_at, created_at, updated_at, last_error)
        SELECT $queue, 'failed', '{}', 3, $(ago 7200), $(ago 7200), $(ago 7200), 'boom' FROM $(series $failed) s"
    settle "$b" "$n"
}

# Statistics current, dead rows gone, dirty pages written: the state of a
# table that has been around.
settle() {
    case $1 in
        sqlite) run_sql "$1" "$2" "ANALYZE; PRAGMA wal_checkpoint(TRUNCATE)" ;;
        postgres) run_sql "$1" "$2" "VACUUM ANALYZE jobs" && run_sql "$1" "$2" "CHECKPOINT" ;;
        mysql) run_sql "$1" "$2" "ANALYZE TABLE jobs" ;;
    esac
}

# The reaped jobs stale again (untimed), for the next round's reap.
restale() { # backend n
    local b=$1 n=$2 first last ago worker
    read -r first last <<<"${stale_ids[$b $n]}"
    case $b in
        sqlite) ago() { echo "(unixepoch() - $1)"; }; worker="'dead-' || (id % 16)" ;;
        postgres) ago() { echo "(now() - interval '$1 seconds')"; }; worker="'dead-' || (id % 16)" ;;
        mysql) ago() { echo "(UTC_TIMESTAMP(6) - INTERVAL $1 SECOND)"; }; worker="CONCAT('dead-', id % 16)" ;;
    esac
    run_sql "$b" "$n" "UPDATE jobs SET status = 'running', attempts = CASE WHEN id % 3 = 0 THEN 3 ELSE 1 END,
        locked_by = $worker, locked_at = $(ago 3600), locked_until = $(ago 1800), last_error = NULL
        WHERE id BETWEEN $first AND $last"
    settle "$b" "$n"
}

# One timed qctl process: prints "seconds peak_kb"; output to $out.
out=$(mktemp)
timed() {
    local started=$EPOCHREALTIME rc=0
    /usr/bin/time -f "%M" -o "$out.mem" "$qctl" "$@" >"$out" 2>"$out.err" || rc=$?
    local ended=$EPOCHREALTIME
    # explain-claim and doctor exit 1 on a finding: that is a result here.
    if ((rc > 1)); then
        echo "qctl $* failed ($rc): $(cat "$out.err")" >&2
        exit 2
    fi
    echo "$(awk -v a="$started" -v b="$ended" 'BEGIN {print b - a}') $(tail -1 "$out.mem")"
}

declare -A times peaks
record() { # key seconds kb
    times[$1]+="$2 "
    local p=${peaks[$1]:-0}
    ((${3%.*} > p)) && peaks[$1]=${3%.*}
    return 0
}
med() { tr ' ' '\n' <<<"${times[$1]}" | grep . | median; }

commands=(stats claim reap explain doctor)
for b in "${backends[@]}"; do
    echo
    echo "== $b: ${sizes[*]} rows; $stale stale, $ready ready, $failed failed; $rounds rounds =="
    case $b in
        postgres) echo "server: $(psql_ postgres -Atc 'SHOW server_version')" ;;
        mysql) echo "server: $("${mariadb[@]}" -e 'SELECT VERSION()')" ;;
        sqlite) command -v sqlite3 >/dev/null || { echo "bench-scale: sqlite3 is needed" >&2; exit 2; } ;;
    esac
    for n in "${sizes[@]}"; do
        started=$EPOCHREALTIME
        build "$b" "$n"
        echo "built $n rows in $(awk -v a="$started" -v b="$EPOCHREALTIME" 'BEGIN {printf "%.0f", b - a}') s"
    done
    times=()
    peaks=()
    for ((r = 1; r <= rounds; r++)); do
        order=("${sizes[@]}")
        ((r % 2)) || order=($(printf '%s\n' "${sizes[@]}" | tac))
        for n in "${order[@]}"; do
            u=$(url "$b" "$n")
            read -r s kb < <(timed -d "$u" --format json stats)
            record "stats $n" "$s" "$kb"
            for ((c = 0; c < 4; c++)); do
                read -r s kb < <(timed -d "$u" claim --worker scale)
                record "claim $n" "$s" "$kb"
            done
            read -r s kb < <(timed -d "$u" explain-claim --query all)
            record "explain $n" "$s" "$kb"
            read -r s kb < <(timed -d "$u" doctor --timeout 10m --max-stale 1000000)
            record "doctor $n" "$s" "$kb"
            read -r s kb < <(timed -d "$u" --format json reap --timeout 10m)
            got=$(jq '.requeued + .dead_lettered' "$out")
            [[ $got == "$stale" ]] || { echo "reap on $n rows reaped $got jobs, not $stale" >&2; exit 2; }
            record "reap $n" "$s" "$kb"
            restale "$b" "$n"
        done
    done
    small=${sizes[0]}
    big=${sizes[-1]}
    printf '%-10s %12s %12s %8s %10s  %s\n' command "$small" "$big" ratio "peak KB" verdict
    for c in "${commands[@]}"; do
        a=$(med "$c $small")
        z=$(med "$c $big")
        ratio=$(awk -v a="$a" -v z="$z" 'BEGIN {printf "%.2f", z / a}')
        verdict="(growth)"
        case $c in
            stats | claim | reap) verdict="<= 1.3x: $(check "$c" "$ratio" 1.3)" ;;
        esac
        [[ $c == stats ]] && verdict+="; < 100 ms at $big: $(check stats "$(awk -v z="$z" 'BEGIN {print z * 1000}')" 100)"
        mem="${peaks[$c $big]}"
        verdict+="; peak < 50 MB: $(check mem "$mem" 51200)"
        printf '%-10s %9.1f ms %9.1f ms %7.2fx %10s  %s\n' "$c" \
            "$(awk -v a="$a" 'BEGIN {print a * 1000}')" "$(awk -v z="$z" 'BEGIN {print z * 1000}')" \
            "$ratio" "$mem" "$verdict"
    done
    u=$(url "$b" "$big")
    echo "stats at $big rows says: $("$qctl" -d "$u" stats 2>&1 | grep -i -m1 'estimate' || echo '(no estimate noted)')"

    # stats again once the stale jobs are finished (untimed): the backlog
    # of a day without an outage, 10,000 ready and 1,000 failed jobs. The
    # exact count of 100,000 stale jobs above is work that follows the
    # backlog, not the history; this is what the history costs.
    for n in "${sizes[@]}"; do
        run_sql "$b" "$n" "UPDATE jobs SET status = 'done', locked_by = NULL, locked_at = NULL,
            locked_until = NULL WHERE status = 'running'"
        settle "$b" "$n"
    done
    for ((r = 1; r <= rounds; r++)); do
        for n in "${sizes[@]}"; do
            read -r s kb < <(timed -d "$(url "$b" "$n")" stats)
            record "calm $n" "$s" "$kb"
        done
    done
    a=$(med "calm $small")
    z=$(med "calm $big")
    printf 'stats, 11,000-job backlog: %.1f ms at %s, %.1f ms at %s: %.2fx (<= 1.3x: %s); < 100 ms at %s: %s\n' \
        "$(awk -v a="$a" 'BEGIN {print a * 1000}')" "$small" "$(awk -v z="$z" 'BEGIN {print z * 1000}')" "$big" \
        "$(awk -v a="$a" -v z="$z" 'BEGIN {print z / a}')" \
        "$(check stats "$(awk -v a="$a" -v z="$z" 'BEGIN {print z / a}')" 1.3)" "$big" \
        "$(check stats "$(awk -v z="$z" 'BEGIN {print z * 1000}')" 100)"

    # explain-claim on a full scan: no claim index, a 1 s statement timeout.
    # It must finish soon after the timeout, and when the timeout stopped
    # its measured run, say how many rows it examined at least.
    # Both of init's indexes go: the status index serves the claim too.
    for index in jobs_claim_idx jobs_status_idx; do
        run_sql "$b" "$big" "DROP INDEX $index$([[ $b == mysql ]] && echo ' ON jobs' || true)"
    done
    read -r s kb < <(timed -d "$u" --statement-timeout 1s explain-claim)
    examined=$(grep -o -m1 -E 'rows_examined: (at least |~)?[0-9,]+' "$out" || true)
    verdict=$(check explain "$s" 6)
    if grep -q 'statement timeout stopped' "$out" && [[ $examined != *"at least "* ]]; then
        verdict="MISSED (stopped, but no lower bound)"
        echo explain >>"$missed"
    fi
    printf 'explain-claim without the claim index (a full scan), 1 s statement timeout: %.2f s (<= 6 s), %s KB, "%s": %s\n' \
        "$s" "$kb" "${examined:-no rows-examined figure}" "$verdict"

    if ((enqueue_check)); then
        jsonl="$bench_dir/$prefix.jsonl"
        [[ -s $jsonl ]] || awk -v n="$big" 'BEGIN { for (i = 1; i <= n; i++) printf "{\"payload\":{\"n\":%d},\"queue\":\"default\"}\n", i }' >"$jsonl"
        run_sql "$b" "$big" "DROP TABLE jobs"
        "$qctl" -q -d "$u" init >/dev/null
        # One COPY / LOAD DATA of every line: longer than the default
        # 30 s statement timeout here, which would cancel it.
        read -r s kb < <(timed -q -d "$u" --statement-timeout 1h enqueue --from-file "$jsonl")
        printf 'enqueue --from-file of %s lines: %.1f s, peak %s KB (< 50 MB): %s\n' "$big" "$s" "$kb" "$(check mem "$kb" 51200)"
    fi
    for n in "${sizes[@]}"; do
        case $b in
            sqlite) rm -f "$bench_dir/$prefix-$n.db"{,-wal,-shm} ;;
            postgres) psql_ postgres -c "DROP DATABASE ${prefix}_$n WITH (FORCE)" ;;
            mysql) "${mariadb[@]}" -e "DROP DATABASE ${prefix}_$n" ;;
        esac
    done
done
rm -f "$out" "$out.mem" "$out.err"
failed_targets=0
[[ -s $missed ]] && failed_targets=1
rm -f "$missed"
exit $failed_targets
