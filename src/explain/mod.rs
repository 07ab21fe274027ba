//! `explain-claim`: the plan of each hot query, the work one run of it
//! really does, what is wrong with them, and the index that fixes it,
//! judged by one rule for every database. The backends only plan a
//! statement, say what its lines mean, and count the work of a run.

mod check;
pub mod measure;
pub mod placeholders;

use anyhow::Result;
use serde::Serialize;

use crate::db::{
    Backend, FindingKind, Measured, Plan, PlanFinding, PlanHow, PlanLine, Severity, TxMode,
    first_int, in_tx,
};
use crate::error::QctlError;
use crate::layout::{Concept, Ident, Status};
use crate::model::StaleRule;
use crate::request::{ClaimRequest, ExplainTarget, PurgeRequest, ReapRequest};
use crate::sql::Stmt;
use crate::sql::ddl::{IndexPurpose, IndexSpec};
use crate::sql::dialect::LockMode;
use crate::sql::queue::QueueSql;

use crate::sql::sqltext;
pub use check::explain;
pub use measure::Measure;
pub use placeholders::{Guess, guess_placeholders};

/// Below this many rows a plan is not representative.
pub const SMALL_TABLE_ROWS: f64 = 1_000.0;

/// The check of one query.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct QueryCheck {
    /// `claim`, `reap` or `purge`.
    pub query: &'static str,
    pub sql: String,
    /// The backend's own plan document.
    pub plan: serde_json::Value,
    /// Rows one run of the read part examined (null when it could not
    /// run), and rows it returned.
    pub rows_examined: Option<u64>,
    pub rows_returned: Option<u64>,
    /// The measurement: the statement run, the counters, the budget.
    pub measure: Option<Measure>,
    pub findings: Vec<PlanFinding>,
    /// Some value or step was guessed: the verdict may change with the
    /// application's own values.
    pub provisional: bool,
    /// The queue a claim that takes one was measured on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub queue: Option<JudgedQueue>,
    #[serde(skip)]
    pub lines: Vec<PlanLine>,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct ExplainReport {
    pub backend: &'static str,
    pub table: String,
    pub ok: bool,
    /// Whether any check is provisional (see [`QueryCheck::provisional`]).
    pub provisional: bool,
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

/// The statement each hot query runs, as qctl runs it, its read part (the
/// rows it picks, measured without writing), the state whose rows it may
/// pass, and the index that serves it.
struct Sample {
    stmt: Stmt,
    /// The read part, a SELECT without a locking clause; None when it
    /// cannot be found in an application's statement.
    read: Option<Stmt>,
    state: Option<Status>,
    /// The index that serves it, where qctl can say which.
    index: Option<IndexSpec>,
    /// Where the system's driver binds a placeholder as another type than
    /// its column's: the statement bound by the columns' types, and each
    /// column so bound with the driver's type.
    typed: Option<(Stmt, Vec<(String, String)>)>,
    /// Whether it claims from one queue (its cost is that queue's).
    takes_queue: bool,
}

/// A pick statement without its locking clause: row locks are writes.
fn unlocked(stmt: Stmt, lock: &str) -> Stmt {
    match stmt.sql.strip_suffix(lock) {
        Some(sql) if !lock.is_empty() => Stmt {
            sql: sql.to_string(),
            binds: stmt.binds,
        },
        _ => stmt,
    }
}

/// What the planner is shown of a sample: the statement without its
/// locking clauses (planning runs in a read-only transaction, and the
/// lock does not change the plan); where the database will not plan a
/// write there (MariaDB, MySQL), the read part that picks its rows.
fn planned(dialect: &crate::sql::Dialect, sample: &Sample) -> Stmt {
    let sql = sqltext::without_locks(&sample.stmt.sql, dialect.lexer);
    let writes = sqltext::tokenize(&sql, dialect.lexer).iter().any(|t| {
        t.depth == 0 && (t.is("update") || t.is("delete") || t.is("insert") || t.is("merge"))
    });
    match &sample.read {
        Some(read) if writes && !dialect.explains_writes_read_only => read.clone(),
        _ => Stmt {
            sql,
            binds: sample.stmt.binds.clone(),
        },
    }
}

/// The sample of a hot query, or why the layout has no such query (no
/// lease or lock time to judge staleness by, no time to date a finished
/// job by): read-only commands work on every layout.
fn sample<B: Backend + ?Sized>(
    b: &mut B,
    target: ExplainTarget,
    queue: Option<&str>,
) -> Result<std::result::Result<Sample, String>> {
    // What purge deletes: finished jobs, or where a completed job is
    // deleted at once (graphile-worker), dead letters.
    let purge = [Status::Done, Status::Failed]
        .into_iter()
        .find(|s| b.table().layout.statuses.has(*s))
        .map(|status| PurgeRequest {
            status,
            cutoff: chrono::Utc::now() - chrono::Duration::days(7),
            queue: None,
            dry_run: false,
            batch_size: 1000,
        });
    let purge_keys = match &purge {
        Some(purge) if target == ExplainTarget::Purge => crate::db::purge_keys(b, purge)?,
        _ => Default::default(),
    };
    let t = b.table();
    let q = QueueSql::new(t, chrono::Utc::now());
    let lock = t.dialect.lock(LockMode::SkipLocked);
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
                queue: queue
                    .filter(|_| t.q(Concept::Queue).is_some())
                    .map(str::to_string),
                lease: t
                    .layout
                    .column(Concept::LockedUntil)
                    .map(|_| std::time::Duration::from_secs(300)),
            };
            let pick = q.claim_pick(&claim, LockMode::SkipLocked)?;
            // The whole claim where qctl can run one; its read part where
            // the dialect splits it or the table has no worker column to
            // write (the read part is what an index serves).
            let stmt = if t.dialect.update_returning && t.q(Concept::LockedBy).is_some() {
                q.claim(&claim, LockMode::SkipLocked)?
            } else {
                pick.clone()
            };
            Sample {
                stmt,
                read: Some(unlocked(pick, lock)),
                state: Some(Status::Pending),
                index: Some(IndexSpec::claim(t)),
                typed: None,
                takes_queue: claim.queue.is_some(),
            }
        }
        ExplainTarget::Reap => {
            let rule = crate::request::stale_rule(&t.layout, None)
                .unwrap_or(StaleRule::LockAge(std::time::Duration::from_secs(600)));
            let reap = ReapRequest {
                rule,
                queue: None,
                dry_run: false,
                batch_size: 1000,
                adapt: false,
                wait: false,
                show: 0,
            };
            let stmt = q.reap_pick(&reap)?;
            Sample {
                read: Some(unlocked(stmt.clone(), lock)),
                stmt,
                state: Some(Status::Running),
                index: IndexSpec::state(t),
                typed: None,
                takes_queue: false,
            }
        }
        ExplainTarget::Purge => {
            let Some(purge) = purge else {
                return Ok(lacks("done or failed state"));
            };
            let stmt = q.purge_pick(&purge, &purge_keys)?;
            Sample {
                read: Some(unlocked(stmt.clone(), lock)),
                stmt,
                // A purge returns what it examines: it may pass nothing.
                state: None,
                index: IndexSpec::state(t),
                typed: None,
                takes_queue: false,
            }
        }
    }))
}

