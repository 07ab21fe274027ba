//! `qctl bench`: how fast concurrent claimers drain a scratch queue, with
//! an audit that every job was processed exactly once. On PostgreSQL it
//! compares SKIP LOCKED with a plain FOR UPDATE in one run.

use anyhow::Result;

use crate::cli::{BenchArgs, BenchModeArg};
use crate::ctx::Ctx;
use crate::db::Access;
use crate::error::exit;
use crate::layout::Command;
use crate::request::{BenchMode, BenchRequest};

pub fn run(ctx: &Ctx, args: &BenchArgs) -> Result<u8> {
    let mut backend = ctx.open_for(Command::Bench, Access::Scratch)?;
    let modes = match (backend.table().dialect.skip_locked, args.mode) {
        (false, _) => vec![BenchMode::Immediate],
        (true, BenchModeArg::SkipLocked) => vec![BenchMode::SkipLocked],
        (true, BenchModeArg::ForUpdate) => vec![BenchMode::ForUpdate],
        (true, BenchModeArg::Both) => vec![BenchMode::SkipLocked, BenchMode::ForUpdate],
    };
    let request = BenchRequest {
        workers: args.workers as usize,
        jobs: args.jobs,
        hold: args.hold,
        modes,
        keep: args.keep,
    };
    // The bench writes only its scratch table (PostgreSQL) or a scratch
    // file (SQLite); the queue table need not exist.
    let report = crate::engine::bench::bench(backend.as_mut(), &request)?;
    ctx.out.emit(&report)?;
    if report.audit_ok() {
        Ok(exit::OK)
    } else {
        ctx.out
            .warn("the audit found jobs processed twice or not at all");
        Ok(exit::NO)
    }
}
