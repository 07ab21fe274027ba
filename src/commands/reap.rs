//! `qctl reap`: requeue stale running jobs, dead-letter the exhausted.

use anyhow::Result;

use crate::cli::{Format, ReapArgs};
use crate::ctx::Ctx;
use crate::db::Access;
use crate::error::{QctlError, exit};
use crate::layout::Command;
use crate::model::StaleRule;
use crate::request::ReapRequest;

pub fn run(ctx: &Ctx, args: &ReapArgs) -> Result<u8> {
    if args.stream && ctx.out.format != Format::Json {
        return Err(QctlError::usage(
            "--stream prints JSON lines: pass --format json too",
        ));
    }
    // A dry run runs the real statements too (and rolls them back), so it
    // needs the same access as the real run.
    let mut backend = ctx.open_for(Command::Reap, Access::Write)?;
    // The lease where the table has one, else the system's own rule; a
    // layout with neither needs --timeout, and says so.
    let rule = crate::request::stale_rule(&backend.table().layout, args.timeout)
        .unwrap_or(StaleRule::Lease);
    let request = ReapRequest {
        rule,
        queue: args.queue.clone(),
        dry_run: args.dry_run,
        batch_size: crate::db::batch_size(backend.as_ref(), args.batch_size)?,
        adapt: args.batch_size.is_none(),
        wait: args.wait,
        show: args.show as usize,
    };
    let mut each = |job: &crate::model::ReapedJob| -> Result<()> {
        if args.stream {
            ctx.out.print(&serde_json::to_string(job)?)?;
        }
        Ok(())
    };
    let mut outcome = crate::engine::reap(backend.as_mut(), &request, &mut each)?;
    outcome.jobs.sort_by(|a, b| a.id.cmp(&b.id));
    outcome.left_jobs.sort_by(|a, b| a.id.cmp(&b.id));
    if args.stream {
        ctx.out.print(&serde_json::to_string(&outcome)?)?;
    } else {
        ctx.out.emit(&outcome)?;
    }
    // Stale work left behind is an answer of "no": a script running reap
    // must not take it for a clean sweep.
    Ok(if outcome.left > 0 { exit::NO } else { exit::OK })
}
