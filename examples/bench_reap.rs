//! `qctl reap` at outage scale, on SQLite, PostgreSQL and MySQL/MariaDB:
//!
//! 1. reap of 100,000 stale running jobs among 1,000,000 rows: at most
//!    1.5x one set-based UPDATE of the same rows with the same writes (the
//!    floor: what the database itself does in one statement), the two
//!    alternating on fresh tables, the verdict on the median of the pairs'
//!    ratios;
//! 2. reap of 1,000,000 stale jobs: time and peak memory (under 50 MB);
//! 3. claim latency p99 while a 100,000-job reap runs, against the same
//!    claims with no reap running: at most 2.5x; and, for the record, the
//!    same claims while something else keeps one CPU busy as long as the
//!    reap took: a statement that reads no table (a server's only; it
//!    holds a snapshot, as a reap batch does), and a thread of this
//!    process spinning outside the database (one busy CPU and nothing
//!    else).
//!
//! The reaps run the release `qctl` binary under `/usr/bin/time`, which
//! reports the process's peak resident memory; the claims run qctl's own
//! claim (`qctl::engine::claim`) from several threads, each with its own
//! connection, on the same table. Every reap is audited: each stale job
//! requeued or dead-lettered once, by its attempts.
//!
//! Run through `scripts/bench-reap.sh`.

#[path = "common/figures.rs"]
mod figures;

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail, ensure};
use figures::{median, ms, percentile, thousands};
use qctl::backend::Target;
use qctl::db::{Access, Backend, ConnectOptions};
use qctl::request::{ClaimRequest, Finish, FinishRequest};
use qctl::sql::dialect::LockMode;

/// A 100,000-job reap over one set-based UPDATE of the same rows.
const FLOOR_TARGET: f64 = 1.5;
/// Peak memory of a 1,000,000-job reap, in kilobytes.
const MEMORY_TARGET_KB: u64 = 50 * 1024;
/// Claim p99 during a reap over claim p99 without.
const CLAIM_P99_TARGET: f64 = 2.5;

struct Sizes {
    total: i64,
    stale: i64,
    big_stale: i64,
    big_done: i64,
    ready: i64,
    claimers: usize,
    baseline: Duration,
    rounds: usize,
}

const FULL: Sizes = Sizes {
    total: 1_000_000,
    stale: 100_000,
    big_stale: 1_000_000,
    big_done: 1_000_000,
    ready: 50_000,
    claimers: 4,
    baseline: Duration::from_secs(3),
    rounds: 5,
};

const QUICK: Sizes = Sizes {
    total: 100_000,
    stale: 10_000,
    big_stale: 50_000,
    big_done: 50_000,
    ready: 5_000,
    claimers: 2,
    baseline: Duration::from_secs(1),
    rounds: 1,
};

fn main() -> ExitCode {
    figures::exit_code("bench_reap", run())
}

/// One database to build tables in, whichever backend.
enum Db {
    Sqlite(PathBuf),
    Postgres {
        server: String,
        dbname: String,
    },
    /// `server` is a URL without a database: `mysql://root@127.0.0.1:3306`.
    Mysql {
        server: String,
        dbname: String,
    },
}

impl Db {
    fn url(&self) -> String {
        match self {
            Db::Sqlite(path) => format!("sqlite:{}", path.display()),
            Db::Postgres { server, dbname } => format!("{server} dbname={dbname}"),
            Db::Mysql { server, dbname } => format!("{server}/{dbname}"),
        }
    }

