#!/usr/bin/env bash
# How qctl's commands grow on the presets' own tables (PostgreSQL): each
# system's schema as the system itself created it and its rows as it
# wrote them (tests/fixtures/<system>/schema.sql and rows.sql), the
# finished row copied until the table holds 1,000,000 and 10,000,000
# rows, the two tables side by side. Commands, each a whole `qctl
# --layout <system>` process:
#
#   stats                 target: <= 1.3x from 1M to 10M, < 200 ms at 10M
#   reap --dry-run        target: <= 1.3x
#   doctor                target: <= 1.3x
#   explain-claim         target: <= 1.3x
#
# Peak resident memory of each at 10M rows from /usr/bin/time (< 50 MB).
#
# Usage: bash scripts/bench-scale-presets.sh [SYSTEM...]
#   SYSTEM             river oban pg-boss solid_queue quartz (default: all five)
#   SIZES              table sizes (default "1000000 10000000")
#   QCTL               a qctl binary to measure (default: build target/release/qctl)
#   ROUNDS             rounds per command (default 5)
#   QCTL_BENCH_SERVER  libpq keyword string without dbname
#                      (default: host=127.0.0.1 port=5432 user=postgres)
#
# Exit status: 0 every target met, 1 a target missed, 2 an error.

set -euo pipefail
export LC_ALL=C
cd "$(dirname "$0")/.."

systems=("$@")
((${#systems[@]})) || systems=(river oban pg-boss solid_queue quartz)
read -r -a sizes <<<"${SIZES:-1000000 10000000}"
rounds=${ROUNDS:-5}
pg=${QCTL_BENCH_SERVER:-host=127.0.0.1 port=5432 user=postgres}
target_dir=${CARGO_TARGET_DIR:-target}
[[ -x /usr/bin/time ]] || { echo "bench-scale-presets: GNU time is needed" >&2; exit 2; }
if [[ -n ${QCTL:-} ]]; then
    qctl=$(realpath "$QCTL")
else
    cargo build --release --quiet
    qctl="$PWD/$target_dir/release/qctl"
fi
prefix="qctl_scale_presets_$$"
psql_() { PGOPTIONS="-c client_min_messages=warning" psql -X -q -v ON_ERROR_STOP=1 "$pg dbname=$1" "${@:2}"; }
cleanup() {
    for s in "${systems[@]}"; do
        for n in "${sizes[@]}"; do
            psql_ postgres -c "DROP DATABASE IF EXISTS ${prefix}_${s//-/_}_$n WITH (FORCE)" || true
        done
    done
}
trap cleanup EXIT

# The table holding the jobs, the filter of the finished row to copy, and
# a column each copy must make unique (as COLUMN=EXPRESSION, {n} the
# copy's number), separated by ';'. A Quartz job is a trigger: its finished
# ones are COMPLETE triggers, keyed by name. A Solid Queue job's finished
# row has no execution rows beside it.
table_of() {
    case $1 in
        river) echo "river_job;state = 'completed';" ;;
        oban) echo "oban_jobs;state = 'completed';" ;;
        pg-boss) echo "pgboss.job;state = 'completed';" ;;
        solid_queue) echo "solid_queue_jobs;finished_at IS NOT NULL;active_job_id=gen_random_uuid()::text" ;;
        quartz) echo "qrtz_triggers;trigger_state = 'COMPLETE';trigger_name=trigger_name || '-' || {n}" ;;
        *) echo "bench-scale-presets: no table known for $1" >&2; exit 2 ;;
    esac
}

