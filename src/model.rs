//! The plain data that commands return and renderers print.

use chrono::{DateTime, SecondsFormat, Utc};
use serde::{Serialize, Serializer};

/// The attempts a job may be given: at least one, and what every
/// database's integer column holds.
pub const MAX_ATTEMPTS: std::ops::RangeInclusive<i64> = 1..=i32::MAX as i64;

/// Which running jobs count as stale.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum StaleRule {
    /// The lease deadline has passed.
    Lease,
    /// The lock is older than this.
    LockAge(std::time::Duration),
    /// The layout's own rule (a worker that stopped sending heartbeats),
    /// with its threshold: the system's default, or `--timeout`.
    Layout(std::time::Duration),
}

impl StaleRule {
    pub fn name(self) -> &'static str {
        match self {
            StaleRule::Lease => "lease",
            StaleRule::LockAge(_) => "lock_age",
            StaleRule::Layout(_) => "layout",
        }
    }
}

/// A job id: a number for integer id columns, text otherwise (spec §6).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, schemars::JsonSchema)]
#[serde(untagged)]
pub enum JobId {
    Int(i64),
    Text(String),
}

impl JobId {
    /// Parses an id typed by a user: a number as a number spells it
    /// (`42`, `-1`); anything else as typed, so a text id `007` or `+1`
    /// stays itself (an integer column still finds 7 by it: each backend
    /// compares the text as a number there).
    pub fn parse(text: &str) -> JobId {
        match text.parse::<i64>() {
            Ok(n) if n.to_string() == text => JobId::Int(n),
            _ => JobId::Text(text.to_string()),
        }
    }
}

impl std::fmt::Display for JobId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            JobId::Int(id) => write!(f, "{id}"),
            JobId::Text(id) => f.write_str(id),
        }
    }
}

/// RFC 3339 UTC, whole seconds unless the value has a fraction.
pub fn rfc3339(time: &DateTime<Utc>) -> String {
    time.to_rfc3339_opts(SecondsFormat::AutoSi, true)
}

fn serialize_time<S: Serializer>(time: &Option<DateTime<Utc>>, s: S) -> Result<S::Ok, S::Error> {
    match time {
        Some(time) => s.serialize_str(&rfc3339(time)),
        None => s.serialize_none(),
    }
}

/// One job as qctl sees it, whatever the layout.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Job {
    pub id: JobId,
    pub queue: Option<String>,
    /// Canonical status name, or the stored value when it maps to none.
    pub status: String,
    /// The stored JSON as stored, or a string when it is not JSON.
    #[schemars(with = "serde_json::Value")]
    pub payload: Payload,
    pub attempts: Option<i64>,
    pub max_attempts: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub priority: Option<i64>,
    pub locked_by: Option<String>,
    /// The token that fences `complete` and `fail` (`--fence`): the
    /// attempts counter and the claim's lock time in microseconds
    /// (`3-1764870000123456`), or whichever of the two the layout has.
    #[schemars(with = "Option<String>")]
    pub fence: Option<crate::layout::FenceToken>,
    #[serde(serialize_with = "serialize_time")]
    #[schemars(with = "Option<String>")]
    pub run_at: Option<DateTime<Utc>>,
    #[serde(serialize_with = "serialize_time")]
    #[schemars(with = "Option<String>")]
    pub locked_at: Option<DateTime<Utc>>,
    #[serde(serialize_with = "serialize_time")]
    #[schemars(with = "Option<String>")]
    pub locked_until: Option<DateTime<Utc>>,
    #[serde(serialize_with = "serialize_time")]
    #[schemars(with = "Option<String>")]
    pub created_at: Option<DateTime<Utc>>,
    #[serde(serialize_with = "serialize_time")]
    #[schemars(with = "Option<String>")]
    pub updated_at: Option<DateTime<Utc>>,
    #[serde(
        serialize_with = "serialize_time",
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(with = "Option<String>")]
    pub finished_at: Option<DateTime<Utc>>,
    pub last_error: Option<String>,
}

/// A stored payload, shown exactly as stored: JSON text is passed through
/// byte for byte (no number is rounded through a float); what is not JSON
/// (a text column holding anything) is shown as a JSON string.
#[derive(Debug, Clone)]
pub enum Payload {
    Json(Box<serde_json::value::RawValue>),
    NotJson(String),
    Null,
}

impl Payload {
    pub fn from_text(text: String) -> Payload {
        if crate::json::validate(&text).is_err() {
            return Payload::NotJson(text);
        }
        match serde_json::value::RawValue::from_string(text) {
            Ok(raw) => Payload::Json(raw),
            Err(err) => Payload::NotJson(err.to_string()),
        }
    }