    fn name(&self) -> &'static str {
        match self {
            Db::Sqlite(_) => "sqlite",
            Db::Postgres { .. } => "postgres",
            Db::Mysql { .. } => "mysql",
        }
    }

    /// A fresh `qctl init` table with `done` finished jobs, `stale`
    /// running jobs whose workers died an hour ago (every third on its last
    /// attempt), and `ready` pending jobs.
    fn build(&self, qctl: &Path, done: i64, stale: i64, ready: i64) -> Result<()> {
        match self {
            Db::Sqlite(path) => {
                for suffix in ["", "-wal", "-shm"] {
                    let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
                }
            }
            Db::Postgres { .. } | Db::Mysql { .. } => self.sql("DROP TABLE IF EXISTS jobs")?,
        }
        let out = Command::new(qctl)
            .args(["-q", "-d", &self.url(), "init"])
            .output()?;
        ensure!(
            out.status.success(),
            "qctl init: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let (series, ago) = match self {
            Db::Sqlite(_) => (
                "WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < {n}) SELECT i FROM s",
                "unixepoch() - {s}",
            ),
            Db::Postgres { .. } => (
                "SELECT i FROM generate_series(1, {n}) i",
                "now() - interval '{s} seconds'",
            ),
            Db::Mysql { .. } => (
                "SELECT seq AS i FROM seq_1_to_{n}",
                "UTC_TIMESTAMP(6) - INTERVAL {s} SECOND",
            ),
        };
        let worker = match self {
            Db::Mysql { .. } => "CONCAT('dead-', i % 16)",
            _ => "'dead-' || (i % 16)",
        };
        let series = |n: i64| series.replace("{n}", &n.to_string());
        let ago = |s: i64| ago.replace("{s}", &s.to_string());
        let sql = format!(
            "INSERT INTO jobs (queue, status, payload, attempts, run_at, created_at, updated_at)
               SELECT 'default', 'done', '{{}}', 1, {old}, {old}, {old} FROM ({done_rows}) d;
             INSERT INTO jobs (queue, status, payload, attempts, max_attempts, run_at, locked_by, locked_at, locked_until, created_at, updated_at)
               SELECT 'default', 'running', '{{}}', CASE WHEN i % 3 = 0 THEN 3 ELSE 1 END, 3, {hour}, {worker}, {hour}, {half}, {hour}, {hour} FROM ({stale_rows}) s;
             INSERT INTO jobs (queue, status, payload, run_at, created_at, updated_at)
               SELECT 'default', 'pending', '{{}}', {minute}, {minute}, {minute} FROM ({ready_rows}) r;",
            old = ago(86_400),
            hour = ago(3_600),
            half = ago(1_800),
            minute = ago(60),
            done_rows = series(done),
            stale_rows = series(stale),
            ready_rows = series(ready),
        );
        for statement in sql.split(';').filter(|s| !s.trim().is_empty()) {
            self.sql(statement)?;
        }
        // A table that has been around: its statistics and (PostgreSQL) its
        // visibility map are current, so no autovacuum of the fresh load
        // runs under the measurement.
        match self {
            // And the load is on disk (the build's close checkpointed it
            // into the file, but the kernel may still hold it): the first
            // fsync of the measured side would otherwise wait for it.
            Db::Sqlite(path) => {
                self.sql("ANALYZE jobs")?;
                std::fs::File::open(path)?.sync_all()?;
                Ok(())
            }
            // And the load's dirty pages are written out before the reap
            // starts, so it does not pay for them.
            Db::Postgres { .. } => self
                .sql("VACUUM ANALYZE jobs")
                .and_then(|()| self.sql("CHECKPOINT")),
            Db::Mysql { .. } => self.sql("ANALYZE TABLE jobs"),
        }
    }

    /// The floor: the reap's writes (as `qctl -v reap --timeout 10m`
    /// logs them) in one set-based UPDATE of every stale job, committed;
    /// how long it took on an open connection.
    fn floor(&self) -> Result<Duration> {
        let (now, stale, text, concat): (&str, &str, &str, Concat) = match self {
            Db::Sqlite(_) => ("unixepoch()", "unixepoch() - 600", "TEXT", |p| {
                p.join(" || ")
            }),
            Db::Postgres { .. } => ("now()", "now() - interval '10 minutes'", "text", |p| {
                p.join(" || ")
            }),
            Db::Mysql { .. } => (
                "UTC_TIMESTAMP(6)",
                "UTC_TIMESTAMP(6) - INTERVAL 600 SECOND",
                "CHAR",
                |p| format!("CONCAT({})", p.join(", ")),
            ),
        };
        let attempts = format!("CAST(attempts AS {text})");
        let max = format!("CAST(max_attempts AS {text})");
        let worker = format!("coalesce(CAST(locked_by AS {text}), 'unknown')");
        let dead = concat(&[
            "'dead-lettered by qctl reap: attempts exhausted ('",
            &attempts,
            "' of '",
            &max,
            "'), locked longer than 10m (worker '",
            &worker,
            "')'",
        ]);
        let requeue = concat(&[
            "'requeued by qctl reap: locked longer than 10m (worker '",
            &worker,
            "')'",
        ]);
        let sql = format!(
            "UPDATE jobs SET last_error = CASE WHEN attempts >= max_attempts THEN {dead} ELSE {requeue} END, \
             status = CASE WHEN attempts >= max_attempts THEN 'failed' ELSE 'pending' END, \
             locked_until = NULL, updated_at = {now}, \
             locked_by = CASE WHEN attempts >= max_attempts THEN locked_by ELSE NULL END, \
             locked_at = CASE WHEN attempts >= max_attempts THEN locked_at ELSE NULL END \
             WHERE status = 'running' AND locked_at < {stale}"
        );
        match self {
            Db::Sqlite(path) => {
                let conn = rusqlite::Connection::open(path)?;
                let started = Instant::now();
                conn.execute_batch(&sql)?;
                Ok(started.elapsed())
            }
            Db::Postgres { server, dbname } => {
                let mut client = postgres::Client::connect(
                    &format!("{server} dbname={dbname}"),
                    postgres::NoTls,
                )?;
                let started = Instant::now();
                client.batch_execute(&sql)?;
                Ok(started.elapsed())
            }
            Db::Mysql { .. } => {
                let mut conn = self.mysql()?;
                let started = Instant::now();
                mysql::prelude::Queryable::query_drop(&mut conn, &sql)?;
                Ok(started.elapsed())
            }
        }
    }

    /// A statement that keeps one CPU of the server busy for `seconds`
    /// and reads no table (SQLite: none, its statements run in the
    /// caller's process).
    fn busy_loop(&self, seconds: f64) -> Option<String> {
        let micros = (seconds * 1e6) as i64;
        match self {
            Db::Sqlite(_) => None,
            Db::Postgres { .. } => Some(format!(
                "DO $$ BEGIN WHILE clock_timestamp() < now() + {micros} * interval '1 microsecond' \
                 LOOP END LOOP; END $$"
            )),
            Db::Mysql { .. } => Some(format!(
                "BEGIN NOT ATOMIC DECLARE t DATETIME(6) DEFAULT SYSDATE(6) + INTERVAL {micros} MICROSECOND; \
                 WHILE SYSDATE(6) < t DO SET @qctl_busy = 1; END WHILE; END"
            )),
        }
    }

    fn mysql(&self) -> Result<mysql::Conn> {
        Ok(mysql::Conn::new(mysql::Opts::from_url(&self.url())?)?)
    }

    fn sql(&self, sql: &str) -> Result<()> {
        match self {
            Db::Sqlite(path) => {
                let conn = rusqlite::Connection::open(path)?;
                conn.execute_batch(sql).with_context(|| sql.to_string())
            }
            Db::Postgres { server, dbname } => {
                let mut client = postgres::Client::connect(
                    &format!("{server} dbname={dbname}"),
                    postgres::NoTls,
                )?;
                client.batch_execute(sql).with_context(|| sql.to_string())
            }
            Db::Mysql { .. } => mysql::prelude::Queryable::query_drop(&mut self.mysql()?, sql)
                .with_context(|| sql.to_string()),
        }
    }

    fn count(&self, filter: &str) -> Result<i64> {
        let sql = format!("SELECT count(*) FROM jobs WHERE {filter}");
        match self {
            Db::Sqlite(path) => {
                Ok(rusqlite::Connection::open(path)?.query_row(&sql, [], |r| r.get(0))?)
            }
            Db::Postgres { server, dbname } => Ok(postgres::Client::connect(
                &format!("{server} dbname={dbname}"),
                postgres::NoTls,
            )?
            .query_one(&sql, &[])?
            .get(0)),
            Db::Mysql { .. } => {
                mysql::prelude::Queryable::query_first::<i64, _>(&mut self.mysql()?, &sql)?
                    .context("no count")
            }
        }
    }

    fn open(&self) -> Result<Box<dyn Backend + Send>> {
        let layout = qctl::presets::own("default")?;
        let mut options = ConnectOptions::new(Access::Write);
        options.busy_timeout = Duration::from_secs(60);
        Target::parse(&self.url())?.open(&layout, &options)
    }
}