/// The application's own claim (`--sql`), bound as the application binds
/// it, its read part, and the index derived from that read part.
fn custom_sample<B: Backend + ?Sized>(
    b: &mut B,
    script: &str,
    queue: &str,
    findings: &mut Vec<PlanFinding>,
    notes: &mut Vec<String>,
) -> Result<Sample> {
    let chosen = claim_statement(b.table(), script)?;
    if let Some(note) = chosen.1 {
        notes.push(note);
    }
    driver_setup(b)?;
    let (typed_sql, queue_params) = placeholders::mark_queue(&chosen.0, b.table().dialect);
    let typed_sql = typed_sql.as_str();
    // Binding sees the statement without its locking clauses: a server
    // may refuse even to prepare a locking read in a read-only session.
    let types = b.describe_params(&sqltext::without_locks(typed_sql, b.table().dialect.lexer))?;
    let placeholders::Bound {
        binds,
        findings: guessed,
        takes_queue,
    } = placeholders::bind_values(b, typed_sql, &types, queue, &queue_params)?;
    // The statement as the system's driver sends it.
    let (driven, driver_columns) = driver_bound(b.table(), typed_sql)?;
    let sql = driven.as_str();
    let lexer = b.table().dialect.lexer;
    let t = b.table();
    // The rows a claim takes, read from the table or from one of its
    // partitions (pg-boss claims from job_common).
    let read_part = || {
        std::iter::once(t.layout.table.name.as_str())
            .chain(t.partitions.iter().map(String::as_str))
            .find_map(|name| sqltext::read_part(sql, lexer, name))
    };
    let read = read_part().map(|part| Stmt {
        binds: part
            .params
            .iter()
            .map(|&n| binds.get(n - 1).cloned().unwrap_or(crate::sql::Bind::Null))
            .collect(),
        sql: part.sql,
    });
    // Only the read part's placeholders decide the verdict.
    let read_numbers: Vec<usize> = read_part().map(|p| p.params).unwrap_or_default();
    findings.extend(
        guessed
            .into_iter()
            .filter(|(number, _)| read.is_none() || read_numbers.contains(number))
            .map(|(_, finding)| finding),
    );
    if read.is_none() {
        findings.push(PlanFinding::new(
            Severity::Warning,
            FindingKind::NotMeasured,
            format!(
                "found no SELECT reading {} in the statement to run without writing, so its work \
                 was not measured: the verdict rests on the plan's shape alone",
                t.layout.table
            ),
        ));
    }
    let index = read
        .as_ref()
        .and_then(|r| derived_index(t, &r.sql))
        .or_else(|| Some(IndexSpec::claim(t)));
    let typed = (!driver_columns.is_empty()).then(|| {
        (
            Stmt {
                sql: typed_sql.to_string(),
                binds: binds.clone(),
            },
            driver_columns,
        )
    });
    Ok(Sample {
        stmt: Stmt {
            sql: sql.to_string(),
            binds,
        },
        read,
        state: Some(Status::Pending),
        index,
        typed,
        takes_queue,
    })
}