    /// The payload as one line of JSON text.
    pub fn text(&self) -> String {
        match self {
            Payload::Json(raw) => raw.get().to_string(),
            Payload::NotJson(text) => serde_json::to_string(text).unwrap_or_default(),
            Payload::Null => "null".into(),
        }
    }
}

impl Serialize for Payload {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Payload::Json(raw) => raw.serialize(s),
            Payload::NotJson(text) => s.serialize_str(text),
            Payload::Null => s.serialize_none(),
        }
    }
}

/// A job to add.
#[derive(Debug, Clone)]
pub struct NewJob {
    /// Compact JSON text, already validated.
    pub payload: String,
    pub queue: String,
    pub run_at: DateTime<Utc>,
    /// `run_at` was computed from this machine's clock (now, or now plus a
    /// delay), so a backend with a clock of its own may shift it.
    pub run_at_from_now: bool,
    pub max_attempts: i64,
}

/// Counts for one queue (or the total), spec §6.
#[derive(Debug, Clone, Default, Serialize, schemars::JsonSchema)]
pub struct Counts {
    pub pending: i64,
    pub ready: i64,
    pub scheduled: i64,
    pub running: i64,
    /// `None` when staleness cannot be judged: no lease column and no
    /// `--timeout`.
    pub stale: Option<i64>,
    pub done: i64,
    pub failed: i64,
    pub cancelled: i64,
    /// Jobs whose stored status no state claims.
    pub other: i64,
    /// Those jobs by stored value (`null` for a NULL status).
    pub other_values: std::collections::BTreeMap<String, i64>,
    pub oldest_ready_age_seconds: Option<f64>,
    /// The fields that are estimates rather than exact counts.
    pub estimated: Vec<&'static str>,
}

impl Counts {
    /// Folds another queue's counts into a total.
    pub fn add(&mut self, other: &Counts) {
        self.pending += other.pending;
        self.ready += other.ready;
        self.scheduled += other.scheduled;
        self.running += other.running;
        self.stale = match (self.stale, other.stale) {
            (Some(a), Some(b)) => Some(a + b),
            _ => None,
        };
        self.done += other.done;
        self.failed += other.failed;
        self.cancelled += other.cancelled;
        self.other += other.other;
        for (value, n) in &other.other_values {
            *self.other_values.entry(value.clone()).or_default() += n;
        }
        self.oldest_ready_age_seconds = match (
            self.oldest_ready_age_seconds,
            other.oldest_ready_age_seconds,
        ) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
        for field in &other.estimated {
            if !self.estimated.contains(field) {
                self.estimated.push(field);
            }
        }
    }
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct QueueCounts {
    pub queue: Option<String>,
    #[serde(flatten)]
    pub counts: Counts,
}

impl Stats {
    /// The document from per-queue counts: the total, and the `estimated`
    /// states marked so everywhere.
    pub fn from_queues(
        backend: &'static str,
        table: String,
        by_queue: std::collections::BTreeMap<Option<String>, Counts>,
        estimated: &[&'static str],
        stale: Option<StaleRule>,
    ) -> Stats {
        let mut total = Counts {
            stale: stale.map(|_| 0),
            ..Counts::default()
        };
        let queues = by_queue
            .into_iter()
            .map(|(queue, mut counts)| {
                counts.estimated.extend(estimated);
                total.add(&counts);
                QueueCounts { queue, counts }
            })
            .collect();
        for field in estimated {
            if !total.estimated.contains(field) {
                total.estimated.push(field);
            }
        }
        Stats {
            backend,
            table,
            queues,
            total,
            stale_rule: stale.map(StaleRule::name),
            stale_timeout_seconds: match stale {
                Some(StaleRule::LockAge(t) | StaleRule::Layout(t)) => Some(t.as_secs_f64()),
                _ => None,
            },
            has_cancelled: false,
            has_queue_column: false,
            unmatched_not_looked_for: false,
            notes: Vec::new(),
            server: None,
        }
    }
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Stats {
    pub backend: &'static str,
    pub table: String,
    pub queues: Vec<QueueCounts>,
    pub total: Counts,
    /// The staleness rule used: `lease` or `lock_age`.
    pub stale_rule: Option<&'static str>,
    pub stale_timeout_seconds: Option<f64>,
    /// Whether the table has a cancelled state (the table view shows the
    /// column only then).
    #[serde(skip)]
    pub has_cancelled: bool,
    /// Whether the table has a queue column (metrics of an empty table
    /// without one still have a series to show).
    #[serde(skip)]
    pub has_queue_column: bool,
    /// The rows no state's predicate matches were not looked for (a big
    /// table told by predicates, without --exact); a note says so.
    #[serde(skip)]
    pub unmatched_not_looked_for: bool,
    /// What the reader should know about these numbers (a stale estimate).
    pub notes: Vec<String>,
    /// The server the counts were read on, where it is part of a
    /// replicated setup or a cluster (its role and lag).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server: Option<Box<ServerRole>>,
}

/// One refresh of `stats --watch`: the counts, and from the second
/// refresh on how they moved since the one before.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct WatchFrame {
    #[serde(serialize_with = "serialize_instant")]
    #[schemars(with = "String")]
    pub sampled_at: DateTime<Utc>,
    /// How often the view refreshes, as asked.
    #[serde(skip)]
    pub every: std::time::Duration,
    #[serde(flatten)]
    pub stats: Stats,
    /// `null` on the first refresh.
    pub trend: Option<Trend>,
}

fn serialize_instant<S: Serializer>(time: &DateTime<Utc>, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&rfc3339(time))
}

/// How the counts moved between two refreshes.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Trend {
    /// Seconds between the two samples.
    pub seconds: f64,
    /// The finished rate rests on estimated `done` counts (big tables
    /// without `--exact`).
    pub estimated: bool,
    #[serde(flatten)]
    pub total: Rates,
    pub queues: Vec<QueueRates>,
}

