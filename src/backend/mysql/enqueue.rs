//! Bulk enqueue on MySQL and MariaDB, in one transaction (all or
//! nothing), with times from the server's clock.
//!
//! Jobs stream in with `LOAD DATA LOCAL INFILE` from memory: measured
//! against multi-row INSERT batches of prepared statements it was the
//! faster way in (docs/benchmarks.md). LOCAL implies IGNORE to the server
//! (a row it cannot store becomes a warning, not an error), so the load
//! counts its rows and warnings and rolls everything back on either. A
//! server that refuses LOCAL (local_infile=OFF) gets multi-row INSERTs.

use anyhow::Result;
use chrono::Utc;
use mysql::LocalInfileHandler;
use mysql::prelude::Queryable;

use super::MysqlBackend;
use super::error::{code, db_message};
use crate::backend::{Backend, TxMode};
use crate::engine::{check_new_job, in_tx};
use crate::model::{EnqueueOutcome, JobId, NewJob};
use crate::sql::queue::QueueSql;
use crate::sql::{Bind, Stmt};

/// Rows per multi-row INSERT (the fallback): 1,000 rows of a few columns
/// stay far below 65,535 placeholders and max_allowed_packet.
const INSERT_ROWS: usize = 1000;
/// Bytes of tab-separated rows sent per LOAD DATA (the server reads them
/// as they come; this bounds qctl's memory, not the load).
const LOAD_BYTES: usize = 8 << 20;

pub fn enqueue(
    b: &mut MysqlBackend,
    jobs: &mut dyn Iterator<Item = Result<NewJob>>,
    return_ids: bool,
) -> Result<EnqueueOutcome> {
    let table = b.table.clone();
    // The server's clock, not this machine's: claim and stats compare
    // with UTC_TIMESTAMP(), so a skewed client must not make new jobs
    // look scheduled or old.
    let client_now = Utc::now();
    let now = b.server_clock()?;
    let skew = now - client_now;
    let q = QueueSql::new(&table, now);
    let concepts = q.insert_concepts()?;
    let columns: Vec<String> = concepts.iter().map(|c| table.must(*c)).collect();
    let values = |job: &NewJob| q.insert_values(&concepts, job, skew);
    if return_ids {
        let sql = q.insert(&concepts, false);
        let ids = in_tx(b, TxMode::Write, true, |b| {
            let mut ids = Vec::new();
            for job in &mut *jobs {
                let job = job?;
                check_new_job(&table, &job, client_now)?;
                b.execute(&Stmt {
                    sql: sql.clone(),
                    binds: values(&job),
                })?;
                ids.push(JobId::Int(b.conn.last_insert_id() as i64));
            }
            Ok(ids)
        })?;
        return Ok(EnqueueOutcome {
            enqueued: ids.len() as u64,
            ids: Some(ids),
        });
    }
    let local_infile = local_infile(b)?;
    let count = in_tx(b, TxMode::Write, true, |b| {
        let mut count = 0u64;
        let mut rows: Vec<Vec<Bind>> = Vec::new();
        let mut bytes = 0usize;
        for job in &mut *jobs {
            let job = job?;
            check_new_job(&table, &job, client_now)?;
            let binds = values(&job);
            bytes += binds.iter().map(bind_len).sum::<usize>();
            rows.push(binds);
            let full = if local_infile {
                bytes >= LOAD_BYTES
            } else {
                rows.len() >= INSERT_ROWS
            };
            if full {
                count += flush(b, &columns, &rows, local_infile)?;
                rows.clear();
                bytes = 0;
            }
        }
        if !rows.is_empty() {
            count += flush(b, &columns, &rows, local_infile)?;
        }
        Ok(count)
    })
    .map_err(|e| e.context("enqueue failed on MySQL; nothing was enqueued"))?;
    Ok(EnqueueOutcome {
        enqueued: count,
        ids: None,
    })
}

/// Whether the server takes LOAD DATA LOCAL.
fn local_infile(b: &mut MysqlBackend) -> Result<bool> {
    let rows = b.query(&Stmt::plain("SELECT @@GLOBAL.local_infile"))?;
    Ok(crate::engine::first_int(&rows) == 1)
}

fn bind_len(bind: &Bind) -> usize {
    match bind {
        Bind::Text(t) | Bind::Json(t) => t.len() + 1,
        _ => 24,
    }
}

/// Writes one chunk of rows; how many the server stored.
fn flush(
    b: &mut MysqlBackend,
    columns: &[String],
    rows: &[Vec<Bind>],
    local_infile: bool,
) -> Result<u64> {
    let stored = if local_infile {
        load(b, columns, rows)?
    } else {
        insert(b, columns, rows)?
    };
    if stored != rows.len() as u64 {
        return Err(anyhow::anyhow!(
            "the server stored {stored} of {} jobs",
            rows.len()
        ));
    }
    Ok(stored)
}

