//! Counting finished jobs on SQLite without reading them all: on a big
//! table, random rowid probes (one index lookup each) estimate the total
//! and its split between queues.

use anyhow::Result;

use super::SqliteBackend;
use crate::backend::Backend;
use crate::engine::DoneCounts;
use crate::layout::{Concept, Status};
use crate::sql::queue::QueueSql;
use crate::sql::{Bind, Stmt, Value};

/// Above this many rows, finished counts are estimated unless `--exact`.
const EXACT_COUNT_LIMIT: i64 = 200_000;
/// Random rowid probes behind a finished-count estimate.
const ESTIMATE_PROBES: i64 = 4_000;

/// Finished counts per queue: exact on small tables or with `--exact`,
/// else estimated. The probes give the share of live rows in the rowid
/// range and the split of finished jobs between queues; the total is that
/// row estimate less the exact counts of every other state, so a dense id
/// range gives an exact total and only the split is sampled.
pub fn done_counts(b: &mut SqliteBackend, exact: bool, not_done: i64) -> Result<DoneCounts> {
    let exact_counts = |b: &mut SqliteBackend| -> Result<DoneCounts> {
        let stmt = QueueSql::new(&b.table, chrono::Utc::now()).state_counts(Status::Done);
        let by_queue = match stmt {
            Some(stmt) => b
                .query(&stmt)?
                .into_iter()
                .map(|row| {
                    let mut row = row.into_iter();
                    (
                        row.next().and_then(Value::into_text),
                        row.next().and_then(|v| v.as_i64()).unwrap_or(0),
                    )
                })
                .collect(),
            None => Vec::new(),
        };
        Ok(DoneCounts {
            by_queue,
            estimated: false,
            note: None,
        })
    };
    if exact || !b.table.layout.statuses.has(Status::Done) {
        return exact_counts(b);
    }
    // WITHOUT ROWID tables have no rowid to probe: count exactly.
    let Some((lo, hi)) = rowid_span(b).filter(|(lo, hi)| hi - lo + 1 > EXACT_COUNT_LIMIT) else {
        return exact_counts(b);
    };
    let width = hi - lo + 1;
    let q = QueueSql::new(&b.table, chrono::Utc::now());
    let queue = b
        .table
        .q(Concept::Queue)
        .map_or("NULL".to_string(), |c| format!("{}.{c}", b.table.table()));
    let sql = format!(
        "WITH RECURSIVE probe(n, r) AS (SELECT 1, ?1 + abs(random() % ?2) UNION ALL \
         SELECT n + 1, ?1 + abs(random() % ?2) FROM probe WHERE n < ?3) \
         SELECT coalesce({done}, 0), {queue}, count(*) FROM probe JOIN {t} ON {t}.rowid = probe.r \
         GROUP BY 1, 2",
        t = b.table.table(),
        done = q.state_or_none(Status::Done),
    );
    let stmt = Stmt {
        sql,
        binds: vec![Bind::Int(lo), Bind::Int(width), Bind::Int(ESTIMATE_PROBES)],
    };
    let hits: Vec<(bool, Option<String>, i64)> = b
        .query(&stmt)?
        .into_iter()
        .map(|row| {
            let mut row = row.into_iter();
            (
                row.next().and_then(|v| v.as_bool()).unwrap_or(false),
                row.next().and_then(Value::into_text),
                row.next().and_then(|v| v.as_i64()).unwrap_or(0),
            )
        })
        .collect();
    let live: i64 = hits.iter().map(|(_, _, n)| n).sum();
    let done_hits: i64 = hits.iter().filter(|(d, _, _)| *d).map(|(_, _, n)| n).sum();
    let rows = (live as f64 * width as f64 / ESTIMATE_PROBES as f64).round() as i64;
    let total_done = (rows - not_done).max(0);
    let by_queue = hits
        .into_iter()
        .filter(|(done, _, _)| *done)
        .map(|(_, queue, n)| {
            (
                queue,
                (total_done as f64 * n as f64 / done_hits.max(1) as f64).round() as i64,
            )
        })
        .collect();
    Ok(DoneCounts {
        by_queue,
        estimated: true,
        note: None,
    })
}

/// The lowest and highest rowid: two seeks (SQLite's min/max shortcut
/// works only for a lone min() or max(), hence two subqueries).
fn rowid_span(b: &mut SqliteBackend) -> Option<(i64, i64)> {
    let sql = format!(
        "SELECT (SELECT min(rowid) FROM {t}), (SELECT max(rowid) FROM {t})",
        t = b.table.table()
    );
    let row = b.query(&Stmt::plain(sql)).ok()?.into_iter().next()?;
    Some((row.first()?.as_i64()?, row.get(1)?.as_i64()?))
}

/// About how many rows the table holds: the rowid span, else a count.
pub fn rows_estimate(b: &mut SqliteBackend) -> Result<i64> {
    match rowid_span(b) {
        Some((lo, hi)) => Ok(hi - lo + 1),
        None => {
            let sql = format!("SELECT count(*) FROM {}", b.table.table());
            Ok(crate::engine::first_int(&b.query(&Stmt::plain(sql))?))
        }
    }
}
