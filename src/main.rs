//! The `qctl` binary: parse, run, turn the outcome into an exit code.

use std::process::ExitCode;

fn main() -> ExitCode {
    // Ctrl-C ends qctl with 130, as documented; an open transaction is
    // rolled back by the database (SQLite's journal, PostgreSQL's
    // connection end), so an interrupted command changes nothing it had
    // not committed.
    let _ = ctrlc::set_handler(|| {
        eprintln!("qctl: interrupted");
        std::process::exit(i32::from(qctl::error::exit::INTERRUPTED));
    });
    ExitCode::from(qctl::main_with_args(std::env::args_os()))
}
