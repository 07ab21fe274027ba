//! Generated files: the CLI reference (`docs/cli.md`), the shell
//! completions (`completions/`) and the man pages (`docs/man/`). A test
//! regenerates them in memory and fails on a difference;
//! `QCTL_UPDATE_GENERATED=1 cargo test` rewrites them.

use std::fmt::Write as _;

use clap::CommandFactory;
use clap_complete::Shell;
use schemars::generate::SchemaSettings;
use schemars::{JsonSchema, Schema};

use crate::cli::Cli;
use crate::model;

/// The shells with a committed completion script, and its file name.
pub const COMPLETION_FILES: [(Shell, &str); 5] = [
    (Shell::Bash, "qctl.bash"),
    (Shell::Zsh, "_qctl"),
    (Shell::Fish, "qctl.fish"),
    (Shell::Elvish, "qctl.elv"),
    (Shell::PowerShell, "_qctl.ps1"),
];

pub fn completion(shell: Shell) -> String {
    let mut command = Cli::command();
    let mut buffer = Vec::new();
    clap_complete::generate(shell, &mut command, "qctl", &mut buffer);
    String::from_utf8(buffer).expect("completion scripts are UTF-8")
}

/// `docs/cli.md`: the long help of qctl and of every command, at a fixed
/// width so the file does not depend on the terminal that made it.
pub fn cli_reference() -> String {
    let mut command = Cli::command().term_width(100);
    command.build();
    let mut out = String::from(
        "# qctl command reference\n\n\
         Generated from `qctl --help` by `QCTL_UPDATE_GENERATED=1 cargo test`; do not edit.\n\n",
    );
    let _ = write!(
        out,
        "## qctl\n\n```text\n{}\n```\n",
        command.render_long_help().to_string().trim_end()
    );
    for sub in command.get_subcommands_mut() {
        let name = sub.get_name().to_string();
        if name == "help" {
            continue;
        }
        let help = sub.render_long_help().to_string();
        let _ = write!(
            out,
            "\n## qctl {name}\n\n```text\n{}\n```\n",
            help.trim_end()
        );
    }
    out
}

/// The man pages, as (file name, roff): `qctl.1`, then one per command
/// (`qctl-stats.1`, ...), in the order `qctl --help` lists them.
pub fn man_pages() -> Vec<(String, String)> {
    // Built once, so each command knows its full name (`qctl stats`) and
    // the global options it inherits.
    let mut command = Cli::command().disable_help_subcommand(true);
    command.build();
    let mut pages = vec![("qctl.1".to_string(), man_page_of(command.clone()))];
    for sub in command.get_subcommands() {
        let man = clap_mangen::Man::new(sub.clone());
        pages.push((man.get_filename(), man_page_of(sub.clone())));
    }
    pages
}

/// The man page of qctl (`None`) or of one of its commands; `None` for a
/// name that is not a command.
pub fn man_page(command: Option<&str>) -> Option<String> {
    let file = match command {
        None => "qctl.1".to_string(),
        Some(name) => format!("qctl-{name}.1"),
    };
    man_pages()
        .into_iter()
        .find(|(name, _)| *name == file)
        .map(|(_, page)| page)
}

fn man_page_of(command: clap::Command) -> String {
    let mut buffer = Vec::new();
    clap_mangen::Man::new(command)
        // Every page is qctl's (clap_mangen would say "stats 0.1.0").
        .source(format!("qctl {}", env!("CARGO_PKG_VERSION")))
        .render(&mut buffer)
        .expect("rendering into memory cannot fail");
    String::from_utf8(buffer).expect("man pages are UTF-8")
}

