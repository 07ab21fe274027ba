//! `qctl claim`: take the next ready job as a worker would.

use std::time::Duration;

use anyhow::Result;

use crate::cli::ClaimArgs;
use crate::ctx::Ctx;
use crate::db::Access;
use crate::error::exit;
use crate::layout::Command;
use crate::layout::Concept;
use crate::request::ClaimRequest;
use crate::request::default_queue;
use crate::sql::dialect::LockMode;

/// The lease a claim gets when none is asked for.
pub const DEFAULT_LEASE: Duration = Duration::from_secs(300);

pub fn run(ctx: &Ctx, args: &ClaimArgs) -> Result<u8> {
    let mut backend = ctx.open_for(Command::Claim, Access::Write)?;
    let layout = &backend.table().layout;
    let lease = args
        .lease
        .or_else(|| layout.column(Concept::LockedUntil).map(|_| DEFAULT_LEASE));
    let queue = default_queue(layout, args.queue.as_deref());
    let request = ClaimRequest {
        worker: args.worker.clone(),
        queue: queue.clone(),
        lease,
    };
    let claimed =
        crate::engine::claim(backend.as_mut(), &request, LockMode::SkipLocked).map_err(|err| {
            crate::error::QctlError::when_unknown(err, || {
                format!(
                    "a job may or may not have been claimed for {}: `qctl list --status running` \
                     shows the jobs running; one nobody works on is returned by its lease (or \
                     `qctl reap --timeout`)",
                    args.worker
                )
            })
        })?;
    match claimed {
        Some(job) => {
            ctx.out.emit(&job)?;
            Ok(exit::OK)
        }
        None => {
            let queue = queue.map_or(String::new(), |q| format!(" in queue {q}"));
            ctx.out.note(&format!("qctl: no ready job{queue}"));
            Ok(exit::NO)
        }
    }
}
