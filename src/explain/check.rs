//! The check of each hot query, phase by phase: the statement to judge
//! (and the queue it is judged on), the backlog it may pass, one measured
//! run of its read part, its plan, a second plan with scans discouraged
//! where the table is small, the driver's binding, the tables beside the
//! queue, the table's own warnings, and the index that fixes it.

use anyhow::Result;

use super::{
    ExplainReport, JudgedQueue, QueryCheck, SMALL_TABLE_ROWS, Sample, backlog, custom_sample,
    driver_binding, judged_queue, measure, planned, run_measure, sample, side_tables,
};
use crate::db::{
    Backend, FindingKind, IndexState, Measured, Plan, PlanFinding, PlanHow, Severity, TableSize,
    short_error,
};
use crate::error::QctlError;
use crate::layout::{Concept, Status};
use crate::request::{ExplainRequest, ExplainTarget};
use crate::sql::Stmt;
use crate::sql::ddl::IndexSpec;

/// What the checks of one run share: the table's size, the indexes
/// suggested so far, the notes, and the queue a claim is judged on.
struct Run {
    size: TableSize,
    suggested: Vec<IndexSpec>,
    notes: Vec<String>,
    judged: Option<JudgedQueue>,
}

impl Run {
    fn small(&self) -> bool {
        self.size.rows < SMALL_TABLE_ROWS
    }
}

/// Checks each hot query: plans it, runs its read part once to count the
/// rows it examines, judges both, and suggests the index that fixes it.
pub fn explain<B: Backend + ?Sized>(b: &mut B, request: &ExplainRequest) -> Result<ExplainReport> {
    let mut run = Run {
        size: b.table_size()?,
        suggested: Vec::new(),
        notes: Vec::new(),
        judged: None,
    };
    let mut checks = Vec::new();
    for target in &request.queries {
        if let Some(check) = check(b, request, *target, &mut run)? {
            checks.push(check);
        }
    }
    let mut report = ExplainReport {
        backend: b.name(),
        table: b.table().layout.table.to_string(),
        ok: true,
        provisional: checks.iter().any(|c| c.provisional),
        checks,
        suggested_indexes: run
            .suggested
            .iter()
            .map(|spec| spec.create_sql(b.table(), b.table().dialect.concurrent_indexes))
            .collect(),
        applied: Vec::new(),
        suggested_specs: run.suggested,
        notes: run.notes,
        strict: false,
    };
    report.ok = !report.failed(false);
    Ok(report)
}

/// One query's check; None when the layout has no such query (a note
/// says why).
fn check<B: Backend + ?Sized>(
    b: &mut B,
    request: &ExplainRequest,
    target: ExplainTarget,
    run: &mut Run,
) -> Result<Option<QueryCheck>> {
    let mut findings = Vec::new();
    let Some(sample) = sample_of(b, request, target, run, &mut findings)? else {
        return Ok(None);
    };
    let on_queue = run.judged.clone().filter(|_| sample.takes_queue);
    findings.extend(on_queue.as_ref().and_then(|j| j.finding(target.name())));
    let (backlog_here, backlog_all) =
        backlogs(b, &sample, on_queue.as_ref(), target, &mut run.notes)?;
    let mut measured = match &sample.read {
        Some(read) => run_measure(b, read, false, request.analyze, &mut findings),
        None => None,
    };
    let backlog = (backlog_here, &measured);
    let (planned, plan) = plan_of(b, &sample, backlog, request, target, run, &mut findings)?;
    if let Some(m) = excuse_small_scans(b, &planned, &sample, request, run, &mut findings)? {
        measured = Some(m);
    }
    if let Some((typed, columns)) = &sample.typed {
        let bound = (&planned, &plan);
        findings.extend(driver_binding(b, bound, typed, columns, measured.as_ref())?);
    }
    let query = target.name();
    side_tables(
        b,
        &planned,
        measured.as_ref(),
        query,
        &mut findings,
        &mut run.notes,
    )?;
    let state_name = sample.state.map_or("matching", Status::name);
    let measure = measured.map(|m| {
        let (measure, finding) = measure::judge(m, backlog_all, run.size.rows, state_name);
        findings.extend(finding);
        measure
    });
    findings.extend(table_findings(b, run));
    suggest_index(b, &sample, &plan, &mut findings, &mut run.suggested)?;
    let check = QueryCheck {
        query,
        sql: sample.stmt.sql,
        plan: plan.doc,
        rows_examined: measure.as_ref().map(|m| m.measured.rows_examined),
        rows_returned: measure.as_ref().map(|m| m.measured.rows_returned),
        measure,
        provisional: findings.iter().any(|f| f.kind.provisional()),
        findings,
        queue: on_queue,
        lines: plan.lines,
    };
    Ok(Some(check))
}