/// How a dialect joins text: `||`, or MySQL's CONCAT().
type Concat = fn(&[&str]) -> String;

/// What one reap did and cost.
struct Reaped {
    seconds: f64,
    peak_kb: u64,
    requeued: i64,
    dead: i64,
}

/// Arguments every timed reap also gets (`--reap-arg`, repeated): to try
/// a batch size or another setting side by side with the default.
static REAP_ARGS: OnceLock<Vec<String>> = OnceLock::new();

/// Runs `qctl reap --timeout 10m` under /usr/bin/time.
fn reap(qctl: &Path, db: &Db) -> Result<Reaped> {
    reap_at(qctl, db).map(|(reaped, _)| reaped)
}

/// Like [`reap`], and says when it started.
fn reap_at(qctl: &Path, db: &Db) -> Result<(Reaped, Instant)> {
    let started = Instant::now();
    let out = Command::new("/usr/bin/time")
        .args(["-f", "qctl-peak-kb %M"])
        .arg(qctl)
        .args([
            "-q",
            "--format",
            "json",
            "-d",
            &db.url(),
            "reap",
            "--timeout",
            "10m",
        ])
        .args(REAP_ARGS.get().into_iter().flatten())
        .output()
        .context("run /usr/bin/time (apt-get install time)")?;
    let seconds = started.elapsed().as_secs_f64();
    let stderr = String::from_utf8_lossy(&out.stderr);
    ensure!(out.status.success(), "qctl reap failed: {stderr}");
    let peak_kb = stderr
        .lines()
        .find_map(|l| l.strip_prefix("qctl-peak-kb "))
        .and_then(|kb| kb.trim().parse().ok())
        .context("no peak memory from /usr/bin/time")?;
    let json: serde_json::Value = serde_json::from_slice(&out.stdout)?;
    Ok((
        Reaped {
            seconds,
            peak_kb,
            requeued: json["requeued"].as_i64().unwrap_or(-1),
            dead: json["dead_lettered"].as_i64().unwrap_or(-1),
        },
        started,
    ))
}