/// Per-interval rates: jobs finished (done, failed or cancelled) per
/// second, and how the backlog moved. Purging or retrying finished jobs
/// during the interval lowers the finished rate, even below zero.
#[derive(Debug, Clone, Copy, Default, Serialize, schemars::JsonSchema)]
pub struct Rates {
    pub finished_per_second: f64,
    pub ready_delta: i64,
    pub pending_delta: i64,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct QueueRates {
    pub queue: Option<String>,
    #[serde(flatten)]
    pub rates: Rates,
}

impl Rates {
    fn between(before: &Counts, after: &Counts, seconds: f64) -> Rates {
        let finished = |c: &Counts| c.done + c.failed + c.cancelled;
        Rates {
            finished_per_second: (finished(after) - finished(before)) as f64 / seconds,
            ready_delta: after.ready - before.ready,
            pending_delta: after.pending - before.pending,
        }
    }
}

impl Trend {
    /// The movement from one sample to the next, `seconds` apart; a queue
    /// that was not there before counts from zero.
    pub fn between(before: &Stats, after: &Stats, seconds: f64) -> Trend {
        let seconds = seconds.max(1e-3);
        let empty = Counts::default();
        let queues = after
            .queues
            .iter()
            .map(|q| {
                let previous = before
                    .queues
                    .iter()
                    .find(|p| p.queue == q.queue)
                    .map_or(&empty, |p| &p.counts);
                QueueRates {
                    queue: q.queue.clone(),
                    rates: Rates::between(previous, &q.counts, seconds),
                }
            })
            .collect();
        Trend {
            seconds,
            estimated: !before.total.estimated.is_empty() || !after.total.estimated.is_empty(),
            total: Rates::between(&before.total, &after.total, seconds),
            queues,
        }
    }

    /// The rates of one queue (zero when it has none).
    pub fn of(&self, queue: &Option<String>) -> Rates {
        self.queues
            .iter()
            .find(|q| &q.queue == queue)
            .map_or_else(Rates::default, |q| q.rates)
    }
}

/// What reap does (or would do) to one stale job.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ReapAction {
    Requeue,
    DeadLetter,
    /// The system drops the firing without failing the job (Quartz's
    /// recovery of a job that does not ask to be recovered).
    Release,
    /// Its cancellation was asked while it ran: cancelled, as the
    /// system's rescuer does (River).
    Cancel,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct ReapedJob {
    pub id: JobId,
    pub queue: Option<String>,
    pub action: ReapAction,
    pub attempts: Option<i64>,
    pub max_attempts: Option<i64>,
    pub locked_by: Option<String>,
    #[serde(serialize_with = "serialize_time")]
    #[schemars(with = "Option<String>")]
    pub locked_at: Option<DateTime<Utc>>,
}

/// A stale job reap leaves as it is, and why: the system's own rescue
/// will take it, or qctl cannot do for it what the system would (a Quartz
/// firing whose JobDataMap qctl cannot extend).
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct LeftJob {
    pub id: JobId,
    pub queue: Option<String>,
    pub locked_by: Option<String>,
    #[serde(serialize_with = "serialize_time")]
    #[schemars(with = "Option<String>")]
    pub locked_at: Option<DateTime<Utc>>,
    pub reason: String,
}

impl ReapOutcome {
    pub fn new(dry_run: bool, show: usize) -> ReapOutcome {
        ReapOutcome {
            dry_run,
            requeued: 0,
            dead_lettered: 0,
            released: 0,
            cancelled: 0,
            left: 0,
            jobs: Vec::new(),
            jobs_not_shown: 0,
            left_jobs: Vec::new(),
            left_jobs_not_shown: 0,
            batches: 0,
            show,
        }
    }