build() { # system n
    local s=$1 n=$2 db="${prefix}_${1//-/_}_$2" table filter unique cols picks rows have
    IFS=';' read -r table filter unique <<<"$(table_of "$s")"
    psql_ postgres -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db"
    psql_ "$db" -f "tests/fixtures/$s/schema.sql" >/dev/null
    psql_ "$db" -f "tests/fixtures/$s/rows.sql" >/dev/null
    # Every column but the id and generated ones, copied from the finished row.
    cols=$(psql_ "$db" -Atc "SELECT string_agg(quote_ident(a.attname), ', ' ORDER BY a.attnum)
        FROM pg_attribute a WHERE a.attrelid = '$table'::regclass AND a.attnum > 0 AND NOT a.attisdropped
        AND a.attgenerated = '' AND a.attidentity = '' AND a.attname <> 'id'")
    have=$(psql_ "$db" -Atc "SELECT count(*) FROM $table")
    while ((have < n)); do
        rows=$((n - have < 2000000 ? n - have : 2000000))
        picks=$cols
        if [[ -n $unique ]]; then
            picks=$(sed -E "s/(^|, )${unique%%=*}(,|$)/\1${unique#*=} AS ${unique%%=*}\2/" <<<"$cols")
        fi
        psql_ "$db" -c "INSERT INTO $table ($cols) SELECT ${picks//\{n\}/(g.n + $have)} FROM (SELECT * FROM $table WHERE $filter LIMIT 1) f
            CROSS JOIN generate_series(1, $rows) g(n)" >/dev/null
        have=$((have + rows))
    done
    psql_ "$db" -c "VACUUM ANALYZE" >/dev/null
    psql_ "$db" -c "CHECKPOINT" >/dev/null
}

median() { sort -g | awk '{v[NR]=$1} END {print (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2}'; }
# Verdicts are printed from command substitutions (subshells): a missed
# target is recorded in a file, which outlives them.
missed=$(mktemp)
check() { if awk -v v="$1" -v l="$2" 'BEGIN {exit !(v <= l)}'; then echo met; else echo "$*" >>"$missed"; echo MISSED; fi; }
out=$(mktemp)
timed() {
    local started=$EPOCHREALTIME rc=0
    /usr/bin/time -f "%M" -o "$out.mem" "$qctl" "$@" >"$out" 2>"$out.err" || rc=$?
    local ended=$EPOCHREALTIME
    if ((rc > 1)); then echo "qctl $* failed ($rc): $(cat "$out.err")" >&2; exit 2; fi
    echo "$(awk -v a="$started" -v b="$ended" 'BEGIN {print b - a}') $(tail -1 "$out.mem")"
}
declare -A times peaks
record() {
    times[$1]+="$2 "
    local p=${peaks[$1]:-0}
    ((${3%.*} > p)) && peaks[$1]=${3%.*}
    return 0
}
med() { tr ' ' '\n' <<<"${times[$1]}" | grep . | median; }

commands=(stats reap doctor explain)
for s in "${systems[@]}"; do
    echo
    echo "== $s: ${sizes[*]} rows (its schema and rows, the finished row copied), $rounds rounds =="
    for n in "${sizes[@]}"; do
        started=$EPOCHREALTIME
        build "$s" "$n"
        echo "built $n rows in $(awk -v a="$started" -v b="$EPOCHREALTIME" 'BEGIN {printf "%.0f", b - a}') s"
    done
    times=()
    peaks=()
    for ((r = 1; r <= rounds; r++)); do
        order=("${sizes[@]}")
        ((r % 2)) || order=($(printf '%s\n' "${sizes[@]}" | tac))
        for n in "${order[@]}"; do
            u="$pg dbname=${prefix}_${s//-/_}_$n"
            read -r t kb < <(timed -d "$u" --layout "$s" stats)
            record "stats $n" "$t" "$kb"
            read -r t kb < <(timed -d "$u" --layout "$s" reap --dry-run)
            record "reap $n" "$t" "$kb"
            read -r t kb < <(timed -d "$u" --layout "$s" doctor)
            record "doctor $n" "$t" "$kb"
            read -r t kb < <(timed -d "$u" --layout "$s" explain-claim)
            record "explain $n" "$t" "$kb"
        done
    done
    small=${sizes[0]}
    big=${sizes[-1]}
    printf '%-10s %12s %12s %8s %10s  %s\n' command "$small" "$big" ratio "peak KB" verdict
    for c in "${commands[@]}"; do
        a=$(med "$c $small")
        z=$(med "$c $big")
        ratio=$(awk -v a="$a" -v z="$z" 'BEGIN {printf "%.2f", z / a}')
        verdict="<= 1.3x: $(check "$ratio" 1.3)"
        [[ $c == stats ]] && verdict+="; < 200 ms at $big: $(check "$(awk -v z="$z" 'BEGIN {print z * 1000}')" 200)"
        verdict+="; peak < 50 MB: $(check "${peaks[$c $big]}" 51200)"
        printf '%-10s %9.1f ms %9.1f ms %7.2fx %10s  %s\n' "$c" \
            "$(awk -v a="$a" 'BEGIN {print a * 1000}')" "$(awk -v z="$z" 'BEGIN {print z * 1000}')" \
            "$ratio" "${peaks[$c $big]}" "$verdict"
    done
    echo "explain-claim at $big rows:"
    "$qctl" -d "$pg dbname=${prefix}_${s//-/_}_$big" --layout "$s" explain-claim 2>&1 | sed 's/^/  /' | head -20 || true
    for n in "${sizes[@]}"; do
        psql_ postgres -c "DROP DATABASE ${prefix}_${s//-/_}_$n WITH (FORCE)"
    done
done
rm -f "$out" "$out.mem" "$out.err"
failed_targets=0
[[ -s $missed ]] && failed_targets=1
rm -f "$missed"
exit $failed_targets