/// Runs the system's per-connection setup (Que's poller creates its
/// `pg_temp` functions), once per connection, as its client does before
/// it claims. Only session-local objects may be made: they are gone when
/// qctl disconnects.
fn driver_setup<B: Backend + ?Sized>(b: &mut B) -> Result<()> {
    const DONE: &str = "explain: driver setup";
    let setup = b.table().layout.driver.setup.clone();
    if setup.is_empty() || b.memo(DONE).is_some() {
        return Ok(());
    }
    let lexer = b.table().dialect.lexer;
    for sql in &setup {
        if !session_local(sql, lexer) {
            return Err(QctlError::usage(format!(
                "the {} preset's connection setup may only create session-local objects \
                 (pg_temp, TEMPORARY): {}",
                b.table().layout.preset,
                sql.split_whitespace().take(6).collect::<Vec<_>>().join(" ")
            )));
        }
    }
    in_tx(b, TxMode::Write, true, |b| {
        for sql in &setup {
            b.run(sql)?;
        }
        Ok(())
    })?;
    b.remember(DONE.to_string(), Stmt::plain(String::new()));
    Ok(())
}

/// Whether a statement only creates a session-local object: `CREATE [OR
/// REPLACE] TEMP|TEMPORARY ...`, or a function, type or table in
/// `pg_temp`.
fn session_local(sql: &str, lexer: sqltext::Lexer) -> bool {
    let tokens = sqltext::tokenize(sql, lexer);
    let mut at = 0;
    if !tokens.first().is_some_and(|t| t.is("create")) {
        return false;
    }
    at += 1;
    if tokens.get(at).is_some_and(|t| t.is("or"))
        && tokens.get(at + 1).is_some_and(|t| t.is("replace"))
    {
        at += 2;
    }
    if tokens
        .get(at)
        .is_some_and(|t| t.is("temp") || t.is("temporary"))
    {
        return true;
    }
    let kind = tokens
        .get(at)
        .is_some_and(|t| t.is("function") || t.is("type") || t.is("table"));
    kind && tokens
        .get(at + 1)
        .and_then(|t| t.name())
        .is_some_and(|n| n == "pg_temp")
        && tokens.get(at + 2).is_some_and(|t| t.punct("."))
}

