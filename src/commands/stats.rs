//! `qctl stats`: depth per queue and status, stale jobs, oldest ready age;
//! with thresholds it is a check (exit 1 when one is crossed).

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::Result;

use crate::cli::{Format, StatsArgs};
use crate::ctx::Ctx;
use crate::db::{Access, Backend};
use crate::duration::{format_age, format_duration};
use crate::error::{QctlError, exit};
use crate::model::{Stats, Trend, WatchFrame};
use crate::output::LiveScreen;
use crate::request::StatsRequest;
use crate::request::stale_rule;

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
    let layout = &backend.table().layout;
    if crate::engine::never_stale(layout) && (args.timeout.is_some() || args.max_stale.is_some()) {
        return Err(QctlError::usage(format!(
            "--timeout and --max-stale do not apply to {}: {}",
            layout.system.as_deref().unwrap_or(&layout.preset),
            layout.refusals[&crate::layout::Command::Reap]
        )));
    }
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
    watch(ctx, args, backend.as_mut(), &request, interval)
}

/// Where `--watch` shows each refresh.
enum View<'a> {
    /// `--output`: the file, replaced each time with the plain document.
    File(&'a Path),
    /// A terminal: the table with the interval's rates, redrawn in place.
    Live(LiveScreen),
    /// Piped, table format: a header, then one line per refresh.
    Lines,
    /// JSON: one document per line.
    JsonLines,
}

fn watch(
    ctx: &Ctx,
    args: &StatsArgs,
    backend: &mut (dyn Backend + Send),
    request: &StatsRequest,
    every: Duration,
) -> Result<u8> {
    let live = args.output.is_none() && ctx.out.format == Format::Table && ctx.out.stdout_redraws();
    // A live view stops at Ctrl-C itself, to leave the terminal usable
    // (see `LiveScreen`); the process exits 130 when this guard drops,
    // after the screen (declared later) has been left.
    let _stop_here = live.then(crate::interrupt::cleanup_section);
    let mut view = match (args.output.as_deref(), ctx.out.format) {
        (Some(path), _) => View::File(path),
        _ if live => View::Live(ctx.out.live_screen()?),
        (None, Format::Json) => View::JsonLines,
        (None, Format::Table) => View::Lines,
        (None, Format::Prometheus | Format::Junit) => {
            return Err(QctlError::usage(
                "--watch prints table or json lines; --format prometheus needs --output FILE",
            ));
        }
    };
    if matches!(view, View::Lines) {
        ctx.out.print(&crate::render::watch_header())?;
    }
    let mut previous: Option<(WatchFrame, Instant)> = None;
    let mut next = Instant::now();
    let mut refreshes = 0u64;
    loop {
        let stats = crate::engine::stats(backend, request)?;
        let at = Instant::now();
        let trend = previous.as_ref().map(|(before, then)| {
            Trend::between(
                &before.stats,
                &stats,
                at.duration_since(*then).as_secs_f64(),
            )
        });
        let frame = WatchFrame {
            sampled_at: chrono::SubsecRound::trunc_subsecs(chrono::Utc::now(), 3),
            every,
            stats,
            trend,
        };
        match &mut view {
            View::File(path) => ctx.out.emit_to_file(&frame.stats, path)?,
            View::JsonLines => ctx.out.print(&serde_json::to_string(&frame)?)?,
            View::Lines => ctx.out.print(&crate::render::watch_line(&frame))?,
            View::Live(screen) => ctx.out.draw(screen, &frame)?,
        }
        refreshes += 1;
        previous = Some((frame, at));
        if args.count.is_some_and(|count| refreshes >= count) {
            break;
        }
        next += every;
        next = next.max(Instant::now());
        if !pause(next) {
            break;
        }
    }
    let (last, _) = previous.expect("one refresh at least");
    if let View::Live(screen) = view {
        drop(screen);
        // What the view showed last stays on the normal screen.
        ctx.out.emit(&last)?;
    }
    if crate::interrupt::interrupted() {
        if ctx.out.stderr_is_terminal {
            // The handler said so on the alternate screen, now gone.
            eprintln!("qctl: interrupted");
        }
        return Err(QctlError::Interrupted.into());
    }
    Ok(thresholds(ctx, args, &last.stats))
}

/// Sleeps until `until`; false when Ctrl-C came first.
fn pause(until: Instant) -> bool {
    loop {
        if crate::interrupt::interrupted() {
            return false;
        }
        let now = Instant::now();
        if now >= until {
            return true;
        }
        std::thread::sleep((until - now).min(Duration::from_millis(50)));
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
    if let Some(max) = args.max_lag
        && let Some(behind) = stats.server.as_ref().and_then(|s| s.behind(max))
    {
        ctx.out.warn(&format!(
            "these counts are older than --max-lag {}: {behind}",
            format_duration(max)
        ));
        code = exit::NO;
    }
    code
}
