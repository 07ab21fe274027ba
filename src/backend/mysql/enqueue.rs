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
use crate::db::{Session, TxMode};
use crate::db::{check_new_job, in_tx};
use crate::error::QctlError;
use crate::model::{EnqueueOutcome, JobId, NewJob};
use crate::sql::loads::LoadLedger;
use crate::sql::queue::QueueSql;
use crate::sql::{Bind, Stmt};

/// Rows per multi-row INSERT (the fallback): 1,000 rows of a few columns
/// stay far below 65,535 placeholders and max_allowed_packet.
const INSERT_ROWS: usize = 1000;
/// Bytes of tab-separated rows handed to the sending thread at a time.
const CHUNK_BYTES: usize = 256 << 10;

pub fn enqueue(
    b: &mut MysqlBackend,
    jobs: &mut dyn Iterator<Item = Result<NewJob>>,
    return_ids: bool,
    load: Option<&str>,
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
    let record = |b: &mut MysqlBackend, count: u64| -> Result<()> {
        if let Some(id) = load {
            b.execute(&LoadLedger::new(&table).record(id, count))?;
        }
        Ok(())
    };
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
    let local_infile = local_infile(b)?;
    let count = in_tx(b, TxMode::Write, true, |b| {
        let mut rows = jobs.map(|job| {
            let job = job?;
            check_new_job(&table, &job, client_now)?;
            Ok(values(&job))
        });
        if local_infile {
            let once: Vec<bool> = concepts
                .iter()
                .map(|c| QueueSql::same_for_every_job(*c))
                .collect();
            let count = load_data(b, &columns, &once, &mut rows)?;
            record(b, count)?;
            return Ok(count);
        }
        let mut count = 0u64;
        let mut chunk: Vec<Vec<Bind>> = Vec::with_capacity(INSERT_ROWS);
        for row in rows {
            chunk.push(row?);
            if chunk.len() >= INSERT_ROWS {
                count += insert(b, &columns, &chunk, count)?;
                chunk.clear();
            }
        }
        if !chunk.is_empty() {
            count += insert(b, &columns, &chunk, count)?;
        }
        record(b, count)?;
        Ok(count)
    })?;
    Ok(EnqueueOutcome {
        enqueued: count,
        load_id: load.map(str::to_string),
        ..EnqueueOutcome::default()
    })
}

/// Whether the server takes LOAD DATA LOCAL.
fn local_infile(b: &mut MysqlBackend) -> Result<bool> {
    let rows = b.query(&Stmt::plain("SELECT @@GLOBAL.local_infile"))?;
    Ok(crate::db::first_int(&rows) == 1)
}

/// One `LOAD DATA LOCAL INFILE` of every job, streamed: this thread
/// encodes rows while another sends them and the server stores them, so
/// reading the input and loading it overlap. The columns marked `once`
/// hold the same value for every job (its state, its times): they are
/// stated once, as typed literals in the statement's SET, so the server
/// neither receives nor parses them per row (500,000 jobs: about a tenth
/// faster). Refuses a load the server stored with warnings (LOCAL turns
/// bad rows into warnings) or short of a row; the caller's transaction
/// then rolls it all back.
fn load_data(
    b: &mut MysqlBackend,
    columns: &[String],
    once: &[bool],
    rows: &mut dyn Iterator<Item = Result<Vec<Bind>>>,
) -> Result<u64> {
    use std::sync::mpsc::{TrySendError, sync_channel};
    let mut rows = rows.peekable();
    let first = match rows.peek() {
        None => return Ok(0),
        Some(Ok(first)) => first.clone(),
        Some(Err(_)) => return rows.next().map_or(Ok(0), |r| r.map(|_| 0)),
    };
    let stated = |i: usize| once.get(i).copied().unwrap_or(false);
    let sql = load_sql(b, columns, &stated, &first);
    let (sender, receiver) = sync_channel::<Vec<u8>>(4);
    let receiver = std::sync::Arc::new(std::sync::Mutex::new(receiver));
    let handler = LocalInfileHandler::new(move |_, writer| {
        let receiver = receiver
            .lock()
            .map_err(|_| std::io::Error::other("the enqueue's reader failed"))?;
        while let Ok(chunk) = receiver.recv() {
            std::io::Write::write_all(writer, &chunk)?;
        }
        Ok(())
    });
    let started = b.log.start();
    b.conn.set_local_infile_handler(Some(handler));
    let conn = &mut b.conn;
    let (loaded, produced) = std::thread::scope(|scope| {
        let loader = scope.spawn(|| {
            let result = conn.query_drop(&sql);
            (result, conn.affected_rows(), conn.warnings())
        });
        let send = |chunk: Vec<u8>| -> bool {
            let mut chunk = chunk;
            loop {
                match sender.try_send(chunk) {
                    Ok(()) => return true,
                    Err(TrySendError::Full(back)) if !loader.is_finished() => {
                        chunk = back;
                        std::thread::sleep(std::time::Duration::from_micros(200));
                    }
                    // The server stopped reading (an error): stop too.
                    Err(_) => return false,
                }
            }
        };
        let produced = write_rows(&mut rows, columns.len(), &stated, send);
        drop(sender);
        let loaded = loader.join().unwrap_or((
            Err(mysql::Error::DriverError(mysql::DriverError::SetupError)),
            0,
            0,
        ));
        (loaded, produced)
    });
    b.conn.set_local_infile_handler(None);
    let (result, stored, warnings) = loaded;
    // A bad input line stops the load; its error is the one to tell.
    let count = produced?;
    if let Err(err) = result {
        // The one mapper: LOAD DATA LOCAL refused, a write-set limit, a
        // lost connection.
        return Err(super::error::mysql_error(err, &b.cx));
    }
    b.log.finish(
        started,
        &sql,
        &format!(", {stored} rows, {warnings} warnings"),
    );
    all_stored(b, stored, count, warnings)
}

