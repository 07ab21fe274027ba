//! `qctl retry`: put dead-lettered jobs back to pending, with one more
//! attempt where they had none left.

use anyhow::Result;

use crate::cli::RetryArgs;
use crate::ctx::Ctx;
use crate::db::Access;
use crate::error::exit;
use crate::layout::Command;
use crate::model::JobId;
use crate::request::RetrySelection;

pub fn run(ctx: &Ctx, args: &RetryArgs) -> Result<u8> {
    let selection = if args.all {
        RetrySelection::All {
            queue: args.queue.clone(),
        }
    } else {
        let mut ids: Vec<JobId> = Vec::new();
        for id in args.ids.iter().map(|id| JobId::parse(id)) {
            if !ids.contains(&id) {
                ids.push(id);
            }
        }
        RetrySelection::Ids(ids)
    };
    let mut backend = ctx.open_for(Command::Retry, Access::Write)?;
    let batch_size = crate::db::batch_size(backend.as_ref(), args.batch_size)?;
    let outcome = crate::engine::retry(backend.as_mut(), &selection, batch_size, args.dry_run)
        .map_err(|err| match &selection {
            RetrySelection::Ids(ids) => crate::error::QctlError::when_unknown(err, || {
                let ids: Vec<String> = ids.iter().map(ToString::to_string).collect();
                format!(
                    "job {} may or may not be pending again: `qctl show ID` tells (a retry of a \
                     job no longer failed is refused and changes nothing)",
                    ids.join(", ")
                )
            }),
            _ => err,
        })?;
    ctx.out.emit(&outcome)?;
    Ok(exit::OK)
}