/// Every stale job was handled once, by its attempts: 2 in 3 requeued
/// (pending, unlocked), 1 in 3 dead-lettered.
fn audit(db: &Db, stale: i64, reaped: &Reaped) -> Result<()> {
    let dead = stale / 3;
    ensure!(
        (reaped.requeued, reaped.dead) == (stale - dead, dead),
        "reap reported {} requeued and {} dead-lettered, not {} and {dead}",
        reaped.requeued,
        reaped.dead,
        stale - dead
    );
    ensure!(db.count("status = 'running'")? == 0, "running jobs left");
    ensure!(
        db.count("status = 'failed' AND attempts = 3 AND last_error LIKE 'dead-lettered%'")?
            == dead,
        "dead letters do not match"
    );
    Ok(())
}

/// Claims (and completes) from `claimers` threads until `stop`; returns
/// when each claim started and how long it took.
fn claim_while(db: &Db, claimers: usize, stop: &AtomicBool) -> Result<Vec<(Instant, Duration)>> {
    let latencies = Mutex::new(Vec::new());
    let backends = (0..claimers)
        .map(|_| db.open())
        .collect::<Result<Vec<_>>>()?;
    std::thread::scope(|scope| -> Result<()> {
        let handles: Vec<_> = backends
            .into_iter()
            .enumerate()
            .map(|(w, mut b)| {
                let latencies = &latencies;
                scope.spawn(move || -> Result<()> {
                    let request = ClaimRequest {
                        worker: format!("probe-{w}"),
                        queue: Some("default".into()),
                        lease: Some(Duration::from_secs(300)),
                    };
                    let mut mine = Vec::new();
                    while !stop.load(Ordering::Relaxed) {
                        let t = Instant::now();
                        let job = qctl::engine::claim(b.as_mut(), &request, LockMode::SkipLocked)?;
                        mine.push((t, t.elapsed()));
                        let Some(job) = job else { break };
                        qctl::engine::finish(
                            b.as_mut(),
                            &FinishRequest {
                                id: job.id,
                                worker: request.worker.clone(),
                                fence: job.fence.map(|f| f.to_string()),
                                finish: Finish::Complete,
                            },
                        )?;
                    }
                    latencies.lock().unwrap().extend(mine);
                    Ok(())
                })
            })
            .collect();
        for h in handles {
            h.join()
                .map_err(|_| anyhow::anyhow!("a claimer panicked"))??;
        }
        Ok(())
    })?;
    Ok(latencies.into_inner().unwrap())
}

