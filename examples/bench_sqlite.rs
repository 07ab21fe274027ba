//! Benchmarks qctl's SQLite backend against two targets of the performance
//! issue (the third, bulk enqueue against the sqlite3 shell's `.import`,
//! lives in `scripts/bench-sqlite.sh` because it times two programs):
//!
//! 1. Claim latency does not grow with history: the median
//!    [`qctl::engine::claim`] latency with 1,000,000 finished jobs in the table is
//!    within 1.5x of the median with none, with the indexes `init` creates.
//!    The same ratio with only a single-column `status` index, and with no
//!    index at all, is shown for contrast.
//! 2. `stats` on a 2,000,000-row table that is 99% finished takes under
//!    100 ms, both as [`qctl::engine::stats`] and as a whole `qctl stats`
//!    process; `--exact` is shown for contrast.
//!
//! The machine this runs on is assumed to be small, shared and noisy, so no
//! figure stands alone: the variants of each measurement run interleaved in
//! rounds, in a rotating order, and the verdicts are on medians and on
//! ratios taken within this one run.
//!
//! Run it through `bash scripts/bench-sqlite.sh`, or directly:
//!
//! ```text
//! cargo build --release --bins --example bench_sqlite
//! target/release/examples/bench_sqlite [--quick] [--qctl PATH] [--dir DIR] [--keep]
//! ```
//!
//! `--keep` leaves the database files behind for a closer look (`qctl -v
//! stats`, `explain-claim`); they take about 600 MB.
//!
//! It exits 1 when a target is missed, 2 on an error.

#[path = "common/mod.rs"]
mod common;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, ensure};
use common::{ClaimVariant, Indexes, MONTH, Sizes, median, ms, thousands};
use qctl::backend::Target;
use qctl::db::{Access, Backend, ConnectOptions, SqlLog};
use qctl::layout::Layout;
use rusqlite::{Connection, params};

const USAGE: &str = "bench_sqlite [--quick] [--qctl PATH] [--dir DIR] [--keep]";

fn main() -> ExitCode {
    common::exit_code("bench_sqlite", run())
}

fn run() -> Result<bool> {
    // Where the temporary directory of database files goes.
    let mut dir: Option<PathBuf> = None;
    let options = common::parse_args(USAGE, |arg, args| {
        Ok(match arg {
            "--dir" => {
                dir = Some(args.next().context("--dir needs a path")?.into());
                true
            }
            _ => false,
        })
    })?;
    common::check_qctl(&options.qctl)?;
    let mut builder = tempfile::Builder::new();
    builder.prefix("qctl-bench-");
    // Dropped at the end of run, also on an error: no database is left behind.
    let dir = match &dir {
        Some(parent) => builder.tempdir_in(parent),
        None => builder.tempdir(),
    }
    .context("cannot create a temporary directory")?;
    println!(
        "qctl SQLite benchmark: SQLite {} (bundled), {} CPUs, files in {}",
        rusqlite::version(),
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        dir.path().display()
    );
    let claims_ok = bench_claims(dir.path(), &options.sizes)?;
    let stats_ok = bench_stats(dir.path(), &options.sizes, &options.qctl)?;
    if options.keep {
        println!("\nkept the database files in {}", dir.keep().display());
    }
    Ok(claims_ok && stats_ok)
}

// ---------------------------------------------------------------------------
// Building databases

/// The labels in the report; the enum itself is shared.
impl Indexes {
    fn label(self) -> &'static str {
        match self {
            Indexes::Init => "init indexes",
            Indexes::StatusOnly => "status index only",
            Indexes::None => "no index",
        }
    }
}

fn layout() -> Result<Layout> {
    qctl::presets::own("default")
}

fn target(path: &Path) -> Result<Target> {
    Target::parse(&format!("sqlite:{}", path.display()))
}

fn open(path: &Path, access: Access) -> Result<Box<dyn Backend + Send>> {
    let options = ConnectOptions {
        access,
        busy_timeout: Duration::from_secs(5),
        // PostgreSQL-only settings, at the CLI's defaults; SQLite ignores them.
        statement_timeout: Duration::from_secs(30),
        connect_timeout: Duration::from_secs(10),
        index_timeout: Duration::from_secs(3600),
        sql_log: SqlLog::default(),
        auto: None,
    };
    target(path)?
        .open(&layout()?, &options)
        .with_context(|| format!("cannot open {}", path.display()))
}

