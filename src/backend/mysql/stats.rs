//! Counting finished jobs on MySQL without reading them all. InnoDB's
//! TABLE_ROWS is a sampled guess (often off by a third), so on a big table
//! the finished jobs of each queue are estimated the way the optimizer
//! does: `EXPLAIN` of the count, whose row estimate comes from dives into
//! the index on the state (records in range), after a loose index scan
//! for the queues that have finished jobs. Small tables are counted.

use anyhow::Result;

use super::MysqlBackend;
use crate::backend::{Backend, TableSize};
use crate::engine::DoneCounts;
use crate::layout::{Concept, Status};
use crate::sql::queue::QueueSql;
use crate::sql::{Bind, Binds, Stmt, Value};

/// Below this many rows finished counts are exact.
const EXACT_COUNT_LIMIT: f64 = 200_000.0;

/// InnoDB's estimate of the table's rows.
fn table_rows(b: &mut MysqlBackend) -> Result<f64> {
    let stmt = Stmt {
        sql: "SELECT TABLE_ROWS FROM information_schema.TABLES \
              WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?"
            .into(),
        binds: vec![
            Bind::Text(b.schema().unwrap_or_default()),
            Bind::Text(b.table.layout.table.name.to_string()),
        ],
    };
    let rows = b.query(&stmt)?;
    Ok(rows
        .first()
        .and_then(|r| r.first())
        .and_then(Value::as_f64)
        .unwrap_or(0.0))
}

pub fn table_size(b: &mut MysqlBackend) -> Result<TableSize> {
    Ok(TableSize {
        rows: table_rows(b)?,
        // InnoDB keeps persistent statistics up to date by itself
        // (innodb_stats_auto_recalc): there is no "never analyzed".
        analyzed: true,
    })
}

pub fn done_counts(b: &mut MysqlBackend, exact: bool, not_done: i64) -> Result<DoneCounts> {
    let (exact_sql, done_filter) = {
        let q = QueueSql::new(&b.table, chrono::Utc::now());
        (q.state_counts(Status::Done), q.state(Status::Done))
    };
    let (Some(exact_sql), Some(done_filter)) = (exact_sql, done_filter) else {
        return Ok(DoneCounts {
            by_queue: Vec::new(),
            estimated: false,
            note: None,
        });
    };
    let count_exactly = |b: &mut MysqlBackend| -> Result<Vec<(Option<String>, i64)>> {
        Ok(b.query(&exact_sql)?.into_iter().map(queue_count).collect())
    };
    let rows = table_rows(b)?;
    if exact || rows <= EXACT_COUNT_LIMIT {
        return Ok(DoneCounts {
            by_queue: count_exactly(b)?,
            estimated: false,
            note: None,
        });
    }
    let table = b.table.table();
    let queues: Vec<Option<String>> = match b.table.q(Concept::Queue) {
        // A loose index scan where an index leads with the state and the
        // queue (the claim index): one seek per queue.
        Some(queue) => b
            .query(&Stmt::plain(format!(
                "SELECT DISTINCT {queue} FROM {table} WHERE {done_filter}"
            )))?
            .into_iter()
            .map(|r| r.into_iter().next().and_then(Value::into_text))
            .collect(),
        None => vec![None],
    };
    let mut by_queue = Vec::new();
    for queue in queues {
        let mut binds = Binds::default();
        let filter = match (&queue, b.table.q(Concept::Queue)) {
            (Some(name), Some(column)) => {
                format!("{done_filter} AND {column} = {}", binds.push(name.as_str()))
            }
            _ => done_filter.clone(),
        };
        let stmt = Stmt::new(
            b.table.dialect,
            &format!("EXPLAIN FORMAT=JSON SELECT count(*) FROM {table} WHERE {filter}"),
            binds,
        );
        let doc = b
            .query(&stmt)?
            .into_iter()
            .next()
            .and_then(|r| r.into_iter().next())
            .and_then(Value::into_text)
            .and_then(|text| serde_json::from_str::<serde_json::Value>(&text).ok())
            .unwrap_or_default();
        match estimate(&doc) {
            Some(n) => by_queue.push((queue, n)),
            // No index on the state: the table's size, less the backlog.
            None => {
                return Ok(DoneCounts {
                    by_queue: vec![(None, (rows as i64 - not_done).max(0))],
                    estimated: true,
                    note: Some(format!(
                        "no index on the state of {}: the finished count is the table's \
                         estimated size less the backlog, and may be far off; --exact counts, \
                         `qctl explain-claim --apply` adds the index",
                        b.table.layout.table
                    )),
                });
            }
        }
    }
    Ok(DoneCounts {
        by_queue,
        estimated: true,
        note: None,
    })
}

/// The optimizer's row estimate for an index range or lookup; `None` for
/// a table scan (whose estimate is the whole table).
fn estimate(doc: &serde_json::Value) -> Option<i64> {
    fn walk(node: &serde_json::Value) -> Option<Option<i64>> {
        match node {
            serde_json::Value::Object(map) => {
                if let Some(access) = map.get("access_type").and_then(|a| a.as_str()) {
                    let rows = map
                        .get("rows")
                        .or_else(|| map.get("rows_examined_per_scan"))
                        .and_then(serde_json::Value::as_i64);
                    return Some(match access {
                        "range" | "ref" | "index_merge" => rows,
                        _ => None,
                    });
                }
                map.values().find_map(walk)
            }
            serde_json::Value::Array(items) => items.iter().find_map(walk),
            _ => None,
        }
    }
    // "Impossible WHERE" and friends: no table access at all, no rows.
    walk(doc).unwrap_or(Some(0))
}

fn queue_count(row: Vec<Value>) -> (Option<String>, i64) {
    let mut row = row.into_iter();
    (
        row.next().and_then(Value::into_text),
        row.next().and_then(|v| v.as_i64()).unwrap_or(0),
    )
}
