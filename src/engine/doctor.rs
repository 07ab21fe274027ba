//! `doctor`'s checks, as a list the command runs: the table against its
//! layout, the hot queries' plans, the queue's health, and the locks.
//! Each group adds its checks to the report; the command only prints it.

use anyhow::Result;

use crate::db::{Backend, Severity};
use crate::duration::{format_age, format_duration};
use crate::model::{Check, CheckStatus, DoctorReport, Stats};
use crate::request::{DoctorRequest, ExplainRequest, ExplainTarget, StatsRequest, stale_rule};
use crate::sql::schema::QueueTable;

/// A group of checks over one reading of the database.
type Checks<B> = fn(&mut B, &DoctorRequest, &mut Vec<Check>) -> Result<()>;

/// Every check, in the order the report lists them.
pub fn doctor<B: Backend + ?Sized>(b: &mut B, request: &DoctorRequest) -> Result<DoctorReport> {
    let groups: [Checks<B>; 5] = [
        table_checks,
        replication_checks,
        plan_checks,
        queue_checks,
        lock_checks,
    ];
    let mut checks = Vec::new();
    for group in groups {
        group(b, request, &mut checks)?;
    }
    let failed = checks.iter().any(|c| {
        c.status == CheckStatus::Failed || (request.strict && c.status == CheckStatus::Warning)
    });
    let table = &b.table().layout;
    Ok(DoctorReport {
        backend: b.name(),
        table: table.table.to_string(),
        layout: table.preset.clone(),
        ok: !failed,
        checks,
        strict: request.strict,
    })
}

/// The layout in use, the table against it, and how it compares names.
fn table_checks<B: Backend + ?Sized>(
    b: &mut B,
    _request: &DoctorRequest,
    checks: &mut Vec<Check>,
) -> Result<()> {
    let table = b.table();
    checks.extend([layout_check(table), schema_check(table), names_check(table)]);
    Ok(())
}

/// The server's place in its replication: a primary whose standbys
/// replicate asynchronously can lose acknowledged work in a failover.
fn replication_checks<B: Backend + ?Sized>(
    b: &mut B,
    request: &DoctorRequest,
    checks: &mut Vec<Check>,
) -> Result<()> {
    let role = match b.server_role() {
        Ok(Some(role)) => role,
        Ok(None) => return Ok(()),
        Err(err) => {
            checks.push(Check {
                name: "replication",
                status: CheckStatus::Warning,
                detail: format!("cannot read the server's role: {err:#}"),
            });
            return Ok(());
        }
    };
    checks.push(replication_check(&role, request));
    Ok(())
}