/// The statement as the system's driver sends it: each placeholder
/// compared with a column the driver binds as another type, cast to that
/// type (what a typed bind makes the server infer), and the columns so
/// bound.
fn driver_bound(
    t: &crate::sql::schema::QueueTable,
    sql: &str,
) -> Result<(String, Vec<(String, String)>)> {
    let driver = &t.layout.driver;
    if driver.binds.is_empty() {
        return Ok((sql.to_string(), Vec::new()));
    }
    let tokens = sqltext::tokenize(sql, t.dialect.lexer);
    let mut out = String::with_capacity(sql.len() + 32);
    let mut last = 0;
    let mut columns: Vec<(String, String)> = Vec::new();
    for p in sqltext::placeholders(&tokens) {
        let sqltext::Context::Compared { column, .. } = sqltext::context(&tokens, p.token) else {
            continue;
        };
        let Some(ty) = driver.binds(&column) else {
            continue;
        };
        if !ty
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ' ')
        {
            return Err(QctlError::usage(format!(
                "the {} preset names a driver type qctl cannot write: {ty}",
                t.layout.preset
            )));
        }
        let token = &tokens[p.token];
        out.push_str(&sql[last..token.start]);
        out.push_str(&format!("CAST({} AS {ty})", &sql[token.start..token.end]));
        last = token.end;
        if !columns.iter().any(|(c, _)| c.eq_ignore_ascii_case(&column)) {
            columns.push((column, ty.to_string()));
        }
    }
    out.push_str(&sql[last..]);
    Ok((out, columns))
}

/// The statement of an application's script that claims: the only one,
/// or the first that reads the queue table (Laravel's pop is a SELECT
/// ... FOR UPDATE SKIP LOCKED, then an UPDATE by id), with a note saying
/// which when there were several.
fn claim_statement(
    t: &crate::sql::schema::QueueTable,
    script: &str,
) -> Result<(String, Option<String>)> {
    let lexer = t.dialect.lexer;
    let mut statements = sqltext::statements(script, lexer);
    // A read-only transaction keeps a statement from writing tables, not
    // from writing (or reading) files on the server: such a statement is
    // never run, planned or prepared.
    for statement in &statements {
        if let Some(what) = sqltext::file_access(&sqltext::tokenize(statement, lexer)) {
            return Err(QctlError::usage(format!(
                "--sql uses {what}, which reads or writes files on the database server: \
                 explain-claim runs only statements that can change nothing, and refuses this one \
                 (nothing was run)"
            )));
        }
    }
    let table = t.layout.table.name.as_str();
    match statements.len() {
        0 => Err(QctlError::usage("--sql holds no statement")),
        1 => Ok((statements.remove(0), None)),
        n => {
            let reads = |sql: &String| {
                sqltext::tables(&sqltext::tokenize(sql, lexer))
                    .iter()
                    .any(|(name, _)| sqltext::base_name(name).eq_ignore_ascii_case(table))
            };
            let at = statements.iter().position(reads).unwrap_or(0);
            Ok((
                statements.remove(at),
                Some(format!(
                    "--sql holds {n} statements; statement {} (the first that reads {table}) is \
                     the claim checked",
                    at + 1
                )),
            ))
        }
    }
}