/// The statement a query is judged by: for a claim, the application's
/// own (`--sql`) or the system's, else qctl's, on the queue picked for it.
fn sample_of<B: Backend + ?Sized>(
    b: &mut B,
    request: &ExplainRequest,
    target: ExplainTarget,
    run: &mut Run,
    findings: &mut Vec<PlanFinding>,
) -> Result<Option<Sample>> {
    // A queue system's preset checks the system's own claim, as the
    // application's own is checked.
    let own = match (target, &request.custom_sql) {
        (ExplainTarget::Claim, Some(custom)) => Some(custom.clone()),
        (ExplainTarget::Claim, None) => b
            .table()
            .layout
            .system_claim
            .as_ref()
            .map(|sql| sql.split_whitespace().collect::<Vec<_>>().join(" ")),
        _ => None,
    };
    let queues = own.is_some() || b.table().q(Concept::Queue).is_some();
    if target == ExplainTarget::Claim && queues && run.judged.is_none() {
        run.judged = Some(judged_queue(b, request.queue.as_deref())?);
    }
    let queue = run.judged.as_ref().map(|j| j.name.clone());
    Ok(match own {
        Some(own) => {
            let queue = queue.as_deref().unwrap_or("default");
            Some(custom_sample(b, &own, queue, findings, &mut run.notes)?)
        }
        None => match sample(b, target, queue.as_deref())? {
            Ok(sample) => Some(sample),
            Err(note) => {
                run.notes.push(note);
                None
            }
        },
    })
}

/// The rows of the sample's state the query may pass: in its queue, and
/// in the whole table; 0 for both when counting them outlasted the
/// statement timeout (a note says so).
fn backlogs<B: Backend + ?Sized>(
    b: &mut B,
    sample: &Sample,
    on_queue: Option<&JudgedQueue>,
    target: ExplainTarget,
    notes: &mut Vec<String>,
) -> Result<(u64, u64)> {
    let Some(state) = sample.state else {
        return Ok((0, 0));
    };
    let here = backlog(b, state, on_queue.map(|j| j.name.as_str()))?;
    let all = match here {
        Some(_) => backlog(b, state, None)?,
        None => None,
    };
    if all.is_none() {
        notes.push(format!(
            "counting the {} jobs outlasted the statement timeout: the {} check's budget leaves \
             them out",
            state.name(),
            target.name()
        ));
    }
    Ok((here.unwrap_or(0), all.unwrap_or(0)))
}

/// The rows a sort receives: PostgreSQL's Sort node input; on SQLite at
/// most the rows examined.
fn sort_rows(measured: &Option<Measured>, backlog: u64) -> Option<u64> {
    measured.as_ref().map(|m| {
        m.sort_input_rows
            .unwrap_or_else(|| m.rows_examined.min(backlog.max(m.rows_returned)))
    })
}

/// The statement planned and its plan, its findings added (a sort that
/// only orders the result is none). Planning a write checks the
/// privileges of the write (PostgreSQL): a role that may only read is
/// shown the plan of the read part, which is what an index serves.
fn plan_of<B: Backend + ?Sized>(
    b: &mut B,
    sample: &Sample,
    (backlog, measured): (u64, &Option<Measured>),
    request: &ExplainRequest,
    target: ExplainTarget,
    run: &mut Run,
    findings: &mut Vec<PlanFinding>,
) -> Result<(Stmt, Plan)> {
    let how = PlanHow {
        forced: false,
        keep_sorts: false,
        backlog,
        sort_rows: sort_rows(measured, backlog),
        sort_threshold: request.sort_threshold,
    };
    let mut planned = planned(b.table().dialect, sample);
    let mut plan = match (b.plan(&planned, how), &sample.read) {
        (Err(err), Some(read)) if QctlError::is_privilege(&err) => {
            planned = read.clone();
            run.notes.push(format!(
                "the {} check planned the statement's read part: this role may not plan its \
                 write ({})",
                target.name(),
                short_error(&err)
            ));
            b.plan(&planned, how)?
        }
        (plan, _) => plan?,
    };
    // A sort that receives no more rows than the query returns only
    // orders its result (an outer ORDER BY over `id IN (... LIMIT 1)`).
    let result_sort = measured.as_ref().is_some_and(|m| {
        sort_rows(measured, backlog).is_some_and(|rows| rows <= m.rows_returned.max(1))
    });
    findings.extend(
        std::mem::take(&mut plan.findings)
            .into_iter()
            .filter(|f| !(result_sort && f.kind == FindingKind::TempSort)),
    );
    Ok((planned, plan))
}

