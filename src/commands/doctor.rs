//! `qctl doctor`: every check at once, as one CI gate. Exit 0 when
//! healthy (warnings allowed unless `--strict`), 1 when a check fails, 2
//! when the checks could not run.

use anyhow::Result;
use serde::Serialize;

use super::{default_queue, stale_rule};
use crate::Ctx;
use crate::backend::{Access, Blocked, ExplainRequest, ExplainTarget, StatsRequest};
use crate::cli::DoctorArgs;
use crate::duration::{format_age, format_duration};
use crate::error::exit;
use crate::explain::Severity;
use crate::output::{Render, Styles};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckStatus {
    Ok,
    Warning,
    Failed,
}

#[derive(Debug, Serialize)]
pub struct Check {
    pub name: &'static str,
    pub status: CheckStatus,
    pub detail: String,
}

#[derive(Debug, Serialize)]
pub struct DoctorReport {
    pub backend: &'static str,
    pub table: String,
    pub ok: bool,
    pub checks: Vec<Check>,
}

pub fn run(ctx: &Ctx, args: &DoctorArgs) -> Result<u8> {
    let mut backend = ctx.open(Access::Read)?;
    let mut checks = vec![Check {
        name: "schema",
        status: CheckStatus::Ok,
        detail: format!(
            "table {} has every column the {} layout names",
            ctx.layout.table, ctx.layout.preset
        ),
    }];

    let plans = backend.explain(&ExplainRequest {
        queries: vec![
            ExplainTarget::Claim,
            ExplainTarget::Reap,
            ExplainTarget::Purge,
        ],
        queue: default_queue(&ctx.layout, None),
        sort_threshold: args.sort_threshold,
        custom_sql: None,
        analyze: false,
    })?;
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
                .map(|f| format!("{}: {}", f.kind, f.detail))
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
            } else {
                format!("{detail} — fix: qctl explain-claim --query all --apply")
            },
        });
    }

    let stats = backend.stats(&StatsRequest {
        exact: false,
        stale: stale_rule(&ctx.layout, args.timeout),
    })?;
    checks.push(match stats.total.stale {
        Some(stale) if stale > args.max_stale => Check {
            name: "stale jobs",
            status: CheckStatus::Failed,
            detail: format!(
                "{stale} running jobs are stale (more than {}): their workers died — run qctl reap{}",
                args.max_stale,
                args.timeout.map_or(String::new(), |t| format!(" --timeout {}", format_duration(t)))
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
    });
    let age = stats.total.oldest_ready_age_seconds;
    checks.push(match (args.max_ready_age, age) {
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
    });
    checks.push(Check {
        name: "dead letters",
        status: if stats.total.failed > 0 {
            CheckStatus::Warning
        } else {
            CheckStatus::Ok
        },
        detail: format!(
            "{} failed jobs{}",
            stats.total.failed,
            if stats.total.failed > 0 {
                " — qctl list --status failed; qctl retry"
            } else {
                ""
            }
        ),
    });

    match backend.blocked()? {
        Blocked::Postgres(report) => {
            let longest = report
                .sessions
                .iter()
                .filter_map(|s| s.wait_seconds)
                .fold(0.0, f64::max);
            checks.push(Check {
                name: "lock waits",
                status: if longest > args.max_wait.as_secs_f64() {
                    CheckStatus::Failed
                } else {
                    CheckStatus::Ok
                },
                detail: format!(
                    "{} sessions waiting, longest {} — qctl blocked shows who holds them",
                    report.sessions.len(),
                    format_age(longest)
                ),
            });
            let locks = backend.locks(None)?;
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
        Blocked::Sqlite(report) => checks.push(Check {
            name: "write lock",
            status: CheckStatus::Ok,
            detail: format!(
                "journal mode {}, write lock {}",
                report.journal_mode,
                if report.write_locked {
                    "held by a writer right now"
                } else {
                    "free"
                }
            ),
        }),
    }

    let failed = checks.iter().any(|c| {
        c.status == CheckStatus::Failed || (args.strict && c.status == CheckStatus::Warning)
    });
    let report = DoctorReport {
        backend: backend.name(),
        table: ctx.layout.table.to_string(),
        ok: !failed,
        checks,
    };
    ctx.out.emit(&report)?;
    Ok(if failed { exit::NO } else { exit::OK })
}

impl Render for DoctorReport {
    fn render_table(&self, styles: &Styles) -> String {
        use owo_colors::OwoColorize;
        let mut out = String::new();
        for check in &self.checks {
            let mark = match check.status {
                CheckStatus::Ok => "ok  ".style(styles.good).to_string(),
                CheckStatus::Warning => "warn".style(styles.warn).to_string(),
                CheckStatus::Failed => "FAIL".style(styles.bad).to_string(),
            };
            out.push_str(&format!("{mark} {:<15} {}\n", check.name, check.detail));
        }
        let verdict = if self.ok {
            "healthy".style(styles.good).to_string()
        } else {
            "unhealthy".style(styles.bad).to_string()
        };
        out.push_str(&format!("{verdict}: {} on {}\n", self.table, self.backend));
        out
    }
}
