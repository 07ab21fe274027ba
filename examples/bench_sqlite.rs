//! Benchmarks qctl's SQLite backend against two targets of the performance
//! issue (the third, bulk enqueue against the sqlite3 shell's `.import`,
//! lives in `scripts/bench-sqlite.sh` because it times two programs):
//!
//! 1. Claim latency does not grow with history: the median
//!    [`Backend::claim`] latency with 1,000,000 finished jobs in the table is
//!    within 1.5x of the median with none, with the indexes `init` creates.
//!    The same ratio with only a single-column `status` index, and with no
//!    index at all, is shown for contrast.
//! 2. `stats` on a 2,000,000-row table that is 99% finished takes under
//!    100 ms, both as [`Backend::stats`] and as a whole `qctl stats`
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

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail, ensure};
use qctl::backend::{
    self, Access, Backend, ClaimRequest, ConnectOptions, SqlLog, StaleRule, StatsRequest,
};
use qctl::layout::Layout;
use qctl::target::Target;
use rusqlite::{Connection, params};

/// Claim latency may grow by at most this factor with 1M finished jobs.
const CLAIM_RATIO_TARGET: f64 = 1.5;
/// `stats` on the 2M-row table must take less than this.
const STATS_TARGET: Duration = Duration::from_millis(100);
/// Seconds in the 30 days the finished history is spread over.
const MONTH: i64 = 30 * 86_400;

/// How big the run is; `--quick` shrinks it to check the harness itself.
struct Sizes {
    /// Finished jobs in the "with history" claim variants.
    history: i64,
    /// Ready jobs in queue 'default' when the claims start.
    backlog: i64,
    rounds: usize,
    /// Claims per round for an indexed variant.
    claims_per_round: usize,
    /// Claims per round without any index: each one scans the table, so
    /// fewer keep the run short while still giving a stable median.
    unindexed_claims_per_round: usize,
    /// Untimed claims per variant first, so statement preparation and a
    /// cold page cache are not part of the figures.
    warmup_claims: usize,
    stats_finished: i64,
    stats_ready: i64,
    stats_scheduled: i64,
    stats_running: i64,
    stats_stale: i64,
    stats_failed: i64,
    stats_rounds: usize,
}

impl Sizes {
    const FULL: Sizes = Sizes {
        history: 1_000_000,
        backlog: 10_000,
        rounds: 20,
        claims_per_round: 100,
        unindexed_claims_per_round: 5,
        warmup_claims: 20,
        stats_finished: 1_980_000,
        stats_ready: 12_000,
        stats_scheduled: 3_000,
        stats_running: 3_900,
        stats_stale: 100,
        stats_failed: 1_000,
        stats_rounds: 20,
    };

    /// Big enough that `stats` estimates (qctl counts exactly below 200,000
    /// rows), small enough to finish in seconds.
    const QUICK: Sizes = Sizes {
        history: 100_000,
        backlog: 2_000,
        rounds: 5,
        claims_per_round: 40,
        unindexed_claims_per_round: 5,
        warmup_claims: 5,
        stats_finished: 297_000,
        stats_ready: 1_800,
        stats_scheduled: 450,
        stats_running: 585,
        stats_stale: 15,
        stats_failed: 150,
        stats_rounds: 5,
    };

    fn stats_rows(&self) -> i64 {
        self.stats_finished
            + self.stats_ready
            + self.stats_scheduled
            + self.stats_running
            + self.stats_stale
            + self.stats_failed
    }
}

struct Options {
    sizes: Sizes,
    qctl: PathBuf,
    /// Where the temporary directory of database files goes.
    dir: Option<PathBuf>,
    keep: bool,
}

fn main() -> ExitCode {
    match run() {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(err) => {
            eprintln!("bench_sqlite: error: {err:#}");
            ExitCode::from(2)
        }
    }
}

