//! `qctl purge`: delete old finished jobs in batches, after asking.

use std::io::BufRead;

use anyhow::Result;
use chrono::Utc;

use crate::cli::{PurgeArgs, PurgeStatus};
use crate::ctx::Ctx;
use crate::db::Access;
use crate::error::{QctlError, exit};
use crate::layout::Command;
use crate::layout::Status;
use crate::model::{PurgeOutcome, rfc3339};
use crate::render::thousands;
use crate::request::PurgeRequest;

pub fn run(ctx: &Ctx, args: &PurgeArgs) -> Result<u8> {
    let status = match args.status {
        PurgeStatus::Done => Status::Done,
        PurgeStatus::Failed => Status::Failed,
    };
    let mut request = PurgeRequest {
        status,
        cutoff: Utc::now() - chrono::Duration::from_std(args.older_than)?,
        queue: args.queue.clone(),
        dry_run: args.dry_run,
        batch_size: 0,
    };
    if args.dry_run {
        // Write access: the dry run tries the first batch and rolls it back.
        let mut backend = ctx.open_for(Command::Purge, Access::Write)?;
        request.batch_size = crate::db::batch_size(backend.as_ref(), args.batch_size)?;
        let outcome = crate::engine::purge(backend.as_mut(), &request)?;
        ctx.out.emit(&outcome)?;
        return Ok(exit::OK);
    }
    if !args.yes && !ctx.out.stdin_is_terminal {
        return Err(QctlError::usage(
            "refusing to delete without --yes: stdin is not a terminal to ask on \
             (see what would go with --dry-run)",
        ));
    }
    let mut backend = ctx.open_for(Command::Purge, Access::Write)?;
    request.batch_size = crate::db::batch_size(backend.as_ref(), args.batch_size)?;
    if !args.yes {
        request.dry_run = true;
        let count = crate::engine::purge(backend.as_mut(), &request)?.purged;
        request.dry_run = false;
        if count == 0 {
            ctx.out.emit(&PurgeOutcome {
                purged: 0,
                ..crate::engine::purge(
                    backend.as_mut(),
                    &PurgeRequest {
                        dry_run: true,
                        ..request.clone()
                    },
                )?
            })?;
            return Ok(exit::OK);
        }
        let question = format!(
            "Delete {} {} jobs finished before {} from {} in {}? [y/N] ",
            thousands(count as i64),
            status.name(),
            rfc3339(&request.cutoff),
            backend.table().layout.table,
            ctx.target.display()
        );
        if !confirm(&question)? {
            eprintln!("qctl: nothing deleted");
            return Ok(exit::NO);
        }
    }
    let outcome = crate::engine::purge(backend.as_mut(), &request)?;
    ctx.out.emit(&outcome)?;
    Ok(exit::OK)
}

fn confirm(question: &str) -> Result<bool> {
    eprint!("{question}");
    let mut answer = String::new();
    std::io::stdin().lock().read_line(&mut answer)?;
    Ok(matches!(
        answer.trim().to_ascii_lowercase().as_str(),
        "y" | "yes"
    ))
}