    /// Counts a stale job reap leaves, and lists it while the list is
    /// shorter than asked, as `record` does for reaped jobs.
    pub fn record_left(&mut self, job: LeftJob) {
        self.left += 1;
        if self.left_jobs.len() < self.show {
            self.left_jobs.push(job);
        } else {
            self.left_jobs_not_shown += 1;
        }
    }

    /// Counts what reap did (or would do) to one job, and lists it while
    /// the list is shorter than asked: memory stays flat however many
    /// jobs are stale.
    pub fn record(&mut self, job: ReapedJob) {
        match job.action {
            ReapAction::Requeue => self.requeued += 1,
            ReapAction::DeadLetter => self.dead_lettered += 1,
            ReapAction::Release => self.released += 1,
            ReapAction::Cancel => self.cancelled += 1,
        }
        if self.jobs.len() < self.show {
            self.jobs.push(job);
        } else {
            self.jobs_not_shown += 1;
        }
    }

    /// Records a committed (or, in a dry run, rolled-back) batch, each
    /// job passed to `each` first (the stream).
    pub fn record_batch(
        &mut self,
        jobs: Vec<ReapedJob>,
        each: &mut dyn FnMut(&ReapedJob) -> anyhow::Result<()>,
    ) -> anyhow::Result<()> {
        self.batches += 1;
        for job in jobs {
            each(&job)?;
            self.record(job);
        }
        Ok(())
    }

