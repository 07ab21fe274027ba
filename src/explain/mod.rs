//! `explain-claim`: the plan of each hot query, what is wrong with it, and
//! the index that fixes it, judged by one rule for every database. The
//! backends only plan a statement and say what its lines mean.

pub mod placeholders;

use anyhow::Result;
use serde::Serialize;

use crate::backend::{Backend, IndexState, PlanHow, TxMode};
use crate::engine::{first_int, in_tx};
use crate::layout::Status;
use crate::request::{
    ClaimRequest, ExplainRequest, ExplainTarget, PurgeRequest, ReapRequest, StaleRule,
};
use crate::sql::Stmt;
use crate::sql::ddl::IndexSpec;
use crate::sql::dialect::LockMode;
use crate::sql::queue::QueueSql;

pub use placeholders::{Guess, guess_placeholders};

/// Below this many rows a plan is not representative.
pub const SMALL_TABLE_ROWS: f64 = 1_000.0;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    Error,
    Warning,
}

/// What a finding says about a plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FindingKind {
    /// Every run reads the whole table.
    FullScan,
    /// A scan stopped early by a LIMIT: cheap only while the matching rows
    /// sit at the start of the table.
    LimitedScan,
    /// A whole index read in order instead of searched.
    IndexScan,
    /// A sort of the matching rows on every run.
    TempSort,
    /// A bitmap scan that reads every matching row before the LIMIT.
    BitmapScan,
    /// SQLite builds a throwaway index on every run.
    AutomaticIndex,
    /// The table is too small for the plan to mean much.
    SmallTable,
    /// The planner has no statistics for the table.
    NoStatistics,
    /// The index qctl would suggest exists, but the plan does not use it.
    IndexIgnored,
    /// The index exists but is unusable (a cancelled concurrent build).
    InvalidIndex,
    /// A placeholder of `--sql` was bound NULL, so the plan may differ.
    UnboundParameter,
}

impl FindingKind {
    /// Whether the finding is a reason to suggest an index.
    pub fn wants_index(self) -> bool {
        matches!(
            self,
            FindingKind::FullScan
                | FindingKind::LimitedScan
                | FindingKind::IndexScan
                | FindingKind::TempSort
                | FindingKind::BitmapScan
                | FindingKind::AutomaticIndex
        )
    }
}

/// One problem found in a plan.
#[derive(Debug, Clone, Serialize)]
pub struct PlanFinding {
    pub severity: Severity,
    pub kind: FindingKind,
    pub detail: String,
    /// The plan line it points at, for the table view.
    #[serde(skip)]
    pub line: Option<usize>,
    /// The table alias a scan finding is about, to match it across plans.
    #[serde(skip)]
    pub subject: Option<String>,
}

impl PlanFinding {
    pub fn new(severity: Severity, kind: FindingKind, detail: impl Into<String>) -> PlanFinding {
        PlanFinding {
            severity,
            kind,
            detail: detail.into(),
            line: None,
            subject: None,
        }
    }
}

/// A plan line as drawn in the table view.
#[derive(Debug, Clone)]
pub struct PlanLine {
    pub depth: usize,
    pub text: String,
}

