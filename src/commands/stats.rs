//! `qctl stats`: depth per queue and status, stale jobs, oldest ready age;
//! with thresholds it is a check (exit 1 when one is crossed).

use std::path::Path;

use anyhow::Result;

use super::stale_rule;
use crate::Ctx;
use crate::backend::{Access, StatsRequest};
use crate::cli::{Format, StatsArgs};
use crate::duration::{format_age, format_duration};
use crate::error::{QctlError, exit};
use crate::model::Stats;

pub fn run(ctx: &Ctx, args: &StatsArgs) -> Result<u8> {
    if let Some(path) = &args.output {
        check_output(path)?;
    }
    if args.watch.is_some() && args.output.is_none() && ctx.out.format == Format::Prometheus {
        return Err(QctlError::usage(
            "--watch with --format prometheus needs --output FILE: each refresh replaces the \
             file (one exposition after another on stdout is not one a scraper can read)",
        ));
    }
    let mut backend = ctx.open(Access::Read)?;
    let request = StatsRequest {
        exact: args.exact,
        stale: stale_rule(&backend.table().layout, args.timeout),
    };
    if args.max_stale.is_some() && request.stale.is_none() {
        return Err(QctlError::usage(
            "--max-stale needs to judge staleness: this layout has no lease column, so pass --timeout",
        ));
    }
    let Some(interval) = args.watch else {
        let stats = crate::engine::stats(backend.as_mut(), &request)?;
        match &args.output {
            Some(path) => ctx.out.emit_to_file(&stats, path)?,
            None => ctx.out.emit(&stats)?,
        }
        return Ok(thresholds(ctx, args, &stats));
    };
    let mut refreshes = 0u64;
    loop {
        let stats = crate::engine::stats(backend.as_mut(), &request)?;
        if let Some(path) = &args.output {
            ctx.out.emit_to_file(&stats, path)?;
        } else {
            match ctx.out.format {
                // One document a line, so a reader can take them as they come.
                Format::Json => ctx.out.print(&serde_json::to_string(&stats)?)?,
                // Prometheus is refused above without --output, JUnit
                // before connecting: emit says so if one gets here.
                Format::Prometheus | Format::Junit => ctx.out.emit(&stats)?,
                Format::Table => {
                    if ctx.out.stdout_is_terminal {
                        ctx.out.print("\x1b[2J\x1b[H")?;
                    }
                    let now = chrono::Utc::now().format("%Y-%m-%d %H:%M:%S UTC");
                    ctx.out
                        .print(&format!("every {}: {now}", format_duration(interval)))?;
                    ctx.out.emit(&stats)?;
                }
            }
        }
        refreshes += 1;
        if args.count.is_some_and(|count| refreshes >= count) {
            return Ok(thresholds(ctx, args, &stats));
        }
        std::thread::sleep(interval);
    }
}

/// Refuses an --output that cannot be written, before connecting: a
/// directory, or a file in a directory that does not exist.
fn check_output(path: &Path) -> Result<()> {
    if path.is_dir() {
        return Err(QctlError::usage(format!(
            "--output {} is a directory; give a file name in it, e.g. {}",
            path.display(),
            path.join("qctl.prom").display()
        )));
    }
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    if !dir.is_dir() {
        return Err(QctlError::usage(format!(
            "--output {}: directory {} does not exist — create it first",
            path.display(),
            dir.display()
        )));
    }
    Ok(())
}

/// Exit 1 when a threshold is crossed, saying which on stderr.
fn thresholds(ctx: &Ctx, args: &StatsArgs, stats: &Stats) -> u8 {
    let mut code = exit::OK;
    if let (Some(max), Some(age)) = (args.max_ready_age, stats.total.oldest_ready_age_seconds)
        && age > max.as_secs_f64()
    {
        ctx.out.warn(&format!(
            "the oldest ready job has waited {}, longer than --max-ready-age {}",
            format_age(age),
            format_duration(max)
        ));
        code = exit::NO;
    }
    if let (Some(max), Some(stale)) = (args.max_stale, stats.total.stale)
        && stale > max
    {
        ctx.out.warn(&format!(
            "{stale} running jobs are stale, more than --max-stale {max}"
        ));
        code = exit::NO;
    }
    code
}
