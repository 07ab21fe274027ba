//! The one error mapper of MySQL and MariaDB: the same server error code
//! gets the same typed error and hint, whichever command or statement hit
//! it.

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
    /// Whether the server is a Galera cluster's node (`@@wsrep_on`): its
    /// 1213 is mostly a certification conflict with another node.
    pub galera: bool,
    /// The server's name in messages: `MariaDB` or `MySQL` (from
    /// `VERSION()`; `MySQL/MariaDB` until it is read).
    pub server: &'static str,
}

/// A driver error in words: the server's `ERROR 1049 (42000): Unknown
/// database 'x'`, or the driver's own sentence; never the wrapper its
/// Display adds (`DriverError { ... }`, `MySqlError { ... }`).
pub fn describe(err: &mysql::Error) -> String {
    match err {
        mysql::Error::MySqlError(e) => format!("ERROR {} ({}): {}", e.code, e.state, e.message),
        mysql::Error::IoError(e) => e.to_string(),
        mysql::Error::CodecError(e) => e.to_string(),
        mysql::Error::DriverError(e) => e.to_string(),
        mysql::Error::UrlError(e) => e.to_string(),
        mysql::Error::TlsError(e) => format!("TLS: {e}"),
        mysql::Error::FromRowError(_) | mysql::Error::FromValueError(_) => {
            "a value the server sent could not be read".to_string()
        }
    }
}

/// The server's words for an error, as [`describe`] gives them; a broken
/// connection says what usually breaks one.
pub fn db_message(err: &mysql::Error) -> String {
    match err {
        mysql::Error::IoError(e) => {
            format!("the connection failed ({e}): server restart, KILL, or wait_timeout?")
        }
        other => describe(other),
    }
}

/// The server's error code, if the server answered with one.
pub fn code(err: &mysql::Error) -> Option<u16> {
    match err {
        mysql::Error::MySqlError(e) => Some(e.code),
        _ => None,
    }
}

/// Whether the session is gone under a statement: the connection broke,
/// or the server ended it (KILL, a shutdown). The statement under way may
/// or may not have taken effect.
fn session_ended(err: &mysql::Error) -> bool {
    use mysql::DriverError;
    match err {
        mysql::Error::IoError(_) | mysql::Error::CodecError(_) => true,
        mysql::Error::DriverError(
            DriverError::PacketOutOfSync | DriverError::UnexpectedPacket | DriverError::Timeout,
        ) => true,
        // Connection killed, server shutdown, server gone, lost, idle
        // connection closed by the server.
        mysql::Error::MySqlError(e) => matches!(e.code, 1927 | 1053 | 2006 | 2013 | 4031),
        _ => false,
    }
}

pub fn mysql_error(err: mysql::Error, cx: &ErrorContext) -> anyhow::Error {
    let message = db_message(&err);
    if session_ended(&err) {
        return QctlError::ConnectionLost { message }.into();
    }
    match code(&err) {
        // KILL QUERY from qctl's own Ctrl-C handler.
        Some(1317) if crate::interrupt::interrupted() => QctlError::Interrupted.into(),
        // MariaDB's max_statement_time, MySQL's max_execution_time.
        Some(1969 | 3024) => QctlError::StatementTimeout {
            message,
            limit: format_duration(cx.statement_timeout),
        }
        .into(),
        // innodb_lock_wait_timeout (row locks), lock_wait_timeout
        // (metadata locks), NOWAIT.
        Some(1205 | 3572) => QctlError::LockTimeout {
            message,
            limit: format_duration(cx.busy_timeout),
        }
        .into(),
        Some(1142 | 1143 | 1044 | 1227 | 1370) => QctlError::Privilege {
            message,
            table: cx.table.clone(),
        }
        .into(),
        Some(1792) => anyhow::anyhow!(
            "{message} — this command only reads; it never writes (a bug in qctl if you see this)"
        ),
        // On Galera, a write set that lost certification to another
        // node's (or a transaction a replicated write aborted).
        Some(1213) if cx.galera => QctlError::Certification { message }.into(),
        Some(1213) => QctlError::Deadlock { message }.into(),
        // A Galera node outside the Primary Component refuses queries (and
        // a write it took before finds no cluster to replicate to).
        Some(1047) | Some(1180)
            if code(&err) == Some(1047) || message.contains("Primary Component") =>
        {
            anyhow::anyhow!(
                "{message} — this Galera node is not part of the cluster's Primary Component \
             (wsrep_ready is OFF: it lost contact with the majority, or is still joining); it \
             refuses every query until it rejoins: point qctl at a node of the Primary \
             Component"
            )
        }
        // A transaction over the cluster's write-set limits.
        Some(1180 | 1105) if cx.galera && message.to_ascii_lowercase().contains("wsrep") => {
            anyhow::anyhow!(
                "{message} — the transaction is larger than the Galera cluster's write-set \
                 limits (wsrep_max_ws_rows, wsrep_max_ws_size): it was rolled back"
            )
        }
        // Unknown column, table or function, or a value an ENUM lacks:
        // under a system preset, a release qctl misread.
        Some(1054 | 1146 | 1305 | 1265) if cx.preset.is_some() => {
            crate::db::preset_mismatch(&message, cx.preset.as_deref())
        }
        Some(1046) => anyhow::anyhow!(
            "{message} — name the database in the URL: mysql://user@host:3306/DATABASE"
        ),
        // MariaDB (4025) and MySQL (3819) CHECK constraints.
        Some(4025 | 3819) => anyhow::anyhow!(
            "{message} — the table refused the value (MariaDB's JSON columns check json_valid(), \
             which refuses JSON nested 32 levels deep or more)"
        ),
        Some(1148 | 3948) => anyhow::anyhow!(
            "{message} — the server refuses LOAD DATA LOCAL: set local_infile=ON on it"
        ),
        Some(_) => anyhow::anyhow!("{message}"),
        None => anyhow::anyhow!("{}: {message}", cx.server),
    }
}
