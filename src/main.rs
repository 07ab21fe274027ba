//! The `qctl` binary: parse, run, turn the outcome into an exit code.

use std::process::ExitCode;

fn main() -> ExitCode {
    ExitCode::from(qctl::main_with_args(std::env::args_os()))
}