/// Creates the table exactly as `qctl init` does, but without its indexes:
/// rows go in first and indexes are added after, which is both faster and
/// what `qctl init` on an existing queue table does.
fn create_table(path: &Path) -> Result<()> {
    let backend = open(path, Access::Create)?;
    let conn = Connection::open(path)?;
    for statement in backend.init_statements() {
        if statement.starts_with("PRAGMA") || statement.starts_with("CREATE TABLE") {
            conn.execute_batch(&statement)?;
        }
    }
    Ok(())
}

fn add_indexes(path: &Path, indexes: Indexes) -> Result<()> {
    match indexes {
        Indexes::Init => open(path, Access::Create)?.init(),
        Indexes::StatusOnly => {
            Connection::open(path)?.execute_batch("CREATE INDEX jobs_status ON jobs (status)")?;
            Ok(())
        }
        Indexes::None => Ok(()),
    }
}

/// Runs one `INSERT ... SELECT` over `n(i)` for i in 1..=count, with `?2`
/// bound to now; `select` may use `i`, `?1` (the count) and `?2`.
fn fill(conn: &Connection, count: i64, now: i64, columns: &str, select: &str) -> Result<()> {
    if count == 0 {
        return Ok(());
    }
    let sql = format!(
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?1) \
         INSERT INTO jobs ({columns}) SELECT {select} FROM n"
    );
    conn.execute(&sql, params![count, now])
        .with_context(|| format!("cannot insert {count} rows"))?;
    Ok(())
}

/// Finished jobs spread over the 30 days before now, in three queues, with
/// the lowest ids: history is older than anything still in flight.
fn fill_finished(conn: &Connection, count: i64, now: i64) -> Result<()> {
    let t = format!("?2 - {MONTH} + i * {MONTH} / ?1");
    fill(
        conn,
        count,
        now,
        "queue, status, payload, attempts, run_at, locked_at, locked_by, created_at, updated_at",
        &format!(
            "CASE i % 10 WHEN 0 THEN 'reports' WHEN 1 THEN 'emails' WHEN 2 THEN 'emails' \
             ELSE 'default' END, 'done', json_object('order_id', i, 'kind', 'invoice'), 1, \
             {t}, {t} + 1, 'worker-' || (i % 8), {t}, {t} + 2 + i % 30"
        ),
    )
}

/// Ready jobs in `queue` that arrived over the last hour (all due).
fn fill_ready(conn: &Connection, count: i64, now: i64, queue: &str) -> Result<()> {
    let t = "?2 - 3601 + i * 3600 / ?1";
    fill(
        conn,
        count,
        now,
        "queue, status, payload, run_at, created_at, updated_at",
        &format!(
            "'{queue}', 'pending', json_object('order_id', 5000000 + i, 'kind', 'invoice'), \
             {t}, {t}, {t}"
        ),
    )
}

// ---------------------------------------------------------------------------
// 1. Claim latency against history

fn bench_claims(dir: &Path, sizes: &Sizes) -> Result<bool> {
    common::bench_claims(sizes, |now| {
        // One base file per history size, copied per index variant, so the
        // variants differ in their indexes only.
        let mut bases = Vec::new();
        for history in [0, sizes.history] {
            let started = Instant::now();
            let base = dir.join(format!("claim-base-{history}.db"));
            create_table(&base)?;
            let mut conn = Connection::open(&base)?;
            let tx = conn.transaction()?;
            fill_finished(&tx, history, now)?;
            fill_ready(&tx, sizes.backlog, now, "default")?;
            tx.commit()?;
            // Fold the WAL into the file so a plain copy carries every row.
            conn.execute_batch("PRAGMA wal_checkpoint(TRUNCATE)")?;
            drop(conn);
            println!(
                "built {} finished + {} ready jobs in {:.1}s",
                thousands(history),
                thousands(sizes.backlog),
                started.elapsed().as_secs_f64()
            );
            bases.push((history, base));
        }
        let mut variants = Vec::new();
        for indexes in Indexes::ALL {
            for (history, base) in &bases {
                let path = dir.join(format!("claim-{indexes:?}-{history}.db"));
                std::fs::copy(base, &path)
                    .with_context(|| format!("cannot copy {}", base.display()))?;
                add_indexes(&path, indexes)?;
                let backend = open(&path, Access::Write)?;
                variants.push(ClaimVariant::new(indexes, *history, sizes, backend));
            }
        }
        for (_, base) in &bases {
            std::fs::remove_file(base)?;
        }
        Ok(variants)
    })
}

// ---------------------------------------------------------------------------
// 2. stats on a big, mostly finished table

