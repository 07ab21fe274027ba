//! `qctl show ID`: one job in full.

use anyhow::Result;

use crate::cli::ShowArgs;
use crate::ctx::Ctx;
use crate::db::Access;
use crate::error::exit;
use crate::model::JobId;

pub fn run(ctx: &Ctx, args: &ShowArgs) -> Result<u8> {
    let mut backend = ctx.open(Access::Read)?;
    let job = crate::engine::show(backend.as_mut(), &JobId::parse(&args.id))?;
    ctx.out.emit(&job)?;
    Ok(exit::OK)
}
