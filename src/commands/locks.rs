//! `qctl locks`: advisory locks held or awaited in the current database,
//! with decoded keys and the sessions holding them.

use anyhow::Result;

use crate::cli::LocksArgs;
use crate::ctx::Ctx;
use crate::db::{Access, Backend, ClusterPeers};
use crate::error::{QctlError, exit};

pub fn run(ctx: &Ctx, args: &LocksArgs) -> Result<u8> {
    let mut backend = ctx.open(Access::Inspect)?;
    let mut report = backend.locks(args.key.clone())?;
    let mut peers = cluster_view(backend.as_mut(), args.all_nodes, "locks")?;
    if let Some((me, others)) = &mut peers {
        for lock in &mut report.locks {
            lock.node = Some(me.clone());
        }
        for (node, peer) in others.iter_mut() {
            let theirs = peer.locks(args.key.clone())?;
            report.locks.extend(theirs.locks.into_iter().map(|mut l| {
                l.node = Some(node.clone());
                l
            }));
        }
    }
    note_view(backend.as_mut(), &peers, &mut report.notes);
    ctx.out.emit(&report)?;
    Ok(exit::OK)
}

/// This node's address and every other node of its cluster, connected,
/// for `--all-nodes`; None without it. Refused where the server is not a
/// cluster's node.
pub(super) type Peers = Option<ClusterPeers>;

pub(super) fn cluster_view(b: &mut dyn Backend, all_nodes: bool, command: &str) -> Result<Peers> {
    if !all_nodes {
        return Ok(None);
    }
    let Some(role) = b.server_role()?.filter(|r| r.galera.is_some()) else {
        return Err(QctlError::usage(format!(
            "--all-nodes asks every node of a Galera cluster; this server is not one's node \
             (qctl {command} shows its sessions already)"
        )));
    };
    Ok(Some(b.cluster_peers(&role)?))
}

/// On a Galera node, says whose sessions the report shows: one node's (its
/// locks are its own), or every node's.
pub(super) fn note_view(b: &mut dyn Backend, peers: &Peers, notes: &mut Vec<String>) {
    match peers {
        Some((me, others)) => notes.push(format!(
            "every node of the Galera cluster: {me}{} (a session's node is in its node field)",
            others
                .iter()
                .map(|(n, _)| format!(", {n}"))
                .collect::<String>()
        )),
        // Only a Galera node's view is its own (its role is read there
        // only: elsewhere it would cost a transaction for nothing).
        None if b.writes_certified() => {
            if let Some(galera) = b.server_role().ok().flatten().and_then(|r| r.galera) {
                notes.push(format!(
                    "Galera node {}'s sessions only: row locks and GET_LOCK are each node's own \
                     (a claim on another node waits there, or conflicts at COMMIT); --all-nodes \
                     asks every node ({})",
                    galera.node,
                    galera.members.join(", ")
                ));
            }
        }
        None => {}
    }
}