/// What a server's role means for the work qctl acknowledges there.
fn replication_check(role: &crate::model::ServerRole, request: &DoctorRequest) -> Check {
    if let Some(galera) = &role.galera {
        return galera_check(galera, request);
    }
    let name = |s: &crate::model::Standby| {
        if s.name.is_empty() {
            s.client.clone().unwrap_or_else(|| "(unnamed)".into())
        } else {
            s.name.clone()
        }
    };
    let named = |standbys: &[&crate::model::Standby]| {
        standbys
            .iter()
            .map(|s| name(s))
            .collect::<Vec<_>>()
            .join(", ")
    };
    match role.role {
        "standby" => Check {
            name: "replication",
            status: if role.behind(request.max_lag).is_some() {
                CheckStatus::Failed
            } else {
                CheckStatus::Warning
            },
            detail: format!(
                "a standby{}{}: it takes no writes, and its counts are as old as its replay{}",
                role.upstream
                    .as_deref()
                    .map(|u| format!(" of {u}"))
                    .unwrap_or_default(),
                if role.replay_paused == Some(true) {
                    " (replay is PAUSED)"
                } else {
                    ""
                },
                role.replay_lag_seconds
                    .map(|l| format!(" ({} behind)", format_age(l)))
                    .unwrap_or_default()
            ),
        },
        _ if role.standbys.is_empty() => Check {
            name: "replication",
            status: CheckStatus::Ok,
            detail: "no standby streams from this server".into(),
        },
        _ => {
            let asynchronous = role.async_standbys();
            let sync_names = role
                .synchronous_standby_names
                .as_deref()
                .unwrap_or("")
                .trim()
                .to_string();
            if !asynchronous.is_empty() && sync_names.is_empty() {
                Check {
                    name: "replication",
                    status: CheckStatus::Warning,
                    detail: format!(
                        "{} standby{} ({}) replicate{} asynchronously and synchronous_standby_names \
                         is empty: a failover to one can lose claims, completes, reaps and loads \
                         this primary acknowledged (qctl's exit 0 means committed here, not on a \
                         standby); name them in synchronous_standby_names to keep acknowledged \
                         work through a failover",
                        asynchronous.len(),
                        if asynchronous.len() == 1 { "" } else { "s" },
                        named(&asynchronous),
                        if asynchronous.len() == 1 { "s" } else { "" },
                    ),
                }
            } else {
                Check {
                    name: "replication",
                    status: CheckStatus::Ok,
                    detail: format!(
                        "{} standby{} ({}); synchronous_standby_names = '{sync_names}'{}",
                        role.standbys.len(),
                        if role.standbys.len() == 1 { "" } else { "s" },
                        role.standbys
                            .iter()
                            .map(|s| format!("{}: {}", name(s), s.sync_state))
                            .collect::<Vec<_>>()
                            .join(", "),
                        if asynchronous.is_empty() {
                            String::new()
                        } else {
                            format!(
                                "; {} asynchronous: a failover to {} can lose acknowledged work",
                                named(&asynchronous),
                                if asynchronous.len() == 1 { "it" } else { "one" }
                            )
                        }
                    ),
                }
            }
        }
    }
}

/// A Galera node: it must be Synced in the Primary Component (else its
/// reads lag the cluster, or it refuses queries), and its cluster as big as
/// expected.
fn galera_check(galera: &crate::model::GaleraState, request: &DoctorRequest) -> Check {
    let expected = request.cluster_size.unwrap_or(galera.expected_size).max(1);
    let (status, detail) = if !galera.healthy() {
        (
            CheckStatus::Failed,
            format!(
                "Galera node {} is {} ({}, ready {}, receive queue {}): its reads lag the \
                 cluster's or it refuses queries — point qctl at a Synced node",
                galera.node,
                galera.state,
                galera.cluster_status,
                if galera.ready { "ON" } else { "OFF" },
                galera.recv_queue
            ),
        )
    } else if galera.cluster_size < expected {
        (
            CheckStatus::Failed,
            format!(
                "the Galera cluster has {} of {expected} nodes ({}): a node is down or cut off",
                galera.cluster_size,
                galera.members.join(", ")
            ),
        )
    } else {
        (
            CheckStatus::Ok,
            format!(
                "Galera node {} Synced in a cluster of {} ({}); flow control paused {:.0}% of \
                 the time, receive queue {}",
                galera.node,
                galera.cluster_size,
                galera.members.join(", "),
                galera.flow_control_paused * 100.0,
                galera.recv_queue
            ),
        )
    };
    Check {
        name: "replication",
        status,
        detail,
    }
}