/// The LOAD DATA statement: the columns each line gives, and a SET for
/// the values every job shares (from the first job).
fn load_sql(
    b: &MysqlBackend,
    columns: &[String],
    stated: &impl Fn(usize) -> bool,
    first: &[Bind],
) -> String {
    let per_row: Vec<&str> = (0..columns.len())
        .filter(|&i| !stated(i))
        .map(|i| columns[i].as_str())
        .collect();
    let set: Vec<String> = (0..columns.len())
        .filter(|&i| stated(i))
        .map(|i| format!("{} = {}", columns[i], set_literal(&first[i])))
        .collect();
    // Hex literals: the session's NO_BACKSLASH_ESCAPES changes what a
    // quoted backslash means, a hex literal means one thing.
    let mut sql = format!(
        "LOAD DATA LOCAL INFILE 'qctl-enqueue' INTO TABLE {} CHARACTER SET utf8mb4 \
         FIELDS TERMINATED BY X'09' ESCAPED BY X'5C' LINES TERMINATED BY X'0A' ({})",
        b.table.table(),
        per_row.join(", ")
    );
    if !set.is_empty() {
        sql.push_str(&format!(" SET {}", set.join(", ")));
    }
    sql
}

/// Writes the jobs as LOAD DATA lines, in chunks handed to `send`, until
/// the input ends, a line fails or the server stops reading; the number
/// of jobs written.
fn write_rows(
    rows: &mut dyn Iterator<Item = Result<Vec<Bind>>>,
    columns: usize,
    stated: &impl Fn(usize) -> bool,
    send: impl Fn(Vec<u8>) -> bool,
) -> Result<u64> {
    // Per column: a job's run_at is its own, its created_at the load's.
    let mut last_times: Vec<LastTime> = vec![None; columns];
    let mut count = 0u64;
    let mut chunk = Vec::with_capacity(CHUNK_BYTES + 4096);
    for row in rows {
        let row = row?;
        let mut fields = 0;
        for (i, bind) in row.iter().enumerate() {
            if stated(i) {
                continue;
            }
            if fields > 0 {
                chunk.push(b'\t');
            }
            fields += 1;
            if last_times.len() <= i {
                last_times.resize(i + 1, None);
            }
            field(&mut chunk, bind, &mut last_times[i]);
        }
        chunk.push(b'\n');
        count += 1;
        if chunk.len() >= CHUNK_BYTES {
            let full = std::mem::replace(&mut chunk, Vec::with_capacity(CHUNK_BYTES + 4096));
            if !send(full) {
                // The server stopped reading: its error is the one to tell.
                return Ok(count);
            }
        }
    }
    if !chunk.is_empty() {
        send(chunk);
    }
    Ok(count)
}

/// The load's outcome: an error naming the first refused row when the
/// server warned, or when it stored fewer jobs than were sent.
fn all_stored(b: &mut MysqlBackend, stored: u64, count: u64, warnings: u16) -> Result<u64> {
    if warnings > 0 {
        let shown: Vec<String> = b
            .query_text("SHOW WARNINGS LIMIT 3")?
            .into_iter()
            .filter_map(|r| r.into_iter().nth(2).and_then(crate::sql::Value::into_text))
            .collect();
        let message = format!(
            "the server could not store every job as given ({warnings} warnings: {})",
            shown.join("; ")
        );
        return Err(match shown.first().and_then(|m| at_row(m)) {
            Some(row) => QctlError::RowRefused { row, message }.into(),
            None => anyhow::anyhow!(message),
        });
    }
    if stored != count {
        return Err(anyhow::anyhow!(
            "the server stored {stored} of {count} jobs"
        ));
    }
    Ok(stored)
}

