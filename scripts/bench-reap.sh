#!/usr/bin/env bash
# qctl reap at outage scale, on SQLite, PostgreSQL and MySQL/MariaDB:
#
#   1. reap of 100,000 stale jobs among 1,000,000 rows: at most 1.5x one
#      set-based UPDATE of the same rows with the same writes (the floor),
#      the two alternating on fresh tables, the verdict on the median ratio
#   2. reap of 1,000,000 stale jobs: time, and peak memory under 50 MB
#   3. claim p99 while a 100,000-job reap runs: at most 2.5x the p99 of the
#      same claims with no reap running; beside each, two controls, each
#      running as long as the reap did: a CPU-bound statement that reads
#      no table (on PostgreSQL and MySQL/MariaDB; it holds a snapshot as a
#      reap batch does), and a thread outside the database spinning (what
#      one busy CPU alone costs the claims)
#
# All in examples/bench_reap.rs, which builds each table, runs the release
# qctl under /usr/bin/time (for its peak memory), audits every reap, and
# measures qctl's own claim from several connections at once. The machine
# is assumed shared and noisy: each figure is a median of runs, and every
# comparison pairs its two sides back to back.
#
# Usage: bash scripts/bench-reap.sh [--quick] [--backend sqlite|postgres|mysql]...
#                                   [--sections 123] [--reap-arg ARG]...
#                                   [--claimers N]
#   --reap-arg ARG      passed to every timed reap (e.g. --reap-arg --batch-size
#                       --reap-arg 250), to try a setting side by side
#   --claimers N        claiming connections in section 3 (default 4, which
#                       keep this machine's 2 CPUs busy; 1 leaves one free)
#   QCTL_BENCH_SERVER   libpq keyword string without dbname
#                       (default: host=127.0.0.1 port=5432 user=postgres)
#   QCTL_BENCH_MYSQL    MySQL/MariaDB URL without a database
#                       (default: mysql://root@127.0.0.1:3306)
#   BENCH_DIR           where the SQLite files go (default: $TMPDIR or /tmp)
#
# Exit status: 0 every target met, 1 a target missed, 2 an error.

set -euo pipefail
cd "$(dirname "$0")/.."

server=${QCTL_BENCH_SERVER:-host=127.0.0.1 port=5432 user=postgres}
mysql_server=${QCTL_BENCH_MYSQL:-mysql://root@127.0.0.1:3306}
bench_dir=${BENCH_DIR:-${TMPDIR:-/tmp}}
target_dir=${CARGO_TARGET_DIR:-target}

if [[ ! -x /usr/bin/time ]]; then
    echo "installing GNU time (for peak memory) with apt-get"
    sudo=""
    [[ $(id -u) -ne 0 ]] && sudo=sudo
    $sudo apt-get install -y time || { $sudo apt-get update && $sudo apt-get install -y time; }
fi

echo "== building (release) =="
cargo build --release --bins --example bench_reap

echo
echo "== machine =="
echo "$(nproc) CPUs, $(uname -sr)"
if commit=$(git rev-parse --short HEAD 2>/dev/null); then
    git diff --quiet HEAD 2>/dev/null || commit="$commit (with uncommitted changes)"
    echo "qctl at git $commit"
fi

exec "$target_dir/release/examples/bench_reap" --qctl "$target_dir/release/qctl" \
    --server "$server" --mysql-server "$mysql_server" --sqlite-dir "$bench_dir" "$@"
