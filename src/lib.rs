//! qctl: administration and diagnostics for table-backed job queues.
//!
//! `main.rs` only calls [`main_with_args`]; everything else lives here and
//! below so tests can reach it. Data flows one way: clap types
//! ([`cli`]) are resolved into a [`Ctx`], commands ask a
//! [`backend::Backend`] and return plain models, and [`output`] prints
//! them as a table or as JSON.

pub mod backend;
pub mod cli;
pub mod commands;
pub mod config;
pub mod ctx;
pub mod db;
pub mod docs;
pub mod duration;
pub mod engine;
pub mod error;
pub mod explain;
pub mod interrupt;
pub mod json;
pub mod layout;
pub mod model;
pub mod output;
pub mod presets;
pub mod render;
pub mod request;
pub mod serve;
pub mod sql;
pub mod text;
pub mod url;

use std::ffi::OsString;

use anyhow::Result;
use clap::Parser;

use crate::cli::{Cli, Command, Format};
use crate::config::Config;
use crate::ctx::{Ctx, Limits, Where};
use crate::error::exit;
use crate::output::Output;

/// The embedded default (spec §2), relative to the current directory.
pub const DEFAULT_URL: &str = "sqlite:qctl.db";

/// Runs qctl with these arguments and returns the process exit code.
pub fn main_with_args<I, T>(args: I) -> u8
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let args: Vec<OsString> = args.into_iter().map(Into::into).collect();
    let cli = match Cli::try_parse_from(&args) {
        Ok(cli) => cli,
        Err(err) => return clap_exit(&err, &args),
    };
    match run(cli) {
        Ok(code) => code,
        Err(err) => report(&err),
    }
}

fn clap_exit(err: &clap::Error, args: &[OsString]) -> u8 {
    use clap::error::ErrorKind;
    match err.kind() {
        ErrorKind::DisplayVersion if wants_json(args) => {
            // Which schemas the JSON documents follow, for scripts.
            let version = model::VersionInfo::current();
            match serde_json::to_string_pretty(&version) {
                Ok(text) => println!("{text}"),
                Err(_) => return exit::ERROR,
            }
            exit::OK
        }
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
            let _ = err.print();
            exit::OK
        }
        _ => {
            let text = err.render().to_string();
            let text = text.strip_prefix("error: ").unwrap_or(&text);
            eprint!("qctl: error: {}", text::sanitize(text));
            exit::ERROR
        }
    }
}

/// Whether the arguments ask for `--format json` (clap stops at
/// `--version` before it has parsed them all).
fn wants_json(args: &[OsString]) -> bool {
    let args: Vec<&str> = args.iter().filter_map(|a| a.to_str()).collect();
    args.contains(&"--format=json")
        || args
            .windows(2)
            .any(|w| w[0] == "--format" && w[1] == "json")
}

/// Prints an error once, with its cause chain; a closed stdout (`qctl list
/// | head`) is not an error worth a word.
fn report(err: &anyhow::Error) -> u8 {
    let broken_pipe = err.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    });
    if broken_pipe {
        return exit::OK;
    }
    let code = error::QctlError::code_of(err);
    if code == exit::INTERRUPTED {
        // The handler has said "interrupted" already; what the command
        // had done before it stopped (a batched command's committed
        // batches) is said here.
        let top = err.to_string();
        if top != error::QctlError::Interrupted.to_string() {
            eprintln!("qctl: {}", text::sanitize(&top));
        }
        return code;
    }
    let text = text::sanitize(&format!("{err:#}"));
    if code == exit::NO {
        eprintln!("qctl: {text}");
    } else {
        eprintln!("qctl: error: {text}");
    }
    code
}