/// The index that serves an application's read part: the columns it
/// compares for equality, then its ORDER BY columns, then its range
/// columns; partial on its literal conditions on the status (and on
/// `IS NULL` and boolean flags) where the database has partial indexes.
pub fn derived_index(t: &crate::sql::schema::QueueTable, read_sql: &str) -> Option<IndexSpec> {
    let d = t.dialect;
    // A queue system's claim may pick its rows from a table beside the
    // jobs table (Solid Queue's ready executions): the index goes there.
    let (shape, on) = match sqltext::shape(read_sql, d.lexer, t.layout.table.name.as_str()) {
        Some(shape) => (shape, None),
        None => sqltext::tables(&sqltext::tokenize(read_sql, d.lexer))
            .into_iter()
            .map(|(name, _)| sqltext::base_name(&name).to_string())
            .filter(|base| !base.eq_ignore_ascii_case(t.layout.table.name.as_str()))
            .find_map(|base| {
                let shape = sqltext::shape(read_sql, d.lexer, &base)?;
                let name = Ident::new(&base, "table").ok()?;
                Some((
                    shape,
                    Some(crate::layout::TableName {
                        schema: t.layout.table.schema.clone(),
                        name,
                    }),
                ))
            })?,
    };
    let status = t
        .layout
        .column(Concept::Status)
        .map(|c| c.as_str().to_ascii_lowercase());
    let quote = |column: &str| Ident::new(column, "column").ok().map(|i| d.ident(&i));
    let mut predicate = Vec::new();
    let mut leading = Vec::new();
    for filter in &shape.literal_filters {
        let column = filter.column.to_ascii_lowercase();
        let rest = filter.rest.to_ascii_uppercase();
        let flag = rest.starts_with("IS ") || rest == "= TRUE" || rest == "= FALSE";
        let on_status =
            status.as_deref() == Some(column.as_str()) || column == "status" || column == "state";
        let equality = rest.starts_with("= ") || rest.starts_with("IN ");
        if d.partial_indexes && (on_status || flag) {
            predicate.push(format!("{} {}", quote(&filter.column)?, filter.rest));
        } else if (equality || on_status) && !leading.contains(&filter.column) {
            // A fixed value still narrows the index from its front.
            leading.push(filter.column.clone());
        }
    }
    let id = t
        .layout
        .column(Concept::Id)
        .map(|c| c.as_str().to_ascii_lowercase());
    let driver = &t.layout.driver;
    let mut columns: Vec<String> = Vec::new();
    let mut seen: Vec<String> = Vec::new();
    let mut add = |column: &str, modifiers: &str, columns: &mut Vec<String>| -> Option<()> {
        let key = column.to_ascii_lowercase();
        if seen.contains(&key) {
            return Some(());
        }
        seen.push(key.clone());
        // The rowid is in every SQLite index already.
        if t.id_is_rowid && id.as_deref() == Some(key.as_str()) {
            return Some(());
        }
        let quoted = match driver.binds(column) {
            // The index holds the cast the comparison makes.
            Some(ty) => format!("(CAST({} AS {ty}))", quote(column)?),
            None => quote(column)?,
        };
        columns.push(if modifiers.is_empty() {
            quoted
        } else {
            format!("{quoted} {modifiers}")
        });
        Some(())
    };
    for column in leading.iter().chain(&shape.equality) {
        add(column, "", &mut columns)?;
    }
    // A column the driver binds as another type is compared as a cast of
    // it (see `add`); its order is then not the index's, so the ORDER BY
    // is left to a sort of the rows the search finds.
    if !shape.order.iter().any(|(c, _)| driver.binds(c).is_some()) {
        for (column, modifiers) in &shape.order {
            add(column, modifiers, &mut columns)?;
        }
    }
    for column in &shape.range {
        add(column, "", &mut columns)?;
    }
    if columns.is_empty() {
        return None;
    }
    Some(IndexSpec {
        name: d.index_name(on.as_ref().unwrap_or(&t.layout.table), "sql_claim_idx"),
        purpose: IndexPurpose::Claim,
        columns,
        predicate: (!predicate.is_empty()).then(|| predicate.join(" AND ")),
        on,
    })
}

/// The queue a claim that takes one is measured on: the one asked for
/// (`--queue`), else the one with the most ready jobs, since a claim on a
/// queue with nothing to claim finds nothing and looks cheap.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct JudgedQueue {
    pub name: String,
    /// Its ready jobs; null when they could not be counted (counting
    /// outlasted the statement timeout).
    pub ready: Option<u64>,
    /// Picked by qctl (the queue with the most ready jobs), not asked for
    /// with `--queue`.
    pub picked: bool,
}

impl JudgedQueue {
    /// A finding when it held nothing to claim: the verdict is then
    /// provisional.
    fn finding(&self, query: &str) -> Option<PlanFinding> {
        if self.ready != Some(0) {
            return None;
        }
        let name = crate::text::sanitize(&self.name);
        let detail = if self.picked {
            format!(
                "no queue holds a ready job, so the {query} check was measured on queue \
                 '{name}', where it finds nothing to claim and looks cheap; the verdict is \
                 provisional until checked while jobs wait"
            )
        } else {
            format!(
                "queue '{name}' holds no ready job, so the {query} check finds nothing to claim \
                 and looks cheap; the verdict is provisional (pass --queue with a queue that has \
                 ready jobs)"
            )
        };
        Some(PlanFinding::new(
            Severity::Warning,
            FindingKind::EmptyQueue,
            detail,
        ))
    }
}

