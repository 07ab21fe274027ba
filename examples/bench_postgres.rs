//! Benchmarks qctl's PostgreSQL backend against two targets of the
//! performance issue (bulk enqueue against `psql \copy` and concurrent
//! claimers, `qctl bench`, live in `scripts/bench-postgres.sh` because they
//! time whole programs):
//!
//! 1. Claim latency does not grow with history: the median
//!    [`Backend::claim`] latency with 1,000,000 finished jobs in the table is
//!    within 1.5x of the median with none, with the indexes `init` creates.
//!    The same ratio with only a single-column `status` index, and with no
//!    index but the primary key, is shown for contrast.
//! 2. `stats` on a 2,000,000-row table that is 99% finished takes under
//!    100 ms after `ANALYZE`, both as [`Backend::stats`] and as a whole
//!    `qctl stats` process; `--exact` is shown for contrast.
//!
//! The machine this runs on is assumed to be small, shared and noisy, so no
//! figure stands alone: the variants of each measurement run interleaved in
//! rounds, in a rotating order, and the verdicts are on medians and on
//! ratios taken within this one run.
//!
//! Every variant lives in a scratch database of its own, named
//! `qctl_bench_<pid>_...`, created on the server and dropped at the end (also
//! on an error). Run it through `bash scripts/bench-postgres.sh`, or directly:
//!
//! ```text
//! cargo build --release --bins --example bench_postgres
//! target/release/examples/bench_postgres [--quick] [--server CONNINFO] [--qctl PATH] [--keep]
//! ```
//!
//! `--server` is a libpq keyword string without `dbname` (default
//! `host=127.0.0.1 port=5432 user=postgres`); the role needs CREATEDB.
//! `--keep` leaves the databases behind for a closer look (`qctl -v stats`,
//! `explain-claim`); they take about 1.5 GB.
//!
//! It exits 1 when a target is missed, 2 on an error.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail, ensure};
use postgres::{Client, GenericClient};
use qctl::backend::pg_connect::{self, ConnInfo};
use qctl::backend::{self, Access, Backend, ClaimRequest, ConnectOptions, StaleRule, StatsRequest};
use qctl::layout::Layout;
use qctl::target::Target;

/// Claim latency may grow by at most this factor with 1M finished jobs.
const CLAIM_RATIO_TARGET: f64 = 1.5;
/// `stats` on the 2M-row table must take less than this.
const STATS_TARGET: Duration = Duration::from_millis(100);
/// Seconds in the 30 days the finished history is spread over.
const MONTH: i64 = 30 * 86_400;
const DEFAULT_SERVER: &str = "host=127.0.0.1 port=5432 user=postgres";

/// How big the run is; `--quick` shrinks it to check the harness itself.
struct Sizes {
    /// Finished jobs in the "with history" claim variants.
    history: i64,
    /// Ready jobs in queue 'default' when the claims start.
    backlog: i64,
    rounds: usize,
    /// Claims per round for an indexed variant.
    claims_per_round: usize,
    /// Claims per round without a usable index: each one reads the whole
    /// table, so fewer keep the run short while still giving a median.
    unindexed_claims_per_round: usize,
    /// Untimed claims per variant first, so connection warm-up, catalog
    /// caches and a cold buffer cache are not part of the figures.
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
    /// rows by the planner's estimate), small enough to finish in seconds.
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
    server: String,
    keep: bool,
}

