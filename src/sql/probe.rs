//! The small reads `explain-claim` makes around the statement it judges:
//! a value to bind a placeholder with, the rows of a table beside the
//! queue (counted up to a bound), how many jobs a state holds, and which
//! queues hold the most ready jobs. Pure: text and binds in, nothing run.

use anyhow::Result;

use super::queue::QueueSql;
use super::{Binds, Dialect, Stmt};
use crate::layout::{Concept, Ident, Status};

/// A table name as the statement wrote it (`name` or `schema.name`),
/// quoted for the dialect; None when a part is no plain identifier (a
/// function's result, a quoted name qctl will not guess at).
pub fn table_name(d: &Dialect, table: &str) -> Option<String> {
    let parts: Option<Vec<String>> = table
        .split('.')
        .map(|p| Ident::new(p, "table").ok().map(|i| d.ident(&i)))
        .collect();
    parts.map(|p| p.join("."))
}

/// One non-NULL value of `column` in `table`, read as text whatever its
/// type (every database can say it; the bind is encoded afterwards for
/// the placeholder's own type), in the dialect's own cast: MySQL and
/// MariaDB cast to CHAR, the others to TEXT.
pub fn sample_value(d: &Dialect, table: &str, column: &str) -> Option<Stmt> {
    let table = table_name(d, table)?;
    let column = d.ident(&Ident::new(column, "column").ok()?);
    Some(Stmt::plain(format!(
        "SELECT {} FROM {table} WHERE {column} IS NOT NULL LIMIT 1",
        d.as_text(&column)
    )))
}

/// The rows of `table`, counted up to `limit` (one past the bound a
/// caller judges by, so "more than" can be told without reading it all).
pub fn bounded_count(d: &Dialect, table: &str, limit: u64) -> Option<Stmt> {
    let table = table_name(d, table)?;
    Some(Stmt::plain(format!(
        "SELECT count(*) FROM (SELECT 1 FROM {table} LIMIT {limit}) t"
    )))
}

/// How many jobs are in `state` (in one queue, when given); None when the
/// layout has no such state.
pub fn state_count(q: &QueueSql, state: Status, queue: Option<&str>) -> Result<Option<Stmt>> {
    let Some(filter) = q.state(state) else {
        return Ok(None);
    };
    let mut binds = Binds::default();
    let queue = match queue {
        Some(queue) if q.t.q(Concept::Queue).is_some() => {
            q.queue_filter(Some(queue), &mut binds)?
        }
        _ => String::new(),
    };
    let text = format!("SELECT count(*) FROM {} WHERE {filter}{queue}", q.t.table());
    Ok(Some(Stmt::new(q.d, &text, binds)))
}

/// The queues with the most ready jobs, most first, at most `limit` of
/// them (only `queue` when given): `(queue, ready jobs)` rows. None when
/// the layout has no queue column or no pending state.
pub fn ready_by_queue(q: &QueueSql, queue: Option<&str>, limit: u64) -> Result<Option<Stmt>> {
    if q.t.q(Concept::Queue).is_none() {
        return Ok(None);
    }
    let Some(pending) = q.state(Status::Pending) else {
        return Ok(None);
    };
    let mut binds = Binds::default();
    let ready = q
        .ready(&mut binds)
        .map_or(String::new(), |r| format!(" AND {r}"));
    let only = q.queue_filter(queue, &mut binds)?;
    let (name, key) = q.t.queue_key();
    let text = format!(
        "SELECT {name}, count(*) FROM {} WHERE {pending}{ready}{only} GROUP BY {key} \
         ORDER BY count(*) DESC LIMIT {limit}",
        q.t.table()
    );
    Ok(Some(Stmt::new(q.d, &text, binds)))
}
