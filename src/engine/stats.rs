//! The counts behind stats: jobs per queue and state, the oldest ready job's
//! age, stale jobs, finished history (sampled on a big table).

use anyhow::Result;
use chrono::{DateTime, Utc};

use crate::db::{Backend, FinishedCounts, TxMode, in_tx};
use crate::error::QctlError;
use crate::layout::{Concept, Status};
use crate::model::{Counts, Stats};
use crate::request::StatsRequest;
use crate::sql::queue::QueueSql;
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
    use std::collections::BTreeMap;
    let blank = Counts {
        stale: request.stale.map(|_| 0),
        ..Counts::default()
    };
    let now = Utc::now();
    let (pending, running, failed, cancelled, distinct, oldest_concept) = {
        let q = QueueSql::new(b.table(), now);
        (
            q.pending_counts(),
            q.running_counts(request.stale)?,
            q.state_counts(Status::Failed),
            q.state_counts(Status::Cancelled),
            Unclaimed::of(&q),
            q.oldest_concept(),
        )
    };
    let oldest_repr = b.table().time_repr(oldest_concept);
    let mapped: Vec<String> = b
        .table()
        .layout
        .statuses
        .mapped()
        .map(String::from)
        .collect();
    let exact = request.exact;
    let (by_queue, finished, history, unmatched_skipped) = in_tx(b, TxMode::Read, true, |b| {
        let mut by_queue: BTreeMap<Option<String>, Counts> = BTreeMap::new();
        let clock = b.clock()?;
        fn entry<'m>(
            map: &'m mut BTreeMap<Option<String>, Counts>,
            queue: Option<String>,
            blank: &Counts,
        ) -> &'m mut Counts {
            map.entry(queue).or_insert_with(|| blank.clone())
        }
        if let Some(stmt) = &pending {
            for row in b.query(stmt)? {
                let mut row = row.into_iter();
                let queue = row.next().and_then(Value::into_text);
                let counts = entry(&mut by_queue, queue, &blank);
                counts.pending = row.next().and_then(|v| v.as_i64()).unwrap_or(0);
                counts.ready = row.next().and_then(|v| v.as_i64()).unwrap_or(0);
                counts.scheduled = counts.pending - counts.ready;
                counts.oldest_ready_age_seconds = row
                    .next()
                    .and_then(|v| crate::sql::time::decode(&v, oldest_repr))
                    .map(|t| age_seconds(clock, t));
            }
        }
        if let Some(stmt) = &running {
            for row in b.query(stmt)? {
                let mut row = row.into_iter();
                let queue = row.next().and_then(Value::into_text);
                let counts = entry(&mut by_queue, queue, &blank);
                counts.running = row.next().and_then(|v| v.as_i64()).unwrap_or(0);
                let stale = row.next().and_then(|v| v.as_i64()).unwrap_or(0);
                counts.stale = counts.stale.map(|_| stale);
            }
        }
        // A cancelled count no index serves reads the whole table (pg-boss
        // keeps cancelled jobs as history, and no index of its covers
        // them): it is counted with the finished jobs, estimated on a big
        // table.
        let cancelled_with_done = match &cancelled {
            Some(stmt) if !exact => b.reads_whole_table(stmt)?,
            _ => false,
        };
        for (stmt, field) in [(&failed, 0), (&cancelled, 1)] {
            let Some(stmt) = stmt else { continue };
            if field == 1 && cancelled_with_done {
                continue;
            }
            for row in b.query(stmt)? {
                let mut row = row.into_iter();
                let queue = row.next().and_then(Value::into_text);
                let n = row.next().and_then(|v| v.as_i64()).unwrap_or(0);
                let counts = entry(&mut by_queue, queue, &blank);
                if field == 0 {
                    counts.failed = n;
                } else {
                    counts.cancelled = n;
                }
            }
        }
        // Dead letters the system keeps in another table (Laravel's
        // failed_jobs).
        if let Some(sql) = b.table().layout.failed_counts.clone() {
            for row in b.query(&Stmt::plain(sql))? {
                let mut row = row.into_iter();
                let queue = row.next().and_then(Value::into_text);
                let n = row.next().and_then(|v| v.as_i64()).unwrap_or(0);
                entry(&mut by_queue, queue, &blank).failed += n;
            }
        }
        // Finished jobs the system keeps only as history in another table
        // (PgQueuer's pgqueuer_log), per queue and state.
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
        // Values no state claims: found with a loose index scan, then
        // counted one by one, so nothing stored is ever dropped silently.
        // Told by predicates, the rows none matches are counted at once:
        // a read of the whole table, so on a table big enough for the
        // finished jobs to be estimated it is left to --exact (below).
        let unmapped: Vec<(Option<String>, Stmt)> = match &distinct {
            Unclaimed::NoneCanExist | Unclaimed::Unmatched => Vec::new(),
            Unclaimed::Values(distinct) => {
                let mut values: Vec<Option<String>> = b
                    .query(distinct)?
                    .into_iter()
                    .filter_map(|r| r.into_iter().next().and_then(Value::into_text))
                    .filter(|v| !mapped.contains(v))
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
        };
        let count_unmapped = |b: &mut B,
                              unmapped: Vec<(Option<String>, Stmt)>,
                              by_queue: &mut BTreeMap<Option<String>, Counts>|
         -> Result<()> {
            for (value, stmt) in unmapped {
                for row in b.query(&stmt)? {
                    let mut row = row.into_iter();
                    let queue = row.next().and_then(Value::into_text);
                    let n = row.next().and_then(|v| v.as_i64()).unwrap_or(0);
                    let counts = entry(by_queue, queue, &blank);
                    counts.other += n;
                    *counts
                        .other_values
                        .entry(value.clone().unwrap_or_else(|| "null".into()))
                        .or_default() += n;
                }
            }
            Ok(())
        };
        count_unmapped(b, unmapped, &mut by_queue)?;
        let not_done: i64 = by_queue
            .values()
            .map(|c| c.pending + c.running + c.failed + c.cancelled + c.other)
            .sum();
        let with_done = cancelled.as_ref().filter(|_| cancelled_with_done);
        let finished = finished_counts(b, exact, not_done, with_done)?;
        let unmatched_skipped =
            matches!(distinct, Unclaimed::Unmatched) && finished.estimated.contains(&"done");
        if matches!(distinct, Unclaimed::Unmatched) && !unmatched_skipped {
            let unmatched = vec![(
                Some("(no state matches)".to_string()),
                QueueSql::new(b.table(), now).unmatched_counts(),
            )];
            count_unmapped(b, unmatched, &mut by_queue)?;
        }
        Ok((by_queue, finished, history, unmatched_skipped))
    })?;
    let mut by_queue = by_queue;
    for (queue, n) in finished.done {
        by_queue.entry(queue).or_insert_with(|| blank.clone()).done = n;
    }
    for (queue, n) in finished.cancelled {
        by_queue
            .entry(queue)
            .or_insert_with(|| blank.clone())
            .cancelled = n;
    }
    // After the sample's estimate, which counts only the table's rows.
    for (queue, state, n) in history {
        let counts = by_queue.entry(queue).or_insert_with(|| blank.clone());
        match state.as_str() {
            "done" => counts.done += n,
            "failed" => counts.failed += n,
            _ => counts.cancelled += n,
        }
    }
    let mut stats = Stats::from_queues(
        b.name(),
        b.table().layout.table.to_string(),
        by_queue,
        &finished.estimated,
        request.stale,
    );
    stats.has_cancelled = b.table().layout.statuses.has(Status::Cancelled)
        || b.table().layout.history_counts.is_some();
    stats.has_queue_column = b.table().layout.column(Concept::Queue).is_some();
    stats.notes.extend(finished.note);
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
    Ok(stats)
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
