//! The seam between the queue and a database.
//!
//! A [`Backend`] runs the statements the SQL core builds ([`crate::sql`])
//! and answers what is truly its database's own: the catalog, bulk
//! loading, estimates, plans, lock views and the bench. The queue
//! operations themselves live once in [`crate::engine`]. Each database is a
//! folder here, split by concern; the URL picks it, as diesel's
//! `Backend::for_url` does.

pub mod drain;
pub mod mysql;
pub mod postgres;
pub mod sqlite;

use std::time::Duration;

use anyhow::Result;
use chrono::{DateTime, Utc};

use crate::engine::DoneCounts;
use crate::error::QctlError;
use crate::explain::{PlanFinding, PlanLine};
use crate::layout::{Concept, Ident, Layout, Status};
use crate::model::{BenchReport, BlockedReport, EnqueueOutcome, LocksReport, NewJob};
use crate::sql::ddl::IndexSpec;
use crate::sql::schema::QueueTable;
use crate::sql::{Row, Stmt, Value};
use crate::target::Target;

pub use crate::request::*;

/// What a command will do with the database; decides how it is opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Never writes, never creates a file.
    Read,
    /// Writes rows of an existing queue table.
    Write,
    /// May create the database file and the table (`init`).
    Create,
    /// Reads the schema only (`init --print`): never writes or creates a
    /// file, and the table may be missing.
    Print,
    /// Reads server or file state only (`blocked`, `locks`): read-only, the
    /// queue table may be missing, the file must exist.
    Inspect,
    /// Writes only scratch tables of its own (`bench`); the queue table
    /// may be missing.
    Scratch,
}

/// Connection options that are not part of the URL.
#[derive(Debug, Clone)]
pub struct ConnectOptions {
    pub access: Access,
    /// How long to wait for a lock: SQLite's write lock, PostgreSQL's
    /// lock_timeout. Zero means do not wait.
    pub busy_timeout: Duration,
    /// PostgreSQL's statement_timeout for every statement qctl runs.
    pub statement_timeout: Duration,
    /// How long to wait for a PostgreSQL connection (PGCONNECT_TIMEOUT and
    /// connect_timeout in the URL win).
    pub connect_timeout: Duration,
    /// How long an index build may take (`init`, `explain-claim --apply`).
    pub index_timeout: Duration,
    pub sql_log: SqlLog,
    /// `--layout auto`: find the queue system from the catalog first.
    pub auto: Option<crate::presets::AutoSpec>,
}

impl ConnectOptions {
    /// qctl's defaults (the CLI's): 5s lock wait, 30s statements, 10s to
    /// connect, 1h for an index build, no SQL log.
    pub fn new(access: Access) -> ConnectOptions {
        ConnectOptions {
            access,
            busy_timeout: Duration::from_secs(5),
            statement_timeout: Duration::from_secs(30),
            connect_timeout: Duration::from_secs(10),
            index_timeout: Duration::from_secs(3600),
            sql_log: SqlLog::default(),
            auto: None,
        }
    }
}

/// The kind of transaction a step needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TxMode {
    /// One consistent snapshot, read-only.
    Read,
    /// Changes rows: SQLite takes the write lock up front (BEGIN
    /// IMMEDIATE); PostgreSQL runs READ COMMITTED, so SKIP LOCKED skips
    /// instead of failing under a SERIALIZABLE default.
    Write,
}

/// How big the table is to the planner, for judging a plan.
#[derive(Debug, Clone, Copy)]
pub struct TableSize {
    pub rows: f64,
    /// Whether the planner has statistics (PostgreSQL's ANALYZE; SQLite
    /// plans without them).
    pub analyzed: bool,
}

/// How to plan a statement. Planning never runs it: the work of a run
/// is measured on the read part alone ([`Backend::measure`]).
#[derive(Debug, Clone, Copy)]
pub struct PlanHow {
    /// Plan with sequential scans and sorts discouraged, to tell "no
    /// usable index" from "the table is too small to bother".
    pub forced: bool,
    /// Rows the query's filter matches.
    pub backlog: u64,
    /// Rows a sort receives, as measured; None when not measured (the
    /// planner's estimate, else the backlog, stands in).
    pub sort_rows: Option<u64>,
    pub sort_threshold: u64,
}

/// A plan as the backend's planner gave it, drawn and judged.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The planner's own document (SQLite's rows, PostgreSQL's JSON).
    pub doc: serde_json::Value,
    pub lines: Vec<PlanLine>,
    pub findings: Vec<PlanFinding>,
}

