//! The one error mapper of PostgreSQL: the same SQLSTATE gets the same
//! typed error and hint, whichever command or statement hit it.

use std::error::Error as StdError;

use crate::duration::format_duration;
use crate::error::QctlError;

/// What the mapper needs to say what to do.
#[derive(Debug, Clone)]
pub struct ErrorContext {
    pub table: String,
    pub statement_timeout: std::time::Duration,
    pub busy_timeout: std::time::Duration,
    /// The system preset in use and the release it fitted, for an error
    /// about something the tables lack ([`crate::db::preset_mismatch`]).
    pub preset: Option<String>,
    /// The server that answered, where the URL lists several (`host:port`).
    pub server: Option<String>,
}

/// The server's words for an error, without the driver's wrapping.
pub fn db_message(err: &postgres::Error) -> String {
    match err.as_db_error() {
        Some(db) => {
            let mut text = db.message().to_string();
            if let Some(detail) = db.detail() {
                text.push_str(&format!(" ({detail})"));
            }
            text
        }
        None if err.is_closed() => {
            "the connection was closed (server restart or pg_terminate_backend?)".into()
        }
        None => {
            let mut text = err.to_string();
            let mut source = StdError::source(err);
            while let Some(cause) = source {
                text.push_str(&format!(": {cause}"));
                source = cause.source();
            }
            text
        }
    }
}

/// Whether the session is gone: the connection broke (no answer from the
/// server at all), or the server ended the session (a FATAL error:
/// `pg_terminate_backend`, a shutdown, a crash of another backend). The
/// statement under way may or may not have taken effect.
fn session_ended(err: &postgres::Error) -> bool {
    match err.as_db_error() {
        Some(db) => {
            matches!(db.severity(), "FATAL" | "PANIC") || db.code().code().starts_with("08")
        }
        None => {
            err.is_closed()
                || StdError::source(err).is_some_and(|cause| cause.is::<std::io::Error>())
        }
    }
}

pub fn pg_error(err: postgres::Error, cx: &ErrorContext) -> anyhow::Error {
    let code = err.code().map(|c| c.code().to_string());
    let message = match &cx.server {
        Some(server) => format!("{} (the server at {server})", db_message(&err)),
        None => db_message(&err),
    };
    if session_ended(&err) {
        return QctlError::ConnectionLost {
            message: format!("PostgreSQL: {message}"),
        }
        .into();
    }
    match code.as_deref() {
        Some("57014") if crate::interrupt::interrupted() => QctlError::Interrupted.into(),
        Some("57014") => QctlError::StatementTimeout {
            message,
            limit: format_duration(cx.statement_timeout),
        }
        .into(),
        Some("55P03") => QctlError::LockTimeout {
            message,
            limit: format_duration(cx.busy_timeout),
        }
        .into(),
        Some("42501") => QctlError::Privilege {
            message,
            table: cx.table.clone(),
        }
        .into(),
        Some("25006") => anyhow::anyhow!(
            "{message} — this command only reads; it never writes (a bug in qctl if you see this)"
        ),
        Some("40001") => anyhow::anyhow!(
            "{message} — another transaction changed the same rows at the same time; nothing was \
             changed, run the command again"
        ),
        // Undefined column, table, function or type, or an enum value the
        // type lacks: under a system preset, a release qctl misread.
        Some("42703" | "42P01" | "42883" | "42704" | "22P02") if cx.preset.is_some() => {
            crate::db::preset_mismatch(&format!("PostgreSQL: {message}"), cx.preset.as_deref())
        }
        _ => anyhow::anyhow!("PostgreSQL: {message}"),
    }
}
