//! `qctl bench` on PostgreSQL: concurrent claimers, each on its own
//! connection, running the statement `qctl claim` runs for this layout
//! (and the fenced complete), on a scratch copy of the queue table; once
//! with SKIP LOCKED and once with a plain FOR UPDATE, for the contrast.

use anyhow::Result;
use chrono::Utc;

use super::PostgresBackend;
use super::connect::{self, ConnInfo};
use crate::backend::drain::{audit, drain};
use crate::backend::{Access, Backend, BenchMode, ConnectOptions};
use crate::layout::{Concept, Layout};
use crate::model::{BenchReport, BenchRun, NewJob};
use crate::request::BenchRequest;
use crate::sql::Stmt;
use crate::target::PostgresTarget;

pub fn bench(b: &mut PostgresBackend, request: &BenchRequest) -> Result<BenchReport> {
    let mut runs = Vec::new();
    for mode in &request.modes {
        runs.push(bench_mode(b, request, *mode)?);
    }
    let ratio = match runs.as_slice() {
        [a, b] => Some(a.jobs_per_second / b.jobs_per_second.max(1e-9)),
        _ => None,
    };
    Ok(BenchReport {
        backend: "postgres",
        workers: request.workers,
        jobs: request.jobs,
        hold_ms: request.hold.as_secs_f64() * 1000.0,
        runs,
        ratio,
    })
}

fn bench_mode(
    b: &mut PostgresBackend,
    request: &BenchRequest,
    mode: BenchMode,
) -> Result<BenchRun> {
    // pid and time: two benches (two containers, both pid 1) never share.
    let name = format!(
        "qctl_bench_{}_{}_{}",
        std::process::id(),
        Utc::now().timestamp_subsec_nanos(),
        mode.name()
    );
    let mut layout: Layout = b.table.layout.clone();
    let scratch = match &layout.table.schema {
        Some(schema) => format!("{schema}.{name}"),
        None => name.clone(),
    };
    let original = b.table.table();
    layout.set_table(&scratch)?;
    let target = PostgresTarget {
        conninfo: b.info_conninfo(),
    };
    let base = b.options.clone();
    // Waiting on the head row's lock is what FOR UPDATE measures: the
    // workers wait as long as it takes.
    let options = |access| ConnectOptions {
        access,
        statement_timeout: std::time::Duration::ZERO,
        busy_timeout: std::time::Duration::from_secs(3600),
        // The scratch table, never whatever `--layout auto` would find.
        auto: None,
        ..base.clone()
    };
    let _drop = ScratchTable {
        info: b.info.clone(),
        options: b.options.clone(),
        table: crate::sql::dialect::POSTGRES.table(&layout.table),
    };
    // A copy of the queue table as it is defined (columns, defaults,
    // constraints, indexes), or what `init` creates when there is none.
    let mut setup = if b.table_exists {
        let copy = crate::sql::dialect::POSTGRES.table(&layout.table);
        b.batch(&format!(
            "CREATE TABLE {copy} (LIKE {original} INCLUDING ALL)"
        ))?;
        let mut setup = PostgresBackend::open(&target, layout.clone(), &options(Access::Write))?;
        own_sequence(&mut setup)?;
        setup
    } else {
        let mut setup = PostgresBackend::open(&target, layout.clone(), &options(Access::Create))?;
        setup.init()?;
        setup
    };
    let now = setup.clock()? - chrono::Duration::seconds(1);
    let mut jobs = (0..request.jobs).map(|i| {
        Ok(NewJob {
            payload: format!("{{\"n\":{i}}}"),
            queue: "default".into(),
            run_at: now,
            run_at_from_now: false,
            max_attempts: 3,
        })
    });
    setup.enqueue(&mut jobs, false)?;
    let analyze = format!("ANALYZE {}", setup.table.table());
    setup.batch(&analyze)?;
    let open = || -> Result<Box<dyn Backend + Send>> {
        Ok(Box::new(PostgresBackend::open(
            &target,
            layout.clone(),
            &options(Access::Write),
        )?))
    };
    let mut run = drain(&open, request.workers, request.jobs, request.hold, mode)?;
    run.missing = run.missing.max(audit(&mut setup)?);
    Ok(run)
}

/// A copied table whose id default draws from the original's sequence
/// (a serial column) gets an identity of its own: the bench never touches
/// anything of the user's table, its sequence included.
fn own_sequence(b: &mut PostgresBackend) -> Result<()> {
    let Some(id) = b.table.q(Concept::Id) else {
        return Ok(());
    };
    let stmt = Stmt {
        sql: "SELECT a.attidentity::text, coalesce(pg_get_expr(d.adbin, d.adrelid), '') \
              FROM pg_attribute a LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum \
              WHERE a.attrelid = to_regclass($1) AND a.attname = $2"
            .into(),
        binds: vec![
            crate::sql::Bind::Text(b.table.table()),
            crate::sql::Bind::Text(b.table.layout.column(Concept::Id).map(|c| c.to_string()).unwrap_or_default()),
        ],
    };
    let row = b.query(&stmt)?.into_iter().next().unwrap_or_default();
    let identity = row
        .first()
        .cloned()
        .and_then(crate::sql::Value::into_text)
        .unwrap_or_default();
    let default = row
        .get(1)
        .cloned()
        .and_then(crate::sql::Value::into_text)
        .unwrap_or_default();
    if identity.is_empty() && default.starts_with("nextval(") {
        let table = b.table.table();
        b.batch(&format!(
            "ALTER TABLE {table} ALTER COLUMN {id} DROP DEFAULT, \
             ALTER COLUMN {id} ADD GENERATED BY DEFAULT AS IDENTITY"
        ))?;
    }
    Ok(())
}

/// Drops the bench's scratch table, whatever happened (its own
/// connection: the main one may be broken).
struct ScratchTable {
    info: ConnInfo,
    options: ConnectOptions,
    table: String,
}

impl Drop for ScratchTable {
    fn drop(&mut self) {
        if let Ok(mut client) = connect::connect(&self.info, self.options.connect_timeout) {
            let _ = client.batch_execute(&format!("DROP TABLE IF EXISTS {}", self.table));
        }
    }
}
