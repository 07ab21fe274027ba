//! `qctl doctor`: every check at once, as one CI gate. Exit 0 when
//! healthy (warnings allowed unless `--strict`), 1 when a check fails, 2
//! when the checks could not run. The checks are the engine's
//! ([`crate::engine::doctor`]).

use anyhow::Result;

use crate::cli::DoctorArgs;
use crate::ctx::Ctx;
use crate::db::Access;
use crate::error::exit;
use crate::request::DoctorRequest;

pub fn run(ctx: &Ctx, args: &DoctorArgs) -> Result<u8> {
    let mut backend = ctx.open(Access::Read)?;
    let report = crate::engine::doctor::doctor(
        backend.as_mut(),
        &DoctorRequest {
            timeout: args.timeout,
            max_stale: args.max_stale,
            max_ready_age: args.max_ready_age,
            max_wait: args.max_wait,
            sort_threshold: args.sort_threshold,
            max_lag: args.max_lag,
            cluster_size: args.cluster_size,
            strict: args.strict,
        },
    )?;
    ctx.out.emit(&report)?;
    Ok(if report.ok { exit::OK } else { exit::NO })
}