fn main() -> ExitCode {
    match run() {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(err) => {
            eprintln!("bench_postgres: error: {err:#}");
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
    let mut server = Server::new(&options.server, options.keep)?;
    let version: String = server.admin.query_one("SHOW server_version", &[])?.get(0);
    let settings: Vec<String> = server
        .admin
        .query(
            "SELECT name || '=' || current_setting(name) FROM pg_settings WHERE name IN \
             ('shared_buffers', 'synchronous_commit', 'autovacuum', 'jit') ORDER BY name",
            &[],
        )?
        .iter()
        .map(|r| r.get(0))
        .collect();
    println!(
        "qctl PostgreSQL benchmark: server {version} ({}), {} CPUs, databases {}*",
        settings.join(", "),
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        server.prefix
    );
    let claims_ok = bench_claims(&mut server, &options.sizes)?;
    let stats_ok = bench_stats(&mut server, &options.sizes, &options.qctl)?;
    if options.keep {
        println!("\nkept the databases: {}", server.created.join(", "));
    }
    Ok(claims_ok && stats_ok)
}

fn parse_args() -> Result<Options> {
    let mut sizes = Sizes::FULL;
    // The qctl binary sits next to the examples directory in a cargo
    // target dir: target/release/examples/bench_postgres -> target/release/qctl.
    let mut qctl = std::env::current_exe()?
        .parent()
        .and_then(Path::parent)
        .map(|release| release.join("qctl"))
        .unwrap_or_else(|| PathBuf::from("qctl"));
    let mut server = DEFAULT_SERVER.to_string();
    let mut keep = false;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--quick" => sizes = Sizes::QUICK,
            "--qctl" => qctl = args.next().context("--qctl needs a path")?.into(),
            "--server" => server = args.next().context("--server needs a conninfo")?,
            "--keep" => keep = true,
            "-h" | "--help" => {
                println!(
                    "usage: bench_postgres [--quick] [--server CONNINFO] [--qctl PATH] [--keep]"
                );
                std::process::exit(0);
            }
            other => bail!("unknown argument {other:?}; try --help"),
        }
    }
    ensure!(
        !server.contains("dbname") && !server.contains("://"),
        "--server takes a keyword string without dbname, e.g. {DEFAULT_SERVER:?}"
    );
    Ok(Options {
        sizes,
        qctl,
        server,
        keep,
    })
}

// ---------------------------------------------------------------------------
// Scratch databases

/// The server, and the scratch databases this run made on it: all dropped
/// when it goes out of scope, whatever happened (unless `--keep`).
struct Server {
    conninfo: String,
    /// A connection to the `postgres` database, to create and drop others.
    admin: Client,
    prefix: String,
    created: Vec<String>,
    keep: bool,
    /// `CREATE DATABASE ... STRATEGY FILE_COPY` exists from PostgreSQL 15.
    file_copy: bool,
}

impl Server {
    fn new(conninfo: &str, keep: bool) -> Result<Server> {
        let admin = connect(&format!("{conninfo} dbname=postgres"))
            .context("cannot connect to the server's postgres database")?;
        let mut server = Server {
            conninfo: conninfo.to_string(),
            admin,
            // The pid keeps two runs on one server apart.
            prefix: format!("qctl_bench_{}_", std::process::id()),
            created: Vec::new(),
            keep,
            file_copy: false,
        };
        let version: i32 = server
            .admin
            .query_one("SELECT current_setting('server_version_num')::int", &[])?
            .get(0);
        server.file_copy = version >= 150_000;
        Ok(server)
    }

    /// The conninfo of one scratch database, for qctl (`-d`) or a client.
    fn url(&self, name: &str) -> String {
        format!("{} dbname={}{name}", self.conninfo, self.prefix)
    }

    /// Creates an empty scratch database, or a copy of `template`.
    fn create(&mut self, name: &str, template: Option<&str>) -> Result<()> {
        let full = format!("{}{name}", self.prefix);
        let sql = match template {
            // FILE_COPY copies the files after a checkpoint instead of
            // writing every page to the WAL: seconds, not minutes, for 1M rows.
            Some(t) if self.file_copy => {
                format!(
                    "CREATE DATABASE {full} TEMPLATE {}{t} STRATEGY FILE_COPY",
                    self.prefix
                )
            }
            Some(t) => format!("CREATE DATABASE {full} TEMPLATE {}{t}", self.prefix),
            None => format!("CREATE DATABASE {full}"),
        };
        self.admin
            .batch_execute(&sql)
            .with_context(|| format!("cannot create database {full}"))?;
        self.created.push(full);
        Ok(())
    }

    fn drop_database(&mut self, name: &str) -> Result<()> {
        let full = format!("{}{name}", self.prefix);
        self.admin
            .batch_execute(&format!("DROP DATABASE IF EXISTS {full}"))
            .with_context(|| format!("cannot drop database {full}"))?;
        self.created.retain(|c| *c != full);
        Ok(())
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if self.keep {
            return;
        }
        for name in &self.created {
            // FORCE ends sessions still connected (a failed run's backends).
            let sql = format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)");
            if let Err(err) = self.admin.batch_execute(&sql) {
                eprintln!("bench_postgres: cannot drop database {name}: {err}");
            }
        }
    }
}

fn connect(conninfo: &str) -> Result<Client> {
    pg_connect::connect(&ConnInfo::parse(conninfo)?, Duration::from_secs(10))
}

fn open(url: &str, access: Access) -> Result<Box<dyn Backend>> {
    let layout = Layout::preset("default")?;
    backend::open(&Target::parse(url)?, &layout, &ConnectOptions::new(access))
        .with_context(|| format!("cannot open {url}"))
}

// ---------------------------------------------------------------------------
// Building tables

