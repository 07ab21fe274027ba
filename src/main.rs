//! The `qctl` binary: parse, run, turn the outcome into an exit code.

use std::process::ExitCode;

fn main() -> ExitCode {
    // Ctrl-C ends qctl with 130, as documented, after cancelling what a
    // server runs for it; an open transaction is rolled back by the
    // database (SQLite's journal, PostgreSQL's connection end), so an
    // interrupted command changes nothing it had not committed.
    qctl::interrupt::install();
    let code = qctl::main_with_args(std::env::args_os());
    ExitCode::from(qctl::interrupt::exit_code(code))
}