/// The claim, reap and purge plans, as explain-claim judges them.
fn plan_checks<B: Backend + ?Sized>(
    b: &mut B,
    request: &DoctorRequest,
    checks: &mut Vec<Check>,
) -> Result<()> {
    let standby = b
        .server_role()
        .ok()
        .flatten()
        .is_some_and(|r| r.role == "standby");
    let plans = crate::explain::explain(
        b,
        &ExplainRequest {
            queries: vec![
                ExplainTarget::Claim,
                ExplainTarget::Reap,
                ExplainTarget::Purge,
            ],
            queue: None,
            sort_threshold: request.sort_threshold,
            custom_sql: None,
            analyze: false,
        },
    )?;
    for check in &plans.checks {
        let worst = check
            .findings
            .iter()
            .map(|f| f.severity)
            .min_by_key(|s| match s {
                Severity::Error => 0,
                Severity::Warning => 1,
            });
        let detail = if check.findings.is_empty() {
            "uses an index".to_string()
        } else {
            check
                .findings
                .iter()
                .map(|f| format!("{}: {}", kind_name(f.kind), f.detail))
                .collect::<Vec<_>>()
                .join("; ")
        };
        checks.push(Check {
            name: match check.query {
                "claim" => "claim plan",
                "reap" => "reap plan",
                _ => "purge plan",
            },
            status: match worst {
                None => CheckStatus::Ok,
                Some(Severity::Warning) => CheckStatus::Warning,
                Some(Severity::Error) => CheckStatus::Failed,
            },
            detail: if plans.suggested_indexes.is_empty() || check.findings.is_empty() {
                detail
            } else if standby {
                format!(
                    "{detail} — fix: qctl explain-claim --query all --apply on the primary (this \
                     server is a standby: it takes no writes)"
                )
            } else {
                format!("{detail} — fix: qctl explain-claim --query all --apply")
            },
        });
    }

    for note in &plans.notes {
        checks.push(Check {
            name: "plans",
            status: CheckStatus::Warning,
            detail: note.clone(),
        });
    }

    Ok(())
}

/// Stale jobs, the backlog's age, dead letters, statuses no state claims.
fn queue_checks<B: Backend + ?Sized>(
    b: &mut B,
    request: &DoctorRequest,
    checks: &mut Vec<Check>,
) -> Result<()> {
    let table = b.table().clone();
    let stats = crate::engine::stats(
        b,
        &StatsRequest {
            exact: false,
            stale: stale_rule(&table.layout, request.timeout),
        },
    )?;
    // Read on a standby or a lagging Galera node, the counts are as old
    // as its replay, and a reap there cannot write: the advice says where
    // to act.
    let standby = stats.server.as_ref().is_some_and(|s| s.role == "standby");
    let as_of = stats
        .server
        .as_ref()
        .and_then(|s| s.behind(request.max_lag))
        .map(|why| format!(" (as this server saw them: {why})"))
        .unwrap_or_default();
    checks.push(stale_check(&stats, request, standby, &as_of));
    checks.push(backlog_check(&stats, request));
    checks.push(dead_letter_check(&stats, standby));
    status_checks(&stats, &table.layout.preset, checks);
    // Notes on the numbers' estimates; the one above is said by its check.
    for note in stats
        .notes
        .iter()
        .filter(|note| note.as_str() != crate::engine::UNMATCHED_NOT_LOOKED_FOR)
    {
        checks.push(Check {
            name: "statistics",
            status: CheckStatus::Warning,
            detail: note.clone(),
        });
    }

    Ok(())
}

/// Whether more running jobs are stale than the request allows, and
/// where to reap them.
fn stale_check(stats: &Stats, request: &DoctorRequest, standby: bool, as_of: &str) -> Check {
    match stats.total.stale {
        Some(stale) if stale > request.max_stale => Check {
            name: "stale jobs",
            status: CheckStatus::Failed,
            detail: format!(
                "{stale} running jobs are stale (more than {}){as_of}: their workers died — run \
                 qctl reap{}{}",
                request.max_stale,
                request.timeout.map_or(String::new(), |t| format!(
                    " --timeout {}",
                    format_duration(t)
                )),
                if standby {
                    " on the primary (this server is a standby: it takes no writes)"
                } else {
                    ""
                }
            ),
        },
        Some(stale) => Check {
            name: "stale jobs",
            status: CheckStatus::Ok,
            detail: format!("{stale} stale of {} running", stats.total.running),
        },
        None => Check {
            name: "stale jobs",
            status: CheckStatus::Warning,
            detail: "the layout has no lease column: pass --timeout to judge staleness by lock age"
                .into(),
        },
    }
}

/// Whether the oldest ready job has waited longer than the request allows.
fn backlog_check(stats: &Stats, request: &DoctorRequest) -> Check {
    let age = stats.total.oldest_ready_age_seconds;
    match (request.max_ready_age, age) {
        (Some(max), Some(age)) if age > max.as_secs_f64() => Check {
            name: "backlog age",
            status: CheckStatus::Failed,
            detail: format!(
                "the oldest ready job has waited {}, longer than {}: workers are not keeping up",
                format_age(age),
                format_duration(max)
            ),
        },
        (_, age) => Check {
            name: "backlog age",
            status: CheckStatus::Ok,
            detail: format!(
                "{} ready, oldest waiting {}",
                stats.total.ready,
                age.map_or("-".into(), format_age)
            ),
        },
    }
}

