//! `qctl blocked`: who waits on whom. PostgreSQL: sessions waiting on a
//! lock, their blockers and the blocking chains; SQLite: the journal mode,
//! whether a writer holds the lock now, and which processes hold the file.

use anyhow::Result;

use crate::cli::BlockedArgs;
use crate::ctx::Ctx;
use crate::db::Access;
use crate::duration::{format_age, format_duration};
use crate::error::exit;

pub fn run(ctx: &Ctx, args: &BlockedArgs) -> Result<u8> {
    let mut backend = ctx.open(Access::Inspect)?;
    let mut report = backend.blocked()?;
    let mut peers = super::locks::cluster_view(backend.as_mut(), args.all_nodes, "blocked")?;
    if let Some((me, others)) = &mut peers {
        for session in &mut report.sessions {
            session.node = Some(me.clone());
        }
        for blocker in &mut report.blockers {
            blocker.node = Some(me.clone());
        }
        for (node, peer) in others.iter_mut() {
            let theirs = peer.blocked()?;
            report
                .sessions
                .extend(theirs.sessions.into_iter().map(|mut s| {
                    s.node = Some(node.clone());
                    s
                }));
            report
                .blockers
                .extend(theirs.blockers.into_iter().map(|mut b| {
                    b.node = Some(node.clone());
                    b
                }));
            for note in theirs.notes {
                if !report.notes.contains(&note) {
                    report.notes.push(note);
                }
            }
        }
    }
    super::locks::note_view(backend.as_mut(), &peers, &mut report.notes);
    // Holders are shown for their waiters; where the database shows no
    // waiters at all (SQLite), every holder stays.
    if let Some(min) = args.min_wait
        && !report.sessions.is_empty()
    {
        report
            .sessions
            .retain(|s| s.wait_seconds.is_none_or(|w| w >= min.as_secs_f64()));
        // A blocker is its node's session (--all-nodes on Galera: pids
        // are each node's own).
        let still: Vec<(Option<String>, i32)> = report
            .sessions
            .iter()
            .flat_map(|s| s.blocked_by.iter().map(|pid| (s.node.clone(), *pid)))
            .collect();
        report
            .blockers
            .retain(|b| still.contains(&(b.node.clone(), b.pid)));
    }
    ctx.out.emit(&report)?;
    if let (Some(max), Some(longest)) = (args.max_wait, report.longest_wait())
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