fn run() -> Result<bool> {
    let mut backends = Vec::new();
    let mut server = None;
    let mut mysql_server = None;
    // Which parts to run: 1 the floor, 2 the million, 3 the claims.
    let mut sections = String::from("123");
    let mut dir: Option<PathBuf> = None;
    let mut sizes = FULL;
    let mut claimers = None;
    // target/release/examples/bench_reap -> target/release/qctl
    let mut qctl = std::env::current_exe()?
        .parent()
        .and_then(Path::parent)
        .map(|release| release.join("qctl"))
        .unwrap_or_else(|| PathBuf::from("qctl"));
    let mut reap_args = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--quick" => sizes = QUICK,
            "--claimers" => {
                let n = args.next().context("--claimers needs a number")?;
                claimers = Some(n.parse().context("--claimers needs a number")?);
            }
            "--qctl" => qctl = args.next().context("--qctl needs a path")?.into(),
            "--server" => server = args.next(),
            "--sqlite-dir" => dir = args.next().map(PathBuf::from),
            "--mysql-server" => mysql_server = args.next(),
            "--sections" => sections = args.next().context("--sections needs digits")?,
            "--backend" => backends.push(args.next().context("--backend needs a name")?),
            "--reap-arg" => reap_args.push(args.next().context("--reap-arg needs a value")?),
            "-h" | "--help" => {
                println!(
                    "usage: bench_reap [--quick] [--qctl PATH] [--sqlite-dir DIR] \
                     [--server CONNINFO] [--mysql-server URL] [--sections 123] \
                     [--backend sqlite|postgres|mysql]... [--reap-arg ARG]... [--claimers N]"
                );
                return Ok(true);
            }
            other => bail!("unknown argument {other:?}; try --help"),
        }
    }
    if let Some(n) = claimers {
        sizes.claimers = n;
    }
    REAP_ARGS.set(reap_args).expect("set once");
    ensure!(
        qctl.is_file(),
        "no qctl binary at {}; build it or pass --qctl",
        qctl.display()
    );
    if backends.is_empty() {
        backends = vec!["sqlite".into(), "postgres".into(), "mysql".into()];
    }
    let mysql_server = mysql_server.unwrap_or_else(|| "mysql://root@127.0.0.1:3306".into());
    let server = server.unwrap_or_else(|| "host=127.0.0.1 port=5432 user=postgres".into());
    let dir = dir.unwrap_or_else(std::env::temp_dir);
    let mut ok = true;
    for name in &backends {
        let db = match name.as_str() {
            "sqlite" => Db::Sqlite(dir.join(format!("qctl-bench-reap-{}.db", std::process::id()))),
            "postgres" => {
                let dbname = format!("qctl_bench_reap_{}", std::process::id());
                let mut admin = postgres::Client::connect(
                    &format!("{server} dbname=postgres"),
                    postgres::NoTls,
                )?;
                admin.batch_execute(&format!("DROP DATABASE IF EXISTS {dbname}"))?;
                admin.batch_execute(&format!("CREATE DATABASE {dbname}"))?;
                Db::Postgres {
                    server: server.clone(),
                    dbname,
                }
            }
            "mysql" => {
                let dbname = format!("qctl_bench_reap_{}", std::process::id());
                let mut admin = mysql::Conn::new(mysql::Opts::from_url(&mysql_server)?)?;
                mysql::prelude::Queryable::query_drop(
                    &mut admin,
                    format!("DROP DATABASE IF EXISTS {dbname}"),
                )?;
                mysql::prelude::Queryable::query_drop(
                    &mut admin,
                    format!("CREATE DATABASE {dbname}"),
                )?;
                Db::Mysql {
                    server: mysql_server.clone(),
                    dbname,
                }
            }
            other => bail!("unknown backend {other:?}"),
        };
        let result = bench(&db, &qctl, &sizes, &sections);
        match &db {
            Db::Sqlite(path) => {
                for suffix in ["", "-wal", "-shm"] {
                    let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
                }
            }
            Db::Postgres { server, dbname } => {
                if let Ok(mut admin) =
                    postgres::Client::connect(&format!("{server} dbname=postgres"), postgres::NoTls)
                {
                    let _ = admin
                        .batch_execute(&format!("DROP DATABASE IF EXISTS {dbname} WITH (FORCE)"));
                }
            }
            Db::Mysql { server, dbname } => {
                if let Ok(mut admin) = mysql::Opts::from_url(server)
                    .map_err(anyhow::Error::from)
                    .and_then(|o| Ok(mysql::Conn::new(o)?))
                {
                    let _ = mysql::prelude::Queryable::query_drop(
                        &mut admin,
                        format!("DROP DATABASE IF EXISTS {dbname}"),
                    );
                }
            }
        }
        ok &= result?;
    }
    Ok(ok)
}