/// On a small or never-analyzed table a scan may be the right choice:
/// plans again with scans and sorts off to tell "no usable index" from
/// "too small to bother". Where the index is there, the work to judge is
/// the work of the plan the table will get, measured again with it.
fn excuse_small_scans<B: Backend + ?Sized>(
    b: &mut B,
    planned: &Stmt,
    sample: &Sample,
    request: &ExplainRequest,
    run: &Run,
    findings: &mut [PlanFinding],
) -> Result<Option<Measured>> {
    let scans = findings.iter().any(|f| f.kind == FindingKind::FullScan);
    if !(scans && (run.small() || !run.size.analyzed) && b.can_force_plans()) {
        return Ok(None);
    }
    let forced = b.plan(
        planned,
        PlanHow {
            forced: true,
            keep_sorts: false,
            backlog: 0,
            sort_rows: None,
            sort_threshold: u64::MAX,
        },
    )?;
    let still_scanned: Vec<Option<String>> = forced
        .findings
        .iter()
        .filter(|f| f.kind == FindingKind::FullScan)
        .map(|f| f.subject.clone())
        .collect();
    let mut excused = false;
    for finding in findings
        .iter_mut()
        .filter(|f| f.kind == FindingKind::FullScan)
    {
        if still_scanned.contains(&finding.subject) {
            finding.detail.push_str(
                " — no usable index: even with sequential scans off the planner finds none",
            );
        } else {
            excused = true;
            finding.severity = Severity::Warning;
            finding.kind = FindingKind::SmallTable;
            finding.detail = format!(
                "{} — but the table is small or never analyzed, and with sequential scans off the \
                 planner uses an index: the index is there, the scan is the cheaper plan for now",
                finding.detail
            );
        }
    }
    Ok(match (&sample.read, excused) {
        (Some(read), true) => run_measure(b, read, true, request.analyze, &mut Vec::new()),
        _ => None,
    })
}

/// What the table itself says of every plan: never analyzed, or too
/// small for the plan to mean much.
fn table_findings<B: Backend + ?Sized>(b: &B, run: &Run) -> Option<PlanFinding> {
    if !run.size.analyzed {
        Some(PlanFinding::new(
            Severity::Warning,
            FindingKind::NoStatistics,
            format!(
                "{} was never analyzed: the planner guesses its size; run ANALYZE (explain-claim \
                 --apply does)",
                b.table().layout.table
            ),
        ))
    } else if run.small() {
        Some(PlanFinding::new(
            Severity::Warning,
            FindingKind::SmallTable,
            format!(
                "the table holds about {:.0} rows; the planner may choose differently once it is \
                 large, so this plan is not representative",
                run.size.rows
            ),
        ))
    } else {
        None
    }
}

/// The index that serves the query, where a finding asks for one: one of
/// another name may serve it already (made by the system's own
/// migrations), an INVALID one is rebuilt, a missing one is suggested.
fn suggest_index<B: Backend + ?Sized>(
    b: &mut B,
    sample: &Sample,
    plan: &Plan,
    findings: &mut Vec<PlanFinding>,
    suggested: &mut Vec<IndexSpec>,
) -> Result<()> {
    let needs_fix = findings.iter().any(|f| f.kind.wants_index());
    let Some(index) = sample
        .index
        .as_ref()
        .filter(|i| needs_fix && !suggested.contains(i))
    else {
        return Ok(());
    };
    let same = b
        .indexes()?
        .into_iter()
        .find(|have| have.name != index.name.as_str() && have.serves(index));
    let state = match &same {
        Some(_) => IndexState::Valid,
        None => b.index_state(&index.name)?,
    };
    let name = same
        .as_ref()
        .map_or(index.name.as_str(), |i| i.name.as_str());
    match state {
        IndexState::Valid if !plan.lines.iter().any(|l| l.text.contains(name)) => {
            let what = match &same {
                Some(have) => have.describe(),
                None => index.create_sql(b.table(), false),
            };
            findings.push(PlanFinding::new(
                Severity::Warning,
                FindingKind::IndexIgnored,
                format!(
                    "index {name} exists but the planner does not use it for this query: {what}"
                ),
            ));
        }
        IndexState::Valid => {}
        IndexState::Invalid(qualified) => {
            findings.push(PlanFinding::new(
                Severity::Error,
                FindingKind::InvalidIndex,
                format!(
                    "index {qualified} is INVALID (a cancelled CREATE INDEX CONCURRENTLY): --apply \
                     drops and rebuilds it"
                ),
            ));
            suggested.push(index.clone());
        }
        IndexState::Missing => suggested.push(index.clone()),
    }
    Ok(())
}
