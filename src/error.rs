//! Exit codes and the failures users are expected to hit.
//!
//! Every error ends the process with [`exit::ERROR`]; answers that are "no"
//! (a check found a problem, no job to claim, a lost lease) are not errors
//! and are returned by the commands as an exit code of their own.

use thiserror::Error;

/// The process exit codes of qctl, as documented in `docs/exit-codes.md`.
pub mod exit {
    /// Success; for checks: healthy.
    pub const OK: u8 = 0;
    /// The answer is no: a check found a problem, no job was ready, or the
    /// job is no longer held by that worker.
    pub const NO: u8 = 1;
    /// Bad usage or input, cannot connect, missing table or column, SQL
    /// error. Nothing was changed.
    pub const ERROR: u8 = 2;
    /// Interrupted by Ctrl-C (SIGINT).
    pub const INTERRUPTED: u8 = 130;
}

/// Failures with a message of their own, each telling the user what to do.
#[derive(Debug, Error)]
pub enum QctlError {
    #[error("{0}")]
    Usage(String),

    #[error("database file {path} does not exist — create it with `qctl init` or pass --database")]
    MissingDatabase { path: String },

    #[error("{path} is not a SQLite database (pass --database with the right file)")]
    NotADatabase { path: String },

    #[error("table {table} does not exist in {url} — create it with `qctl init` or pass --table")]
    MissingTable { table: String, url: String },

    #[error(
        "column {column} (the layout's {concept} column) is missing from table {table}; \
         it has: {found} — map it in the [layout.columns] section of qctl.toml or pick another --layout"
    )]
    MissingColumn {
        column: String,
        concept: &'static str,
        table: String,
        found: String,
    },

    #[error("the {layout} layout has no {concept} column, which {needed_for}")]
    LayoutLacks {
        layout: String,
        concept: &'static str,
        needed_for: String,
    },

    #[error("job {id} does not exist in table {table}")]
    NoSuchJob { id: String, table: String },

    #[error(
        "the database is locked: another connection held the write lock longer than the busy \
         timeout ({timeout}) — retry, or raise --busy-timeout"
    )]
    Busy { timeout: String },

    #[error(
        "another qctl reap is running on {table}; nothing was done — pass --wait to wait for it"
    )]
    AnotherReap { table: String },

    #[error("{path} is read-only: {why} — {what_to_do}")]
    ReadOnly {
        path: String,
        why: String,
        what_to_do: &'static str,
    },

    #[error(
        "{message} — the statement ran longer than --statement-timeout ({limit}); raise it if \
         the table is big"
    )]
    StatementTimeout { message: String, limit: String },

    #[error("{message} — a lock was held longer than --busy-timeout ({limit}); retry, or raise it")]
    LockTimeout { message: String, limit: String },

    #[error(
        "{message} — the role lacks a privilege this command needs on {table}: reading needs \
         SELECT; claim, complete, fail, retry and reap need UPDATE; enqueue needs INSERT; purge \
         needs DELETE; init needs CREATE on the schema. Ask for it with GRANT"
    )]
    Privilege { message: String, table: String },

    /// The database chose this transaction as a deadlock's victim and
    /// rolled it back: nothing it did stands, and running it again is
    /// safe.
    #[error(
        "{message} — another transaction locked the same rows in the other order; nothing was \
         changed, run the command again"
    )]
    Deadlock { message: String },

    #[error("interrupted")]
    Interrupted,
}

impl QctlError {
    /// Whether an error is the statement timeout, wherever it was raised.
    pub fn is_statement_timeout(err: &anyhow::Error) -> bool {
        err.chain().any(|cause| {
            matches!(
                cause.downcast_ref::<QctlError>(),
                Some(QctlError::StatementTimeout { .. })
            )
        })
    }

    /// Whether an error is a missing privilege, wherever it was raised.
    pub fn is_privilege(err: &anyhow::Error) -> bool {
        err.chain().any(|cause| {
            matches!(
                cause.downcast_ref::<QctlError>(),
                Some(QctlError::Privilege { .. })
            )
        })
    }

    /// The exit code: 2 for errors, 1 where the answer is simply "not now".
    pub fn exit_code(&self) -> u8 {
        match self {
            QctlError::AnotherReap { .. } => exit::NO,
            QctlError::Interrupted => exit::INTERRUPTED,
            _ => exit::ERROR,
        }
    }

    pub fn usage(message: impl Into<String>) -> anyhow::Error {
        QctlError::Usage(message.into()).into()
    }

    /// Whether an error is a deadlock's rollback (safe to run again).
    pub fn is_deadlock(err: &anyhow::Error) -> bool {
        err.chain().any(|cause| {
            matches!(
                cause.downcast_ref::<QctlError>(),
                Some(QctlError::Deadlock { .. })
            )
        })
    }
}
