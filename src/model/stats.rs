//! Queue counts, the stats report and the rates of `stats --watch`.

use super::{ServerRole, StaleRule, rfc3339};
use chrono::{DateTime, Utc};
use serde::{Serialize, Serializer};

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
