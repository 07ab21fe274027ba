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
    /// The outcome of a write is unknown: its COMMIT (or a statement that
    /// commits alone) was sent and no answer came, or a synchronous
    /// standby never confirmed it.
    pub const UNKNOWN: u8 = 3;
    /// Interrupted by Ctrl-C, SIGTERM or SIGHUP before the interrupted
    /// write's COMMIT was sent.
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

    /// A Galera cluster refused this transaction's write set: another
    /// node committed a change to the same rows first (certification), or
    /// a replicated write aborted it. It was rolled back.
    #[error(
        "{message} — a certification conflict on the Galera cluster: another node committed a \
         change to the same rows first; nothing of this transaction was changed, run the \
         command again (or send the writers of one queue to one node)"
    )]
    Certification { message: String },

    /// The database refused one job of a bulk load: the `row`-th job sent
    /// (from 1), which the command maps back to its input line.
    #[error("{message}")]
    RowRefused { row: u64, message: String },

    /// The connection broke, or the server ended the session, while a
    /// statement ran: the server's answer never came.
    #[error("{message}")]
    ConnectionLost { message: String },

    /// A COMMIT (or a statement committing alone) stopped waiting for a
    /// synchronous standby: the primary kept it, no standby confirmed it.
    #[error("{message}")]
    ReplicationUnconfirmed { message: String },

    /// A write whose COMMIT was sent and never answered (or never
    /// confirmed by a synchronous standby): it may or may not stand. The
    /// command says, around it, what may have been written and how to
    /// find out.
    #[error("the outcome is unknown: {what}")]
    OutcomeUnknown { what: String },

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

    /// The exit code: 2 for errors, 1 where the answer is simply "not now",
    /// 3 where a write's outcome is unknown.
    pub fn exit_code(&self) -> u8 {
        match self {
            QctlError::AnotherReap { .. } => exit::NO,
            QctlError::Interrupted => exit::INTERRUPTED,
            QctlError::OutcomeUnknown { .. } => exit::UNKNOWN,
            _ => exit::ERROR,
        }
    }

    /// The exit code of an error, wherever in its chain the typed error
    /// sits: an unknown outcome wins over everything around it (a batch
    /// loop's "stopped part-way" says what stood before it).
    pub fn code_of(err: &anyhow::Error) -> u8 {
        let typed = || err.chain().filter_map(|c| c.downcast_ref::<QctlError>());
        if typed().any(|e| matches!(e, QctlError::OutcomeUnknown { .. })) {
            return exit::UNKNOWN;
        }
        typed().next().map_or(exit::ERROR, QctlError::exit_code)
    }

    /// The job a bulk load's database refused, by its place among the jobs
    /// sent (from 1), wherever it was raised.
    pub fn refused_row(err: &anyhow::Error) -> Option<u64> {
        err.chain()
            .find_map(|cause| match cause.downcast_ref::<QctlError>() {
                Some(QctlError::RowRefused { row, .. }) => Some(*row),
                _ => None,
            })
    }

    /// Whether the connection broke under a statement, wherever it was
    /// raised.
    pub fn is_connection_lost(err: &anyhow::Error) -> bool {
        err.chain().any(|cause| {
            matches!(
                cause.downcast_ref::<QctlError>(),
                Some(QctlError::ConnectionLost { .. })
            )
        })
    }

    /// Whether the outcome of a write is unknown, wherever it was raised.
    pub fn is_outcome_unknown(err: &anyhow::Error) -> bool {
        err.chain().any(|cause| {
            matches!(
                cause.downcast_ref::<QctlError>(),
                Some(QctlError::OutcomeUnknown { .. })
            )
        })
    }

    /// An error whose outcome is unknown gets what may have been written
    /// and how to find out (`what`); any other error is left as it is.
    pub fn when_unknown(err: anyhow::Error, what: impl FnOnce() -> String) -> anyhow::Error {
        if QctlError::is_outcome_unknown(&err) {
            err.context(what())
        } else {
            err
        }
    }

    /// Whether an error is the interrupt, wherever it was raised.
    pub fn is_interrupted(err: &anyhow::Error) -> bool {
        err.chain().any(|cause| {
            matches!(
                cause.downcast_ref::<QctlError>(),
                Some(QctlError::Interrupted)
            )
        })
    }

    pub fn usage(message: impl Into<String>) -> anyhow::Error {
        QctlError::Usage(message.into()).into()
    }

    /// Whether an error is a deadlock's or a certification conflict's
    /// rollback (safe to run again).
    pub fn is_deadlock(err: &anyhow::Error) -> bool {
        err.chain().any(|cause| {
            matches!(
                cause.downcast_ref::<QctlError>(),
                Some(QctlError::Deadlock { .. } | QctlError::Certification { .. })
            )
        })
    }
}
