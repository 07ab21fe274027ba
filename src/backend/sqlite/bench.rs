//! `qctl bench` on SQLite: concurrent claimers running qctl's own claim
//! on a scratch copy of the queue table, in a scratch file of its own, so
//! the user's file is never written nor its write lock taken.

use std::time::Duration;

use anyhow::Result;
use chrono::Utc;

use super::SqliteBackend;
use crate::backend::drain::{audit, drain};
use crate::backend::{Access, Backend, BenchMode, ConnectOptions, SqlLog};
use crate::model::{BenchReport, NewJob};
use crate::request::BenchRequest;
use crate::sql::Stmt;
use crate::target::SqliteTarget;

pub fn bench(b: &mut SqliteBackend, request: &BenchRequest) -> Result<BenchReport> {
    let nanos = Utc::now().timestamp_subsec_nanos();
    let path = std::env::temp_dir().join(format!("qctl-bench-{}-{nanos}.db", std::process::id()));
    let _scratch = ScratchFile(path.clone());
    let target = SqliteTarget {
        path,
        read_only: false,
    };
    let options = |access| ConnectOptions {
        access,
        busy_timeout: Duration::from_secs(120),
        statement_timeout: Duration::from_secs(120),
        connect_timeout: Duration::from_secs(10),
        index_timeout: Duration::from_secs(3600),
        sql_log: SqlLog::default(),
        auto: None,
    };
    // The scratch copy: the user's table and its indexes as they are
    // defined, or what `init` would create when there is none.
    let mut layout = b.table.layout.clone();
    let schema_sql = if b.table_exists {
        let stmt = Stmt {
            sql: "SELECT sql FROM sqlite_master WHERE tbl_name = ?1 AND sql IS NOT NULL \
                  ORDER BY type = 'index'"
                .into(),
            binds: vec![crate::sql::Bind::Text(layout.table.name.to_string())],
        };
        b.query(&stmt)?
            .into_iter()
            .filter_map(|r| r.into_iter().next().and_then(crate::sql::Value::into_text))
            .collect::<Vec<_>>()
    } else {
        Vec::new()
    };
    // A scratch file has no attached schemas.
    let table_name = layout.table.name.to_string();
    layout.set_table(&table_name)?;
    let mut setup = SqliteBackend::open(&target, layout.clone(), &options(Access::Create))?;
    if schema_sql.is_empty() {
        setup.init()?;
    } else {
        setup.run_batch("PRAGMA journal_mode = WAL")?;
        for sql in &schema_sql {
            setup.run_batch(sql)?;
        }
        drop(setup);
        setup = SqliteBackend::open(&target, layout.clone(), &options(Access::Write))?;
    }
    let now = Utc::now() - chrono::Duration::seconds(1);
    let mut jobs = (0..request.jobs).map(|i| {
        Ok(NewJob {
            payload: format!("{{\"n\":{i}}}"),
            queue: "default".into(),
            run_at: now,
            run_at_from_now: true,
            max_attempts: 3,
        })
    });
    setup.enqueue(&mut jobs, false)?;
    let open = || -> Result<Box<dyn Backend + Send>> {
        Ok(Box::new(SqliteBackend::open(
            &target,
            layout.clone(),
            &options(Access::Write),
        )?))
    };
    let mut run = drain(
        &open,
        request.workers,
        request.jobs,
        request.hold,
        BenchMode::Immediate,
    )?;
    run.missing = run.missing.max(audit(&mut setup)?);
    Ok(BenchReport {
        backend: "sqlite",
        workers: request.workers,
        jobs: request.jobs,
        hold_ms: request.hold.as_secs_f64() * 1000.0,
        runs: vec![run],
        ratio: None,
    })
}

/// Removes a scratch database (and its WAL files) when dropped.
struct ScratchFile(std::path::PathBuf);

impl Drop for ScratchFile {
    fn drop(&mut self) {
        for suffix in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{suffix}", self.0.display()));
        }
    }
}