/// Which indexes a claim variant's table has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Indexes {
    /// What `qctl init` creates: the partial claim index and the status index.
    Init,
    /// `CREATE INDEX jobs_status ON jobs (status)`, as many queues start.
    StatusOnly,
    /// The primary key only.
    None,
}

impl Indexes {
    fn label(self) -> &'static str {
        match self {
            Indexes::Init => "init indexes",
            Indexes::StatusOnly => "status index only",
            Indexes::None => "primary key only",
        }
    }

    fn db_name(self) -> &'static str {
        match self {
            Indexes::Init => "init",
            Indexes::StatusOnly => "status",
            Indexes::None => "pkey",
        }
    }
}

/// Creates the table exactly as `qctl init` does (its own DDL, from
/// `Backend::init_statements`) but without its indexes: rows go in first
/// and indexes come after, which is both faster and what `qctl init` on an
/// existing queue table does.
fn create_table(url: &str, client: &mut Client) -> Result<()> {
    let backend = open(url, Access::Create)?;
    for statement in backend.init_statements() {
        if statement.starts_with("CREATE TABLE") {
            client.batch_execute(&statement)?;
        }
    }
    Ok(())
}

/// Adds a variant's indexes, then ANALYZE, as autovacuum would do after a
/// load this big (autovacuum may be off on a test server; it is here).
fn add_indexes(url: &str, indexes: Indexes) -> Result<()> {
    match indexes {
        // On an existing table init builds CONCURRENTLY, as in production.
        Indexes::Init => open(url, Access::Create)?.init()?,
        Indexes::StatusOnly => {
            connect(url)?.batch_execute("CREATE INDEX jobs_status ON jobs (status)")?
        }
        Indexes::None => {}
    }
    connect(url)?.batch_execute("ANALYZE jobs")?;
    Ok(())
}

/// Runs one `INSERT ... SELECT` over `i` in 1..=count; `select` may use
/// `i`, `{n}` (the count) and `{now}` (Unix seconds), spliced in as
/// integers, and `ts(x)` for a timestamptz from Unix seconds.
fn fill(
    client: &mut impl GenericClient,
    count: i64,
    now: i64,
    columns: &str,
    select: &str,
) -> Result<()> {
    if count == 0 {
        return Ok(());
    }
    let select = select
        .replace("{n}", &count.to_string())
        .replace("{now}", &now.to_string())
        .replace("ts(", "to_timestamp(");
    let sql = format!(
        "INSERT INTO jobs ({columns}) SELECT {select} FROM generate_series(1, {count}::bigint) i"
    );
    client
        .batch_execute(&sql)
        .with_context(|| format!("cannot insert {count} rows"))
}

/// Finished jobs spread over the 30 days before now, in three queues, with
/// the lowest ids: history is older than anything still in flight.
fn fill_finished(client: &mut impl GenericClient, count: i64, now: i64) -> Result<()> {
    let t = format!("({{now}} - {MONTH} + i * {MONTH} / {{n}})");
    fill(
        client,
        count,
        now,
        "queue, status, payload, attempts, run_at, locked_at, locked_by, created_at, updated_at",
        &format!(
            "CASE i % 10 WHEN 0 THEN 'reports' WHEN 1 THEN 'emails' WHEN 2 THEN 'emails' \
             ELSE 'default' END, 'done', jsonb_build_object('order_id', i, 'kind', 'invoice'), 1, \
             ts({t}), ts({t} + 1), 'worker-' || (i % 8), ts({t}), ts({t} + 2 + i % 30)"
        ),
    )
}