fn judged_queue<B: Backend + ?Sized>(b: &mut B, asked: Option<&str>) -> Result<JudgedQueue> {
    let stmt = {
        let q = QueueSql::new(b.table(), chrono::Utc::now());
        crate::sql::probe::ready_by_queue(&q, asked, 1)?
    };
    let rows = match &stmt {
        Some(stmt) => match in_tx(b, TxMode::Read, true, |b| b.query(stmt)) {
            Ok(rows) => Some(rows),
            Err(err) if QctlError::is_statement_timeout(&err) => None,
            Err(err) => return Err(err),
        },
        None => None,
    };
    let top = rows.as_ref().and_then(|rows| rows.first()).and_then(|row| {
        let name = row.first()?.clone().into_text()?;
        Some((name, row.get(1)?.as_i64()?.max(0) as u64))
    });
    Ok(match (top, asked) {
        (Some((name, ready)), None) => JudgedQueue {
            name,
            ready: Some(ready),
            picked: true,
        },
        (top, asked) => JudgedQueue {
            name: asked.unwrap_or("default").to_string(),
            ready: rows.map(|_| top.map_or(0, |(_, ready)| ready)),
            picked: asked.is_none(),
        },
    })
}

/// How many rows a state holds (in the claim's queue, when given); None
/// when counting them outlasted the statement timeout (no index serves the
/// state on a big table).
fn backlog<B: Backend + ?Sized>(
    b: &mut B,
    state: Status,
    queue: Option<&str>,
) -> Result<Option<u64>> {
    let q = QueueSql::new(b.table(), chrono::Utc::now());
    let Some(stmt) = crate::sql::probe::state_count(&q, state, queue)? else {
        return Ok(Some(0));
    };
    match in_tx(b, TxMode::Read, true, |b| b.query(&stmt)) {
        Ok(rows) => Ok(Some(first_int(&rows).max(0) as u64)),
        Err(err) if QctlError::is_statement_timeout(&err) => Ok(None),
        Err(err) => Err(err),
    }
}

/// An error's message on one line, without the cause chain's repeats.
fn run_measure<B: Backend + ?Sized>(
    b: &mut B,
    read: &Stmt,
    forced: bool,
    with_plan: bool,
    findings: &mut Vec<PlanFinding>,
) -> Option<Measured> {
    match b.measure(read, forced, with_plan) {
        Ok(measured) => measured,
        Err(err) => {
            findings.push(PlanFinding::new(
                Severity::Warning,
                FindingKind::NotMeasured,
                format!(
                    "its read part could not be run in a read-only transaction, so its work was \
                     not measured ({}): the verdict rests on the plan's shape alone",
                    crate::text::sanitize(&format!("{err:#}"))
                ),
            ));
            None
        }
    }
}

/// Whether the driver's binding defeats an index: a column the plan of
/// the statement bound by the columns' own types searches by, and the
/// plan of the statement as the driver binds it does not (both planned
/// with scans discouraged where the database allows, so that a small
/// table's scan does not hide the difference).
fn driver_binding<B: Backend + ?Sized>(
    b: &mut B,
    (driven_stmt, driven): (&Stmt, &Plan),
    typed: &Stmt,
    columns: &[(String, String)],
    measured: Option<&Measured>,
) -> Result<Vec<PlanFinding>> {
    let lexer = b.table().dialect.lexer;
    let how = PlanHow {
        forced: b.can_force_plans(),
        keep_sorts: true,
        backlog: 0,
        sort_rows: None,
        sort_threshold: u64::MAX,
    };
    let typed = Stmt {
        sql: sqltext::without_locks(&typed.sql, lexer),
        binds: typed.binds.clone(),
    };
    let by_type = b.plan(&typed, how)?;
    let driven_forced;
    let driven = if how.forced {
        driven_forced = b.plan(driven_stmt, how);
        driven_forced.as_ref().unwrap_or(driven)
    } else {
        driven
    };
    let note = &b.table().layout.driver.note;
    let work = measured.map_or(String::new(), |m| {
        format!(
            " (this run: {} rows examined for {} returned)",
            m.rows_examined, m.rows_returned
        )
    });
    Ok(columns
        .iter()
        .filter(|(column, _)| by_type.searches(column) && !driven.searches(column))
        .map(|(column, ty)| {
            PlanFinding::new(
                Severity::Error,
                FindingKind::DriverBinding,
                format!(
                    "the driver binds the values compared with {column} as {ty}{}: the database \
                     then compares a cast of {column} and cannot search its index by it, so every \
                     claim reads all the rows the other conditions match{work}; bound as the \
                     column's own type the plan searches by {column}. Fix: an index on the cast \
                     (below; --apply creates it), or make the client bind the column's type",
                    if note.is_empty() {
                        String::new()
                    } else {
                        format!(" ({note})")
                    }
                ),
            )
        })
        .collect())
}

