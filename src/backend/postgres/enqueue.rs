//! Bulk enqueue on PostgreSQL: binary COPY in one transaction (the
//! fastest way in, and all or nothing), with times from the server's
//! clock.

use anyhow::Result;
use chrono::Utc;
use postgres::types::{ToSql, Type};

use super::PostgresBackend;
use super::error::db_message;
use super::value::PgBind;
use crate::db::check_new_job;
use crate::db::{Session, TxMode};
use crate::model::{EnqueueOutcome, NewJob};
use crate::sql::queue::QueueSql;
use crate::sql::queue::job_id;
use crate::sql::{Stmt, Value};

pub fn enqueue(
    b: &mut PostgresBackend,
    jobs: &mut dyn Iterator<Item = Result<NewJob>>,
    return_ids: bool,
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
            Ok(ids)
        })?;
        return Ok(EnqueueOutcome {
            enqueued: ids.len() as u64,
            ids: Some(ids),
        });
    }
    let types_sql = format!("SELECT {} FROM {quoted} LIMIT 0", columns.join(", "));
    let copy_sql = format!(
        "COPY {quoted} ({}) FROM STDIN (FORMAT binary)",
        columns.join(", ")
    );
    let fail = |e: postgres::Error| {
        anyhow::anyhow!(
            "enqueue failed on PostgreSQL: {}; nothing was enqueued",
            db_message(&e)
        )
    };
    let log = b.log.clone();
    let mut tx = b
        .client
        .build_transaction()
        .isolation_level(postgres::IsolationLevel::ReadCommitted)
        .start()
        .map_err(fail)?;
    let types: Vec<Type> = tx
        .prepare(&types_sql)
        .map_err(fail)?
        .columns()
        .iter()
        .map(|c| c.type_().clone())
        .collect();
    let started = log.start();
    let sink = tx.copy_in(&copy_sql).map_err(fail)?;
    let mut writer = postgres::binary_copy::BinaryCopyInWriter::new(sink, &types);
    let mut count = 0u64;
    for job in jobs {
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
    if crate::interrupt::interrupted() {
        // Dropping the transaction rolls it back.
        return Err(crate::error::QctlError::Interrupted.into());
    }
    tx.commit().map_err(|e| {
        anyhow::anyhow!(
            "cannot commit the enqueue: {}; nothing was enqueued",
            db_message(&e)
        )
    })?;
    log.finish(started, &copy_sql, &format!(", {count} rows"));
    Ok(EnqueueOutcome {
        enqueued: count,
        ids: None,
    })
}