/// The dead letters, and where to retry them.
fn dead_letter_check(stats: &Stats, standby: bool) -> Check {
    Check {
        name: "dead letters",
        status: if stats.total.failed > 0 {
            CheckStatus::Warning
        } else {
            CheckStatus::Ok
        },
        detail: format!(
            "{} failed jobs{}",
            stats.total.failed,
            match (stats.total.failed > 0, standby) {
                (true, false) => " — qctl list --status failed; qctl retry",
                (true, true) => " — qctl list --status failed; qctl retry on the primary",
                (false, _) => "",
            }
        ),
    }
}

/// Jobs with a status no state of the layout (`preset`) claims, or that
/// they were not looked for.
fn status_checks(stats: &Stats, preset: &str, checks: &mut Vec<Check>) {
    if stats.total.other > 0 {
        let values: Vec<String> = stats
            .total
            .other_values
            .iter()
            .map(|(value, n)| format!("{value:?} ({n})"))
            .collect();
        checks.push(Check {
            name: "unknown status",
            status: CheckStatus::Warning,
            detail: format!(
                "{} jobs have a status no state of the {} layout claims: {} — map it in \
                 [layout.statuses] of qctl.toml (qctl list --status other shows them)",
                stats.total.other,
                preset,
                values.join(", ")
            ),
        });
    }
    if stats.unmatched_not_looked_for {
        checks.push(Check {
            name: "unknown status",
            status: CheckStatus::Ok,
            detail: "rows no state matches not looked for on a table this big: qctl stats \
                     --exact looks"
                .into(),
        });
    }
}

/// Sessions waiting on locks, and advisory locks that may have leaked.
fn lock_checks<B: Backend + ?Sized>(
    b: &mut B,
    request: &DoctorRequest,
    checks: &mut Vec<Check>,
) -> Result<()> {
    // A user who may not read the server's lock views (MySQL's PROCESS)
    // gets a warning saying so, not a failed run.
    let blocked = match b.blocked() {
        Ok(blocked) => Some(blocked),
        Err(err) if matches!(err.downcast_ref(), Some(crate::error::QctlError::Usage(_))) => {
            checks.push(Check {
                name: "lock waits",
                status: CheckStatus::Warning,
                detail: format!("{err:#}"),
            });
            None
        }
        Err(err) => return Err(err),
    };
    if let Some(blocked) = blocked {
        lock_waits(checks, &blocked, request);
    }
    // A server whose lock views are off (MySQL's performance_schema)
    // cannot show its locks: a warning saying what to enable, not a
    // failed run.
    let locks = if b.supports_advisory_locks() {
        match b.locks(None) {
            Ok(locks) => Some(locks),
            Err(err) if matches!(err.downcast_ref(), Some(crate::error::QctlError::Usage(_))) => {
                checks.push(Check {
                    name: "advisory locks",
                    status: CheckStatus::Warning,
                    detail: format!("{err:#}"),
                });
                None
            }
            Err(err) => return Err(err),
        }
    } else {
        None
    };
    if let Some(locks) = locks {
        let leaked: Vec<String> = locks
            .locks
            .iter()
            .filter(|l| l.session_level && l.state_seconds.is_some_and(|s| s > 3600.0))
            .map(|l| format!("{} (pid {})", l.key, l.pid))
            .collect();
        checks.push(Check {
            name: "advisory locks",
            status: if leaked.is_empty() {
                CheckStatus::Ok
            } else {
                CheckStatus::Warning
            },
            detail: if leaked.is_empty() {
                format!(
                    "{} held or awaited, none idle for over an hour",
                    locks.locks.len()
                )
            } else {
                format!(
                    "session-level locks idle for over an hour, maybe leaked: {}",
                    leaked.join(", ")
                )
            },
        });
    }

    Ok(())
}

