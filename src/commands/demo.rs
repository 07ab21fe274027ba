//! `qctl demo`: build a realistic sample queue in a new SQLite file and
//! walk through what an operator does with it, running the same code as
//! the real commands.

use std::path::Path;
use std::time::Instant;

use anyhow::{Context, Result};
use owo_colors::OwoColorize;
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

use crate::backend::sqlite::demo::{
    FAILED, POISON_PILLS, READY_BACKLOG, RUNNING_ALIVE, RUNNING_DEAD, SCHEDULED,
};

pub fn run(ctx: &Ctx, args: &DemoArgs) -> Result<u8> {
    prepare_path(&args.path)?;
    let started = Instant::now();
    crate::backend::sqlite::demo::build(&args.path, args.history as i64)
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
    let is_demo = crate::backend::sqlite::demo::is_demo(path);
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
