//! Generated files: the CLI reference (`docs/cli.md`) and the shell
//! completions (`completions/`). A test regenerates them in memory and
//! fails on a difference; `QCTL_UPDATE_GENERATED=1 cargo test` rewrites
//! them.

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