/// Whether an index exists, and whether it can be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IndexState {
    Missing,
    Valid,
    /// A cancelled concurrent build left it unusable; the qualified name.
    Invalid(String),
}

/// One database holding a queue table.
pub trait Backend {
    /// The database's name in reports (`sqlite`, `postgres`).
    fn name(&self) -> &'static str {
        self.table().dialect.name
    }
    /// The queue table, resolved against the catalog.
    fn table(&self) -> &QueueTable;

    /// Runs SQL without parameters or results (transaction control,
    /// session settings, DDL).
    fn run(&mut self, sql: &str) -> Result<()>;
    fn begin(&mut self, mode: TxMode) -> Result<()> {
        let dialect = self.table().dialect;
        self.run(match mode {
            TxMode::Read => dialect.begin_read,
            TxMode::Write => dialect.begin_write,
        })
    }
    /// Commits, unless qctl was interrupted: work stopped by Ctrl-C or
    /// SIGTERM is rolled back, never half kept.
    fn commit(&mut self) -> Result<()> {
        if crate::interrupt::interrupted() {
            let _ = self.rollback();
            return Err(QctlError::Interrupted.into());
        }
        self.run("COMMIT")
    }
    fn rollback(&mut self) -> Result<()> {
        self.run("ROLLBACK")
    }
    fn query(&mut self, stmt: &Stmt) -> Result<Vec<Row>>;
    fn execute(&mut self, stmt: &Stmt) -> Result<u64>;
    /// The clock the queue's times are judged by: the server's, where the
    /// dialect reads it.
    fn clock(&mut self) -> Result<DateTime<Utc>> {
        Ok(Utc::now())
    }

    /// A statement built earlier under `key` (see [`Backend::remember`]).
    fn memo(&mut self, _key: &str) -> Option<Stmt> {
        None
    }
    /// Keeps a built statement for the life of the connection (only for
    /// statements whose text and values do not change between runs).
    fn remember(&mut self, _key: String, _stmt: Stmt) {}

    /// The DDL `init` runs (table, then indexes; idempotent).
    fn init_statements(&self) -> Vec<String>;
    fn init(&mut self) -> Result<()>;
    /// Adds every job or none.
    fn enqueue(
        &mut self,
        jobs: &mut dyn Iterator<Item = Result<NewJob>>,
        return_ids: bool,
    ) -> Result<EnqueueOutcome>;
    /// Finished jobs per queue, inside the caller's read transaction:
    /// exact, or estimated on a big table unless `exact`.
    fn done_counts(&mut self, exact: bool, not_done: i64) -> Result<DoneCounts>;

    fn table_size(&mut self) -> Result<TableSize>;
    fn plan(&mut self, stmt: &Stmt, how: PlanHow) -> Result<Plan>;
    /// Whether re-planning with scans discouraged ([`PlanHow::forced`])
    /// means anything.
    fn can_force_plans(&self) -> bool {
        false
    }
    /// The parameters of an application's own statement: one entry per
    /// parameter number, with the type the server infers where it does.
    /// Fails when the database cannot prepare the statement.
    fn describe_params(&mut self, sql: &str) -> Result<Vec<Option<String>>>;
    /// Runs a read part (a SELECT without locking clause) once in a
    /// transaction that rolls back, and counts its work; `forced` with
    /// sequential scans discouraged, `with_plan` keeping the analyzed plan.
    /// None where the backend cannot count.
    fn measure(
        &mut self,
        _stmt: &Stmt,
        _forced: bool,
        _with_plan: bool,
    ) -> Result<Option<crate::explain::Measured>> {
        Ok(None)
    }
    fn index_state(&mut self, name: &Ident) -> Result<IndexState>;
    /// Creates indexes (without blocking writers where it can) and
    /// refreshes the planner's statistics.
    fn create_indexes(&mut self, specs: &[IndexSpec]) -> Result<()>;

    /// Who waits on whom.
    fn blocked(&mut self) -> Result<BlockedReport>;
    /// Whether [`Backend::locks`] has anything to show.
    fn supports_advisory_locks(&self) -> bool {
        false
    }
    /// Advisory locks held or awaited.
    fn locks(&mut self, _key: Option<LockKey>) -> Result<LocksReport> {
        Err(QctlError::usage(format!(
            "advisory locks are a PostgreSQL feature; {} has none (`qctl blocked` shows who holds \
             the database's locks)",
            self.name()
        )))
    }
    /// Drains a scratch copy of the queue table with concurrent claimers
    /// running qctl's own claim, and audits every job.
    fn bench(&mut self, request: &BenchRequest) -> Result<BenchReport>;

    /// Sets the session up for a run of maintenance batches (reap, purge),
    /// or back as it was (`on` false).
    fn batch_session(&mut self, _on: bool) -> Result<()> {
        Ok(())
    }
    /// Keeps other reapers of the same table out until dropped (SQLite
    /// serialises writers anyway).
    fn reap_lock(&mut self, _wait: bool) -> Result<Option<Box<dyn std::any::Any>>> {
        Ok(None)
    }
    /// Refuses to compare times when a column stores them in more than
    /// one way among the jobs in `status` (SQLite, where a text time sorts
    /// after every number).
    fn check_times(&mut self, _concept: Concept, _status: Status) -> Result<()> {
        Ok(())
    }
}

