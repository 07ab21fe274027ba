//! `qctl demo`: build a realistic sample queue in a new SQLite file and
//! walk through what an operator does with it, running the same code as
//! the real commands.

use std::path::Path;
use std::time::{Duration, Instant};

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
use crate::output::Output;
use crate::render::{Render, thousands};
use crate::request::{ExplainRequest, ExplainTarget, ReapRequest, StatsRequest};

use crate::backend::sqlite::demo::{
    FAILED, POISON_PILLS, READY_BACKLOG, RUNNING_ALIVE, RUNNING_DEAD, SCHEDULED,
};

pub fn run(ctx: &Ctx, args: &DemoArgs) -> Result<u8> {
    prepare_path(&args.path)?;
    let started = Instant::now();
    crate::backend::sqlite::demo::build(&args.path, args.history as i64)
        .with_context(|| format!("cannot build the demo queue in {}", args.path.display()))?;
    let demo = demo_ctx(ctx, args)?;
    let built = started.elapsed();
    let mut tour = Tour {
        out: &demo.out,
        url: demo.target.display(),
        json: demo.out.format == Format::Json,
        steps: Vec::new(),
    };
    if !tour.json {
        print_intro(&tour, built, args.history as i64)?;
    }

    let stats_request = StatsRequest {
        exact: false,
        stale: Some(StaleRule::Lease),
    };
    tour.step(1, "How deep is the queue, and is anything stuck?", "stats");
    let stats = crate::engine::stats(demo.open(Access::Read)?.as_mut(), &stats_request)?;
    tour.show("stats", &stats)?;

    tour.step(2, "Does the claim query use an index?", "explain-claim");
    let explain = ExplainRequest {
        queries: vec![ExplainTarget::Claim],
        queue: Some("default".into()),
        sort_threshold: 10_000,
        custom_sql: None,
        analyze: false,
    };
    let mut backend = demo.open(Access::Write)?;
    let report = crate::explain::explain(backend.as_mut(), &explain)?;
    tour.show("explain-claim", &report)?;

    tour.step(
        3,
        "Create the index it suggests, and check again",
        "explain-claim --apply",
    );
    let statements = report.suggested_indexes.clone();
    backend.create_indexes(&report.suggested_specs)?;
    let mut fixed = crate::explain::explain(backend.as_mut(), &explain)?;
    fixed.applied = statements;
    tour.show("explain-claim --apply", &fixed)?;

    let reap = |dry_run| ReapRequest {
        rule: StaleRule::Lease,
        queue: None,
        dry_run,
        batch_size: 1000,
        adapt: false,
        wait: false,
        show: 100,
    };
    tour.step(
        4,
        "Which running jobs lost their worker? (changes nothing)",
        "reap --dry-run",
    );
    let preview = crate::engine::reap(backend.as_mut(), &reap(true), &mut |_| Ok(()))?;
    tour.show("reap --dry-run", &preview)?;

    tour.step(5, "Requeue them, and dead-letter the poison pill", "reap");
    let reaped = crate::engine::reap(backend.as_mut(), &reap(false), &mut |_| Ok(()))?;
    tour.show("reap", &reaped)?;

    tour.step(6, "The queue afterwards", "stats");
    let after = crate::engine::stats(backend.as_mut(), &stats_request)?;
    tour.finish(&after)?;
    Ok(exit::OK)
}

/// The context of the commands the tour runs: the demo database with the
/// default layout, the caller's output and timeouts.
fn demo_ctx(ctx: &Ctx, args: &DemoArgs) -> Result<Ctx> {
    Ok(Ctx {
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
    })
}

/// Says what the demo database holds and how long it took to build.
fn print_intro(tour: &Tour<'_>, built: Duration, history: i64) -> Result<()> {
    let styles = tour.out.stdout;
    tour.out.print(&format!(
        "{}\n\nBuilt {} in {:.1}s: {} finished jobs of history, a ready backlog of {}, \
         {} scheduled jobs, {} running jobs, {} of them from workers that died (one a poison \
         pill out of attempts), {} dead-lettered jobs, and only a single-column index on status.",
        "qctl demo: a tour of an unhealthy queue".style(styles.strong),
        tour.url,
        built.as_secs_f64(),
        thousands(history),
        thousands(READY_BACKLOG),
        thousands(SCHEDULED),
        RUNNING_ALIVE + RUNNING_DEAD + POISON_PILLS,
        RUNNING_DEAD + POISON_PILLS,
        FAILED,
    ))
}

/// The tour's steps as they run: printed one by one as tables, or kept
/// for the one JSON document printed at the end.
struct Tour<'a> {
    out: &'a Output,
    url: String,
    json: bool,
    steps: Vec<serde_json::Value>,
}

impl Tour<'_> {
    /// Announces a step: its number, its question and the command it runs.
    fn step(&self, n: usize, title: &str, command: &str) {
        if !self.json {
            let styles = self.out.stdout;
            let _ = self.out.print(&format!(
                "\n{} {}\n{}\n",
                format!("{n}.").style(styles.strong),
                title.style(styles.strong),
                format!("$ qctl -d {} {command}", self.url).style(styles.dim)
            ));
        }
    }

    /// Shows a step's result as a table, and keeps it for the JSON document.
    fn show<T: Render>(&mut self, command: &str, result: &T) -> Result<()> {
        if !self.json {
            self.out.emit(result)?;
        }
        self.steps
            .push(json!({"command": command, "result": result}));
        Ok(())
    }

    /// Shows the last step's result with what to do next, or prints the
    /// JSON document of every step.
    fn finish<T: Render>(mut self, after: &T) -> Result<()> {
        if self.json {
            self.steps
                .push(json!({"command": "stats", "result": after}));
            self.out
                .json(&json!({"database": self.url, "steps": self.steps}))
        } else {
            self.out.emit(after)?;
            self.out.print(&format!(
                "\nNext: `qctl -d {url} list --status failed` shows the dead letters, \
                 `qctl -d {url} retry --all` retries them, and `qctl --help` lists every command.",
                url = self.url
            ))
        }
    }
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
