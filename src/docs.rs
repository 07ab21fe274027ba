//! Generated files: the CLI reference (`docs/cli.md`), the shell
//! completions (`completions/`) and the man pages (`docs/man/`). A test
//! regenerates them in memory and fails on a difference;
//! `QCTL_UPDATE_GENERATED=1 cargo test` rewrites them.

use std::fmt::Write as _;

use clap::CommandFactory;
use clap_complete::Shell;

use crate::cli::Cli;

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
         fit: it never names a column, table or enum value the database lacks. Tables that fit \
         no release line are refused, naming the version and this range.\n\n\
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
        let mut found = format!(
            "table `{}` with {}",
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
