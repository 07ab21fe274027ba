//! `qctl init`: create the queue table and its indexes, or print the DDL.

use anyhow::Result;

use crate::cli::InitArgs;
use crate::ctx::Ctx;
use crate::db::Access;
use crate::error::exit;
use crate::model::InitReport;

pub fn run(ctx: &Ctx, args: &InitArgs) -> Result<u8> {
    let access = if args.print {
        Access::Print
    } else {
        Access::Create
    };
    ctx.layout.refuse(crate::layout::Command::Init)?;
    let mut backend = ctx.open(access)?;
    let statements = backend.init_statements();
    if !args.print {
        backend.init()?;
    }
    ctx.out.emit(&InitReport {
        database: ctx.target.display(),
        table: ctx.layout.table.to_string(),
        statements,
        executed: !args.print,
    })?;
    Ok(exit::OK)
}
