//! Counting finished jobs on PostgreSQL without reading them all: the
//! table's live-row count from the statistics, less the exact backlog,
//! split between queues by a block sample; counted exactly when the table
//! is small or its statistics are stale.

use anyhow::Result;

use super::PostgresBackend;
use crate::db::{FinishedSample, Session, TableSize, which_filter};
use crate::sql::{Bind, Stmt, Value};

/// Below this many rows finished counts are exact.
const EXACT_COUNT_LIMIT: f64 = 200_000.0;
/// With stale statistics, tables up to this many rows are counted exactly
/// rather than estimated from numbers that may be far off.
const STALE_EXACT_LIMIT: f64 = 2_000_000.0;
/// Rows a TABLESAMPLE for the per-queue split of finished jobs aims at.
const SAMPLE_ROWS: f64 = 20_000.0;

/// What the statistics say of the table's size.
struct Sizes {
    /// The planner's estimate: reltuples scaled to the current pages, as
    /// the planner itself does; `None` when never analyzed.
    planner: Option<f64>,
    /// The statistics collector's live rows, kept current by every
    /// committed insert and delete.
    live: f64,
    /// Rows changed since the last ANALYZE.
    changed: f64,
    analyzed: bool,
}

fn sizes(b: &mut PostgresBackend) -> Result<Sizes> {
    // A partitioned table (pg-boss's job) holds no rows itself: its size
    // is its leaves', each scaled as the planner scales it. An empty leaf
    // that was never analyzed does not make the table unanalyzed.
    let stmt = Stmt {
        sql: "WITH RECURSIVE tree(oid) AS ( \
                SELECT to_regclass($1)::oid \
                UNION ALL SELECT i.inhrelid FROM pg_inherits i JOIN tree t ON i.inhparent = t.oid), \
              leaf AS ( \
                SELECT c.reltuples::float8 AS tuples, c.relpages::float8 AS relpages, \
                  (pg_relation_size(c.oid) / current_setting('block_size')::int)::float8 AS pages, \
                  coalesce(s.n_live_tup, 0)::float8 AS live, \
                  coalesce(s.n_mod_since_analyze, 0)::float8 AS changed, \
                  coalesce(s.last_analyze, s.last_autoanalyze) IS NOT NULL AND c.reltuples >= 0 AS analyzed \
                FROM tree JOIN pg_class c ON c.oid = tree.oid \
                LEFT JOIN pg_stat_all_tables s ON s.relid = c.oid \
                WHERE c.relkind IN ('r', 'm')) \
              SELECT sum(CASE WHEN tuples < 0 THEN live WHEN relpages > 0 THEN tuples / relpages * pages \
                              ELSE tuples END), \
                     bool_or(tuples >= 0), sum(live), sum(changed), \
                     coalesce(bool_and(analyzed OR (live = 0 AND pages = 0)), false) \
              FROM leaf"
            .into(),
        binds: vec![Bind::Text(b.table.table())],
    };
    let row = b.query(&stmt)?.into_iter().next().unwrap_or_default();
    let f = |i: usize| row.get(i).and_then(Value::as_f64).unwrap_or(0.0);
    let any_analyzed = row.get(1).and_then(Value::as_bool).unwrap_or(false);
    let analyzed = row.get(4).and_then(Value::as_bool).unwrap_or(false) && any_analyzed;
    Ok(Sizes {
        planner: any_analyzed.then(|| f(0)),
        live: f(2),
        changed: f(3),
        analyzed,
    })
}

pub fn table_size(b: &mut PostgresBackend) -> Result<TableSize> {
    let sizes = sizes(b)?;
    Ok(TableSize {
        rows: sizes.planner.unwrap_or(sizes.live).max(0.0),
        analyzed: sizes.analyzed,
    })
}

/// A big table's rows (the collector's live count) and finished jobs per
/// state and queue in a block sample; None when the table is small, or
/// its statistics are stale and it is small enough to count.
pub fn finished_sample(
    b: &mut PostgresBackend,
    finished: &[String],
) -> Result<Option<FinishedSample>> {
    let sizes = sizes(b)?;
    // Statistics are stale when the table was never analyzed, or when
    // more than a tenth of it changed since (a bulk load with autovacuum
    // off or not yet run): reltuples may then be far off.
    let stale = match sizes.planner {
        None => true,
        Some(planner) => sizes.changed > 0.1 * planner.max(1_000.0),
    };
    // The collector's live count follows inserts and deletes as they
    // commit; it is lost only when the statistics are reset.
    let rows = if sizes.live > 0.0 {
        sizes.live
    } else {
        sizes.planner.unwrap_or(0.0)
    };
    if rows <= EXACT_COUNT_LIMIT || (stale && rows <= STALE_EXACT_LIMIT) {
        return Ok(None);
    }
    let note = stale.then(|| {
        format!(
            "the statistics of {} are stale ({:.0} rows changed since the last ANALYZE): the \
             finished count is an estimate that may be off; --exact counts, ANALYZE refreshes",
            b.table.layout.table, sizes.changed
        )
    });
    let percent = (SAMPLE_ROWS / rows * 100.0).clamp(0.01, 100.0);
    let (queue, key) = b.table.queue_key();
    let sample_sql = format!(
        "SELECT {queue}, {state}, count(*) FROM {} TABLESAMPLE SYSTEM ({percent}) \
         WHERE {state} IS NOT NULL GROUP BY {key}, 2",
        b.table.table(),
        state = which_filter(finished),
    );
    let by_state = b
        .query(&Stmt::plain(sample_sql))?
        .into_iter()
        .map(crate::db::sampled_row)
        .collect();
    Ok(Some(FinishedSample {
        rows,
        by_state,
        note,
    }))
}