    pub fn total(&self) -> u64 {
        self.requeued + self.dead_lettered + self.released + self.cancelled
    }
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct ReapOutcome {
    pub dry_run: bool,
    pub requeued: u64,
    pub dead_lettered: u64,
    /// Firings the system drops without failing the job (Quartz).
    pub released: u64,
    /// Jobs cancelled, their cancellation asked while they ran (River).
    pub cancelled: u64,
    /// Stale jobs reap leaves as they are (each with its reason in
    /// `left_jobs`); any makes reap exit 1.
    pub left: u64,
    /// The first `--show` jobs reaped.
    pub jobs: Vec<ReapedJob>,
    /// Jobs reaped beyond those listed.
    pub jobs_not_shown: u64,
    /// The first `--show` stale jobs left, each with why.
    pub left_jobs: Vec<LeftJob>,
    /// Stale jobs left beyond those listed.
    pub left_jobs_not_shown: u64,
    pub batches: u64,
    #[serde(skip)]
    pub show: usize,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct PurgeOutcome {
    pub dry_run: bool,
    pub status: &'static str,
    #[serde(serialize_with = "serialize_time")]
    #[schemars(with = "Option<String>")]
    pub cutoff: Option<DateTime<Utc>>,
    /// Jobs deleted, or that would be deleted with `dry_run`.
    pub purged: u64,
    pub batches: u64,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct RetryOutcome {
    pub dry_run: bool,
    pub retried: u64,
    pub ids: Vec<JobId>,
}

#[derive(Debug, Clone, Default, Serialize, schemars::JsonSchema)]
pub struct EnqueueOutcome {
    pub enqueued: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ids: Option<Vec<JobId>>,
    /// The load's id in the load ledger (`--load-id`, or made for a bulk
    /// load where the ledger exists).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub load_id: Option<String>,
    /// The ledger already held this load: an earlier run committed it, and
    /// nothing was enqueued this time.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub already_loaded: bool,
    /// With `already_loaded`: how many jobs the earlier run enqueued.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub loaded_jobs: Option<u64>,
    /// When the earlier run committed it, with `already_loaded`.
    #[serde(
        skip_serializing_if = "Option::is_none",
        serialize_with = "serialize_time"
    )]
    #[schemars(with = "Option<String>")]
    pub loaded_at: Option<DateTime<Utc>>,
}

/// The result of a fenced `complete` or `fail`.
#[derive(Debug, Clone)]
pub enum FinishOutcome {
    /// The job was still held by the worker and is now in this state.
    Finished(Job),
    /// The worker no longer holds the job; here is the job as it is now.
    NotHeld(Job),
}

/// Claim latency percentiles of a bench run, in milliseconds.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Latency {
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    pub max: f64,
}

impl Latency {
    pub fn of(samples: &mut [f64]) -> Latency {
        samples.sort_by(f64::total_cmp);
        let at = |q: f64| {
            if samples.is_empty() {
                0.0
            } else {
                samples[((samples.len() - 1) as f64 * q).round() as usize]
            }
        };
        Latency {
            p50: at(0.5),
            p90: at(0.9),
            p99: at(0.99),
            max: at(1.0),
        }
    }
}

/// One mode of `qctl bench`: how fast the claimers drained the scratch
/// queue, and the audit of every job.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct BenchRun {
    /// `skip_locked`, `for_update` or `begin_immediate`.
    pub mode: &'static str,
    pub seconds: f64,
    pub jobs_per_second: f64,
    pub claim_latency_ms: Latency,
    /// Jobs processed exactly once.
    pub processed: u64,
    /// Jobs claimed more than once (must be 0).
    pub duplicates: u64,
    /// Jobs never processed (must be 0).
    pub missing: u64,
    /// The scratch table (SQLite: the scratch file) left in place by
    /// `--keep`; null when the bench removed it.
    pub kept: Option<String>,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct BenchReport {
    pub backend: &'static str,
    pub workers: usize,
    pub jobs: u64,
    pub hold_ms: f64,
    pub runs: Vec<BenchRun>,
    /// Throughput of the first mode over the second, when two ran.
    pub ratio: Option<f64>,
}

impl BenchReport {
    pub fn audit_ok(&self) -> bool {
        self.runs
            .iter()
            .all(|r| r.duplicates == 0 && r.missing == 0 && r.processed == self.jobs)
    }
}

/// A session waiting on a lock (`qctl blocked`, PostgreSQL).
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct WaitingSession {
    pub pid: i32,
    /// The cluster node the session is on (`--all-nodes` on Galera, where
    /// sessions and their locks are each node's own).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    pub blocked_by: Vec<i32>,
    pub wait_seconds: Option<f64>,
    pub state: Option<String>,
    pub application_name: Option<String>,
    pub user: Option<String>,
    pub client_addr: Option<String>,
    pub wait_event: Option<String>,
    pub query: Option<String>,
    /// Whether it waits on (or holds a lock on) the queue table.
    pub on_queue_table: bool,
    /// The job rows it waits for, where the lock says which.
    pub waiting_for_jobs: Vec<JobId>,
    /// Rows of the queue system's lock table it waits for (Quartz's
    /// `QRTZ_LOCKS`), by name.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub waiting_for_locks: Vec<String>,
}

/// A session (or process) others wait on, or that holds a lock.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct BlockingSession {
    pub pid: i32,
    /// The cluster node the session is on (`--all-nodes` on Galera, where
    /// sessions and their locks are each node's own).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    pub state: Option<String>,
    pub application_name: Option<String>,
    pub user: Option<String>,
    pub client_addr: Option<String>,
    pub xact_age_seconds: Option<f64>,
    pub query: Option<String>,
    /// Not itself waiting: the root of a blocking chain.
    pub root: bool,
    /// Job rows others wait for that this session holds.
    pub holds_jobs: Vec<JobId>,
    /// Rows of the queue system's lock table others wait for that this
    /// session holds.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub holds_locks: Vec<String>,
    /// The lock it holds, where the database says (SQLite: `writer`,
    /// `read`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lock: Option<String>,
    /// The file that lock is on (SQLite: the database, its WAL or -shm).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
}

/// `qctl blocked`: who waits on whom, whatever the database. The waits
/// and the holders form chains; `details` holds what a database says of
/// its own locking (SQLite: the journal mode and whether a writer holds
/// the write lock right now).
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct BlockedReport {
    pub backend: &'static str,
    pub sessions: Vec<WaitingSession>,
    pub blockers: Vec<BlockingSession>,
    #[serde(flatten)]
    pub details: serde_json::Map<String, serde_json::Value>,
    pub notes: Vec<String>,
}

impl BlockedReport {
    pub fn new(backend: &'static str) -> BlockedReport {
        BlockedReport {
            backend,
            sessions: Vec::new(),
            blockers: Vec::new(),
            details: serde_json::Map::new(),
            notes: Vec::new(),
        }
    }

    /// How long the longest waiter has waited.
    pub fn longest_wait(&self) -> Option<f64> {
        self.sessions
            .iter()
            .filter_map(|s| s.wait_seconds)
            .fold(None, |max: Option<f64>, w| {
                Some(max.map_or(w, |m| m.max(w)))
            })
    }

    /// Whether a writer holds a database-wide write lock right now.
    pub fn write_locked(&self) -> bool {
        self.details
            .get("write_locked")
            .and_then(serde_json::Value::as_bool)
            .unwrap_or(false)
    }
}

