//! The counts behind stats: jobs per queue and state, the oldest ready job's
//! age, stale jobs, finished history (sampled on a big table).

use std::collections::BTreeMap;

use anyhow::Result;
use chrono::{DateTime, Utc};

use crate::db::{Backend, FinishedCounts, TxMode, in_tx};
use crate::error::QctlError;
use crate::layout::{Concept, Status};
use crate::model::{Counts, Stats};
use crate::request::StatsRequest;
use crate::sql::queue::QueueSql;
use crate::sql::time::TimeRepr;
use crate::sql::{Stmt, Value};

use super::sql;

/// Whether the layout's system has no stale state: its preset refuses
/// reap, having nothing to reap.
pub fn never_stale(layout: &crate::layout::Layout) -> bool {
    layout.refusals.contains_key(&crate::layout::Command::Reap)
}

/// Whether any pending job is left (the bench's stop condition).
pub fn pending_exists<B: Backend + ?Sized>(b: &mut B) -> Result<bool> {
    let state = sql(b).state_or_none(Status::Pending);
    let stmt = Stmt::plain(format!(
        "SELECT 1 FROM {} WHERE {state} LIMIT 1",
        b.table().table()
    ));
    Ok(!b.query(&stmt)?.is_empty())
}

/// Counts every state per queue in one read transaction: exact for the
/// backlog (pending, running, failed, cancelled, unmapped values), and
/// for finished jobs whatever the backend's `done_counts` gives.
pub fn stats<B: Backend + ?Sized>(b: &mut B, request: &StatsRequest) -> Result<Stats> {
    let blank = Counts {
        stale: request.stale.map(|_| 0),
        ..Counts::default()
    };
    let now = Utc::now();
    let reads = StatsReads::new(b, request, now)?;
    let exact = request.exact;
    let (mut tally, finished, history, unmatched_skipped) = in_tx(b, TxMode::Read, true, |b| {
        let mut tally = Tally {
            by_queue: BTreeMap::new(),
            blank: blank.clone(),
        };
        let clock = b.clock()?;
        count_backlog(b, &reads, clock, &mut tally)?;
        // A cancelled count no index serves reads the whole table (pg-boss
        // keeps cancelled jobs as history, and no index of its covers
        // them): it is counted with the finished jobs, estimated on a big
        // table.
        let cancelled_with_done = match &reads.cancelled {
            Some(stmt) if !exact => b.reads_whole_table(stmt)?,
            _ => false,
        };
        count_failed_and_cancelled(b, &reads, cancelled_with_done, &mut tally)?;
        count_failed_elsewhere(b, &mut tally)?;
        let history = history_counts(b)?;
        let unmapped = unmapped_statements(b, &reads, now)?;
        count_unmapped(b, unmapped, &mut tally)?;
        let not_done: i64 = tally
            .by_queue
            .values()
            .map(|c| c.pending + c.running + c.failed + c.cancelled + c.other)
            .sum();
        let with_done = reads.cancelled.as_ref().filter(|_| cancelled_with_done);
        let finished = finished_counts(b, exact, not_done, with_done)?;
        let unmatched_skipped =
            matches!(reads.distinct, Unclaimed::Unmatched) && finished.estimated.contains(&"done");
        if matches!(reads.distinct, Unclaimed::Unmatched) && !unmatched_skipped {
            let unmatched = vec![(
                Some("(no state matches)".to_string()),
                QueueSql::new(b.table(), now).unmatched_counts(),
            )];
            count_unmapped(b, unmatched, &mut tally)?;
        }
        Ok((tally, finished, history, unmatched_skipped))
    })?;
    for (queue, n) in finished.done {
        tally.entry(queue).done = n;
    }
    for (queue, n) in finished.cancelled {
        tally.entry(queue).cancelled = n;
    }
    // After the sample's estimate, which counts only the table's rows.
    for (queue, state, n) in history {
        let counts = tally.entry(queue);
        match state.as_str() {
            "done" => counts.done += n,
            "failed" => counts.failed += n,
            _ => counts.cancelled += n,
        }
    }
    let mut stats = Stats::from_queues(
        b.name(),
        b.table().layout.table.to_string(),
        tally.by_queue,
        &finished.estimated,
        request.stale,
    );
    stats.notes.extend(finished.note);
    describe_stats(b, request, unmatched_skipped, &mut stats);
    Ok(stats)
}

