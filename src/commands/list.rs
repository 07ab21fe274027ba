//! `qctl list`: jobs filtered by queue and status.

use anyhow::Result;

use crate::cli::{ListArgs, ListStatusArg};
use crate::ctx::Ctx;
use crate::db::Access;
use crate::error::exit;
use crate::layout::Status;
use crate::model::JobList;
use crate::request::stale_rule;
use crate::request::{ListRequest, ListStatus};

pub fn run(ctx: &Ctx, args: &ListArgs) -> Result<u8> {
    let status = args.status.map(|s| match s {
        ListStatusArg::Pending => ListStatus::Is(Status::Pending),
        ListStatusArg::Running => ListStatus::Is(Status::Running),
        ListStatusArg::Done => ListStatus::Is(Status::Done),
        ListStatusArg::Failed => ListStatus::Is(Status::Failed),
        ListStatusArg::Ready => ListStatus::Ready,
        ListStatusArg::Scheduled => ListStatus::Scheduled,
        ListStatusArg::Stale => ListStatus::Stale,
        ListStatusArg::Cancelled => ListStatus::Is(Status::Cancelled),
        ListStatusArg::Other => ListStatus::Other,
    });
    let mut backend = ctx.open(Access::Read)?;
    let request = ListRequest {
        queue: args.queue.clone(),
        status,
        stale: stale_rule(&backend.table().layout, args.timeout),
        limit: args.limit,
    };
    let jobs = crate::engine::list(backend.as_mut(), &request)?;
    ctx.out.emit(&JobList { jobs })?;
    Ok(exit::OK)
}
