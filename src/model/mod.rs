//! The plain data that commands return and renderers print.

use chrono::{DateTime, SecondsFormat, Utc};
use serde::{Serialize, Serializer};

mod bench;
mod doctor;
mod locks;
mod outcomes;
mod serve;
mod stats;

pub use self::bench::{BenchReport, BenchRun, Latency};
pub use self::doctor::{
    Check, CheckStatus, DoctorReport, GaleraState, InitReport, LayoutsReport, ServerRole, Standby,
};
pub use self::locks::{
    AdvisoryLock, BlockedReport, BlockingSession, LocksReport, WaitingSession, advisory_key,
};
pub use self::outcomes::{
    EnqueueOutcome, FinishOutcome, LeftJob, PurgeOutcome, ReapAction, ReapOutcome, ReapedJob,
    RetryOutcome,
};
pub use self::serve::{
    BlockedSample, ExporterSample, SCHEMA_VERSION, ScrapeCause, ServeLogLine, TargetSample,
    VersionInfo,
};
pub use self::stats::{Counts, QueueCounts, QueueRates, Rates, Stats, Trend, WatchFrame};

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

/// The jobs `list` prints.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct JobList {
    pub jobs: Vec<Job>,
}