fn run() -> Result<bool> {
    let options = parse_args()?;
    ensure!(
        options.qctl.is_file(),
        "no qctl binary at {}; build it with `cargo build --release --bins` or pass --qctl PATH",
        options.qctl.display()
    );
    let mut builder = tempfile::Builder::new();
    builder.prefix("qctl-bench-");
    // Dropped at the end of run, also on an error: no database is left behind.
    let dir = match &options.dir {
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

fn parse_args() -> Result<Options> {
    let mut sizes = Sizes::FULL;
    // The qctl binary sits next to the examples directory in a cargo
    // target dir: target/release/examples/bench_sqlite -> target/release/qctl.
    let mut qctl = std::env::current_exe()?
        .parent()
        .and_then(Path::parent)
        .map(|release| release.join("qctl"))
        .unwrap_or_else(|| PathBuf::from("qctl"));
    let mut dir = None;
    let mut keep = false;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--quick" => sizes = Sizes::QUICK,
            "--qctl" => qctl = args.next().context("--qctl needs a path")?.into(),
            "--dir" => dir = Some(args.next().context("--dir needs a path")?.into()),
            "--keep" => keep = true,
            "-h" | "--help" => {
                println!("usage: bench_sqlite [--quick] [--qctl PATH] [--dir DIR] [--keep]");
                std::process::exit(0);
            }
            other => bail!("unknown argument {other:?}; try --help"),
        }
    }
    Ok(Options {
        sizes,
        qctl,
        dir,
        keep,
    })
}

// ---------------------------------------------------------------------------
// Building databases

/// Which indexes a claim variant's table has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Indexes {
    /// What `qctl init` creates: the partial claim index and the status index.
    Init,
    /// `CREATE INDEX jobs_status ON jobs (status)`, as many queues start.
    StatusOnly,
    None,
}

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
    Layout::preset("default")
}

fn target(path: &Path) -> Result<Target> {
    Target::parse(&format!("sqlite:{}", path.display()))
}

