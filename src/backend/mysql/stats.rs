//! Counting finished jobs on MySQL without reading them all: InnoDB's
//! estimate of the table's rows less the exact backlog, split between
//! queues by a sample of primary-key slices. (The optimizer's own range
//! estimates are no help: InnoDB caps records-in-range at half the table,
//! and finished jobs are most of it.) Small tables are counted.

use anyhow::Result;

use super::MysqlBackend;
use crate::db::{FinishedSample, Session, TableSize, which_filter};
use crate::layout::Concept;
use crate::sql::{Bind, Stmt, Value};

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

/// A big table's rows (InnoDB's estimate) and finished jobs per state and
/// queue in a sample of primary-key slices spread over the table; None on
/// a small table.
pub fn finished_sample(
    b: &mut MysqlBackend,
    finished: &[String],
) -> Result<Option<FinishedSample>> {
    let rows = table_rows(b)?;
    if rows <= EXACT_COUNT_LIMIT {
        return Ok(None);
    }
    Ok(Some(FinishedSample {
        rows,
        by_state: sample(b, finished)?,
        note: None,
    }))
}

/// Finished jobs per state and queue among some 20,000 rows: twenty
/// slices of an integer primary key spread from its lowest to its highest
/// value (each a short range read), or the first rows otherwise.
fn sample(b: &mut MysqlBackend, finished: &[String]) -> Result<Vec<(usize, Option<String>, i64)>> {
    const SLICES: i64 = 20;
    const WIDTH: i64 = 1000;
    let table = b.table.table();
    let id = b.table.must(Concept::Id);
    let (queue, key) = b.table.queue_key();
    let state = which_filter(finished);
    let mut counts: std::collections::BTreeMap<(usize, Option<String>), i64> = Default::default();
    let mut add = |rows: Vec<crate::sql::Row>| {
        for (state, queue, n) in rows.into_iter().map(crate::db::sampled_row) {
            *counts.entry((state, queue)).or_default() += n;
        }
    };
    if b.table.id_is_integer() {
        let bounds = b.query(&Stmt::plain(format!(
            "SELECT min({id}), max({id}) FROM {table}"
        )))?;
        let bound = |i: usize| {
            bounds
                .first()
                .and_then(|r| r.get(i))
                .and_then(Value::as_i64)
        };
        let (Some(low), Some(high)) = (bound(0), bound(1)) else {
            return Ok(Vec::new());
        };
        // Every slice in one statement: the optimizer reads them as the
        // ranges of one range scan of the primary key, one round trip.
        let step = ((high - low) / SLICES).max(WIDTH);
        let (mut slices, mut binds) = (Vec::new(), Vec::new());
        let mut start = low;
        while start <= high {
            slices.push(format!("{id} BETWEEN ? AND ?"));
            binds.extend([Bind::Int(start), Bind::Int(start + WIDTH - 1)]);
            start = start.saturating_add(step);
        }
        add(b.query(&Stmt {
            sql: format!(
                "SELECT {queue}, {state}, count(*) FROM {table} WHERE ({}) \
                 AND {state} IS NOT NULL GROUP BY {key}, 2",
                slices.join(" OR ")
            ),
            binds,
        })?);
    } else {
        add(b.query(&Stmt::plain(format!(
            "SELECT {queue}, {state}, count(*) FROM (SELECT * FROM {table} LIMIT {}) s \
             WHERE {state} IS NOT NULL GROUP BY {key}, 2",
            SLICES * WIDTH
        )))?);
    }
    Ok(counts
        .into_iter()
        .map(|((state, queue), n)| (state, queue, n))
        .collect())
}
