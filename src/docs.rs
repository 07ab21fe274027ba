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
