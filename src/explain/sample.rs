//! The statement each hot query runs: qctl's own claim, reap or purge,
//! or the application's claim (`--sql`) bound as its driver binds it.

use anyhow::Result;

use super::{FindingKind, PlanFinding, Sample, Severity, derived_index, placeholders, unlocked};
use crate::db::{Backend, TxMode, in_tx};
use crate::error::QctlError;
use crate::layout::{Concept, Status};
use crate::model::StaleRule;
use crate::request::{ClaimRequest, ExplainTarget, PurgeRequest, ReapRequest};
use crate::sql::Stmt;
use crate::sql::ddl::IndexSpec;
use crate::sql::dialect::LockMode;
use crate::sql::queue::QueueSql;
use crate::sql::sqltext;

/// The sample of a hot query, or why the layout has no such query (no
/// lease or lock time to judge staleness by, no time to date a finished
/// job by): read-only commands work on every layout.
pub(super) fn sample<B: Backend + ?Sized>(
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
pub(super) fn custom_sample<B: Backend + ?Sized>(
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sql::dialect::POSTGRES;
    use crate::sql::schema::QueueTable;

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
}