/// `docs/presets.md`: every preset, from the preset files themselves, so
/// the page says what qctl does.
pub fn presets_reference() -> String {
    use std::fmt::Write as _;
    let mut out = String::from(
        "# Presets: the queue systems qctl knows\n\n\
         <!-- Generated from src/presets/*.toml by `QCTL_UPDATE_GENERATED=1 cargo test --test \
         cli_docs`; do not edit. -->\n\n\
         With no `--layout` and no layout in `qctl.toml`, qctl looks at the database's catalog \
         and picks the preset whose table (with the columns and sibling tables listed under \
         *found by*) is there; `-v` says what it found and why, `doctor`'s `layout` check too. \
         Several systems in one database: pass `--layout NAME`. No known table: the `default` \
         layout. `qctl layouts` prints this list; [layouts.md](layouts.md) explains the \
         language the presets are written in.\n\n\
         Each preset supports a range of its system's releases. qctl reads the system's version \
         marker (where it keeps one) and the catalog, and follows the release line the tables \
         fit: it never names a column, table or enum value the database lacks. A marker naming a \
         release outside the range (a newer one) while the tables still fit a release line: \
         qctl follows the catalog and says so, as `qctl: warning:` on stderr naming the version \
         and as a warning in `doctor`'s `layout` check. Tables that fit no release line are \
         refused in one `qctl: error:` line naming the version and this range (exit 2).\n\n\
         | preset | system | releases supported | databases | table |\n|---|---|---|---|---|\n",
    );
    let infos = crate::presets::infos();
    for p in &infos {
        let _ = writeln!(
            out,
            "| `{}` | {} | {} | {} | `{}` |",
            p.name,
            p.system,
            p.supported,
            p.databases.join(", "),
            p.table
        );
    }
    for (p, file) in infos.iter().zip(crate::presets::all()) {
        let _ = write!(out, "\n## `{}`: {}\n\n{}.\n\n", p.name, p.system, p.about);
        let older: String = file
            .detect
            .older_names
            .iter()
            .map(|n| format!(" (`{n}` in older releases)"))
            .collect();
        let mut found = format!(
            "table `{}`{older} with {}",
            file.detect.table,
            file.detect
                .columns
                .iter()
                .map(|c| format!("`{c}`"))
                .collect::<Vec<_>>()
                .join(", ")
        );
        if !file.detect.tables.is_empty() {
            let _ = write!(
                found,
                ", beside {}",
                file.detect
                    .tables
                    .iter()
                    .map(|t| format!("`{t}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
        let _ = writeln!(out, "- found by: {found}");
        if !p.releases.is_empty() {
            let _ = writeln!(out, "- releases:");
            for release in &p.releases {
                let _ = writeln!(out, "  - {}: {}", release.name, release.releases);
                for note in &release.notes {
                    let _ = writeln!(out, "    - {note}");
                }
            }
        }
        if let Some(schema) = &file.schema {
            let _ = writeln!(out, "- default schema: `{schema}` (any schema is found)");
        }
        let _ = writeln!(out, "- runs: {}", p.supports.join(", "));
        for (command, why) in &p.refuses {
            let _ = writeln!(out, "- `{command}` is refused: {why}");
        }
        for note in &p.notes {
            let _ = writeln!(out, "- {note}");
        }
    }
    out
}

/// `qctl demo --format json`: the steps it ran and what each returned.
/// Only its schema is made from this; the tests validate what demo
/// prints against it.
#[derive(schemars::JsonSchema)]
#[allow(dead_code)]
struct DemoDocument {
    /// The demo's database (no password).
    database: String,
    steps: Vec<DemoStep>,
}

#[derive(schemars::JsonSchema)]
#[allow(dead_code)]
struct DemoStep {
    /// The command as typed after `qctl`.
    command: String,
    result: DemoResult,
}

#[derive(schemars::JsonSchema)]
#[serde(untagged)]
#[allow(dead_code)]
enum DemoResult {
    Stats(crate::model::Stats),
    Explain(crate::explain::ExplainReport),
    Reap(crate::model::ReapOutcome),
}

/// One line of `qctl --format json reap --stream`: a reaped job as its
/// batch commits, and the summary last.
#[derive(schemars::JsonSchema)]
#[serde(untagged)]
#[allow(dead_code)]
enum ReapStreamLine {
    Job(crate::model::ReapedJob),
    Summary(crate::model::ReapOutcome),
}

/// The JSON Schema of every JSON document qctl prints, and of the
/// exporter's targets file, as (file name, text) for
/// `docs/schema/vN/`: one file per command (the same document under each
/// name that prints it), `-watch`/`-stream`/`-log` for the line-per-event
/// forms. Made from the report types themselves, so a field cannot change
/// without its schema changing; tests/schema.rs holds the version rule.
pub fn json_schemas() -> Vec<(String, String)> {
    let mut documents = job_documents();
    documents.extend(report_documents());
    documents
        .into_iter()
        .map(|(name, title, mut schema)| {
            schema.insert(
                "$id".into(),
                format!("urn:qctl:schema:v{}:{name}", model::SCHEMA_VERSION).into(),
            );
            schema.insert("title".into(), title.into());
            let mut text = serde_json::to_string_pretty(&schema).expect("a schema is JSON");
            text.push('\n');
            (format!("{name}.json"), text)
        })
        .collect()
}

/// The schema of a document qctl prints as `T` serializes.
fn output<T: JsonSchema>() -> Schema {
    SchemaSettings::draft2020_12()
        .for_serialize()
        .into_generator()
        .into_root_schema_for::<T>()
}

/// The documents of the commands that count, add, show and change jobs,
/// as (file name, title, schema).
fn job_documents() -> Vec<(&'static str, &'static str, Schema)> {
    vec![
        (
            "stats",
            "qctl stats --format json",
            output::<model::Stats>(),
        ),
        (
            "stats-watch",
            "one line of qctl stats --watch --format json",
            output::<model::WatchFrame>(),
        ),
        (
            "enqueue",
            "qctl enqueue --format json",
            output::<model::EnqueueOutcome>(),
        ),
        ("claim", "qctl claim --format json", output::<model::Job>()),
        ("show", "qctl show --format json", output::<model::Job>()),
        (
            "complete",
            "qctl complete --format json",
            output::<model::Job>(),
        ),
        ("fail", "qctl fail --format json", output::<model::Job>()),
        (
            "list",
            "qctl list --format json",
            output::<model::JobList>(),
        ),
        (
            "retry",
            "qctl retry --format json",
            output::<model::RetryOutcome>(),
        ),
        (
            "reap",
            "qctl reap --format json",
            output::<model::ReapOutcome>(),
        ),
        (
            "reap-stream",
            "one line of qctl reap --stream --format json",
            output::<ReapStreamLine>(),
        ),
        (
            "purge",
            "qctl purge --format json",
            output::<model::PurgeOutcome>(),
        ),
    ]
}

/// The documents of the commands that report on the database and on qctl
/// itself, and the exporter's targets file, as (file name, title, schema).
fn report_documents() -> Vec<(&'static str, &'static str, Schema)> {
    vec![
        (
            "init",
            "qctl init --format json",
            output::<model::InitReport>(),
        ),
        (
            "explain-claim",
            "qctl explain-claim --format json",
            output::<crate::explain::ExplainReport>(),
        ),
        (
            "blocked",
            "qctl blocked --format json",
            output::<model::BlockedReport>(),
        ),
        (
            "locks",
            "qctl locks --format json",
            output::<model::LocksReport>(),
        ),
        (
            "layouts",
            "qctl layouts --format json",
            output::<model::LayoutsReport>(),
        ),
        (
            "doctor",
            "qctl doctor --format json",
            output::<model::DoctorReport>(),
        ),
        (
            "bench",
            "qctl bench --format json",
            output::<model::BenchReport>(),
        ),
        ("demo", "qctl demo --format json", output::<DemoDocument>()),
        (
            "version",
            "qctl --version --format json",
            output::<model::VersionInfo>(),
        ),
        (
            "serve-log",
            "one line of qctl serve's log with --format json (stderr)",
            output::<model::ServeLogLine>(),
        ),
        (
            "serve-config",
            "qctl serve --targets FILE: the TOML file, read as JSON",
            SchemaSettings::draft2020_12()
                .for_deserialize()
                .into_generator()
                .into_root_schema_for::<crate::config::ServeConfig>(),
        ),
    ]
}
