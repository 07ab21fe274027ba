//! `qctl explain-claim`: check that the claim (and reap and purge) queries
//! use an index, suggest the one that fixes them, and create it with
//! `--apply`.

use anyhow::Result;

use super::default_queue;
use crate::Ctx;
use crate::backend::{Access, ExplainRequest, ExplainTarget};
use crate::cli::{ExplainArgs, ExplainQuery};
use crate::error::{QctlError, exit};

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
    // --analyze runs the query, inside a transaction that rolls back.
    let access = if args.apply || args.analyze {
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
        queue: default_queue(&backend.table().layout, args.queue.as_deref()),
        sort_threshold: args.sort_threshold,
        custom_sql,
        analyze: args.analyze,
    };
    let mut report = crate::explain::explain(backend.as_mut(), &request)?;
    if args.apply && !report.suggested_specs.is_empty() {
        let statements = report.suggested_indexes.clone();
        ctx.out.note(&format!(
            "qctl: creating {} index(es) and refreshing statistics",
            statements.len()
        ));
        backend.create_indexes(&report.suggested_specs)?;
        report = crate::explain::explain(backend.as_mut(), &request)?;
        report.applied = statements;
    }
    report.ok = !report.failed(args.strict);
    report.strict = args.strict;
    ctx.out.emit(&report)?;
    Ok(if report.ok { exit::OK } else { exit::NO })
}
