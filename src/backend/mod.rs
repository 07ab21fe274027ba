//! The seam between commands and databases.
//!
//! Commands talk to a [`Backend`]; each database has one implementation in
//! its own file, and all SQL text of a dialect lives there, generated from
//! the [`Layout`]. The backend is chosen from the URL, as diesel's
//! `Backend::for_url` does.

pub mod pg_connect;
pub mod postgres;
pub mod sqlite;
pub mod sqlite_plan;

use std::time::{Duration, Instant};

use anyhow::Result;
use chrono::{DateTime, Utc};

use crate::explain::ExplainReport;
use crate::layout::{Layout, Status};
use crate::model::{
    EnqueueOutcome, FinishOutcome, Job, JobId, NewJob, PurgeOutcome, ReapOutcome, RetryOutcome,
    Stats,
};
use crate::target::Target;

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
    /// may be missing. SQLite treats it as `Print`: its bench uses a
    /// scratch file.
    Scratch,
}

/// Connection options that are not part of the URL.
#[derive(Debug, Clone)]
pub struct ConnectOptions {
    pub access: Access,
    /// How long to wait for a lock: SQLite's write lock, PostgreSQL's
    /// lock_timeout.
    pub busy_timeout: Duration,
    /// PostgreSQL's statement_timeout for every statement qctl runs.
    pub statement_timeout: Duration,
    /// How long to wait for a PostgreSQL connection (PGCONNECT_TIMEOUT and
    /// connect_timeout in the URL win).
    pub connect_timeout: Duration,
    pub sql_log: SqlLog,
}

impl ConnectOptions {
    /// qctl's defaults (the CLI's): 5s lock wait, 30s statements, 10s to
    /// connect, no SQL log.
    pub fn new(access: Access) -> ConnectOptions {
        ConnectOptions {
            access,
            busy_timeout: Duration::from_secs(5),
            statement_timeout: Duration::from_secs(30),
            connect_timeout: Duration::from_secs(10),
            sql_log: SqlLog::default(),
        }
    }
}

/// Which running jobs count as stale.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum StaleRule {
    /// The lease deadline has passed.
    Lease,
    /// The lock is older than this.
    LockAge(Duration),
}

impl StaleRule {
    pub fn name(self) -> &'static str {
        match self {
            StaleRule::Lease => "lease",
            StaleRule::LockAge(_) => "lock_age",
        }
    }
}

#[derive(Debug, Clone)]
pub struct StatsRequest {
    pub exact: bool,
    /// `None` when the layout cannot judge staleness (no lease column and
    /// no `--timeout`).
    pub stale: Option<StaleRule>,
}

/// A status filter for `list`: a canonical status or a derived one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListStatus {
    Is(Status),
    Ready,
    Scheduled,
    Stale,
}

#[derive(Debug, Clone)]
pub struct ListRequest {
    pub queue: Option<String>,
    pub status: Option<ListStatus>,
    pub stale: Option<StaleRule>,
    pub limit: u64,
}

#[derive(Debug, Clone)]
pub struct ClaimRequest {
    pub worker: String,
    pub queue: Option<String>,
    /// `None` when the layout has no lease column.
    pub lease: Option<Duration>,
}

#[derive(Debug, Clone)]
pub enum Finish {
    Complete,
    Fail {
        error: Option<String>,
        retry_delay: Duration,
        /// Dead-letter now, even with attempts left.
        dead_letter: bool,
    },
}

#[derive(Debug, Clone)]
pub struct FinishRequest {
    pub id: JobId,
    pub worker: String,
    /// Fence on the attempt number too, when the worker knows it.
    pub attempt: Option<i64>,
    pub finish: Finish,
}

impl FinishRequest {
    /// Whether the job is still the worker's to finish: running, under
    /// its name, and on the attempt it claimed when it says which.
    pub fn holds(&self, job: &crate::model::Job) -> bool {
        job.status == "running"
            && job.locked_by.as_deref() == Some(self.worker.as_str())
            && self.attempt.is_none_or(|a| job.attempts == Some(a))
    }
}

/// Refuses a job the layout cannot store: a queue other than `default`
/// without a queue column, or a future due time without a run_at column.
pub fn check_new_job(layout: &Layout, job: &NewJob, now: DateTime<Utc>) -> Result<()> {
    use crate::error::QctlError;
    use crate::layout::Concept;
    if layout.column(Concept::Queue).is_none() && job.queue != "default" {
        return Err(QctlError::LayoutLacks {
            layout: layout.preset.clone(),
            concept: "queue",
            needed_for: format!("a job for queue '{}' needs", job.queue),
        }
        .into());
    }
    if layout.column(Concept::RunAt).is_none() && job.run_at > now + chrono::Duration::seconds(1) {
        return Err(QctlError::LayoutLacks {
            layout: layout.preset.clone(),
            concept: "run_at",
            needed_for: "a delayed job (--run-at, --delay, run_at) needs".into(),
        }
        .into());
    }
    Ok(())
}