/// An advisory lock held or awaited (`qctl locks`, PostgreSQL).
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct AdvisoryLock {
    pub pid: i32,
    /// The cluster node the session is on (`--all-nodes` on Galera, where
    /// sessions and their locks are each node's own).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    /// A signed bigint for the one-key form, `[a, b]` for the two-key form.
    pub key: serde_json::Value,
    pub key_kind: &'static str,
    pub classid: i64,
    pub objid: i64,
    pub objsubid: i32,
    pub mode: String,
    pub granted: bool,
    /// For a waiting request: the sessions holding it.
    pub blocked_by: Vec<i32>,
    pub application_name: Option<String>,
    pub state: Option<String>,
    pub state_seconds: Option<f64>,
    pub query: Option<String>,
    /// The holder sits idle outside any transaction, so the lock is
    /// session-level: the classic leaked lock.
    pub session_level: bool,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct LocksReport {
    pub backend: &'static str,
    pub locks: Vec<AdvisoryLock>,
    pub notes: Vec<String>,
}

/// Decodes an advisory lock key from pg_locks: the one-key form splits a
/// bigint into classid (high half) and objid (low half), objsubid 1; the
/// two-key form stores the two int4 keys, objsubid 2.
pub fn advisory_key(classid: i64, objid: i64, objsubid: i32) -> (serde_json::Value, &'static str) {
    let (high, low) = (classid as u32, objid as u32);
    if objsubid == 2 {
        (serde_json::json!([high as i32, low as i32]), "int4_pair")
    } else {
        let key = ((u64::from(high) << 32) | u64::from(low)) as i64;
        (serde_json::json!(key), "bigint")
    }
}

#[cfg(test)]
mod tests {
    use super::advisory_key;
    use serde_json::json;

    #[test]
    fn advisory_keys_decode_both_forms_and_signs() {
        assert_eq!(
            advisory_key(0, 987_654_321, 1),
            (json!(987_654_321), "bigint")
        );
        assert_eq!(
            advisory_key(4_294_967_295, 4_294_967_291, 1),
            (json!(-5), "bigint")
        );
        assert_eq!(advisory_key(1, 0, 1), (json!(4_294_967_296_i64), "bigint"));
        assert_eq!(advisory_key(11, 100, 2), (json!([11, 100]), "int4_pair"));
        assert_eq!(
            advisory_key(4_294_967_291, 4_294_967_290, 2),
            (json!([-5, -6]), "int4_pair")
        );
        assert_eq!(
            advisory_key(2_147_483_648, 0, 1),
            (json!(i64::MIN), "bigint")
        );
    }
}

/// The jobs `list` prints.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct JobList {
    pub jobs: Vec<Job>,
}

