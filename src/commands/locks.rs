//! `qctl locks`: advisory locks held or awaited in the current database,
//! with decoded keys and the sessions holding them.

use anyhow::Result;

use crate::cli::LocksArgs;
use crate::ctx::Ctx;
use crate::db::Access;
use crate::error::exit;

pub fn run(ctx: &Ctx, args: &LocksArgs) -> Result<u8> {
    let report = ctx.open(Access::Inspect)?.locks(args.key.clone())?;
    ctx.out.emit(&report)?;
    Ok(exit::OK)
}