fn run(cli: Cli) -> Result<u8> {
    let global = cli.global;
    refuse_format(&cli.command, global.format)?;
    let out = Output::new(global.format, global.color, global.quiet, global.verbose);
    match &cli.command {
        Command::Completions(args) => return commands::completions::run(&out, args),
        Command::Man(args) => return commands::man::run(&out, args),
        Command::Layouts(args) => return commands::layouts::run(&out, args),
        _ => {}
    }
    let config = Config::load(global.config.as_deref())?;
    let limits = Limits {
        busy_timeout: global.busy_timeout,
        statement_timeout: global.statement_timeout,
        connect_timeout: global.connect_timeout,
        index_timeout: global.index_timeout,
    };
    if let Command::Serve(args) = &cli.command {
        let at = commands::serve::Given {
            databases: &global.database,
            resolved: resolve_url(None, config.database.as_deref()),
            preset: global.layout.as_deref(),
            table: global.table.as_deref(),
            overrides: &config.layout,
        };
        return commands::serve::run(&at, args, out, limits);
    }
    if global.database.len() > 1 {
        return Err(error::QctlError::usage(format!(
            "--database is given {} times; only `qctl serve` watches several databases",
            global.database.len()
        )));
    }
    let url = resolve_url(
        global.database.first().map(String::as_str),
        config.database.as_deref(),
    );
    let ctx = Ctx::resolve(
        &Where {
            url: &url,
            preset: global.layout.as_deref(),
            table: global.table.as_deref(),
            overrides: &config.layout,
        },
        out,
        limits,
    )?;
    if ctx.out.verbose {
        let layout = if ctx.auto.as_ref().is_some_and(|a| a.detect) {
            // The table is known once the catalog is read ("layout auto:").
            "layout auto".to_string()
        } else {
            format!("layout {}, table {}", ctx.layout.preset, ctx.layout.table)
        };
        ctx.out.note(&format!(
            "qctl: database {} ({layout})",
            ctx.target.display()
        ));
    }
    match cli.command {
        Command::Demo(args) => commands::demo::run(&ctx, &args),
        Command::Init(args) => commands::init::run(&ctx, &args),
        Command::Enqueue(args) => commands::enqueue::run(&ctx, &args),
        Command::Stats(args) => commands::stats::run(&ctx, &args),
        Command::List(args) => commands::list::run(&ctx, &args),
        Command::Show(args) => commands::show::run(&ctx, &args),
        Command::Claim(args) => commands::claim::run(&ctx, &args),
        Command::Complete(args) => commands::finish::complete(&ctx, &args),
        Command::Fail(args) => commands::finish::fail(&ctx, &args),
        Command::Retry(args) => commands::retry::run(&ctx, &args),
        Command::Reap(args) => commands::reap::run(&ctx, &args),
        Command::Purge(args) => commands::purge::run(&ctx, &args),
        Command::ExplainClaim(args) => commands::explain::run(&ctx, &args),
        Command::Bench(args) => commands::bench::run(&ctx, &args),
        Command::Doctor(args) => commands::doctor::run(&ctx, &args),
        Command::Blocked(args) => commands::blocked::run(&ctx, &args),
        Command::Locks(args) => commands::locks::run(&ctx, &args),
        Command::Completions(_) | Command::Man(_) | Command::Layouts(_) | Command::Serve(_) => {
            unreachable!("handled before connecting")
        }
    }
}

/// Refuses a format that only another command prints (`--format
/// prometheus` is `stats`'s), before anything is read or connected.
fn refuse_format(command: &Command, format: Format) -> Result<()> {
    let Some(only) = format.only_for() else {
        return Ok(());
    };
    let name = command.name();
    if name == only {
        return Ok(());
    }
    let supported: Vec<&str> = <Format as clap::ValueEnum>::value_variants()
        .iter()
        .filter(|f| f.only_for().is_none_or(|c| c == name))
        .map(|f| f.name())
        .collect();
    let (last, rest) = supported
        .split_last()
        .expect("table and json are everyone's");
    Err(error::QctlError::usage(format!(
        "--format {} is only for `qctl {only}`; `qctl {name}` prints {} or {last}",
        format.name(),
        rest.join(", ")
    )))
}

/// Spec §2: `--database`, `QCTL_DATABASE_URL`, `DATABASE_URL`, the config
/// file, then the embedded default. Empty variables count as unset.
fn resolve_url(flag: Option<&str>, config: Option<&str>) -> String {
    let env = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
    flag.map(str::to_string)
        .or_else(|| env("QCTL_DATABASE_URL"))
        .or_else(|| env("DATABASE_URL"))
        .or_else(|| config.map(str::to_string))
        .unwrap_or_else(|| DEFAULT_URL.to_string())
}
