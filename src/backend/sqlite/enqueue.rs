//! Bulk enqueue on SQLite: one prepared INSERT, every row in one
//! `BEGIN IMMEDIATE` transaction, so a million jobs land all or none.

use anyhow::Result;
use chrono::Utc;
use rusqlite::types::ValueRef;

use super::{SqliteBackend, to_sql};
use crate::db::check_new_job;
use crate::db::{Session, TxMode};
use crate::error::QctlError;
use crate::model::{EnqueueOutcome, JobId, NewJob};
use crate::sql::loads::LoadLedger;
use crate::sql::queue::QueueSql;

pub fn enqueue(
    b: &mut SqliteBackend,
    jobs: &mut dyn Iterator<Item = Result<NewJob>>,
    return_ids: bool,
    load: Option<&str>,
) -> Result<EnqueueOutcome> {
    let now = Utc::now();
    let table = b.table.clone();
    let q = QueueSql::new(&table, now);
    let concepts = q.insert_concepts()?;
    let sql = q.insert(&concepts, return_ids);
    let started = b.log.start();
    b.begin(TxMode::Write)?;
    let result = (|| -> Result<(u64, Vec<JobId>)> {
        let err = |e| super::sqlite_error(e, &b.path, b.busy_timeout);
        let mut stmt = b.conn.prepare(&sql).map_err(err)?;
        let mut ids = Vec::new();
        let mut count = 0u64;
        for job in jobs {
            let job = job?;
            check_new_job(&table, &job, now)?;
            for (i, value) in q
                .insert_values(&concepts, &job, chrono::Duration::zero())
                .iter()
                .enumerate()
            {
                stmt.raw_bind_parameter(i + 1, to_sql(value)).map_err(err)?;
            }
            // A row the table refuses (a CHECK, a trigger) is named by
            // its place in the load.
            let refused = |e| QctlError::RowRefused {
                row: count + 1,
                message: format!("{:#}", err(e)),
            };
            if return_ids {
                let mut rows = stmt.raw_query();
                if let Some(row) = rows.next().map_err(refused)? {
                    ids.push(match row.get_ref(0).map_err(err)? {
                        ValueRef::Integer(n) => JobId::Int(n),
                        other => {
                            JobId::Text(super::from_sql(other).into_text().unwrap_or_default())
                        }
                    });
                }
            } else {
                stmt.raw_execute().map_err(refused)?;
            }
            count += 1;
        }
        drop(stmt);
        if let Some(id) = load {
            b.execute(&LoadLedger::new(&table).record(id, count))?;
        }
        Ok((count, ids))
    })();
    let (count, ids) = match result {
        Ok(done) => done,
        Err(err) => {
            let _ = b.rollback();
            return Err(err);
        }
    };
    b.commit()?;
    b.log
        .finish(started, &sql, &format!(", {count} rows in one transaction"));
    Ok(EnqueueOutcome {
        enqueued: count,
        ids: return_ids.then_some(ids),
        load_id: load.map(str::to_string),
        ..EnqueueOutcome::default()
    })
}