/// Opens the backend the URL names.
pub fn open(
    target: &Target,
    layout: &Layout,
    options: &ConnectOptions,
) -> Result<Box<dyn Backend + Send>> {
    match target {
        Target::Sqlite(sqlite) => Ok(Box::new(sqlite::SqliteBackend::open(
            sqlite,
            layout.clone(),
            options,
        )?)),
        Target::Postgres(postgres) => Ok(Box::new(postgres::PostgresBackend::open(
            postgres,
            layout.clone(),
            options,
        )?)),
        Target::Mysql(mysql) => Ok(Box::new(mysql::MysqlBackend::open(
            mysql,
            layout.clone(),
            options,
        )?)),
    }
}

/// The first value of each row of a catalog query, as text.
pub(crate) fn first_texts(rows: Vec<Row>) -> Vec<String> {
    rows.into_iter()
        .filter_map(|r| r.into_iter().next().and_then(Value::into_text))
        .collect()
}

/// The first value of a catalog query's first row, as text.
pub(crate) fn first_text(rows: Vec<Row>) -> Option<String> {
    rows.into_iter()
        .next()
        .and_then(|r| r.into_iter().next())
        .and_then(Value::into_text)
}

/// Runs `--layout auto` where the command reads a table: `init` creates
/// qctl's own, and `blocked` on SQLite must not read the file first.
pub(crate) fn auto_layout(
    backend: &mut dyn crate::presets::Catalog,
    options: &ConnectOptions,
    layout: Layout,
) -> Result<Layout> {
    let Some(spec) = &options.auto else {
        return Ok(layout);
    };
    if matches!(options.access, Access::Create | Access::Print) {
        return Ok(layout);
    }
    let layout = crate::presets::choose(backend, spec, layout)?;
    if options.sql_log.enabled
        && let Some(why) = &layout.detected
    {
        eprintln!("qctl: layout auto: {}", crate::output::sanitize(why));
    }
    Ok(layout)
}

/// Logs each SQL statement and its time to stderr with `-v`.
#[derive(Debug, Clone, Default)]
pub struct SqlLog {
    pub enabled: bool,
}

impl SqlLog {
    pub fn start(&self) -> Option<std::time::Instant> {
        self.enabled.then(std::time::Instant::now)
    }

    pub fn finish(&self, started: Option<std::time::Instant>, sql: &str, note: &str) {
        if let Some(started) = started {
            let sql = sql.split_whitespace().collect::<Vec<_>>().join(" ");
            eprintln!(
                "qctl: sql ({:.3} ms{note}): {}",
                started.elapsed().as_secs_f64() * 1000.0,
                crate::output::sanitize(&sql)
            );
        }
    }
}

/// Fills in a bench run from what the workers saw: the ids each processed
/// and the claim latencies.
pub fn bench_run(
    mode: BenchMode,
    jobs: u64,
    seconds: f64,
    claimed: Vec<Vec<crate::model::JobId>>,
    mut latencies: Vec<f64>,
) -> crate::model::BenchRun {
    let mut seen = std::collections::HashMap::new();
    for id in claimed.into_iter().flatten() {
        *seen.entry(id).or_insert(0u64) += 1;
    }
    let duplicates = seen.values().filter(|n| **n > 1).count() as u64;
    let processed = seen.values().filter(|n| **n == 1).count() as u64;
    crate::model::BenchRun {
        mode: mode.name(),
        seconds,
        jobs_per_second: processed as f64 / seconds.max(1e-9),
        claim_latency_ms: crate::model::Latency::of(&mut latencies),
        processed,
        duplicates,
        missing: jobs.saturating_sub(seen.len() as u64),
    }
}
