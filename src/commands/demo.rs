//! `qctl demo`: build a realistic sample queue in a new SQLite file and
//! walk through what an operator does with it, running the same code as
//! the real commands.

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use owo_colors::OwoColorize;
use rusqlite::Connection;
use serde_json::json;

use crate::backend::Target;
use crate::cli::{DemoArgs, Format};
use crate::ctx::Ctx;
use crate::db::Access;
use crate::db::SqlLog;
use crate::error::{QctlError, exit};
use crate::model::StaleRule;
use crate::render::thousands;
use crate::request::{ExplainRequest, ExplainTarget, ReapRequest, StatsRequest};

/// How the sample queue is made up, besides the finished history.
const READY_BACKLOG: i64 = 15_000;
const SCHEDULED: i64 = 400;
const RUNNING_ALIVE: i64 = 4;
const RUNNING_DEAD: i64 = 9;
const POISON_PILLS: i64 = 1;
const FAILED: i64 = 23;
/// Marks a file as qctl's own demo, so a rerun may replace it.
const MARKER_TABLE: &str = "qctl_demo";

pub fn run(ctx: &Ctx, args: &DemoArgs) -> Result<u8> {
    prepare_path(&args.path)?;
    let started = Instant::now();
    build(&args.path, args.history as i64)
        .with_context(|| format!("cannot build the demo queue in {}", args.path.display()))?;
    let demo = Ctx {
        target: Target::parse(&format!("sqlite:{}", args.path.display()))?,
        layout: crate::presets::own("default")?,
        out: ctx.out.clone(),
        busy_timeout: ctx.busy_timeout,
        statement_timeout: ctx.statement_timeout,
        connect_timeout: ctx.connect_timeout,
        index_timeout: ctx.index_timeout,
        sql_log: SqlLog {
            enabled: ctx.out.verbose,
        },
        auto: None,
    };
    let url = demo.target.display();
    let built = started.elapsed();
    let out = &demo.out;
    let styles = out.stdout;
    let json = out.format == Format::Json;
    let mut steps = Vec::new();
    let step = |n: usize, title: &str, command: &str| {
        if !json {
            let _ = out.print(&format!(
                "\n{} {}\n{}\n",
                format!("{n}.").style(styles.strong),
                title.style(styles.strong),
                format!("$ qctl -d {url} {command}").style(styles.dim)
            ));
        }
    };
    if !json {
        out.print(&format!(
            "{}\n\nBuilt {url} in {:.1}s: {} finished jobs of history, a ready backlog of {}, \
             {} scheduled jobs, {} running jobs, {} of them from workers that died (one a poison \
             pill out of attempts), {} dead-lettered jobs, and only a single-column index on status.",
            "qctl demo: a tour of an unhealthy queue".style(styles.strong),
            built.as_secs_f64(),
            thousands(args.history as i64),
            thousands(READY_BACKLOG),
            thousands(SCHEDULED),
            RUNNING_ALIVE + RUNNING_DEAD + POISON_PILLS,
            RUNNING_DEAD + POISON_PILLS,
            FAILED,
        ))?;
    }

    let stats_request = StatsRequest {
        exact: false,
        stale: Some(StaleRule::Lease),
    };
    step(1, "How deep is the queue, and is anything stuck?", "stats");
    let stats = crate::engine::stats(demo.open(Access::Read)?.as_mut(), &stats_request)?;
    if !json {
        out.emit(&stats)?;
    }
    steps.push(json!({"command": "stats", "result": stats}));

    step(2, "Does the claim query use an index?", "explain-claim");
    let explain = ExplainRequest {
        queries: vec![ExplainTarget::Claim],
        queue: Some("default".into()),
        sort_threshold: 10_000,
        custom_sql: None,
        analyze: false,
    };
    let mut backend = demo.open(Access::Write)?;
    let report = crate::explain::explain(backend.as_mut(), &explain)?;
    if !json {
        out.emit(&report)?;
    }
    steps.push(json!({"command": "explain-claim", "result": report}));

    step(
        3,
        "Create the index it suggests, and check again",
        "explain-claim --apply",
    );
    let statements = report.suggested_indexes.clone();
    backend.create_indexes(&report.suggested_specs)?;
    let mut fixed = crate::explain::explain(backend.as_mut(), &explain)?;
    fixed.applied = statements;
    if !json {
        out.emit(&fixed)?;
    }
    steps.push(json!({"command": "explain-claim --apply", "result": fixed}));

    let reap = |dry_run| ReapRequest {
        rule: StaleRule::Lease,
        queue: None,
        dry_run,
        batch_size: 1000,
        adapt: false,
        wait: false,
        show: 100,
    };
    step(
        4,
        "Which running jobs lost their worker? (changes nothing)",
        "reap --dry-run",
    );
    let preview = crate::engine::reap(backend.as_mut(), &reap(true), &mut |_| Ok(()))?;
    if !json {
        out.emit(&preview)?;
    }
    steps.push(json!({"command": "reap --dry-run", "result": preview}));

    step(5, "Requeue them, and dead-letter the poison pill", "reap");
    let reaped = crate::engine::reap(backend.as_mut(), &reap(false), &mut |_| Ok(()))?;
    if !json {
        out.emit(&reaped)?;
    }
    steps.push(json!({"command": "reap", "result": reaped}));

    step(6, "The queue afterwards", "stats");
    let after = crate::engine::stats(backend.as_mut(), &stats_request)?;
    if json {
        steps.push(json!({"command": "stats", "result": after}));
        out.json(&json!({"database": url, "steps": steps}))?;
    } else {
        out.emit(&after)?;
        out.print(&format!(
            "\nNext: `qctl -d {url} list --status failed` shows the dead letters, \
             `qctl -d {url} retry --all` retries them, and `qctl --help` lists every command."
        ))?;
    }
    Ok(exit::OK)
}