fn open(path: &Path, access: Access) -> Result<Box<dyn Backend>> {
    let options = ConnectOptions {
        access,
        busy_timeout: Duration::from_secs(5),
        // PostgreSQL-only settings, at the CLI's defaults; SQLite ignores them.
        statement_timeout: Duration::from_secs(30),
        connect_timeout: Duration::from_secs(10),
        sql_log: SqlLog::default(),
    };
    backend::open(&target(path)?, &layout()?, &options)
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

struct ClaimVariant {
    indexes: Indexes,
    history: i64,
    per_round: usize,
    backend: Box<dyn Backend>,
    samples: Vec<Duration>,
}

fn bench_claims(dir: &Path, sizes: &Sizes) -> Result<bool> {
    println!(
        "\n== 1. claim latency: Backend::claim on queue 'default', {} ready jobs at the start ==",
        thousands(sizes.backlog)
    );
    let now = chrono::Utc::now().timestamp();
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
    for indexes in [Indexes::Init, Indexes::StatusOnly, Indexes::None] {
        for (history, base) in &bases {
            let path = dir.join(format!("claim-{indexes:?}-{history}.db"));
            std::fs::copy(base, &path)
                .with_context(|| format!("cannot copy {}", base.display()))?;
            add_indexes(&path, indexes)?;
            let per_round = match indexes {
                Indexes::None => sizes.unindexed_claims_per_round,
                _ => sizes.claims_per_round,
            };
            variants.push(ClaimVariant {
                indexes,
                history: *history,
                per_round,
                backend: open(&path, Access::Write)?,
                samples: Vec::new(),
            });
        }
    }
    for (_, base) in &bases {
        std::fs::remove_file(base)?;
    }
    let request = ClaimRequest {
        worker: "bench".into(),
        queue: Some("default".into()),
        lease: Some(Duration::from_secs(300)),
    };
    for variant in &mut variants {
        for _ in 0..sizes.warmup_claims.min(variant.per_round) {
            claim(variant, &request)?;
        }
    }
    let started = Instant::now();
    for round in 0..sizes.rounds {
        // Rotate who goes first, so no variant always follows the same one.
        let n = variants.len();
        for k in 0..n {
            let variant = &mut variants[(round + k) % n];
            for _ in 0..variant.per_round {
                let took = claim(variant, &request)?;
                variant.samples.push(took);
            }
        }
    }
    println!(
        "{} rounds, interleaved, in {:.1}s\n",
        sizes.rounds,
        started.elapsed().as_secs_f64()
    );
    println!(
        "{:<20} {:>10} {:>7} {:>11} {:>11}",
        "indexes", "finished", "claims", "median", "p90"
    );
    for v in &variants {
        println!(
            "{:<20} {:>10} {:>7} {:>11} {:>11}",
            v.indexes.label(),
            thousands(v.history),
            v.samples.len(),
            ms(median(&v.samples)),
            ms(percentile(&v.samples, 0.9))
        );
    }
    let median_of = |indexes: Indexes, history: i64| {
        variants
            .iter()
            .find(|v| v.indexes == indexes && v.history == history)
            .map(|v| median(&v.samples).as_secs_f64())
            .expect("every variant was built")
    };
    println!(
        "\nratio of medians, {} finished / none:",
        thousands(sizes.history)
    );
    let mut ok = true;
    for indexes in [Indexes::Init, Indexes::StatusOnly, Indexes::None] {
        let ratio = median_of(indexes, sizes.history) / median_of(indexes, 0);
        let verdict = if indexes == Indexes::Init {
            let pass = ratio <= CLAIM_RATIO_TARGET;
            ok &= pass;
            format!(
                "(target <= {CLAIM_RATIO_TARGET}x) {}",
                if pass { "PASS" } else { "FAIL" }
            )
        } else {
            "(contrast)".to_string()
        };
        println!("  {:<20} {ratio:>7.2}x  {verdict}", indexes.label());
    }
    // History is only half the story: a weaker index costs at every size.
    println!("ratio of medians against init indexes, same history:");
    for indexes in [Indexes::StatusOnly, Indexes::None] {
        for history in [0, sizes.history] {
            let ratio = median_of(indexes, history) / median_of(Indexes::Init, history);
            println!(
                "  {:<20} {ratio:>7.2}x  with {} finished",
                indexes.label(),
                thousands(history)
            );
        }
    }
    Ok(ok)
}

fn claim(variant: &mut ClaimVariant, request: &ClaimRequest) -> Result<Duration> {
    let started = Instant::now();
    let job = variant.backend.claim(request)?;
    let took = started.elapsed();
    // An empty queue would make a claim trivially fast: refuse the figure.
    ensure!(
        job.is_some(),
        "the backlog ran dry ({}, {} finished); raise the backlog",
        variant.indexes.label(),
        variant.history
    );
    Ok(took)
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
    println!(
        "built {} ready, {} scheduled, {} running ({} of them stale), {} failed in {:.1}s",
        thousands(sizes.stats_ready),
        thousands(sizes.stats_scheduled),
        thousands(sizes.stats_running + sizes.stats_stale),
        thousands(sizes.stats_stale),
        thousands(sizes.stats_failed),
        started.elapsed().as_secs_f64()
    );
    let url = format!("sqlite:{}", path.display());
    let mut backend = open(&path, Access::Read)?;
    let request = |exact| StatsRequest {
        exact,
        stale: Some(StaleRule::Lease),
    };

    // Sanity: the estimate is worth timing only if it is close.
    let estimated = backend.stats(&request(false))?;
    let exact = backend.stats(&request(true))?;
    ensure!(
        exact.total.done == sizes.stats_finished,
        "exact done count {} != {} built",
        exact.total.done,
        sizes.stats_finished
    );
    println!(
        "done: estimated {} (estimated fields: {:?}), exact {} ({:+.2}%)",
        thousands(estimated.total.done),
        estimated.total.estimated,
        thousands(exact.total.done),
        (estimated.total.done - exact.total.done) as f64 * 100.0 / exact.total.done as f64
    );

    type Run<'a> = Box<dyn FnMut() -> Result<()> + 'a>;
    let process = |extra: &'static [&'static str]| {
        let url = url.clone();
        move || -> Result<()> {
            let status = Command::new(qctl)
                .args(["-d", &url, "stats"])
                .args(extra)
                .stdout(Stdio::null())
                .status()
                .with_context(|| format!("cannot run {}", qctl.display()))?;
            ensure!(status.success(), "qctl stats exited with {status}");
            Ok(())
        }
    };
    let mut variants: Vec<(&str, bool, Run<'_>, Vec<Duration>)> = vec![
        (
            "Backend::stats",
            true,
            Box::new(|| backend.stats(&request(false)).map(drop)),
            Vec::new(),
        ),
        (
            "qctl stats (process)",
            true,
            Box::new(process(&[])),
            Vec::new(),
        ),
        (
            "qctl stats --exact",
            false,
            Box::new(process(&["--exact"])),
            Vec::new(),
        ),
    ];
    // One warm-up each: the first process run pays for page cache misses.
    for (_, _, run, _) in &mut variants {
        run()?;
    }
    for round in 0..sizes.stats_rounds {
        let n = variants.len();
        for k in 0..n {
            let (_, _, run, samples) = &mut variants[(round + k) % n];
            let started = Instant::now();
            run()?;
            samples.push(started.elapsed());
        }
    }
    println!(
        "\n{:<22} {:>5} {:>11} {:>11}  verdict (target < {} ms)",
        "variant",
        "runs",
        "median",
        "p90",
        STATS_TARGET.as_millis()
    );
    let mut ok = true;
    for (name, judged, _, samples) in &variants {
        let m = median(samples);
        let verdict = if *judged {
            let pass = m < STATS_TARGET;
            ok &= pass;
            if pass { "PASS" } else { "FAIL" }
        } else {
            "(contrast)"
        };
        println!(
            "{name:<22} {:>5} {:>11} {:>11}  {verdict}",
            samples.len(),
            ms(m),
            ms(percentile(samples, 0.9))
        );
    }
    print_breakdown(qctl, &url)?;
    diagnose_rowid_span(&path, sizes.stats_rounds)?;
    Ok(ok)
}

