//! `qctl serve`: resolves the databases to watch (several `-d`, or a
//! targets file) and runs the exporter until SIGTERM.

use std::time::Duration;

use anyhow::Result;

use crate::cli::{DEFAULT_INTERVAL, DEFAULT_LISTEN, ServeArgs};
use crate::config::ServeConfig;
use crate::ctx::{Ctx, Limits, Where};
use crate::duration::parse_positive_duration;
use crate::error::QctlError;
use crate::layout::LayoutOverrides;
use crate::output::Output;
use crate::serve::{Options, TargetSpec};

/// The collection deadline's default beyond the statement timeout: a
/// server that answers says "statement timeout" itself, first.
const COLLECT_MARGIN: Duration = Duration::from_secs(5);

/// Where the databases come from, as the global options give them.
pub struct Given<'a> {
    /// The `-d` flags, in order.
    pub databases: &'a [String],
    /// The database every command uses when no `-d` is given (the
    /// environment, qctl.toml, the default).
    pub resolved: String,
    pub preset: Option<&'a str>,
    pub table: Option<&'a str>,
    /// qctl.toml's `[layout]`, for `-d` targets.
    pub overrides: &'a LayoutOverrides,
}

pub fn run(given: &Given, args: &ServeArgs, out: Output, limits: Limits) -> Result<u8> {
    let file = args.targets.as_deref().map(ServeConfig::load).transpose()?;
    let file_duration = |name: &str, text: Option<&String>| -> Result<Option<Duration>> {
        text.map(|text| {
            parse_positive_duration(text).map_err(|err| {
                QctlError::usage(format!("--targets file: invalid {name} {text:?}: {err}"))
            })
        })
        .transpose()
    };
    let (listen, interval, claim_check) = match &file {
        Some(file) => (
            args.listen.clone().or(file.listen.clone()),
            args.interval
                .or(file_duration("interval", file.interval.as_ref())?),
            args.claim_check
                .or(file_duration("claim_check", file.claim_check.as_ref())?),
        ),
        None => (args.listen.clone(), args.interval, args.claim_check),
    };
    let options = Options {
        listen: listen.unwrap_or_else(|| DEFAULT_LISTEN.to_string()),
        interval: interval.unwrap_or(DEFAULT_INTERVAL),
        claim_check,
        collect_timeout: args
            .collect_timeout
            .unwrap_or(limits.statement_timeout + COLLECT_MARGIN),
        max_connections: usize::try_from(args.max_connections).unwrap_or(usize::MAX),
        web_config: args.web_config.clone(),
    };
    let targets = match &file {
        Some(file) => {
            if !given.databases.is_empty() {
                return Err(QctlError::usage(
                    "give the databases with -d or in --targets FILE, not both",
                ));
            }
            let none = LayoutOverrides::default();
            file.targets
                .iter()
                .map(|target| {
                    let ctx = Ctx::resolve(
                        &Where {
                            url: &target.database,
                            preset: target.layout.as_deref(),
                            table: target.table.as_deref(),
                            overrides: &none,
                        },
                        out.clone(),
                        limits,
                    )
                    .map_err(|err| err.context(format!("target {:?}", target.name)))?;
                    Ok(TargetSpec {
                        label: Some(target.name.clone()),
                        ctx,
                        timeout: file_duration("timeout", target.timeout.as_ref())?,
                        exact: target.exact,
                    })
                })
                .collect::<Result<Vec<_>>>()?
        }
        None => {
            let urls: Vec<&str> = if given.databases.is_empty() {
                vec![given.resolved.as_str()]
            } else {
                given.databases.iter().map(String::as_str).collect()
            };
            let several = urls.len() > 1;
            let mut targets: Vec<TargetSpec> = Vec::new();
            for url in urls {
                let ctx = Ctx::resolve(
                    &Where {
                        url,
                        preset: given.preset,
                        table: given.table,
                        overrides: given.overrides,
                    },
                    out.clone(),
                    limits,
                )?;
                let shown = ctx.target.display();
                if targets.iter().any(|t| t.ctx.target.display() == shown) {
                    return Err(QctlError::usage(format!(
                        "-d {shown} is given twice; each database is watched once"
                    )));
                }
                targets.push(TargetSpec {
                    // Several databases are told apart by their URL (no
                    // password); a lone one needs no label (spec §4).
                    label: several.then_some(shown),
                    ctx,
                    timeout: args.timeout,
                    exact: args.exact,
                });
            }
            targets
        }
    };
    crate::serve::run(&options, targets, &out)
}