/// Ready jobs in `queue` that arrived over the last hour (all due).
fn fill_ready(client: &mut impl GenericClient, count: i64, now: i64, queue: &str) -> Result<()> {
    let t = "({now} - 3601 + i * 3600 / {n})";
    fill(
        client,
        count,
        now,
        "queue, status, payload, run_at, created_at, updated_at",
        &format!(
            "'{queue}', 'pending', jsonb_build_object('order_id', 5000000 + i, 'kind', 'invoice'), \
             ts({t}), ts({t}), ts({t})"
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

fn bench_claims(server: &mut Server, sizes: &Sizes) -> Result<bool> {
    println!(
        "\n== 1. claim latency: Backend::claim on queue 'default', {} ready jobs at the start ==",
        thousands(sizes.backlog)
    );
    let now = chrono::Utc::now().timestamp();
    // One base database per history size, copied per index variant, so the
    // variants differ in their indexes only.
    let histories = [0, sizes.history];
    for history in histories {
        let started = Instant::now();
        let base = format!("base_{history}");
        server.create(&base, None)?;
        let url = server.url(&base);
        let mut client = connect(&url)?;
        create_table(&url, &mut client)?;
        let mut tx = client.transaction()?;
        fill_finished(&mut tx, history, now)?;
        fill_ready(&mut tx, sizes.backlog, now, "default")?;
        tx.commit()?;
        println!(
            "built {} finished + {} ready jobs in {:.1}s",
            thousands(history),
            thousands(sizes.backlog),
            started.elapsed().as_secs_f64()
        );
    }
    let started = Instant::now();
    let mut variants = Vec::new();
    for indexes in [Indexes::Init, Indexes::StatusOnly, Indexes::None] {
        for history in histories {
            let name = format!("claim_{}_{history}", indexes.db_name());
            server.create(&name, Some(&format!("base_{history}")))?;
            let url = server.url(&name);
            add_indexes(&url, indexes)?;
            let per_round = match indexes {
                Indexes::None => sizes.unindexed_claims_per_round,
                _ => sizes.claims_per_round,
            };
            variants.push(ClaimVariant {
                indexes,
                history,
                per_round,
                backend: open(&url, Access::Write)?,
                samples: Vec::new(),
            });
        }
    }
    for history in histories {
        server.drop_database(&format!("base_{history}"))?;
    }
    println!(
        "copied into {} databases, indexed and analyzed in {:.1}s",
        variants.len(),
        started.elapsed().as_secs_f64()
    );
    print_claim_plans(server, &variants)?;

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
    println!("ratio of medians against init indexes, same history:");
    for indexes in [Indexes::StatusOnly, Indexes::None] {
        for history in histories {
            let ratio = median_of(indexes, history) / median_of(Indexes::Init, history);
            println!(
                "  {:<20} {ratio:>7.2}x  with {} finished",
                indexes.label(),
                thousands(history)
            );
        }
    }
    // The backends hold connections to the databases the guard drops.
    drop(variants);
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

/// The plan PostgreSQL picks for the claim's inner SELECT in each variant,
/// one line each, so the latencies below can be read against it. The SQL
/// is the shape qctl's claim runs (`qctl -v claim` shows the real text).
fn print_claim_plans(server: &Server, variants: &[ClaimVariant]) -> Result<()> {
    println!("\nplan of the claim's inner SELECT (EXPLAIN, no ANALYZE):");
    let sql = "EXPLAIN (FORMAT JSON) SELECT id FROM jobs WHERE status = 'pending' \
               AND queue = 'default' AND run_at <= now() ORDER BY run_at, id LIMIT 1 \
               FOR UPDATE SKIP LOCKED";
    for v in variants {
        let name = format!("claim_{}_{}", v.indexes.db_name(), v.history);
        let mut client = connect(&server.url(&name))?;
        let plan: serde_json::Value = client.query_one(sql, &[])?.get(0);
        let mut nodes = Vec::new();
        let mut node = &plan[0]["Plan"];
        while node.is_object() {
            let mut text = node["Node Type"].as_str().unwrap_or("?").to_string();
            if let Some(index) = node["Index Name"].as_str() {
                text.push_str(&format!(" using {index}"));
            }
            nodes.push(text);
            node = &node["Plans"][0];
        }
        println!(
            "  {:<20} {:>10}  {}",
            v.indexes.label(),
            thousands(v.history),
            nodes.join(" > ")
        );
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// 2. stats on a big, mostly finished table

fn bench_stats(server: &mut Server, sizes: &Sizes, qctl: &Path) -> Result<bool> {
    let rows = sizes.stats_rows();
    println!(
        "\n== 2. stats: {} rows, {} finished, init indexes, after ANALYZE ==",
        thousands(rows),
        thousands(sizes.stats_finished)
    );
    let started = Instant::now();
    server.create("stats", None)?;
    let url = server.url("stats");
    build_stats_table(&url, sizes)?;
    println!(
        "built {} ready, {} scheduled, {} running ({} of them stale), {} failed in {:.1}s",
        thousands(sizes.stats_ready),
        thousands(sizes.stats_scheduled),
        thousands(sizes.stats_running + sizes.stats_stale),
        thousands(sizes.stats_stale),
        thousands(sizes.stats_failed),
        started.elapsed().as_secs_f64()
    );
    let mut backend = open(&url, Access::Read)?;
    let request = |exact| StatsRequest {
        exact,
        stale: Some(StaleRule::Lease),
    };

    // Sanity: the estimate is worth timing only if it is taken and close.
    let estimated = backend.stats(&request(false))?;
    let exact = backend.stats(&request(true))?;
    ensure!(
        exact.total.done == sizes.stats_finished,
        "exact done count {} != {} built",
        exact.total.done,
        sizes.stats_finished
    );
    ensure!(
        estimated.total.estimated.contains(&"done"),
        "stats counted finished jobs exactly: the table looks unanalyzed or small"
    );
    println!(
        "done: estimated {} (estimated fields: {:?}), exact {} ({:+.2}%)",
        thousands(estimated.total.done),
        estimated.total.estimated,
        thousands(exact.total.done),
        (estimated.total.done - exact.total.done) as f64 * 100.0 / exact.total.done as f64
    );
    for (field, got, want) in [
        ("pending", estimated.total.pending, exact.total.pending),
        ("running", estimated.total.running, exact.total.running),
        ("failed", estimated.total.failed, exact.total.failed),
        (
            "stale",
            estimated.total.stale.unwrap_or(-1),
            sizes.stats_stale,
        ),
    ] {
        ensure!(got == want, "{field}: {got} without --exact, {want} exact");
    }

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
    // One warm-up each: the first run pays for buffer cache misses.
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
    drop(variants);
    drop(backend);
    print_breakdown(qctl, &url)?;
    Ok(ok)
}

/// Where one `qctl stats` run spends its time, from its own `-v` log, so
/// the breakdown follows whatever SQL qctl runs today.
fn print_breakdown(qctl: &Path, url: &str) -> Result<()> {
    let started = Instant::now();
    let output = Command::new(qctl)
        .args(["-v", "-d", url, "stats"])
        .stdout(Stdio::null())
        .output()
        .with_context(|| format!("cannot run {}", qctl.display()))?;
    let took = started.elapsed();
    ensure!(output.status.success(), "qctl -v stats failed");
    println!(
        "\nwhere one `qctl -v stats` run ({} in all) spends its time:",
        ms(took)
    );
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

/// 99% finished; the rest pending ready, pending scheduled, running (some
/// with expired leases) and failed, newest last as in a live queue. Then
/// `init`'s indexes (built CONCURRENTLY, as on an existing table) and
/// ANALYZE, which is what lets qctl estimate instead of count.
fn build_stats_table(url: &str, sizes: &Sizes) -> Result<()> {
    let now = chrono::Utc::now().timestamp();
    let mut client = connect(url)?;
    create_table(url, &mut client)?;
    let mut tx = client.transaction()?;
    fill_finished(&mut tx, sizes.stats_finished, now)?;
    fill(
        &mut tx,
        sizes.stats_failed,
        now,
        "queue, status, payload, attempts, run_at, locked_at, locked_by, created_at, updated_at, \
         last_error",
        "'emails', 'failed', jsonb_build_object('to', 'user' || i || '@example.com'), 3, \
         ts({now} - 86400 + i), ts({now} - 86400 + i + 60), 'worker-' || (i % 8), \
         ts({now} - 86400 + i), ts({now} - 86400 + i + 70), 'SMTP 550: mailbox unavailable'",
    )?;
    // Healthy workers hold fresh leases; the stale ones expired up to an
    // hour ago.
    for (count, until) in [
        (sizes.stats_running, "({now} + 300 - i % 60)"),
        (sizes.stats_stale, "({now} - 60 - i * 3600 / {n})"),
    ] {
        fill(
            &mut tx,
            count,
            now,
            "queue, status, payload, attempts, run_at, locked_at, locked_until, locked_by, \
             created_at, updated_at",
            &format!(
                "CASE WHEN i % 3 = 0 THEN 'emails' ELSE 'default' END, 'running', \
                 jsonb_build_object('order_id', 7000000 + i), 1, ts({{now}} - 600), \
                 ts({until} - 300), ts({until}), 'worker-' || (i % 16), ts({{now}} - 600), \
                 ts({until} - 300)"
            ),
        )?;
    }
    let emails = sizes.stats_ready / 5;
    fill_ready(&mut tx, sizes.stats_ready - emails, now, "default")?;
    fill_ready(&mut tx, emails, now, "emails")?;
    fill(
        &mut tx,
        sizes.stats_scheduled,
        now,
        "queue, status, payload, run_at, created_at, updated_at",
        "'reports', 'pending', jsonb_build_object('report', 'daily', 'n', i), \
         ts({now} + 60 + i * 30), ts({now} - 60), ts({now} - 60)",
    )?;
    tx.commit()?;
    drop(client);
    add_indexes(url, Indexes::Init)
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