#[derive(Debug, Clone)]
pub enum RetrySelection {
    Ids(Vec<JobId>),
    All { queue: Option<String> },
}

#[derive(Debug, Clone)]
pub struct ReapRequest {
    pub rule: StaleRule,
    pub queue: Option<String>,
    pub dry_run: bool,
    pub batch_size: u64,
    /// Wait for another reap of the same table to finish instead of
    /// stopping (PostgreSQL; SQLite serialises writers anyway).
    pub wait: bool,
}

#[derive(Debug, Clone)]
pub struct PurgeRequest {
    pub status: Status,
    pub cutoff: DateTime<Utc>,
    pub queue: Option<String>,
    pub dry_run: bool,
    pub batch_size: u64,
}

/// Which hot queries `explain-claim` checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExplainTarget {
    Claim,
    Reap,
    Purge,
}

impl ExplainTarget {
    pub fn name(self) -> &'static str {
        match self {
            ExplainTarget::Claim => "claim",
            ExplainTarget::Reap => "reap",
            ExplainTarget::Purge => "purge",
        }
    }
}

#[derive(Debug, Clone)]
pub struct ExplainRequest {
    pub queries: Vec<ExplainTarget>,
    /// The queue the claim query is explained for.
    pub queue: Option<String>,
    /// A backlog larger than this makes a temporary sort an error.
    pub sort_threshold: u64,
    /// The application's own query, instead of qctl's claim query.
    pub custom_sql: Option<String>,
    /// Run the query (PostgreSQL EXPLAIN ANALYZE) in a transaction that
    /// always rolls back.
    pub analyze: bool,
}

/// How claimers take jobs in `qctl bench`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BenchMode {
    /// `FOR UPDATE SKIP LOCKED`: qctl's way on PostgreSQL.
    SkipLocked,
    /// Plain `FOR UPDATE`: every claimer queues behind the first row lock.
    ForUpdate,
    /// SQLite's short `BEGIN IMMEDIATE` claim.
    Immediate,
}

impl BenchMode {
    pub fn name(self) -> &'static str {
        match self {
            BenchMode::SkipLocked => "skip_locked",
            BenchMode::ForUpdate => "for_update",
            BenchMode::Immediate => "begin_immediate",
        }
    }
}

#[derive(Debug, Clone)]
pub struct BenchRequest {
    pub workers: usize,
    pub jobs: u64,
    /// How long a worker holds its claim transaction open, as a worker
    /// that processes inside it does.
    pub hold: Duration,
    pub modes: Vec<BenchMode>,
}

/// One database holding a queue table.
pub trait Backend {
    fn name(&self) -> &'static str;
    fn layout(&self) -> &Layout;
    /// The DDL `init` runs: table, then indexes; idempotent.
    fn init_statements(&self) -> Vec<String>;
    fn init(&mut self) -> Result<()>;
    /// Adds every job or none.
    fn enqueue(
        &mut self,
        jobs: &mut dyn Iterator<Item = Result<NewJob>>,
        return_ids: bool,
    ) -> Result<EnqueueOutcome>;
    fn stats(&mut self, request: &StatsRequest) -> Result<Stats>;
    fn list(&mut self, request: &ListRequest) -> Result<Vec<Job>>;
    fn show(&mut self, id: &JobId) -> Result<Job>;
    fn claim(&mut self, request: &ClaimRequest) -> Result<Option<Job>>;
    fn finish(&mut self, request: &FinishRequest) -> Result<FinishOutcome>;
    fn retry(&mut self, selection: &RetrySelection, batch_size: u64) -> Result<RetryOutcome>;
    fn reap(&mut self, request: &ReapRequest) -> Result<ReapOutcome>;
    fn purge(&mut self, request: &PurgeRequest) -> Result<PurgeOutcome>;
    fn explain(&mut self, request: &ExplainRequest) -> Result<ExplainReport>;
    /// Creates indexes `explain-claim` suggested and refreshes statistics.
    fn apply_indexes(&mut self, statements: &[String]) -> Result<()>;
    /// Drains a scratch queue with concurrent claimers, never the user's
    /// table, and audits every job.
    fn bench(&mut self, request: &BenchRequest) -> Result<crate::model::BenchReport>;
    /// Who waits on whom (PostgreSQL sessions; SQLite file locks).
    fn blocked(&mut self) -> Result<Blocked>;
    /// Advisory locks held or awaited (PostgreSQL only).
    fn locks(&mut self, key: Option<LockKey>) -> Result<crate::model::LocksReport>;
}