/// Refuses to overwrite a file that is not an earlier demo.
fn prepare_path(path: &Path) -> Result<()> {
    if !path.exists() {
        return Ok(());
    }
    let is_demo = Connection::open_with_flags(path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
        .and_then(|conn| {
            conn.query_row(
                "SELECT count(*) FROM sqlite_master WHERE name = ?1",
                [MARKER_TABLE],
                |row| row.get::<_, i64>(0),
            )
        })
        .is_ok_and(|n| n > 0);
    if !is_demo {
        return Err(QctlError::usage(format!(
            "{} exists and is not a qctl demo database; pass --path to build the demo elsewhere",
            path.display()
        )));
    }
    for suffix in ["", "-wal", "-shm"] {
        let file = format!("{}{suffix}", path.display());
        if Path::new(&file).exists() {
            std::fs::remove_file(&file).with_context(|| format!("cannot replace {file}"))?;
        }
    }
    Ok(())
}

/// Writes the sample queue with SQL alone (a recursive CTE makes the rows),
/// in one transaction: about a second for 200,000 jobs.
fn build(path: &Path, history: i64) -> Result<()> {
    let mut conn = Connection::open(path)?;
    conn.pragma_update(None, "journal_mode", "WAL")?;
    let tx = conn.transaction()?;
    // The table `qctl init` makes, with the weak index many queues start
    // with instead of init's.
    let table = crate::sql::schema::QueueTable::planned(
        &crate::presets::own("default")?,
        &crate::sql::dialect::SQLITE,
    );
    tx.execute_batch(&format!(
        "CREATE TABLE {MARKER_TABLE} (built_at INTEGER NOT NULL);
         INSERT INTO {MARKER_TABLE} VALUES (unixepoch());
         {};
         CREATE INDEX jobs_status ON jobs (status);",
        crate::sql::ddl::table_ddl(&table)
    ))?;
    let now = chrono::Utc::now().timestamp();
    let month = Duration::from_secs(30 * 86_400).as_secs() as i64;
    // Finished history: spread over the last 30 days, three queues.
    tx.execute(
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?1)
         INSERT INTO jobs (queue, status, payload, attempts, run_at, locked_at, locked_by,
                           created_at, updated_at)
         SELECT CASE i % 10 WHEN 0 THEN 'reports' WHEN 1 THEN 'emails' WHEN 2 THEN 'emails'
                ELSE 'default' END,
                'done',
                json_object('order_id', 100000 + i, 'kind', 'invoice'),
                1,
                ?2 - ?3 + i * ?3 / ?1,
                ?2 - ?3 + i * ?3 / ?1 + 1,
                'worker-' || (i % 8),
                ?2 - ?3 + i * ?3 / ?1,
                ?2 - ?3 + i * ?3 / ?1 + 2 + i % 30
         FROM n",
        [history, now, month],
    )?;
    // Dead letters from the past week.
    tx.execute(
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?1)
         INSERT INTO jobs (queue, status, payload, attempts, run_at, locked_at, locked_by,
                           created_at, updated_at, last_error)
         SELECT 'emails', 'failed', json_object('to', 'user' || i || '@example.com'), 3,
                ?2 - i * 20000, ?2 - i * 20000 + 60, 'worker-' || (i % 8),
                ?2 - i * 20000, ?2 - i * 20000 + 70, 'SMTP 550: mailbox unavailable'
         FROM n",
        [FAILED, now],
    )?;
    // The ready backlog: arrived over the last 20 minutes.
    tx.execute(
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?1)
         INSERT INTO jobs (queue, status, payload, run_at, created_at, updated_at)
         SELECT CASE WHEN i % 5 = 0 THEN 'emails' ELSE 'default' END, 'pending',
                json_object('order_id', 900000 + i, 'kind', 'invoice'),
                ?2 - 1200 + i * 1200 / ?1, ?2 - 1200 + i * 1200 / ?1, ?2 - 1200 + i * 1200 / ?1
         FROM n",
        [READY_BACKLOG, now],
    )?;
    // Scheduled for the next hours.
    tx.execute(
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?1)
         INSERT INTO jobs (queue, status, payload, run_at, created_at, updated_at)
         SELECT 'reports', 'pending', json_object('report', 'daily', 'n', i),
                ?2 + i * 30, ?2 - 60, ?2 - 60
         FROM n",
        [SCHEDULED, now],
    )?;
    // Running: healthy workers hold fresh leases; dead ones left theirs
    // to expire 5 to 45 minutes ago; the poison pill used its last attempt.
    tx.execute(
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?1)
         INSERT INTO jobs (queue, status, payload, attempts, run_at, locked_at, locked_until,
                           locked_by, created_at, updated_at)
         SELECT 'default', 'running', json_object('order_id', 800000 + i), 1,
                ?2 - 30, ?2 - 20, ?2 + 280, 'worker-' || i, ?2 - 30, ?2 - 20
         FROM n",
        [RUNNING_ALIVE, now],
    )?;
    tx.execute(
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?1)
         INSERT INTO jobs (queue, status, payload, attempts, run_at, locked_at, locked_until,
                           locked_by, created_at, updated_at)
         SELECT CASE WHEN i % 3 = 0 THEN 'emails' ELSE 'default' END, 'running',
                json_object('order_id', 700000 + i), 1 + i % 2,
                ?2 - 3600, ?2 - 600 - i * 300, ?2 - 300 - i * 300,
                'worker-' || (10 + i % 3), ?2 - 3600, ?2 - 600 - i * 300
         FROM n",
        [RUNNING_DEAD, now],
    )?;
    tx.execute(
        "INSERT INTO jobs (queue, status, payload, attempts, max_attempts, run_at, locked_at,
                           locked_until, locked_by, created_at, updated_at, last_error)
         SELECT 'reports', 'running', json_object('report', 'annual', 'rows', 50000000), 3, 3,
                ?1 - 7200, ?1 - 1500, ?1 - 1200, 'worker-13', ?1 - 7200, ?1 - 1500,
                'worker killed: out of memory'
         FROM (SELECT 1) LIMIT ?2",
        [now, POISON_PILLS],
    )?;
    tx.commit()?;
    Ok(())
}