/// The check of one query.
#[derive(Debug, Clone, Serialize)]
pub struct QueryCheck {
    /// `claim`, `reap` or `purge`.
    pub query: &'static str,
    pub sql: String,
    /// The backend's own plan document.
    pub plan: serde_json::Value,
    pub findings: Vec<PlanFinding>,
    #[serde(skip)]
    pub lines: Vec<PlanLine>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ExplainReport {
    pub backend: &'static str,
    pub table: String,
    pub ok: bool,
    pub checks: Vec<QueryCheck>,
    pub suggested_indexes: Vec<String>,
    /// Indexes created by `--apply` before this check ran.
    pub applied: Vec<String>,
    /// The suggested indexes as specs, for `--apply`.
    #[serde(skip)]
    pub suggested_specs: Vec<IndexSpec>,
    /// Hot queries the layout does not have, and why.
    pub notes: Vec<String>,
    /// Whether warnings fail the check (`--strict`), for the CI
    /// annotations.
    #[serde(skip)]
    pub strict: bool,
}

impl ExplainReport {
    /// Whether any finding fails the check (`strict`: warnings too).
    pub fn failed(&self, strict: bool) -> bool {
        self.checks
            .iter()
            .flat_map(|c| &c.findings)
            .any(|f| f.severity == Severity::Error || (strict && f.severity == Severity::Warning))
    }
}

/// The statement each hot query runs, as qctl runs it, with the rows its
/// filter matches (what a sort must sort) and the index that serves it.
struct Sample {
    stmt: Stmt,
    backlog_state: Option<Status>,
    /// The index that serves it, where qctl can say which.
    index: Option<IndexSpec>,
}

/// The sample of a hot query, or why the layout has no such query (no
/// lease or lock time to judge staleness by, no time to date a finished
/// job by): read-only commands work on every layout.
fn sample<B: Backend + ?Sized>(
    b: &mut B,
    target: ExplainTarget,
    request: &ExplainRequest,
) -> Result<std::result::Result<Sample, String>> {
    let t = b.table();
    let q = QueueSql::new(t, chrono::Utc::now());
    use crate::layout::Concept;
    let lacks = |what: &str| {
        Err(format!(
            "no {} query to check: the {} layout has no {what}",
            target.name(),
            t.layout.preset
        ))
    };
    if target == ExplainTarget::Reap
        && t.q(Concept::LockedUntil).is_none()
        && t.q(Concept::LockedAt).is_none()
    {
        return Ok(lacks(
            "lease (locked_until) or lock time (locked_at) column",
        ));
    }
    if target == ExplainTarget::Purge && t.layout.finished_at_concept().is_none() {
        return Ok(lacks("finished_at, updated_at or created_at column"));
    }
    Ok(Ok(match target {
        ExplainTarget::Claim => {
            let claim = ClaimRequest {
                worker: "qctl-explain".into(),
                queue: request.queue.clone(),
                lease: t
                    .layout
                    .column(Concept::LockedUntil)
                    .map(|_| std::time::Duration::from_secs(300)),
            };
            // The whole claim where qctl can run one; its read part where
            // the dialect splits it or the table has no worker column to
            // write (the read part is what an index serves).
            // A queue system's preset checks the system's own claim.
            let stmt = if let Some(sql) = &t.layout.system_claim {
                Stmt::plain(sql.split_whitespace().collect::<Vec<_>>().join(" "))
            } else if t.dialect.update_returning && t.q(Concept::LockedBy).is_some() {
                q.claim(&claim, LockMode::SkipLocked)?
            } else {
                q.claim_pick(&claim, LockMode::SkipLocked)?
            };
            Sample {
                stmt,
                backlog_state: Some(Status::Pending),
                index: Some(IndexSpec::claim(t)),
            }
        }
        ExplainTarget::Reap => {
            let rule = crate::commands::stale_rule(&t.layout, None)
                .unwrap_or(StaleRule::LockAge(std::time::Duration::from_secs(600)));
            let reap = ReapRequest {
                rule,
                queue: None,
                dry_run: false,
                batch_size: 1000,
                wait: false,
                show: 0,
            };
            Sample {
                stmt: q.reap_pick(&reap)?,
                backlog_state: Some(Status::Running),
                index: IndexSpec::state(t),
            }
        }
        ExplainTarget::Purge => {
            // What purge deletes: finished jobs, or where a completed job is
            // deleted at once (graphile-worker), dead letters.
            let Some(status) = [Status::Done, Status::Failed]
                .into_iter()
                .find(|s| t.layout.statuses.has(*s))
            else {
                return Ok(lacks("done or failed state"));
            };
            let purge = PurgeRequest {
                status,
                cutoff: chrono::Utc::now() - chrono::Duration::days(7),
                queue: None,
                dry_run: false,
                batch_size: 1000,
            };
            Sample {
                stmt: q.purge_pick(&purge)?,
                backlog_state: None,
                index: IndexSpec::state(t),
            }
        }
    }))
}

/// How many rows a state holds (in the claim's queue), for sizing sorts.
fn backlog<B: Backend + ?Sized>(b: &mut B, state: Status, queue: Option<&str>) -> Result<u64> {
    let stmt = {
        let q = QueueSql::new(b.table(), chrono::Utc::now());
        let Some(filter) = q.state(state) else {
            return Ok(0);
        };
        let mut binds = crate::sql::Binds::default();
        let queue = match queue {
            Some(queue) if b.table().q(crate::layout::Concept::Queue).is_some() => {
                q.queue_filter(Some(queue), &mut binds)?
            }
            _ => String::new(),
        };
        let text = format!(
            "SELECT count(*) FROM {} WHERE {filter}{queue}",
            b.table().table()
        );
        Stmt::new(b.table().dialect, &text, binds)
    };
    let rows = in_tx(b, TxMode::Read, true, |b| b.query(&stmt))?;
    Ok(first_int(&rows).max(0) as u64)
}

/// Checks each hot query: plans it, judges the plan, and suggests the
/// index that fixes it.
pub fn explain<B: Backend + ?Sized>(b: &mut B, request: &ExplainRequest) -> Result<ExplainReport> {
    let size = b.table_size()?;
    let small = size.rows < SMALL_TABLE_ROWS;
    let mut checks = Vec::new();
    let mut suggested: Vec<IndexSpec> = Vec::new();
    let mut notes = Vec::new();
    for target in &request.queries {
        let mut sample = match sample(b, *target, request)? {
            Ok(sample) => sample,
            Err(note) => {
                notes.push(note);
                continue;
            }
        };
        let mut findings = Vec::new();
        if let (ExplainTarget::Claim, Some(custom)) = (target, &request.custom_sql) {
            let (binds, unguessed) = b.guess_binds(custom, request.queue.as_deref())?;
            sample.stmt = Stmt {
                sql: custom.clone(),
                binds,
            };
            findings = unguessed;
        }
        let backlog = match sample.backlog_state {
            Some(state) => backlog(b, state, request.queue.as_deref())?,
            None => 0,
        };
        let how = PlanHow {
            analyze: request.analyze,
            forced: false,
            backlog,
            sort_threshold: request.sort_threshold,
        };
        let plan = b.plan(&sample.stmt, how)?;
        findings.extend(plan.findings);
        let scans = findings.iter().any(|f| f.kind == FindingKind::FullScan);
        if scans && (small || !size.analyzed) && b.can_force_plans() {
            // On a small or never-analyzed table a scan may be the right
            // choice: plan again with scans and sorts off to tell "no
            // usable index" from "too small to bother".
            let forced = b.plan(
                &sample.stmt,
                PlanHow {
                    analyze: false,
                    forced: true,
                    backlog: 0,
                    sort_threshold: u64::MAX,
                },
            )?;
            let still_scanned: Vec<Option<String>> = forced
                .findings
                .iter()
                .filter(|f| f.kind == FindingKind::FullScan)
                .map(|f| f.subject.clone())
                .collect();
            for finding in findings
                .iter_mut()
                .filter(|f| f.kind == FindingKind::FullScan)
            {
                if still_scanned.contains(&finding.subject) {
                    finding.detail.push_str(
                        " — no usable index: even with sequential scans off the planner finds none",
                    );
                } else {
                    finding.severity = Severity::Warning;
                    finding.kind = FindingKind::SmallTable;
                    finding.detail = format!(
                        "{} — but the table is small or never analyzed, and with sequential scans \
                         off the planner uses an index: the index is there, the scan is the cheaper \
                         plan for now",
                        finding.detail
                    );
                }
            }
        }
        if !size.analyzed {
            findings.push(PlanFinding::new(
                Severity::Warning,
                FindingKind::NoStatistics,
                format!(
                    "{} was never analyzed: the planner guesses its size; run ANALYZE \
                     (explain-claim --apply does)",
                    b.table().layout.table
                ),
            ));
        } else if small {
            findings.push(PlanFinding::new(
                Severity::Warning,
                FindingKind::SmallTable,
                format!(
                    "the table holds about {:.0} rows; the planner may choose differently once it \
                     is large, so this plan is not representative",
                    size.rows
                ),
            ));
        }
        let needs_fix = findings.iter().any(|f| f.kind.wants_index());
        if let Some(index) = sample
            .index
            .as_ref()
            .filter(|i| needs_fix && !suggested.contains(i))
        {
            match b.index_state(&index.name)? {
                IndexState::Valid => {
                    let used = plan
                        .lines
                        .iter()
                        .any(|l| l.text.contains(index.name.as_str()));
                    if !used {
                        findings.push(PlanFinding::new(
                            Severity::Warning,
                            FindingKind::IndexIgnored,
                            format!(
                                "index {} exists but the planner does not use it for this query: {}",
                                index.name,
                                index.create_sql(b.table(), false)
                            ),
                        ));
                    }
                }
                IndexState::Invalid(qualified) => {
                    findings.push(PlanFinding::new(
                        Severity::Error,
                        FindingKind::InvalidIndex,
                        format!(
                            "index {qualified} is INVALID (a cancelled CREATE INDEX CONCURRENTLY): \
                             --apply drops and rebuilds it"
                        ),
                    ));
                    suggested.push(index.clone());
                }
                IndexState::Missing => suggested.push(index.clone()),
            }
        }
        checks.push(QueryCheck {
            query: target.name(),
            sql: sample.stmt.sql,
            plan: plan.doc,
            findings,
            lines: plan.lines,
        });
    }
    let mut report = ExplainReport {
        backend: b.name(),
        table: b.table().layout.table.to_string(),
        ok: true,
        checks,
        suggested_indexes: suggested
            .iter()
            .map(|spec| spec.create_sql(b.table(), b.table().dialect.concurrent_indexes))
            .collect(),
        applied: Vec::new(),
        suggested_specs: suggested,
        notes,
        strict: false,
    };
    report.ok = !report.failed(false);
    Ok(report)
}