fn bench(db: &Db, qctl: &Path, sizes: &Sizes, sections: &str) -> Result<bool> {
    let mut ok = true;
    if sections.contains('1') {
        ok &= against_floor(db, qctl, sizes)?;
    }
    if sections.contains('2') {
        ok &= million(db, qctl, sizes)?;
    }
    if sections.contains('3') {
        ok &= claims_during(db, qctl, sizes)?;
    }
    Ok(ok)
}

/// Section 1: qctl reap against one set-based UPDATE of the same rows,
/// alternating (each on a fresh table), the verdict on the median ratio.
fn against_floor(db: &Db, qctl: &Path, sizes: &Sizes) -> Result<bool> {
    let name = db.name();
    println!(
        "\n== {name}: 1. reap of {} stale jobs among {} rows against one set-based UPDATE, {} pairs ==",
        thousands(sizes.stale),
        thousands(sizes.total),
        sizes.rounds
    );
    let (mut reaps, mut floors, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
    let fresh = || {
        db.build(
            qctl,
            sizes.total - sizes.stale - sizes.ready,
            sizes.stale,
            sizes.ready,
        )
    };
    for round in 1..=sizes.rounds {
        let mut pair = [0.0; 2];
        // Who goes first alternates, so neither always follows a build.
        let order = if round % 2 == 1 { [0, 1] } else { [1, 0] };
        for which in order {
            fresh()?;
            if which == 0 {
                let reaped = reap(qctl, db)?;
                audit(db, sizes.stale, &reaped)?;
                pair[0] = reaped.seconds;
            } else {
                pair[1] = db.floor()?.as_secs_f64();
                // The same audit as qctl's reap: the UPDATE did its work.
                audit(
                    db,
                    sizes.stale,
                    &Reaped {
                        seconds: pair[1],
                        peak_kb: 0,
                        requeued: db.count("status = 'pending' AND last_error LIKE 'requeued%'")?,
                        dead: db.count("status = 'failed'")?,
                    },
                )?;
            }
        }
        let ratio = pair[0] / pair[1];
        println!(
            "run {round}: qctl reap {:.2} s (audited), one UPDATE {:.2} s: {ratio:.2}x",
            pair[0], pair[1]
        );
        reaps.push(Duration::from_secs_f64(pair[0]));
        floors.push(Duration::from_secs_f64(pair[1]));
        ratios.push(ratio);
    }
    ratios.sort_by(f64::total_cmp);
    let ratio = ratios[ratios.len() / 2];
    let pass = ratio <= FLOOR_TARGET;
    println!(
        "medians: qctl reap {:.2} s, one UPDATE {:.2} s; median ratio {ratio:.2}x (target <= {FLOOR_TARGET}x) {}",
        median(&reaps).as_secs_f64(),
        median(&floors).as_secs_f64(),
        verdict(pass)
    );
    Ok(pass)
}

/// Section 2: a million stale jobs, for time and peak memory.
fn million(db: &Db, qctl: &Path, sizes: &Sizes) -> Result<bool> {
    let name = db.name();
    let mut ok = true;
    println!(
        "\n== {name}: 2. reap of {} stale jobs among {} rows ==",
        thousands(sizes.big_stale),
        thousands(sizes.big_stale + sizes.big_done)
    );
    db.build(qctl, sizes.big_done, sizes.big_stale, 0)?;
    let big = reap(qctl, db)?;
    audit(db, sizes.big_stale, &big)?;
    let pass = big.peak_kb <= MEMORY_TARGET_KB;
    ok &= pass;
    println!(
        "{:.2} s, peak memory {} MB (target < {} MB) {} (audited)",
        big.seconds,
        big.peak_kb / 1024,
        MEMORY_TARGET_KB / 1024,
        verdict(pass)
    );

    Ok(ok)
}

/// Section 3: claim latency p99 during a reap over p99 without, in pairs.
fn claims_during(db: &Db, qctl: &Path, sizes: &Sizes) -> Result<bool> {
    let name = db.name();
    let mut ok = true;
    println!(
        "\n== {name}: 3. claim latency, {} claimers, while a {}-job reap runs vs no reap, {} runs ==",
        sizes.claimers,
        thousands(sizes.stale),
        sizes.rounds
    );
    let mut ratios = Vec::new();
    let mut controls = Vec::new();
    let mut spins = Vec::new();
    for round in 1..=sizes.rounds {
        db.build(
            qctl,
            sizes.total - sizes.stale - sizes.ready,
            sizes.stale,
            sizes.ready,
        )?;
        let stop = AtomicBool::new(false);
        let baseline = std::thread::scope(|scope| {
            let claims = scope.spawn(|| claim_while(db, sizes.claimers, &stop));
            std::thread::sleep(sizes.baseline);
            stop.store(true, Ordering::Relaxed);
            claims
                .join()
                .map_err(|_| anyhow::anyhow!("claimers panicked"))?
        })?;
        // The same table again for the claims during the reap.
        db.build(
            qctl,
            sizes.total - sizes.stale - sizes.ready,
            sizes.stale,
            sizes.ready,
        )?;
        let stop = Arc::new(AtomicBool::new(false));
        let (during, reaped) = std::thread::scope(|scope| -> Result<(Vec<Duration>, Reaped)> {
            let claims = scope.spawn(|| claim_while(db, sizes.claimers, &stop));
            // Let the claimers settle, then reap under them.
            std::thread::sleep(Duration::from_millis(200));
            let reaped = reap_at(qctl, db);
            stop.store(true, Ordering::Relaxed);
            let claims = claims
                .join()
                .map_err(|_| anyhow::anyhow!("claimers panicked"))??;
            let (reaped, started) = reaped?;
            // Only the claims that started while the reap ran.
            let ended = started + Duration::from_secs_f64(reaped.seconds);
            let during = claims
                .into_iter()
                .filter(|(t, _)| *t >= started && *t < ended)
                .map(|(_, d)| d)
                .collect();
            Ok((during, reaped))
        })?;
        let baseline: Vec<Duration> = baseline.into_iter().map(|(_, d)| d).collect();
        ensure!(
            reaped.requeued + reaped.dead == sizes.stale,
            "the reap missed jobs"
        );
        let (p99_base, p99_during) = (percentile(&baseline, 0.99), percentile(&during, 0.99));
        let ratio = p99_during.as_secs_f64() / p99_base.as_secs_f64().max(1e-9);
        println!(
            "run {round}: p99 {} without reap ({} claims), {} during a {:.2} s reap ({} claims): {ratio:.2}x",
            ms(p99_base),
            thousands(baseline.len() as i64),
            ms(p99_during),
            reaped.seconds,
            thousands(during.len() as i64)
        );
        ratios.push(ratio);
        // The controls: the same claims (on the reaped table) while one
        // CPU is kept busy for as long as the reap took. First by another
        // session, with a statement that reads no table (which still holds
        // a snapshot, as each reap batch does); then by a thread of this
        // process spinning outside the database, which holds nothing.
        if let Some(busy) = db.busy_loop(reaped.seconds) {
            let control = claims_beside(db, sizes.claimers, || db.sql(&busy))?;
            controls.push(control_ratio(
                "a CPU-bound statement that reads no table runs",
                &control,
                p99_base,
            ));
        }
        let spin = claims_beside(db, sizes.claimers, || {
            spin_for(Duration::from_secs_f64(reaped.seconds));
            Ok(())
        })?;
        spins.push(control_ratio(
            "a thread outside the database spins",
            &spin,
            p99_base,
        ));
    }
    ratios.sort_by(f64::total_cmp);
    let ratio = ratios[ratios.len() / 2];
    let pass = ratio <= CLAIM_P99_TARGET;
    ok &= pass;
    println!(
        "median p99 ratio {ratio:.2}x (target <= {CLAIM_P99_TARGET}x) {}",
        verdict(pass)
    );
    if !controls.is_empty() {
        controls.sort_by(f64::total_cmp);
        println!(
            "median p99 ratio of the control statement {:.2}x",
            controls[controls.len() / 2]
        );
    }
    spins.sort_by(f64::total_cmp);
    println!(
        "median p99 ratio of the spinning thread {:.2}x (what one busy CPU alone costs the claims here)",
        spins[spins.len() / 2]
    );
    Ok(ok)
}

/// Prints a control's p99 against the p99 with nothing else running, and
/// returns the ratio.
fn control_ratio(what: &str, claims: &[Duration], p99_base: Duration) -> f64 {
    let p99 = percentile(claims, 0.99);
    let ratio = p99.as_secs_f64() / p99_base.as_secs_f64().max(1e-9);
    println!(
        "       control: p99 {} while {what} as long ({} claims): {ratio:.2}x",
        ms(p99),
        thousands(claims.len() as i64)
    );
    ratio
}

/// The claims (and completes) from `claimers` connections that started
/// while `work` ran, after letting them settle.
fn claims_beside(
    db: &Db,
    claimers: usize,
    work: impl FnOnce() -> Result<()>,
) -> Result<Vec<Duration>> {
    let stop = AtomicBool::new(false);
    std::thread::scope(|scope| -> Result<Vec<Duration>> {
        let claims = scope.spawn(|| claim_while(db, claimers, &stop));
        std::thread::sleep(Duration::from_millis(200));
        let started = Instant::now();
        let ran = work();
        let ended = Instant::now();
        stop.store(true, Ordering::Relaxed);
        let claims = claims
            .join()
            .map_err(|_| anyhow::anyhow!("claimers panicked"))??;
        ran?;
        Ok(claims
            .into_iter()
            .filter(|(t, _)| *t >= started && *t < ended)
            .map(|(_, d)| d)
            .collect())
    })
}

/// Keeps this thread's CPU busy for `how_long`, touching nothing.
fn spin_for(how_long: Duration) {
    let until = Instant::now() + how_long;
    let mut n = 0u64;
    while Instant::now() < until {
        for _ in 0..1000 {
            n = std::hint::black_box(n.wrapping_add(1));
        }
    }
}

fn verdict(pass: bool) -> &'static str {
    if pass { "PASS" } else { "FAIL" }
}