/// Past this many rows read in one run, a whole scan of a table other
/// than the queue table is a finding like any other.
pub const SIDE_TABLE_ROWS: u64 = measure::EXAMINE_FLOOR;

/// Judges the whole scans of tables other than the queue table (a
/// queue-lock table, a list of queues) by the rows they read: measured
/// per table where the database counts them (PostgreSQL), else the
/// table's own rows (counted up to the limit). A scan of a handful of
/// rows is no finding, and a note says what was read; a big one stays.
fn side_tables<B: Backend + ?Sized>(
    b: &mut B,
    planned: &Stmt,
    measured: Option<&Measured>,
    query: &str,
    findings: &mut Vec<PlanFinding>,
    notes: &mut Vec<String>,
) -> Result<()> {
    let d = b.table().dialect;
    let queue_table = b.table().layout.table.name.as_str().to_string();
    let named = sqltext::tables(&sqltext::tokenize(&planned.sql, d.lexer));
    let mut excused = Vec::new();
    for (at, finding) in findings.iter().enumerate() {
        if finding.kind != FindingKind::FullScan {
            continue;
        }
        let Some(subject) = finding.subject.as_deref() else {
            continue;
        };
        // The table read: as the plan names it where it does (whatever
        // alias, the statement's or the planner's), else through the
        // statement's own aliases.
        let table = match &finding.relation {
            Some(relation) => relation.clone(),
            None => named
                .iter()
                .find(|(name, alias)| {
                    alias
                        .as_deref()
                        .is_some_and(|a| a.eq_ignore_ascii_case(subject))
                        || sqltext::base_name(name).eq_ignore_ascii_case(subject)
                })
                .map_or_else(|| subject.to_string(), |(name, _)| name.clone()),
        };
        // The queue table, or a partition of it, is never a side table,
        // whatever alias it was read under.
        let base = sqltext::base_name(&table).to_string();
        if base.eq_ignore_ascii_case(&queue_table)
            || b.table()
                .partitions
                .iter()
                .any(|p| p.eq_ignore_ascii_case(&base))
        {
            continue;
        }
        let key = finding.relation.as_deref().unwrap_or(subject);
        let (rows, how) = match measured.and_then(|m| m.rows_read_by_table.get(key)) {
            Some(&rows) => (rows, "read in one run"),
            None => match bounded_count(b, &table)? {
                Some(rows) => (rows, "in the table"),
                None => continue,
            },
        };
        if rows <= SIDE_TABLE_ROWS {
            excused.push(at);
            notes.push(format!(
                "the {query} check reads all of {table}, a table beside the queue: {rows} rows \
                 {how}, under the {SIDE_TABLE_ROWS} a scan may read before it is a finding"
            ));
        }
    }
    for at in excused.into_iter().rev() {
        findings.remove(at);
    }
    Ok(())
}

