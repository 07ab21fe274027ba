//! Benchmarks qctl's PostgreSQL backend against two targets of the
//! performance issue (bulk enqueue against `psql \copy` and concurrent
//! claimers, `qctl bench`, live in `scripts/bench-postgres.sh` because they
//! time whole programs):
//!
//! 1. Claim latency does not grow with history: the median
//!    [`qctl::engine::claim`] latency with 1,000,000 finished jobs in the table is
//!    within 1.5x of the median with none, with the indexes `init` creates.
//!    The same ratio with only a single-column `status` index, and with no
//!    index but the primary key, is shown for contrast.
//! 2. `stats` on a 2,000,000-row table that is 99% finished takes under
//!    100 ms after `ANALYZE`, both as [`qctl::engine::stats`] and as a whole
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

#[path = "common/mod.rs"]
mod common;

use std::path::Path;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, ensure};
use common::{ClaimVariant, Indexes, MONTH, Sizes, thousands};
use postgres::{Client, GenericClient};
use qctl::backend::Target;
use qctl::backend::postgres::connect::{self as pg_connect, ConnInfo};
use qctl::db::{Access, Backend, ConnectOptions};

const DEFAULT_SERVER: &str = "host=127.0.0.1 port=5432 user=postgres";
const USAGE: &str = "bench_postgres [--quick] [--server CONNINFO] [--qctl PATH] [--keep]";

fn main() -> ExitCode {
    common::exit_code("bench_postgres", run())
}

fn run() -> Result<bool> {
    let mut conninfo = DEFAULT_SERVER.to_string();
    let options = common::parse_args(USAGE, |arg, args| {
        Ok(match arg {
            "--server" => {
                conninfo = args.next().context("--server needs a conninfo")?;
                true
            }
            _ => false,
        })
    })?;
    ensure!(
        !conninfo.contains("dbname") && !conninfo.contains("://"),
        "--server takes a keyword string without dbname, e.g. {DEFAULT_SERVER:?}"
    );
    common::check_qctl(&options.qctl)?;
    let mut server = Server::new(&conninfo, options.keep)?;
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

fn open(url: &str, access: Access) -> Result<Box<dyn Backend + Send>> {
    let layout = qctl::presets::own("default")?;
    Target::parse(url)?
        .open(&layout, &ConnectOptions::new(access))
        .with_context(|| format!("cannot open {url}"))
}

// ---------------------------------------------------------------------------
// Building tables

/// The labels in the report and the scratch databases' names; the enum
/// itself is shared.
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

fn bench_claims(server: &mut Server, sizes: &Sizes) -> Result<bool> {
    // The variants' backends hold connections to the databases the guard
    // drops; common::bench_claims drops them before it returns.
    common::bench_claims(sizes, |now| {
        // One base database per history size, copied per index variant, so
        // the variants differ in their indexes only.
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
        for indexes in Indexes::ALL {
            for history in histories {
                let name = format!("claim_{}_{history}", indexes.db_name());
                server.create(&name, Some(&format!("base_{history}")))?;
                let url = server.url(&name);
                add_indexes(&url, indexes)?;
                let backend = open(&url, Access::Write)?;
                variants.push(ClaimVariant::new(indexes, history, sizes, backend));
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
        Ok(variants)
    })
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
    common::print_stats_built(sizes, started);
    let mut backend = open(&url, Access::Read)?;
    let (estimated, exact) = common::estimate_and_count(&mut *backend, sizes)?;
    // Without ANALYZE, or on a small table, qctl counts: then there is no
    // estimate to time.
    ensure!(
        estimated.total.estimated.contains(&"done"),
        "stats counted finished jobs exactly: the table looks unanalyzed or small"
    );
    common::print_estimate(&estimated, &exact);
    // qctl estimates only done: the unfinished counts are exact even
    // without --exact, so they must match.
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
    let ok = common::time_stats(&mut *backend, sizes, qctl, &url)?;
    drop(backend);
    common::print_breakdown(qctl, &url, true)?;
    Ok(ok)
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