/// The result of `init`.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct InitReport {
    pub database: String,
    pub table: String,
    pub statements: Vec<String>,
    pub executed: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CheckStatus {
    Ok,
    Warning,
    Failed,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct Check {
    pub name: &'static str,
    pub status: CheckStatus,
    pub detail: String,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct DoctorReport {
    pub backend: &'static str,
    pub table: String,
    /// The layout (preset) the table was read with.
    pub layout: String,
    pub ok: bool,
    pub checks: Vec<Check>,
    /// Whether warnings fail the gate (`--strict`), as they then do in
    /// the JUnit report and the CI annotations.
    #[serde(skip)]
    pub strict: bool,
}

/// `qctl layouts`' document.
#[derive(Debug, serde::Serialize, schemars::JsonSchema)]
pub struct LayoutsReport {
    pub presets: Vec<crate::presets::PresetInfo>,
    /// Set when one preset was asked for: its notes are shown in full.
    #[serde(skip)]
    pub detailed: bool,
}

/// What the server qctl talks to is in a replicated or clustered setup:
/// its role, and what that role says about the counts it gives and the
/// writes it takes.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct ServerRole {
    /// `primary` (takes writes; PostgreSQL with or without standbys,
    /// MySQL/MariaDB), `standby` (a PostgreSQL server in recovery: reads
    /// only, its counts as old as its replay), `node` (a Galera cluster's
    /// node), or `embedded` (SQLite).
    pub role: &'static str,
    /// The `host:port` that answered, where a URL lists several.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// On a standby: how far its replay is behind (0 when it has
    /// replayed all it received), whether replay is paused, and the
    /// primary it streams from (`sender_host:sender_port`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replay_lag_seconds: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replay_paused: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub upstream: Option<String>,
    /// On a primary: the standbys streaming from it.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub standbys: Vec<Standby>,
    /// On a PostgreSQL primary: `synchronous_standby_names` (empty: every
    /// standby is asynchronous).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub synchronous_standby_names: Option<String>,
    /// On a Galera node: the node and its cluster as the node sees them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub galera: Option<GaleraState>,
}

/// A Galera node's state (`SHOW STATUS LIKE 'wsrep_%'`).
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct GaleraState {
    /// `wsrep_node_name`.
    pub node: String,
    /// `wsrep_local_state_comment`: `Synced` when the node applies the
    /// cluster's writes as they come; `Donor/Desynced`, `Joining`,
    /// `Joined` or `Initialized` when it lags or is not in the cluster.
    pub state: String,
    /// `wsrep_ready`: whether the node takes queries at all.
    pub ready: bool,
    /// `wsrep_cluster_status`: `Primary`, or `non-Primary` when the node
    /// lost the majority.
    pub cluster_status: String,
    /// `wsrep_cluster_size`: the nodes of the node's component.
    pub cluster_size: i64,
    /// The nodes `wsrep_cluster_address` lists (0 when it lists none).
    pub expected_size: i64,
    /// Writes received and not yet applied (`wsrep_local_recv_queue`).
    pub recv_queue: i64,
    /// The share of time replication was paused by flow control since the
    /// last reading (`wsrep_flow_control_paused`).
    pub flow_control_paused: f64,
    /// The SQL addresses of the component's nodes
    /// (`wsrep_incoming_addresses`).
    pub members: Vec<String>,
}

impl GaleraState {
    /// Whether the node's reads reflect the cluster: synced, ready, in the
    /// Primary Component.
    pub fn healthy(&self) -> bool {
        self.state == "Synced" && self.ready && self.cluster_status == "Primary"
    }
}

impl ServerRole {
    pub fn new(role: &'static str) -> ServerRole {
        ServerRole {
            role,
            host: None,
            replay_lag_seconds: None,
            replay_paused: None,
            upstream: None,
            standbys: Vec::new(),
            synchronous_standby_names: None,
            galera: None,
        }
    }

    /// Why counts read here are older than `max` (None: they are not): a
    /// standby whose replay is further behind or paused, a Galera node
    /// that lags the cluster or left it.
    pub fn behind(&self, max: std::time::Duration) -> Option<String> {
        if self.role == "standby" {
            if self.replay_paused == Some(true) {
                return Some("the standby's replay is paused".into());
            }
            return match self.replay_lag_seconds {
                Some(lag) if lag > max.as_secs_f64() => Some(format!(
                    "the standby's replay is {} behind, more than {}",
                    crate::duration::format_age(lag),
                    crate::duration::format_duration(max)
                )),
                None => Some("the standby's replay lag is unknown".into()),
                _ => None,
            };
        }
        let galera = self.galera.as_ref()?;
        (!galera.healthy()).then(|| {
            format!(
                "Galera node {} is {} ({}, receive queue {})",
                galera.node, galera.state, galera.cluster_status, galera.recv_queue
            )
        })
    }

    /// What a reader of counts read here must know, in one line; None for
    /// a server whose counts are simply current (a primary, one server).
    pub fn caveat(&self) -> Option<String> {
        let host = self
            .host
            .as_deref()
            .map(|h| format!("server {h}: "))
            .unwrap_or_default();
        if self.role == "standby" {
            let of = self
                .upstream
                .as_deref()
                .map(|u| format!(" of {u}"))
                .unwrap_or_default();
            let lag = match (self.replay_paused, self.replay_lag_seconds) {
                (Some(true), Some(lag)) => format!(
                    ", replay PAUSED {} behind: these counts are as of then",
                    crate::duration::format_age(lag)
                ),
                (Some(true), None) => ", replay PAUSED: these counts may be old".into(),
                (_, Some(lag)) if lag > 0.0 => format!(
                    ", replay {} behind: these counts are as of then",
                    crate::duration::format_age(lag)
                ),
                _ => ", replay current".into(),
            };
            return Some(format!("{host}a standby{of}{lag}"));
        }
        let galera = self.galera.as_ref()?;
        Some(if galera.healthy() {
            format!(
                "{host}Galera node {} (Synced), cluster of {}",
                galera.node, galera.cluster_size
            )
        } else {
            format!(
                "{host}Galera node {} is {} ({}, receive queue {}): its counts lag the cluster's",
                galera.node, galera.state, galera.cluster_status, galera.recv_queue
            )
        })
    }

    /// The standbys that replicate asynchronously: what a failover to one
    /// of them can lose.
    pub fn async_standbys(&self) -> Vec<&Standby> {
        self.standbys
            .iter()
            .filter(|s| s.sync_state == "async")
            .collect()
    }
}

/// A standby as its primary sees it (`pg_stat_replication`).
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Standby {
    pub name: String,
    pub client: Option<String>,
    pub state: Option<String>,
    /// `async`, `potential`, `sync` or `quorum`.
    pub sync_state: String,
}

/// The version of the JSON documents' schemas (`docs/schema/vN/`): raised
/// whenever a field is removed or changes type, never for an added one.
pub const SCHEMA_VERSION: u32 = 2;

/// Why one collection of `qctl serve` failed, as `qctl_scrape_error`'s
/// `cause` label says.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum ScrapeCause {
    /// The database could not be reached, or the connection was lost.
    Connect,
    /// The table, a column or the layout's release is not what qctl reads.
    Schema,
    /// The role lacks a privilege the queries need.
    Privilege,
    /// A statement ran longer than --statement-timeout, or a lock was held
    /// longer than --busy-timeout.
    Timeout,
    /// Any other error of the stats queries.
    Query,
    /// The blocked-sessions query failed (the counts still came).
    Blocked,
    /// The claim-query check failed to run (the counts still came).
    ClaimCheck,
}

