//! `qctl bench` on MySQL and MariaDB: concurrent claimers, each on its
//! own connection, running the claim `qctl claim` runs for this layout
//! (the pick and the apply in one short transaction) and the fenced
//! complete, on a scratch copy of the queue table; once with SKIP LOCKED
//! and once with a plain FOR UPDATE, for the contrast.

use anyhow::Result;
use chrono::Utc;
use mysql::prelude::Queryable;

use super::MysqlBackend;
use super::connect::{self, ConnInfo};
use crate::backend::drain::{audit, drain};
use crate::backend::{Access, Backend, BenchMode, ConnectOptions};
use crate::layout::Layout;
use crate::model::{BenchReport, BenchRun, NewJob};
use crate::request::BenchRequest;
use crate::sql::dialect::MYSQL;
use crate::target::MysqlTarget;

pub fn bench(b: &mut MysqlBackend, request: &BenchRequest) -> Result<BenchReport> {
    let mut runs = Vec::new();
    for mode in &request.modes {
        runs.push(bench_mode(b, request, *mode)?);
    }
    let ratio = match runs.as_slice() {
        [a, b] => Some(a.jobs_per_second / b.jobs_per_second.max(1e-9)),
        _ => None,
    };
    Ok(BenchReport {
        backend: "mysql",
        workers: request.workers,
        jobs: request.jobs,
        hold_ms: request.hold.as_secs_f64() * 1000.0,
        runs,
        ratio,
    })
}

fn bench_mode(b: &mut MysqlBackend, request: &BenchRequest, mode: BenchMode) -> Result<BenchRun> {
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
    let target = MysqlTarget {
        url: b.info.shown_raw(),
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
        table: MYSQL.table(&layout.table),
    };
    // A copy of the queue table as it is defined (columns, defaults,
    // indexes), or what `init` creates when there is none.
    let mut setup = if b.table_exists {
        let copy = MYSQL.table(&layout.table);
        b.run(&format!("CREATE TABLE {copy} LIKE {original}"))?;
        MysqlBackend::open(&target, layout.clone(), &options(Access::Write))?
    } else {
        let mut setup = MysqlBackend::open(&target, layout.clone(), &options(Access::Create))?;
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
    let analyze = format!("ANALYZE TABLE {}", setup.table.table());
    setup.query_text(&analyze)?;
    let open = || -> Result<Box<dyn Backend + Send>> {
        Ok(Box::new(MysqlBackend::open(
            &target,
            layout.clone(),
            &options(Access::Write),
        )?))
    };
    let mut run = drain(&open, request.workers, request.jobs, request.hold, mode)?;
    run.missing = run.missing.max(audit(&mut setup)?);
    Ok(run)
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
        if let Ok(mut conn) = connect::connect(&self.info, self.options.connect_timeout) {
            let _ = conn.query_drop(format!("DROP TABLE IF EXISTS {}", self.table));
        }
    }
}