/// Sessions waiting on locks: fails past `--max-wait`.
fn lock_waits(
    checks: &mut Vec<Check>,
    blocked: &crate::model::BlockedReport,
    request: &DoctorRequest,
) {
    let longest = blocked.longest_wait().unwrap_or(0.0);
    let holders: Vec<String> = blocked
        .blockers
        .iter()
        .filter(|b| b.root)
        .map(|b| format!("pid {}", b.pid))
        .collect();
    checks.push(Check {
        name: "lock waits",
        status: if longest > request.max_wait.as_secs_f64() {
            CheckStatus::Failed
        } else {
            CheckStatus::Ok
        },
        detail: if blocked.sessions.is_empty() && blocked.write_locked() {
            format!(
                "the write lock is held right now by {} — qctl blocked shows who",
                if holders.is_empty() {
                    "another connection".to_string()
                } else {
                    holders.join(", ")
                }
            )
        } else {
            format!(
                "{} sessions waiting, longest {} — qctl blocked shows who holds them",
                blocked.sessions.len(),
                format_age(longest)
            )
        },
    });
}

/// Which layout qctl uses, and how `--layout auto` chose it.
fn layout_check(table: &QueueTable) -> Check {
    let layout = &table.layout;
    let mut detail = match (&layout.detected, &layout.system) {
        (Some(found), _) => format!("auto: {found}"),
        (None, Some(system)) => format!("the {} preset ({system})", layout.preset),
        (None, None) => format!("the {} layout", layout.preset),
    };
    if let Some(version) = &layout.version {
        detail.push_str(&format!("; release: {version}"));
    }
    Check {
        name: "layout",
        status: if detail.contains("warning:") {
            CheckStatus::Warning
        } else {
            CheckStatus::Ok
        },
        detail,
    }
}

/// The table has what the layout names; optional columns it lacks are
/// listed with what they would have allowed.
fn schema_check(table: &QueueTable) -> Check {
    if table.absent.is_empty() {
        return Check {
            name: "schema",
            status: CheckStatus::Ok,
            detail: format!(
                "table {} has every column the {} layout names",
                table.layout.table, table.layout.preset
            ),
        };
    }
    let absent: Vec<String> = table
        .absent
        .iter()
        .map(|(concept, ident)| format!("{ident} ({})", concept.key()))
        .collect();
    Check {
        name: "schema",
        status: CheckStatus::Ok,
        detail: format!(
            "table {} lacks optional columns of the {} layout: {}; commands that need them say so",
            table.layout.table,
            table.layout.preset,
            absent.join(", ")
        ),
    }
}

/// Whether the worker and queue columns compare names byte for byte. A
/// collation that pads spaces or folds case (MySQL's default ones,
/// SQLite's NOCASE) makes `'w1 '` and `'W1'` the same worker to the
/// database: qctl compares such columns byte for byte itself, but the
/// system's own workers do not.
fn names_check(table: &QueueTable) -> Check {
    use crate::layout::Concept;
    let loose: Vec<String> = [Concept::LockedBy, Concept::Queue]
        .into_iter()
        .filter_map(|concept| {
            let column = table
                .col(concept)
                .filter(|c| !c.exact && c.expr.is_none())?;
            Some(format!(
                "{} ({}, collation {})",
                column.name,
                concept.key(),
                column.collation.as_deref().unwrap_or("unknown")
            ))
        })
        .collect();
    if loose.is_empty() {
        return Check {
            name: "name matching",
            status: CheckStatus::Ok,
            detail: "worker and queue names compare byte for byte".into(),
        };
    }
    Check {
        name: "name matching",
        status: CheckStatus::Warning,
        detail: format!(
            "{} compare names ignoring trailing spaces or case: qctl compares them byte for \
             byte (the index finds the rows, then the bytes must match), so 'w1 ' or 'W1' never \
             finishes a job 'w1' holds; the application's own queries may not — {}",
            loose.join(" and "),
            table.dialect.exact_collation_hint
        ),
    }
}

fn kind_name(kind: crate::db::FindingKind) -> String {
    serde_json::to_value(kind)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}