/// The statements stats reads and what it needs to read their rows, built
/// before its transaction begins.
struct StatsReads {
    pending: Option<Stmt>,
    running: Option<Stmt>,
    failed: Option<Stmt>,
    cancelled: Option<Stmt>,
    distinct: Unclaimed,
    /// How the oldest ready job's time comes back.
    oldest_repr: TimeRepr,
    /// The stored values some state claims.
    mapped: Vec<String>,
}

impl StatsReads {
    /// Builds the per-queue counts of every state the layout has.
    fn new<B: Backend + ?Sized>(
        b: &mut B,
        request: &StatsRequest,
        now: DateTime<Utc>,
    ) -> Result<StatsReads> {
        let q = QueueSql::new(b.table(), now);
        Ok(StatsReads {
            pending: q.pending_counts(),
            running: q.running_counts(request.stale)?,
            failed: q.state_counts(Status::Failed),
            cancelled: q.state_counts(Status::Cancelled),
            distinct: Unclaimed::of(&q),
            oldest_repr: b.table().time_repr(q.oldest_concept()),
            mapped: b
                .table()
                .layout
                .statuses
                .mapped()
                .map(String::from)
                .collect(),
        })
    }
}

/// The counts per queue as they are read.
struct Tally {
    by_queue: BTreeMap<Option<String>, Counts>,
    /// What a queue's counts start from.
    blank: Counts,
}

impl Tally {
    /// One queue's counts, started blank when the queue is first seen.
    fn entry(&mut self, queue: Option<String>) -> &mut Counts {
        self.by_queue
            .entry(queue)
            .or_insert_with(|| self.blank.clone())
    }
}

/// Reads the pending (ready, scheduled, the oldest ready job's age) and
/// the running (and stale) counts.
fn count_backlog<B: Backend + ?Sized>(
    b: &mut B,
    reads: &StatsReads,
    clock: DateTime<Utc>,
    tally: &mut Tally,
) -> Result<()> {
    if let Some(stmt) = &reads.pending {
        for row in b.query(stmt)? {
            let mut row = row.into_iter();
            let queue = row.next().and_then(Value::into_text);
            let counts = tally.entry(queue);
            counts.pending = row.next().and_then(|v| v.as_i64()).unwrap_or(0);
            counts.ready = row.next().and_then(|v| v.as_i64()).unwrap_or(0);
            counts.scheduled = counts.pending - counts.ready;
            counts.oldest_ready_age_seconds = row
                .next()
                .and_then(|v| crate::sql::time::decode(&v, reads.oldest_repr))
                .map(|t| age_seconds(clock, t));
        }
    }
    if let Some(stmt) = &reads.running {
        for row in b.query(stmt)? {
            let mut row = row.into_iter();
            let queue = row.next().and_then(Value::into_text);
            let counts = tally.entry(queue);
            counts.running = row.next().and_then(|v| v.as_i64()).unwrap_or(0);
            let stale = row.next().and_then(|v| v.as_i64()).unwrap_or(0);
            counts.stale = counts.stale.map(|_| stale);
        }
    }
    Ok(())
}

/// Reads the failed counts, and the cancelled ones unless they are
/// counted with the finished jobs (`cancelled_with_done`).
fn count_failed_and_cancelled<B: Backend + ?Sized>(
    b: &mut B,
    reads: &StatsReads,
    cancelled_with_done: bool,
    tally: &mut Tally,
) -> Result<()> {
    for (stmt, field) in [(&reads.failed, 0), (&reads.cancelled, 1)] {
        let Some(stmt) = stmt else { continue };
        if field == 1 && cancelled_with_done {
            continue;
        }
        for row in b.query(stmt)? {
            let mut row = row.into_iter();
            let queue = row.next().and_then(Value::into_text);
            let n = row.next().and_then(|v| v.as_i64()).unwrap_or(0);
            let counts = tally.entry(queue);
            if field == 0 {
                counts.failed = n;
            } else {
                counts.cancelled = n;
            }
        }
    }
    Ok(())
}

/// Adds the dead letters the system keeps in another table (Laravel's
/// failed_jobs) to the failed counts.
fn count_failed_elsewhere<B: Backend + ?Sized>(b: &mut B, tally: &mut Tally) -> Result<()> {
    if let Some(sql) = b.table().layout.failed_counts.clone() {
        for row in b.query(&Stmt::plain(sql))? {
            let mut row = row.into_iter();
            let queue = row.next().and_then(Value::into_text);
            let n = row.next().and_then(|v| v.as_i64()).unwrap_or(0);
            tally.entry(queue).failed += n;
        }
    }
    Ok(())
}

