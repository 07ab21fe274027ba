//! What commands ask of the queue: plain requests, resolved from the
//! command line, that the engine and the SQL core take.

use std::time::Duration;

use anyhow::Result;
use chrono::{DateTime, Utc};

use crate::layout::{Concept, Layout, Status};
use crate::model::{JobId, StaleRule};

/// What `doctor` checks against.
#[derive(Debug, Clone)]
pub struct DoctorRequest {
    /// Stale means locked longer than this (else the layout's own rule).
    pub timeout: Option<Duration>,
    /// More stale jobs than this fails.
    pub max_stale: i64,
    /// A ready job older than this fails.
    pub max_ready_age: Option<Duration>,
    /// A session waiting on a lock longer than this fails.
    pub max_wait: Duration,
    /// A temporary sort of more rows than this is an error.
    pub sort_threshold: u64,
    /// A standby's replay further behind than this fails.
    pub max_lag: Duration,
    /// A Galera cluster of fewer nodes fails (else the nodes its address
    /// lists).
    pub cluster_size: Option<i64>,
    /// Warnings fail too.
    pub strict: bool,
}

#[derive(Debug, Clone)]
pub struct StatsRequest {
    pub exact: bool,
    /// `None` when the layout cannot judge staleness (no lease column and
    /// no `--timeout`).
    pub stale: Option<StaleRule>,
}

/// A status filter for `list`: a state, a derived one, or the values no
/// state claims.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListStatus {
    Is(Status),
    Ready,
    Scheduled,
    Stale,
    Other,
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
    /// The fence token claim returned, as given: the finish changes
    /// nothing unless the job still carries it.
    pub fence: Option<String>,
    pub finish: Finish,
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
    /// Jobs in the first batch.
    pub batch_size: u64,
    /// Batches grow while no other client is at work on the database and
    /// shrink when one is (see [`crate::db::Session::others_active`]);
    /// false keeps every batch at `batch_size`.
    pub adapt: bool,
    /// Wait for another reap of the same table to finish instead of
    /// stopping (PostgreSQL; SQLite serialises writers anyway).
    pub wait: bool,
    /// How many reaped jobs the report lists (the counts cover all).
    pub show: usize,
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
    /// How long a worker keeps a claimed job before completing it, as a
    /// worker that processes it does.
    pub hold: Duration,
    pub modes: Vec<BenchMode>,
    /// Leave each scratch copy in place for the user to inspect.
    pub keep: bool,
}

/// An advisory lock key to filter on: `--key 987654321`, `--key 11,100`,
/// or a MySQL user lock's name (`--key maintenance`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LockKey {
    Bigint(i64),
    Pair(i32, i32),
    Name(String),
}

impl LockKey {
    pub fn parse(text: &str) -> Result<LockKey, String> {
        let bad = || {
            format!(
                "invalid lock key '{text}': give a bigint (987654321), two int4 (11,100) or a \
                 lock name"
            )
        };
        match text.split_once(',') {
            Some((a, b)) => Ok(LockKey::Pair(
                a.trim().parse().map_err(|_| bad())?,
                b.trim().parse().map_err(|_| bad())?,
            )),
            None if text.trim().is_empty() => Err(bad()),
            None => Ok(text
                .trim()
                .parse()
                .map(LockKey::Bigint)
                .unwrap_or_else(|_| LockKey::Name(text.to_string()))),
        }
    }

    pub fn matches(&self, key: &serde_json::Value) -> bool {
        match self {
            LockKey::Bigint(n) => key.as_i64() == Some(*n) || key.as_str() == Some(&n.to_string()),
            LockKey::Pair(a, b) => *key == serde_json::json!([a, b]),
            LockKey::Name(name) => key.as_str() == Some(name.as_str()),
        }
    }

    /// The key as a MySQL user lock's name.
    pub fn name(&self) -> String {
        match self {
            LockKey::Bigint(n) => n.to_string(),
            LockKey::Pair(a, b) => format!("{a},{b}"),
            LockKey::Name(name) => name.clone(),
        }
    }
}

/// Which running jobs are stale. A system with a rule of its own (a
/// heartbeat or check-in age, `{stale_seconds}` in its predicate or reap
/// steps) judges by it, `--timeout` setting its threshold (else the
/// system's default, `stale_after`). Otherwise `--timeout` is a lock age,
/// and without it the lease, or the lock age the system's rescuer waits
/// for; else staleness is unknowable.
pub fn stale_rule(layout: &Layout, timeout: Option<Duration>) -> Option<StaleRule> {
    let own = layout.stale.is_some() || layout.steps.contains_key("reap");
    let threshold = layout.stale.as_deref().is_some_and(takes_threshold)
        || layout
            .steps
            .get("reap")
            .is_some_and(|steps| steps.iter().any(|s| takes_threshold(s)));
    match timeout {
        Some(timeout) if own && threshold => Some(StaleRule::Layout(timeout)),
        Some(timeout) => Some(StaleRule::LockAge(timeout)),
        None if own => Some(StaleRule::Layout(layout.stale_after.unwrap_or_default())),
        None if layout.column(Concept::LockedUntil).is_some() => Some(StaleRule::Lease),
        None => layout.stale_after.map(StaleRule::LockAge),
    }
}

/// Whether a system's SQL takes the stale threshold.
fn takes_threshold(sql: &str) -> bool {
    sql.contains("{stale_seconds}") || sql.contains("{stale_micros}")
}

/// The queue a worker-style command uses when none is given: `default`
/// where the layout has queues.
pub fn default_queue(layout: &Layout, queue: Option<&str>) -> Option<String> {
    queue
        .map(str::to_string)
        .or_else(|| layout.column(Concept::Queue).map(|_| "default".to_string()))
}