fn bench_stats(dir: &Path, sizes: &Sizes, qctl: &Path) -> Result<bool> {
    let rows = sizes.stats_rows();
    println!(
        "\n== 2. stats: {} rows, {} finished, init indexes ==",
        thousands(rows),
        thousands(sizes.stats_finished)
    );
    let path = dir.join("stats.db");
    let started = Instant::now();
    build_stats_db(&path, sizes)?;
    common::print_stats_built(sizes, started);
    let url = format!("sqlite:{}", path.display());
    let mut backend = open(&path, Access::Read)?;
    let (estimated, exact) = common::estimate_and_count(&mut *backend, sizes)?;
    common::print_estimate(&estimated, &exact);
    let ok = common::time_stats(&mut *backend, sizes, qctl, &url)?;
    common::print_breakdown(qctl, &url, false)?;
    diagnose_rowid_span(&path, sizes.stats_rounds)?;
    Ok(ok)
}

/// Times the two ways to ask SQLite for a table's rowid span, side by
/// side: min() and max() in one SELECT defeat SQLite's min/max
/// optimisation (it only applies to a lone min or max) and scan the whole
/// table, while one scalar subquery each is two B-tree descents.
fn diagnose_rowid_span(path: &Path, runs: usize) -> Result<()> {
    let conn = Connection::open_with_flags(path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)?;
    let mut forms: [(&str, Vec<Duration>); 2] = [
        ("SELECT min(rowid), max(rowid) FROM jobs", Vec::new()),
        (
            "SELECT (SELECT min(rowid) FROM jobs), (SELECT max(rowid) FROM jobs)",
            Vec::new(),
        ),
    ];
    for round in 0..=runs {
        for k in 0..forms.len() {
            let (sql, samples) = &mut forms[(round + k) % 2];
            let started = Instant::now();
            let span: (i64, i64) = conn.query_row(sql, [], |row| Ok((row.get(0)?, row.get(1)?)))?;
            let took = started.elapsed();
            ensure!(span.0 <= span.1, "empty table");
            // Round 0 warms the page cache.
            if round > 0 {
                samples.push(took);
            }
        }
    }
    println!("\ndiagnosis, the rowid span behind the estimate ({runs} runs each, interleaved):");
    for (sql, samples) in &forms {
        println!("  {:>11}  {sql}", ms(median(samples)));
    }
    println!(
        "  ratio {:.0}x",
        median(&forms[0].1).as_secs_f64() / median(&forms[1].1).as_secs_f64()
    );
    Ok(())
}

/// 99% finished; the rest pending ready, pending scheduled, running (some
/// with expired leases) and failed, newest last as in a live queue.
fn build_stats_db(path: &Path, sizes: &Sizes) -> Result<()> {
    let now = chrono::Utc::now().timestamp();
    create_table(path)?;
    let mut conn = Connection::open(path)?;
    let tx = conn.transaction()?;
    fill_finished(&tx, sizes.stats_finished, now)?;
    fill(
        &tx,
        sizes.stats_failed,
        now,
        "queue, status, payload, attempts, run_at, locked_at, locked_by, created_at, updated_at, \
         last_error",
        "'emails', 'failed', json_object('to', 'user' || i || '@example.com'), 3, ?2 - 86400 + i, \
         ?2 - 86400 + i + 60, 'worker-' || (i % 8), ?2 - 86400 + i, ?2 - 86400 + i + 70, \
         'SMTP 550: mailbox unavailable'",
    )?;
    // Healthy workers hold fresh leases; the stale ones expired up to an
    // hour ago.
    for (count, until) in [
        (sizes.stats_running, "?2 + 300 - i % 60"),
        (sizes.stats_stale, "?2 - 60 - i * 3600 / ?1"),
    ] {
        fill(
            &tx,
            count,
            now,
            "queue, status, payload, attempts, run_at, locked_at, locked_until, locked_by, \
             created_at, updated_at",
            &format!(
                "CASE WHEN i % 3 = 0 THEN 'emails' ELSE 'default' END, 'running', \
                 json_object('order_id', 7000000 + i), 1, ?2 - 600, {until} - 300, {until}, \
                 'worker-' || (i % 16), ?2 - 600, {until} - 300"
            ),
        )?;
    }
    let emails = sizes.stats_ready / 5;
    fill_ready(&tx, sizes.stats_ready - emails, now, "default")?;
    fill_ready(&tx, emails, now, "emails")?;
    fill(
        &tx,
        sizes.stats_scheduled,
        now,
        "queue, status, payload, run_at, created_at, updated_at",
        "'reports', 'pending', json_object('report', 'daily', 'n', i), ?2 + 60 + i * 30, \
         ?2 - 60, ?2 - 60",
    )?;
    tx.commit()?;
    conn.execute_batch("PRAGMA wal_checkpoint(TRUNCATE)")?;
    drop(conn);
    add_indexes(path, Indexes::Init)
}
