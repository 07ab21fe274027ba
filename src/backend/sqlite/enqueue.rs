//! Bulk enqueue on SQLite: one prepared INSERT, every row in one
//! `BEGIN IMMEDIATE` transaction, so a million jobs land all or none.

use anyhow::Result;
use chrono::Utc;
use rusqlite::types::ValueRef;

use super::{SqliteBackend, to_sql};
use crate::backend::{Backend, TxMode};
use crate::engine::check_new_job;
use crate::layout::{Concept, Status};
use crate::model::{EnqueueOutcome, JobId, NewJob};
use crate::sql::time::encode;

pub fn enqueue(
    b: &mut SqliteBackend,
    jobs: &mut dyn Iterator<Item = Result<NewJob>>,
    return_ids: bool,
) -> Result<EnqueueOutcome> {
    let t = &b.table;
    let payload = t.require(Concept::Payload, "enqueue needs to store the job")?;
    let mut columns = vec![t.must(Concept::Status), payload];
    let optional = [
        Concept::Queue,
        Concept::Attempts,
        Concept::MaxAttempts,
        Concept::RunAt,
        Concept::CreatedAt,
        Concept::UpdatedAt,
    ];
    let present: Vec<Concept> = optional
        .into_iter()
        .filter(|c| t.writable(*c).is_some())
        .collect();
    columns.extend(present.iter().map(|c| t.must(*c)));
    let placeholders: Vec<String> = (1..=columns.len()).map(|i| format!("?{i}")).collect();
    let returning = if return_ids {
        format!(" RETURNING {}", t.must(Concept::Id))
    } else {
        String::new()
    };
    let sql = format!(
        "INSERT INTO {} ({}) VALUES ({}){returning}",
        t.table(),
        columns.join(", "),
        placeholders.join(", ")
    );
    let now = Utc::now();
    let created = to_sql(&encode(now, t.time_repr(Concept::CreatedAt)));
    let updated = to_sql(&encode(now, t.time_repr(Concept::UpdatedAt)));
    let run_at_repr = t.time_repr(Concept::RunAt);
    let pending = t
        .layout
        .statuses
        .written(Status::Pending)
        .unwrap_or_default()
        .to_string();
    let table = t.clone();
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
            stmt.raw_bind_parameter(1, &pending).map_err(err)?;
            stmt.raw_bind_parameter(2, &job.payload).map_err(err)?;
            for (i, concept) in present.iter().enumerate() {
                let index = i + 3;
                match concept {
                    Concept::Queue => stmt.raw_bind_parameter(index, &job.queue),
                    Concept::Attempts => stmt.raw_bind_parameter(index, 0i64),
                    Concept::MaxAttempts => stmt.raw_bind_parameter(index, job.max_attempts),
                    Concept::RunAt => {
                        stmt.raw_bind_parameter(index, to_sql(&encode(job.run_at, run_at_repr)))
                    }
                    Concept::CreatedAt => stmt.raw_bind_parameter(index, &created),
                    _ => stmt.raw_bind_parameter(index, &updated),
                }
                .map_err(err)?;
            }
            if return_ids {
                let mut rows = stmt.raw_query();
                if let Some(row) = rows.next().map_err(err)? {
                    ids.push(match row.get_ref(0).map_err(err)? {
                        ValueRef::Integer(n) => JobId::Int(n),
                        other => {
                            JobId::Text(super::from_sql(other).into_text().unwrap_or_default())
                        }
                    });
                }
            } else {
                stmt.raw_execute().map_err(err)?;
            }
            count += 1;
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
    })
}