/// What `qctl blocked` found, in the backend's own terms.
#[derive(Debug, Clone, serde::Serialize)]
#[serde(untagged)]
pub enum Blocked {
    Postgres(crate::model::BlockedReport),
    Sqlite(crate::model::SqliteLockReport),
}

/// An advisory lock key to filter on: `--key 987654321` or `--key 11,100`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LockKey {
    Bigint(i64),
    Pair(i32, i32),
}

impl LockKey {
    pub fn parse(text: &str) -> Result<LockKey, String> {
        let bad =
            || format!("invalid lock key '{text}': give a bigint (987654321) or two int4 (11,100)");
        match text.split_once(',') {
            Some((a, b)) => Ok(LockKey::Pair(
                a.trim().parse().map_err(|_| bad())?,
                b.trim().parse().map_err(|_| bad())?,
            )),
            None => text.trim().parse().map(LockKey::Bigint).map_err(|_| bad()),
        }
    }

    pub fn matches(self, key: &serde_json::Value) -> bool {
        match self {
            LockKey::Bigint(n) => key.as_i64() == Some(n),
            LockKey::Pair(a, b) => *key == serde_json::json!([a, b]),
        }
    }
}

/// Fills in a bench run from what the workers saw: the ids each processed
/// and the claim latencies.
pub fn bench_run(
    mode: BenchMode,
    jobs: u64,
    seconds: f64,
    claimed: Vec<Vec<i64>>,
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

/// Opens the backend the URL names.
pub fn open(
    target: &Target,
    layout: &Layout,
    options: &ConnectOptions,
) -> Result<Box<dyn Backend>> {
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
    }
}

/// Logs each SQL statement and its time to stderr with `-v`.
#[derive(Debug, Clone, Default)]
pub struct SqlLog {
    pub enabled: bool,
}

impl SqlLog {
    pub fn start(&self) -> Option<Instant> {
        self.enabled.then(Instant::now)
    }

    pub fn finish(&self, started: Option<Instant>, sql: &str, note: &str) {
        if let Some(started) = started {
            let sql = sql.split_whitespace().collect::<Vec<_>>().join(" ");
            eprintln!(
                "qctl: sql ({:.3} ms{note}): {sql}",
                started.elapsed().as_secs_f64() * 1000.0
            );
        }
    }
}

/// Whether a job that stopped with `attempts` of `max_attempts` used has
/// none left. The one rule behind reap, fail and the dead-letter state.
pub fn attempts_exhausted(attempts: Option<i64>, max_attempts: Option<i64>) -> bool {
    matches!((attempts, max_attempts), (Some(done), Some(max)) if done >= max)
}

/// What reap does with a stale job: requeue it while attempts remain.
pub fn reap_action(job: &crate::model::Job) -> crate::model::ReapAction {
    if attempts_exhausted(job.attempts, job.max_attempts) {
        crate::model::ReapAction::DeadLetter
    } else {
        crate::model::ReapAction::Requeue
    }
}

/// The last-error text reap records, saying what it did and why.
pub fn reap_note(
    action: crate::model::ReapAction,
    rule: StaleRule,
    job: &crate::model::Job,
) -> String {
    let why = match rule {
        StaleRule::Lease => "lease expired".to_string(),
        StaleRule::LockAge(timeout) => {
            format!(
                "locked longer than {}",
                crate::duration::format_duration(timeout)
            )
        }
    };
    let worker = job.locked_by.as_deref().unwrap_or("unknown");
    match action {
        crate::model::ReapAction::Requeue => {
            format!("requeued by qctl reap: {why} (worker {worker})")
        }
        crate::model::ReapAction::DeadLetter => format!(
            "dead-lettered by qctl reap: attempts exhausted ({} of {}), {why} (worker {worker})",
            job.attempts.unwrap_or(0),
            job.max_attempts.unwrap_or(0)
        ),
    }
}

/// An error part-way through a batched command, saying what the batches
/// before it committed: they stand, unlike exit 2's usual "nothing changed".
pub fn stopped_after(err: anyhow::Error, done: usize, verb: &str) -> anyhow::Error {
    if done == 0 {
        err
    } else {
        err.context(format!(
            "stopped part-way: {done} jobs were already {verb} in committed batches, and stay so"
        ))
    }
}
