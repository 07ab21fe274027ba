//! Bulk enqueue on PostgreSQL: binary COPY in one transaction (the
//! fastest way in, and all or nothing), with times from the server's
//! clock.

use anyhow::Result;
use chrono::Utc;
use postgres::types::{ToSql, Type};

use super::PostgresBackend;
use super::error::{db_message, pg_error};
use super::value::PgBind;
use crate::db::check_new_job;
use crate::db::{Session, TxMode};
use crate::error::QctlError;
use crate::model::{EnqueueOutcome, NewJob};
use crate::sql::loads::LoadLedger;
use crate::sql::queue::QueueSql;
use crate::sql::queue::job_id;
use crate::sql::{Stmt, Value};

pub fn enqueue(
    b: &mut PostgresBackend,
    jobs: &mut dyn Iterator<Item = Result<NewJob>>,
    return_ids: bool,
    load: Option<&str>,
) -> Result<EnqueueOutcome> {
    let table = b.table.clone();
    // The server's clock, not this machine's: claim and stats compare
    // with the server's now(), so a skewed client must not make new jobs
    // look scheduled or old.
    let client_now = Utc::now();
    let now = b.clock()?;
    let skew = now - client_now;
    let q = QueueSql::new(&table, now);
    let concepts = q.insert_concepts()?;
    let columns: Vec<String> = concepts.iter().map(|c| table.must(*c)).collect();
    let values = |job: &NewJob| q.insert_values(&concepts, job, skew);
    let quoted = table.table();
    let record = |b: &mut PostgresBackend, count: u64| -> Result<()> {
        if let Some(id) = load {
            b.execute(&LoadLedger::new(&table).record(id, count))?;
        }
        Ok(())
    };
    if return_ids {
        let sql = q.insert(&concepts, true);
        let ids = crate::db::in_tx(b, TxMode::Write, true, |b| {
            let mut ids = Vec::new();
            for job in jobs {
                let job = job?;
                check_new_job(&table, &job, client_now)?;
                let stmt = Stmt {
                    sql: sql.clone(),
                    binds: values(&job),
                };
                let id = b
                    .query(&stmt)?
                    .into_iter()
                    .next()
                    .and_then(|r| r.into_iter().next())
                    .unwrap_or(Value::Null);
                ids.push(job_id(id));
            }
            record(b, ids.len() as u64)?;
            Ok(ids)
        })?;
        return Ok(EnqueueOutcome {
            enqueued: ids.len() as u64,
            ids: Some(ids),
            load_id: load.map(str::to_string),
            ..EnqueueOutcome::default()
        });
    }
    let types_sql = format!("SELECT {} FROM {quoted} LIMIT 0", columns.join(", "));
    let copy_sql = format!(
        "COPY {quoted} ({}) FROM STDIN (FORMAT binary)",
        columns.join(", ")
    );
    let log = b.log.clone();
    let started = log.start();
    let count = crate::db::in_tx(b, TxMode::Write, true, |b| {
        let cx = b.cx.clone();
        let fail = |e: postgres::Error| copy_error(e, &cx);
        let types: Vec<Type> = b
            .client
            .prepare(&types_sql)
            .map_err(fail)?
            .columns()
            .iter()
            .map(|c| c.type_().clone())
            .collect();
        let sink = b.client.copy_in(&copy_sql).map_err(fail)?;
        let mut writer = postgres::binary_copy::BinaryCopyInWriter::new(sink, &types);
        let mut count = 0u64;
        for job in &mut *jobs {
            let job = job?;
            check_new_job(&table, &job, client_now)?;
            let binds = values(&job);
            let params: Vec<PgBind<'_>> = binds.iter().map(PgBind).collect();
            let refs: Vec<&(dyn ToSql + Sync)> =
                params.iter().map(|p| p as &(dyn ToSql + Sync)).collect();
            writer.write(&refs).map_err(fail)?;
            count += 1;
        }
        writer.finish().map_err(fail)?;
        log.finish(started, &copy_sql, &format!(", {count} rows"));
        record(b, count)?;
        Ok(count)
    })?;
    Ok(EnqueueOutcome {
        enqueued: count,
        load_id: load.map(str::to_string),
        ..EnqueueOutcome::default()
    })
}

/// A failed COPY in qctl's words: the row the server refused (COPY's
/// context says `line N`: the N-th job sent) is named for the caller to
/// map back to its input line.
fn copy_error(err: postgres::Error, cx: &super::error::ErrorContext) -> anyhow::Error {
    let row = err
        .as_db_error()
        .and_then(|db| db.where_())
        .and_then(copy_row);
    match row {
        Some(row) => QctlError::RowRefused {
            row,
            message: format!("PostgreSQL: {}", db_message(&err)),
        }
        .into(),
        None => pg_error(err, cx),
    }
}

/// The row number in a COPY error's context (`COPY jobs, line 4, column
/// payload: ...`).
fn copy_row(context: &str) -> Option<u64> {
    let rest = &context[context.find(", line ")? + ", line ".len()..];
    rest.split(|c: char| !c.is_ascii_digit())
        .next()
        .and_then(|n| n.parse().ok())
}

#[cfg(test)]
mod tests {
    #[test]
    fn copy_errors_name_their_row() {
        assert_eq!(
            super::copy_row("COPY jobs, line 4, column queue: \"x\""),
            Some(4)
        );
        assert_eq!(super::copy_row("COPY jobs, line 12"), Some(12));
        assert_eq!(super::copy_row("SQL statement"), None);
    }
}