impl ScrapeCause {
    /// Every cause, in the order the metrics list them.
    pub const ALL: [ScrapeCause; 7] = [
        ScrapeCause::Connect,
        ScrapeCause::Schema,
        ScrapeCause::Privilege,
        ScrapeCause::Timeout,
        ScrapeCause::Query,
        ScrapeCause::Blocked,
        ScrapeCause::ClaimCheck,
    ];

    pub fn name(self) -> &'static str {
        match self {
            ScrapeCause::Connect => "connect",
            ScrapeCause::Schema => "schema",
            ScrapeCause::Privilege => "privilege",
            ScrapeCause::Timeout => "timeout",
            ScrapeCause::Query => "query",
            ScrapeCause::Blocked => "blocked",
            ScrapeCause::ClaimCheck => "claim_check",
        }
    }
}

/// Sessions waiting on a lock, as `qctl serve` exports them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BlockedSample {
    pub sessions: usize,
    /// How long the longest waiter has waited; None when none waits.
    pub longest_wait_seconds: Option<f64>,
}

/// What `qctl serve` knows of one database, as of its last collection.
#[derive(Debug, Clone, Default)]
pub struct TargetSample {
    /// The `target` label's value; None for a lone unnamed target.
    pub label: Option<String>,
    /// The last collection reached the database and read the counts.
    pub up: bool,
    /// Why the last collection (or a part of it) failed.
    pub errors: Vec<ScrapeCause>,
    /// Failed collections (or parts) since start, by cause.
    pub errors_total: std::collections::BTreeMap<ScrapeCause, u64>,
    /// Collections run since start: each is one set of queries.
    pub scrapes_total: u64,
    /// How long the last collection took.
    pub duration_seconds: f64,
    /// When a collection last read the counts.
    pub last_success: Option<DateTime<Utc>>,
    /// The counts of the last collection; None while the database is down.
    pub stats: Option<Stats>,
    /// None where the database cannot show waiters (SQLite), or the query
    /// failed.
    pub blocked: Option<BlockedSample>,
    /// The verdict of the last claim-query check (`--claim-check`).
    pub claim_ok: Option<bool>,
}

/// Everything `qctl serve` exports at one scrape.
#[derive(Debug, Clone, Default)]
pub struct ExporterSample {
    pub version: &'static str,
    pub targets: Vec<TargetSample>,
    /// HTTP requests answered since start, by path (`/metrics`,
    /// `/healthz`, `other`).
    pub http_requests: Vec<(&'static str, u64)>,
}

/// One line of `qctl serve`'s log with `--format json`.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct ServeLogLine {
    /// RFC 3339, milliseconds.
    pub time: String,
    /// `info` or `warn`.
    pub level: &'static str,
    /// The target the event is about: its label, else its URL (no
    /// password); null for the exporter itself.
    pub target: Option<String>,
    /// Why a collection failed, for a target going down.
    pub cause: Option<ScrapeCause>,
    pub message: String,
}

/// `qctl --version --format json`.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct VersionInfo {
    /// `qctl`.
    pub name: &'static str,
    pub version: &'static str,
    /// The version of the JSON documents' schemas (docs/schema/vN/).
    pub schema_version: u32,
}

impl VersionInfo {
    pub fn current() -> VersionInfo {
        VersionInfo {
            name: "qctl",
            version: env!("CARGO_PKG_VERSION"),
            schema_version: SCHEMA_VERSION,
        }
    }
}