/// Where one `qctl stats` run spends its time, from its own `-v` log, so
/// the breakdown follows whatever SQL qctl runs today.
fn print_breakdown(qctl: &Path, url: &str) -> Result<()> {
    let output = Command::new(qctl)
        .args(["-v", "-d", url, "stats"])
        .stdout(Stdio::null())
        .output()
        .with_context(|| format!("cannot run {}", qctl.display()))?;
    ensure!(output.status.success(), "qctl -v stats failed");
    println!("\nwhere one `qctl -v stats` run spends its time:");
    for line in String::from_utf8_lossy(&output.stderr).lines() {
        // "qctl: sql (1.234 ms, 3 rows): SELECT ..."
        let Some(rest) = line.strip_prefix("qctl: sql (") else {
            continue;
        };
        let Some((time, sql)) = rest.split_once("): ") else {
            continue;
        };
        let time = time.split(',').next().unwrap_or(time);
        let sql: String = sql.chars().take(90).collect();
        println!("  {time:>11}  {sql}");
    }
    Ok(())
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

// ---------------------------------------------------------------------------
// Figures

fn median(samples: &[Duration]) -> Duration {
    percentile(samples, 0.5)
}

/// Nearest-rank percentile.
fn percentile(samples: &[Duration], p: f64) -> Duration {
    let mut sorted = samples.to_vec();
    sorted.sort_unstable();
    let rank = ((p * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len().max(1));
    sorted.get(rank - 1).copied().unwrap_or_default()
}

fn ms(d: Duration) -> String {
    let ms = d.as_secs_f64() * 1000.0;
    if ms < 10.0 {
        format!("{ms:.3} ms")
    } else {
        format!("{ms:.1} ms")
    }
}

fn thousands(n: i64) -> String {
    let digits = n.unsigned_abs().to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    if n < 0 { format!("-{out}") } else { out }
}