/// `LOAD DATA LOCAL INFILE` from memory; refuses a load the server
/// stored with warnings (LOCAL turns bad rows into warnings).
fn load(b: &mut MysqlBackend, columns: &[String], rows: &[Vec<Bind>]) -> Result<u64> {
    let mut data = Vec::with_capacity(rows.iter().flatten().map(bind_len).sum());
    for row in rows {
        for (i, bind) in row.iter().enumerate() {
            if i > 0 {
                data.push(b'\t');
            }
            field(&mut data, bind);
        }
        data.push(b'\n');
    }
    let data = std::sync::Arc::new(data);
    let handler = {
        let data = data.clone();
        LocalInfileHandler::new(move |_, writer| std::io::Write::write_all(writer, &data))
    };
    b.conn.set_local_infile_handler(Some(handler));
    // Hex literals: the session's NO_BACKSLASH_ESCAPES changes what a
    // quoted '\\' means, a hex literal means one thing.
    let sql = format!(
        "LOAD DATA LOCAL INFILE 'qctl-enqueue' INTO TABLE {} CHARACTER SET utf8mb4 \
         FIELDS TERMINATED BY X'09' ESCAPED BY X'5C' LINES TERMINATED BY X'0A' ({})",
        b.table.table(),
        columns.join(", ")
    );
    let started = b.log.start();
    let result = b.conn.query_drop(&sql);
    b.conn.set_local_infile_handler(None);
    if let Err(err) = result {
        let hint = match code(&err) {
            Some(1148 | 3948) => " — the server refuses LOAD DATA LOCAL (local_infile=OFF)",
            _ => "",
        };
        return Err(anyhow::anyhow!("{}{hint}", db_message(&err)));
    }
    let (stored, warnings) = (b.conn.affected_rows(), b.conn.warnings());
    b.log.finish(
        started,
        &sql,
        &format!(", {stored} rows, {warnings} warnings"),
    );
    if warnings > 0 {
        let shown = b
            .query_text("SHOW WARNINGS LIMIT 3")?
            .into_iter()
            .filter_map(|r| r.into_iter().nth(2).and_then(crate::sql::Value::into_text))
            .collect::<Vec<_>>()
            .join("; ");
        return Err(anyhow::anyhow!(
            "the server could not store every job as given ({warnings} warnings: {shown})"
        ));
    }
    Ok(stored)
}

/// A field of LOAD DATA's tab-separated text: `\N` for NULL, the
/// separators and the escape character escaped.
fn field(out: &mut Vec<u8>, bind: &Bind) {
    let text = match bind {
        Bind::Null => {
            out.extend_from_slice(b"\\N");
            return;
        }
        Bind::Int(n) => n.to_string(),
        Bind::Float(f) => f.to_string(),
        Bind::Bool(b) => i64::from(*b).to_string(),
        Bind::Time(t) => t.format("%Y-%m-%d %H:%M:%S%.6f").to_string(),
        Bind::Text(t) | Bind::Json(t) => {
            for byte in t.bytes() {
                match byte {
                    b'\\' => out.extend_from_slice(b"\\\\"),
                    b'\t' => out.extend_from_slice(b"\\t"),
                    b'\n' => out.extend_from_slice(b"\\n"),
                    b'\r' => out.extend_from_slice(b"\\r"),
                    0 => out.extend_from_slice(b"\\0"),
                    other => out.push(other),
                }
            }
            return;
        }
    };
    out.extend_from_slice(text.as_bytes());
}

/// One multi-row INSERT of prepared placeholders.
fn insert(b: &mut MysqlBackend, columns: &[String], rows: &[Vec<Bind>]) -> Result<u64> {
    let row = format!("({})", vec!["?"; columns.len()].join(", "));
    let stmt = Stmt {
        sql: format!(
            "INSERT INTO {} ({}) VALUES {}",
            b.table.table(),
            columns.join(", "),
            vec![row.as_str(); rows.len()].join(", ")
        ),
        binds: rows.iter().flatten().cloned().collect(),
    };
    b.execute(&stmt)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_are_escaped() {
        let mut out = Vec::new();
        field(&mut out, &Bind::Json("{\"a\":\"x\\ty\\\\\"}\t\n".into()));
        assert_eq!(out, b"{\"a\":\"x\\\\ty\\\\\\\\\"}\\t\\n");
        let mut out = Vec::new();
        field(&mut out, &Bind::Null);
        assert_eq!(out, b"\\N");
    }
}
