//! `qctl reap`: requeue stale running jobs, dead-letter the exhausted.

use anyhow::Result;

use crate::Ctx;
use crate::backend::{Access, ReapRequest, StaleRule};
use crate::cli::ReapArgs;
use crate::error::exit;

pub fn run(ctx: &Ctx, args: &ReapArgs) -> Result<u8> {
    let rule = match args.timeout {
        Some(timeout) => StaleRule::LockAge(timeout),
        None => StaleRule::Lease,
    };
    let request = ReapRequest {
        rule,
        queue: args.queue.clone(),
        dry_run: args.dry_run,
        batch_size: args.batch_size,
        wait: args.wait,
    };
    let access = if args.dry_run {
        Access::Read
    } else {
        Access::Write
    };
    let outcome = ctx.open(access)?.reap(&request)?;
    ctx.out.emit(&outcome)?;
    Ok(exit::OK)
}