/// The rows of a table, counted up to one past [`SIDE_TABLE_ROWS`]; None
/// when the name cannot be read (a function's result, a CTE).
fn bounded_count<B: Backend + ?Sized>(b: &mut B, table: &str) -> Result<Option<u64>> {
    let Some(stmt) =
        crate::sql::probe::bounded_count(b.table().dialect, table, SIDE_TABLE_ROWS + 1)
    else {
        return Ok(None);
    };
    let rows = in_tx(b, TxMode::Read, true, |b| b.query(&stmt));
    Ok(rows.ok().map(|rows| first_int(&rows).max(0) as u64))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sql::dialect::{POSTGRES, SQLITE};
    use crate::sql::schema::QueueTable;

    fn derived(dialect: &'static crate::sql::Dialect, sql: &str) -> String {
        let t = QueueTable::planned(&crate::presets::own("default").unwrap(), dialect);
        derived_index(&t, sql)
            .map(|spec| spec.create_sql(&t, false))
            .unwrap_or_default()
    }

    #[test]
    fn only_session_local_objects_are_set_up() {
        let pg = sqltext::Lexer::Postgres;
        assert!(session_local(
            "-- a type\nCREATE TYPE pg_temp.r AS (locked boolean)",
            pg
        ));
        assert!(session_local(
            "CREATE OR REPLACE FUNCTION pg_temp.f() RETURNS int AS $$ SELECT 1 $$ LANGUAGE sql",
            pg
        ));
        assert!(session_local("CREATE TEMP TABLE t (a int)", pg));
        assert!(!session_local(
            "CREATE FUNCTION public.f() RETURNS int AS $$ SELECT 1 $$ LANGUAGE sql",
            pg
        ));
        assert!(!session_local("CREATE TABLE pg_temp_x (a int)", pg));
        assert!(!session_local("DROP TABLE jobs", pg));
    }

    #[test]
    fn a_driver_binding_casts_its_placeholders() {
        let mut layout = crate::presets::own("default").unwrap();
        layout
            .driver
            .binds
            .insert("run_at".into(), "numeric".into());
        let t = QueueTable::planned(&layout, &POSTGRES);
        let (sql, columns) = driver_bound(
            &t,
            "SELECT id FROM jobs WHERE status = $1 AND run_at <= $2 AND RUN_AT >= $3 ORDER BY run_at",
        )
        .unwrap();
        assert_eq!(
            sql,
            "SELECT id FROM jobs WHERE status = $1 AND run_at <= CAST($2 AS numeric) AND RUN_AT >= \
             CAST($3 AS numeric) ORDER BY run_at"
        );
        assert_eq!(columns, vec![("run_at".to_string(), "numeric".to_string())]);
        // The index holds the cast; the order it cannot give is a sort.
        assert_eq!(
            derived_index(&t, &sql).unwrap().create_sql(&t, false),
            "CREATE INDEX IF NOT EXISTS \"jobs_sql_claim_idx\" ON \"jobs\" (\"status\", \
             (CAST(\"run_at\" AS numeric)))"
        );
    }

    #[test]
    fn the_index_follows_the_query() {
        assert_eq!(
            derived(
                &POSTGRES,
                "SELECT id FROM jobs WHERE status = 'pending' AND queue = $1 AND run_at <= now() \
                 ORDER BY priority DESC, run_at, id LIMIT 1"
            ),
            "CREATE INDEX IF NOT EXISTS \"jobs_sql_claim_idx\" ON \"jobs\" (\"queue\", \"priority\" DESC, \
             \"run_at\", \"id\") WHERE \"status\" = 'pending'"
        );
        // SQLite: the rowid id is in every index already.
        assert_eq!(
            derived(
                &SQLITE,
                "SELECT id FROM jobs j WHERE j.run_at <= ?1 AND j.locked_at IS NULL AND queue IN ('a', 'b') \
                 ORDER BY j.run_at, j.id LIMIT 1"
            ),
            "CREATE INDEX IF NOT EXISTS \"jobs_sql_claim_idx\" ON \"jobs\" (\"queue\", \"run_at\") \
             WHERE \"locked_at\" IS NULL"
        );
        // A claim that picks its rows from a table beside this one (Solid
        // Queue's poll of its ready executions) gets its index there.
        assert_eq!(
            derived(
                &POSTGRES,
                "SELECT e.id, e.job_id FROM solid_queue_ready_executions e WHERE e.queue_name = 'default' \
                 ORDER BY e.priority ASC, e.job_id ASC LIMIT 10 FOR UPDATE SKIP LOCKED"
            ),
            "CREATE INDEX IF NOT EXISTS \"solid_queue_ready_executions_sql_claim_idx\" ON \
             \"solid_queue_ready_executions\" (\"queue_name\", \"priority\", \"job_id\")"
        );
    }
}
