//! `qctl blocked`: who waits on whom. PostgreSQL: sessions waiting on a
//! lock, their blockers and the blocking chains; SQLite: the journal mode,
//! whether a writer holds the lock now, and which processes hold the file.

use anyhow::Result;

use crate::Ctx;
use crate::backend::{Access, Blocked};
use crate::cli::BlockedArgs;
use crate::duration::{format_age, format_duration};
use crate::error::exit;

pub fn run(ctx: &Ctx, args: &BlockedArgs) -> Result<u8> {
    let mut report = ctx.open(Access::Inspect)?.blocked()?;
    if let (Blocked::Postgres(pg), Some(min)) = (&mut report, args.min_wait) {
        pg.sessions
            .retain(|s| s.wait_seconds.is_none_or(|w| w >= min.as_secs_f64()));
        let still: Vec<i32> = pg
            .sessions
            .iter()
            .flat_map(|s| s.blocked_by.clone())
            .collect();
        pg.blockers.retain(|b| still.contains(&b.pid));
    }
    ctx.out.emit(&report)?;
    let longest = match &report {
        Blocked::Postgres(pg) => pg
            .sessions
            .iter()
            .filter_map(|s| s.wait_seconds)
            .fold(None, |max: Option<f64>, w| {
                Some(max.map_or(w, |m| m.max(w)))
            }),
        Blocked::Sqlite(_) => None,
    };
    if let (Some(max), Some(longest)) = (args.max_wait, longest)
        && longest > max.as_secs_f64()
    {
        ctx.out.warn(&format!(
            "a session has waited {}, longer than --max-wait {}",
            format_age(longest),
            format_duration(max)
        ));
        return Ok(exit::NO);
    }
    Ok(exit::OK)
}