/// A value of every job as a literal of LOAD DATA's SET: a time typed as
/// one (`TIMESTAMP'...'`), so it is not parsed again for each row. Text
/// is quoted by doubling (the session has NO_BACKSLASH_ESCAPES).
fn set_literal(bind: &Bind) -> String {
    match bind {
        Bind::Time(_) => {
            let mut text = Vec::new();
            field(&mut text, bind, &mut None);
            format!("TIMESTAMP'{}'", String::from_utf8_lossy(&text))
        }
        Bind::Text(t) | Bind::Json(t) => crate::layout::literal(t),
        Bind::Null => "NULL".into(),
        Bind::Int(n) => n.to_string(),
        Bind::Float(f) => f.to_string(),
        Bind::Bool(b) => i64::from(*b).to_string(),
    }
}

/// The last time [`field`] wrote, and its text.
type LastTime = Option<(chrono::DateTime<Utc>, Vec<u8>)>;

/// A field of LOAD DATA's tab-separated text: `\N` for NULL, the
/// separators and the escape character escaped.
fn field(out: &mut Vec<u8>, bind: &Bind, last_time: &mut LastTime) {
    use chrono::{Datelike, Timelike};
    use std::io::Write;
    // Written straight into the buffer: this runs for every field of
    // millions of rows, beside the server storing them on the same CPUs
    // (a strftime pattern parsed per time was a quarter of the encoding).
    let _ = match bind {
        Bind::Null => out.write_all(b"\\N"),
        Bind::Int(n) => write!(out, "{n}"),
        Bind::Float(f) => write!(out, "{f}"),
        Bind::Bool(b) => write!(out, "{}", i64::from(*b)),
        // The jobs of one load mostly share their times (now): the last
        // one written is written again without formatting it.
        Bind::Time(t) => match last_time {
            Some((last, text)) if last == t => out.write_all(text),
            _ => {
                let start = out.len();
                let written = write!(
                    out,
                    "{:04}-{:02}-{:02} {:02}:{:02}:{:02}.{:06}",
                    t.year(),
                    t.month(),
                    t.day(),
                    t.hour(),
                    t.minute(),
                    t.second(),
                    t.timestamp_subsec_micros().min(999_999)
                );
                *last_time = Some((*t, out[start..].to_vec()));
                written
            }
        },
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
            Ok(())
        }
    };
}

/// One multi-row INSERT of prepared placeholders.
/// One multi-row INSERT of the jobs after the first `before`; a row the
/// server refuses is named by its place in the whole load.
fn insert(
    b: &mut MysqlBackend,
    columns: &[String],
    rows: &[Vec<Bind>],
    before: u64,
) -> Result<u64> {
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
    b.execute(&stmt).map_err(|err| {
        let message = format!("{err:#}");
        match at_row(&message) {
            Some(row) => QctlError::RowRefused {
                row: before + row,
                message,
            }
            .into(),
            None => err,
        }
    })
}

/// The row a MySQL/MariaDB message names (`... at row 4`), from 1.
fn at_row(message: &str) -> Option<u64> {
    let rest = &message[message.rfind(" at row ")? + " at row ".len()..];
    rest.split(|c: char| !c.is_ascii_digit())
        .next()
        .and_then(|n| n.parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refused_rows_are_read_from_messages() {
        assert_eq!(at_row("Data too long for column 'queue' at row 4"), Some(4));
        assert_eq!(
            at_row("CONSTRAINT `jobs.payload` failed for `d`.`jobs`"),
            None
        );
    }

    #[test]
    fn fields_are_escaped() {
        let mut out = Vec::new();
        field(
            &mut out,
            &Bind::Json("{\"a\":\"x\\ty\\\\\"}\t\n".into()),
            &mut None,
        );
        assert_eq!(out, b"{\"a\":\"x\\\\ty\\\\\\\\\"}\\t\\n");
        let mut out = Vec::new();
        field(&mut out, &Bind::Null, &mut None);
        assert_eq!(out, b"\\N");
    }

    #[test]
    fn times_are_written_as_datetime6() {
        let time = chrono::DateTime::parse_from_rfc3339("2026-03-04T05:06:07.089123456Z")
            .unwrap()
            .with_timezone(&Utc);
        let mut out = Vec::new();
        let mut last = None;
        field(&mut out, &Bind::Time(time), &mut last);
        assert_eq!(
            out,
            time.format("%Y-%m-%d %H:%M:%S%.6f").to_string().as_bytes()
        );
        assert_eq!(out, b"2026-03-04 05:06:07.089123");
        // Again from the last one's text, and a new time formatted anew.
        field(&mut out, &Bind::Time(time), &mut last);
        field(
            &mut out,
            &Bind::Time(time + chrono::Duration::seconds(1)),
            &mut last,
        );
        assert_eq!(
            out,
            b"2026-03-04 05:06:07.0891232026-03-04 05:06:07.0891232026-03-04 05:06:08.089123"
        );
    }
}