/// Reads the finished jobs the system keeps only as history in another
/// table (PgQueuer's pgqueuer_log), per queue and state.
fn history_counts<B: Backend + ?Sized>(b: &mut B) -> Result<Vec<(Option<String>, String, i64)>> {
    let mut history: Vec<(Option<String>, String, i64)> = Vec::new();
    if let Some(sql) = b.table().layout.history_counts.clone() {
        for row in b.query(&Stmt::plain(sql))? {
            let mut row = row.into_iter();
            let queue = row.next().and_then(Value::into_text);
            let state = row.next().and_then(Value::into_text).unwrap_or_default();
            let n = row.next().and_then(|v| v.as_i64()).unwrap_or(0);
            match state.as_str() {
                "done" | "failed" | "cancelled" => history.push((queue, state, n)),
                other => {
                    return Err(QctlError::usage(format!(
                        "the {} layout's history_counts gave the state {other:?}: it counts \
                         done, failed or cancelled jobs",
                        b.table().layout.preset
                    )));
                }
            }
        }
    }
    Ok(history)
}

/// The counts of the values no state claims, one statement per value
/// (NULL last).
///
/// Values no state claims: found with a loose index scan, then counted
/// one by one, so nothing stored is ever dropped silently. Told by
/// predicates, the rows none matches are counted at once: a read of the
/// whole table, so on a table big enough for the finished jobs to be
/// estimated it is left to --exact (in [`stats`]).
fn unmapped_statements<B: Backend + ?Sized>(
    b: &mut B,
    reads: &StatsReads,
    now: DateTime<Utc>,
) -> Result<Vec<(Option<String>, Stmt)>> {
    Ok(match &reads.distinct {
        Unclaimed::NoneCanExist | Unclaimed::Unmatched => Vec::new(),
        Unclaimed::Values(distinct) => {
            let mut values: Vec<Option<String>> = b
                .query(distinct)?
                .into_iter()
                .filter_map(|r| r.into_iter().next().and_then(Value::into_text))
                .filter(|v| !reads.mapped.contains(v))
                .map(Some)
                .collect();
            values.push(None);
            values
                .into_iter()
                .map(|v| {
                    let stmt = QueueSql::new(b.table(), now).value_counts(v.as_deref());
                    (v, stmt)
                })
                .collect()
        }
    })
}

/// Adds each unclaimed value's rows to its queue's `other` count, and
/// under the value's name (`null` for NULL).
fn count_unmapped<B: Backend + ?Sized>(
    b: &mut B,
    unmapped: Vec<(Option<String>, Stmt)>,
    tally: &mut Tally,
) -> Result<()> {
    for (value, stmt) in unmapped {
        for row in b.query(&stmt)? {
            let mut row = row.into_iter();
            let queue = row.next().and_then(Value::into_text);
            let n = row.next().and_then(|v| v.as_i64()).unwrap_or(0);
            let counts = tally.entry(queue);
            counts.other += n;
            *counts
                .other_values
                .entry(value.clone().unwrap_or_else(|| "null".into()))
                .or_default() += n;
        }
    }
    Ok(())
}

/// What the counts leave out: whether the layout has cancelled jobs and
/// queues, the rows not looked for, where the counts were read, and a
/// system that has no stale jobs.
fn describe_stats<B: Backend + ?Sized>(
    b: &mut B,
    request: &StatsRequest,
    unmatched_skipped: bool,
    stats: &mut Stats,
) {
    stats.has_cancelled = b.table().layout.statuses.has(Status::Cancelled)
        || b.table().layout.history_counts.is_some();
    stats.has_queue_column = b.table().layout.column(Concept::Queue).is_some();
    if unmatched_skipped {
        stats.unmatched_not_looked_for = true;
        stats.notes.push(UNMATCHED_NOT_LOOKED_FOR.to_string());
    }
    // Where the counts were read: a standby's are as old as its replay, a
    // lagging Galera node's behind the cluster's. Not knowing the role (a
    // missing privilege) leaves the counts as they are.
    stats.server = b.server_role().ok().flatten().map(Box::new);
    // A system with no stale state (its running jobs hold session locks
    // that die with their worker: Que, GoodJob): none is stale, ever.
    if request.stale.is_none() && never_stale(&b.table().layout) {
        stats.stale_rule = Some("none");
        stats.total.stale = Some(0);
        for queue in &mut stats.queues {
            queue.counts.stale = Some(0);
        }
    }
}

