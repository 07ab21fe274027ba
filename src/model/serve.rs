//! What `qctl serve` scrapes, logs and reports of itself.

use super::Stats;
use chrono::{DateTime, Utc};
use serde::Serialize;

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
