//! `qctl explain-claim`: check that the claim (and reap and purge) queries
//! use an index, suggest the one that fixes them, and create it with
//! `--apply`.

use anyhow::Result;

use crate::cli::{ExplainArgs, ExplainQuery};
use crate::ctx::Ctx;
use crate::db::Access;
use crate::error::{QctlError, exit};
use crate::request::{ExplainRequest, ExplainTarget};

pub fn run(ctx: &Ctx, args: &ExplainArgs) -> Result<u8> {
    let queries = match args.query {
        ExplainQuery::Claim => vec![ExplainTarget::Claim],
        ExplainQuery::Reap => vec![ExplainTarget::Reap],
        ExplainQuery::Purge => vec![ExplainTarget::Purge],
        ExplainQuery::All => vec![
            ExplainTarget::Claim,
            ExplainTarget::Reap,
            ExplainTarget::Purge,
        ],
    };
    // Measuring runs only read parts, in read-only transactions that roll
    // back: only --apply writes.
    let access = if args.apply {
        Access::Write
    } else {
        Access::Read
    };
    let custom_sql = match &args.sql {
        Some(path) => {
            let text = std::fs::read_to_string(path).map_err(|err| {
                QctlError::usage(format!("cannot read --sql {}: {err}", path.display()))
            })?;
            let text = text.trim().trim_end_matches(';').trim().to_string();
            if text.is_empty() {
                return Err(QctlError::usage(format!(
                    "--sql {} is empty",
                    path.display()
                )));
            }
            Some(text)
        }
        None => None,
    };
    let mut backend = ctx.open(access)?;
    let request = ExplainRequest {
        queries,
        queue: args.queue.clone(),
        sort_threshold: args.sort_threshold,
        custom_sql,
        analyze: args.analyze,
    };
    let mut report = crate::explain::explain(backend.as_mut(), &request)?;
    // A table never analyzed is planned from guesses: refresh its
    // statistics first, and build only the indexes the real plan still
    // needs (not one the planner would pass over once it knows the table).
    let guessed = report.checks.iter().any(|c| {
        c.findings
            .iter()
            .any(|f| f.kind == crate::db::FindingKind::NoStatistics)
    });
    if args.apply && guessed && !report.suggested_specs.is_empty() {
        ctx.out
            .note("qctl: refreshing statistics before judging which indexes are needed");
        backend.create_indexes(&[])?;
        report = crate::explain::explain(backend.as_mut(), &request)?;
    }
    // An index and fresh statistics can change the plan of another query
    // (a purge that searched a status index scans once ANALYZE shows the
    // status is nearly always `done`): check every query again after each
    // round, until nothing new is suggested.
    let mut applied: Vec<String> = Vec::new();
    let mut created: Vec<crate::sql::ddl::IndexSpec> = Vec::new();
    while args.apply && !report.suggested_specs.is_empty() {
        let fresh: Vec<usize> = (0..report.suggested_specs.len())
            .filter(|&i| !created.contains(&report.suggested_specs[i]))
            .collect();
        if fresh.is_empty() {
            break;
        }
        let specs: Vec<_> = fresh
            .iter()
            .map(|&i| report.suggested_specs[i].clone())
            .collect();
        ctx.out.note(&format!(
            "qctl: creating {} index(es) and refreshing statistics",
            specs.len()
        ));
        backend.create_indexes(&specs)?;
        applied.extend(fresh.iter().map(|&i| report.suggested_indexes[i].clone()));
        created.extend(specs);
        report = crate::explain::explain(backend.as_mut(), &request)?;
    }
    report.applied = applied;
    report.ok = !report.failed(args.strict);
    report.strict = args.strict;
    ctx.out.emit(&report)?;
    Ok(if report.ok { exit::OK } else { exit::NO })
}