/// How stats finds jobs no state claims.
enum Unclaimed {
    /// None can exist (a NOT NULL enum status whose every label a state
    /// claims): nothing to read.
    NoneCanExist,
    /// The distinct stored values (a loose index scan), then each value
    /// no state claims counted.
    Values(Stmt),
    /// States told by predicates: the rows none matches, counted at once
    /// (a read of the whole table, left to --exact on a big one).
    Unmatched,
}

impl Unclaimed {
    pub(super) fn of(q: &QueueSql<'_>) -> Unclaimed {
        if q.every_value_claimed() {
            return Unclaimed::NoneCanExist;
        }
        q.distinct_statuses()
            .map_or(Unclaimed::Unmatched, Unclaimed::Values)
    }
}

/// The note of a stats that left the rows no state matches to --exact.
pub const UNMATCHED_NOT_LOOKED_FOR: &str =
    "rows no state matches are not looked for on a table this big (--exact looks)";

/// Finished jobs per queue, inside the caller's read transaction: exact
/// on a small table or with `exact`; else the backend's sample of a big
/// table's rows, less the exact count of every other state (`not_done`),
/// split between queues as the sample splits them. `cancelled`, the count
/// of cancelled jobs when it would read the whole table, is counted (or
/// sampled) with them.
fn finished_counts<B: Backend + ?Sized>(
    b: &mut B,
    exact: bool,
    not_done: i64,
    cancelled: Option<&Stmt>,
) -> Result<FinishedCounts> {
    let (exact_sql, done, cancelled_filter) = {
        let q = sql(b);
        (
            q.state_counts(Status::Done),
            q.state(Status::Done),
            q.state(Status::Cancelled),
        )
    };
    let (Some(exact_sql), Some(done)) = (exact_sql, done) else {
        // Nothing is done: the cancelled jobs are counted, whatever that
        // reads.
        return Ok(FinishedCounts {
            cancelled: counts_of(b, cancelled)?,
            ..FinishedCounts::default()
        });
    };
    let mut filters = vec![done];
    filters.extend(cancelled.and(cancelled_filter));
    let sample = if exact {
        None
    } else {
        b.finished_sample(&filters)?
    };
    let Some(sample) = sample else {
        return Ok(FinishedCounts {
            done: queue_counts(b.query(&exact_sql)?),
            cancelled: counts_of(b, cancelled)?,
            ..FinishedCounts::default()
        });
    };
    let total = (sample.rows.round() as i64 - not_done).max(0);
    let sampled: i64 = sample.by_state.iter().map(|(_, _, n)| n).sum();
    let share = |state: usize| -> Vec<(Option<String>, i64)> {
        sample
            .by_state
            .iter()
            .filter(|(s, _, _)| *s == state)
            .map(|(_, queue, n)| {
                (
                    queue.clone(),
                    (total as f64 * *n as f64 / sampled as f64).round() as i64,
                )
            })
            .collect()
    };
    let (done, cancelled_counts) = if sampled == 0 {
        (vec![(None, total)], Vec::new())
    } else {
        (share(0), share(1))
    };
    let mut estimated = vec!["done"];
    if filters.len() > 1 {
        estimated.push("cancelled");
    }
    Ok(FinishedCounts {
        done,
        cancelled: cancelled_counts,
        estimated,
        note: sample.note,
    })
}

/// A count per queue, where there is one.
fn counts_of<B: Backend + ?Sized>(
    b: &mut B,
    stmt: Option<&Stmt>,
) -> Result<Vec<(Option<String>, i64)>> {
    match stmt {
        Some(stmt) => Ok(queue_counts(b.query(stmt)?)),
        None => Ok(Vec::new()),
    }
}

/// (queue, count) rows.
fn queue_counts(rows: Vec<crate::sql::Row>) -> Vec<(Option<String>, i64)> {
    rows.into_iter()
        .map(|row| {
            let mut row = row.into_iter();
            (
                row.next().and_then(Value::into_text),
                row.next().and_then(|v| v.as_i64()).unwrap_or(0),
            )
        })
        .collect()
}

fn age_seconds(now: DateTime<Utc>, then: DateTime<Utc>) -> f64 {
    ((now - then).num_milliseconds() as f64 / 1000.0).max(0.0)
}
