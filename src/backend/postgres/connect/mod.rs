//! Connecting to PostgreSQL the way `psql` does.
//!
//! The `postgres` crate neither reads the libpq environment nor knows
//! `verify-ca`, `verify-full` or `sslrootcert`, so qctl parses the URL or
//! key=value string itself, fills what is missing from `PG*` variables,
//! and builds the TLS connector (rustls, no system libraries) for the
//! sslmode asked for.

mod tls;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Result;

use self::tls::tls_config;
use crate::error::QctlError;
use crate::url::redact;

/// libpq's sslmode values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SslMode {
    Disable,
    Allow,
    Prefer,
    Require,
    VerifyCa,
    VerifyFull,
}

impl SslMode {
    fn parse(text: &str) -> Result<SslMode> {
        Ok(match text {
            "disable" => SslMode::Disable,
            "allow" => SslMode::Allow,
            "prefer" => SslMode::Prefer,
            "require" => SslMode::Require,
            "verify-ca" => SslMode::VerifyCa,
            "verify-full" => SslMode::VerifyFull,
            other => {
                return Err(QctlError::usage(format!(
                    "invalid sslmode '{other}': use disable, prefer, require, verify-ca or verify-full"
                )));
            }
        })
    }
}

/// The connection parameters after URL, key=value string and environment.
#[derive(Debug, Clone)]
pub struct ConnInfo {
    params: BTreeMap<String, String>,
}

/// Keywords qctl passes on, besides the TLS ones it handles itself.
const KNOWN: [&str; 14] = [
    "host",
    "hostaddr",
    "port",
    "user",
    "password",
    "dbname",
    "sslmode",
    "sslrootcert",
    "connect_timeout",
    "application_name",
    "options",
    "target_session_attrs",
    "keepalives",
    "keepalives_idle",
];

/// The libpq environment variables, as psql reads them.
const ENVIRONMENT: [(&str, &str); 9] = [
    ("PGHOST", "host"),
    ("PGHOSTADDR", "hostaddr"),
    ("PGPORT", "port"),
    ("PGUSER", "user"),
    ("PGPASSWORD", "password"),
    ("PGDATABASE", "dbname"),
    ("PGSSLMODE", "sslmode"),
    ("PGSSLROOTCERT", "sslrootcert"),
    ("PGCONNECT_TIMEOUT", "connect_timeout"),
];

impl ConnInfo {
    /// Parses a `postgres://` URL or a `key=value` string, then fills what
    /// it leaves out from the environment.
    pub fn parse(conninfo: &str) -> Result<ConnInfo> {
        let mut params = if conninfo.contains("://") {
            parse_url(conninfo)?
        } else {
            parse_keywords(conninfo)?
        };
        for key in params.keys() {
            if !KNOWN.contains(&key.as_str()) {
                return Err(QctlError::usage(format!(
                    "unsupported connection parameter '{key}' in {}",
                    redact(conninfo)
                )));
            }
        }
        for (var, key) in ENVIRONMENT {
            if let Ok(value) = std::env::var(var)
                && !value.is_empty()
            {
                params.entry(key.to_string()).or_insert(value);
            }
        }
        if std::env::var("PGAPPNAME").is_ok_and(|v| !v.is_empty()) {
            params
                .entry("application_name".into())
                .or_insert_with(|| std::env::var("PGAPPNAME").unwrap_or_default());
        }
        Ok(ConnInfo { params })
    }

    pub fn get(&self, key: &str) -> Option<&str> {
        self.params.get(key).map(String::as_str)
    }

    pub fn sslmode(&self) -> Result<SslMode> {
        self.get("sslmode")
            .map_or(Ok(SslMode::Prefer), SslMode::parse)
    }

    /// Where the connection goes, for messages: every host as
    /// `host:port`, then the database (`db1:5432,db2:5432/queue`).
    pub fn describe(&self) -> String {
        let hosts = match self.endpoints() {
            Ok(endpoints) => endpoints
                .iter()
                .map(Endpoint::shown)
                .collect::<Vec<_>>()
                .join(","),
            Err(_) => format!(
                "{}:{}",
                self.get("host").unwrap_or("localhost"),
                self.get("port").unwrap_or("5432")
            ),
        };
        format!(
            "{hosts}/{}",
            self.get("dbname").or(self.get("user")).unwrap_or("")
        )
    }

    /// The servers to try, in order, as libpq pairs them: one port for
    /// every host, or one per host (`host=a,b port=5433,5434`); a
    /// `hostaddr` per host where given.
    pub fn endpoints(&self) -> Result<Vec<Endpoint>> {
        let hosts: Vec<String> = self
            .get("host")
            .map(str::to_string)
            .unwrap_or_else(default_host)
            .split(',')
            .map(|h| h.trim().to_string())
            .collect();
        let addrs: Vec<&str> = self
            .get("hostaddr")
            .map(|a| a.split(',').map(str::trim).collect())
            .unwrap_or_default();
        let ports: Vec<u16> = match self.get("port") {
            None => vec![5432],
            Some(ports) => ports
                .split(',')
                .map(|port| {
                    port.trim()
                        .parse()
                        .map_err(|_| QctlError::usage(format!("invalid port '{port}'")))
                })
                .collect::<Result<_>>()?,
        };
        if ports.len() != 1 && ports.len() != hosts.len() {
            return Err(QctlError::usage(format!(
                "{} ports for {} hosts: give one port for every host, or one per host",
                ports.len(),
                hosts.len()
            )));
        }
        if !addrs.is_empty() && addrs.len() != hosts.len() {
            return Err(QctlError::usage(format!(
                "{} hostaddr values for {} hosts: give one per host",
                addrs.len(),
                hosts.len()
            )));
        }
        hosts
            .iter()
            .enumerate()
            .map(|(i, host)| {
                let hostaddr = match addrs.get(i) {
                    Some(addr) => Some(addr.parse().map_err(|_| {
                        QctlError::usage(format!("invalid hostaddr '{addr}': give an IP address"))
                    })?),
                    None => None,
                };
                Ok(Endpoint {
                    host: host.clone(),
                    hostaddr,
                    port: if ports.len() == 1 { ports[0] } else { ports[i] },
                })
            })
            .collect()
    }

    /// Which server of a multi-host list a session must land on
    /// (`target_session_attrs`, as libpq 14+ reads it).
    pub fn session_attrs(&self) -> Result<SessionAttrs> {
        Ok(match self.get("target_session_attrs").unwrap_or("any") {
            "any" => SessionAttrs::Any,
            "read-write" => SessionAttrs::ReadWrite,
            "read-only" => SessionAttrs::ReadOnly,
            "primary" => SessionAttrs::Primary,
            "standby" => SessionAttrs::Standby,
            "prefer-standby" => SessionAttrs::PreferStandby,
            other => {
                return Err(QctlError::usage(format!(
                    "invalid target_session_attrs '{other}': use any, read-write, read-only, \
                     primary, standby or prefer-standby"
                )));
            }
        })
    }

    /// The `postgres` crate's config for one server: everything but TLS.
    pub fn config(
        &self,
        endpoint: &Endpoint,
        connect_timeout: Duration,
    ) -> Result<postgres::Config> {
        let mut config = postgres::Config::new();
        config.host(&endpoint.host);
        if let Some(addr) = endpoint.hostaddr {
            config.hostaddr(addr);
        }
        config.port(endpoint.port);
        if let Some(keepalives) = self.get("keepalives") {
            config.keepalives(keepalives != "0");
        }
        if let Some(idle) = self.get("keepalives_idle") {
            let seconds: u64 = idle
                .parse()
                .map_err(|_| QctlError::usage(format!("invalid keepalives_idle '{idle}'")))?;
            config.keepalives_idle(Duration::from_secs(seconds));
        }
        let user = self.get("user").map(str::to_string).unwrap_or_else(os_user);
        config.user(&user);
        config.dbname(self.get("dbname").unwrap_or(&user));
        match self.get("password") {
            Some(password) => {
                config.password(password);
            }
            None => {
                let dbname = self.get("dbname").unwrap_or(&user);
                let port = endpoint.port.to_string();
                if let Some(password) = pgpass_password(&endpoint.host, &port, dbname, &user) {
                    config.password(password);
                }
            }
        }
        let timeout = match self.get("connect_timeout") {
            Some(seconds) => Duration::from_secs(seconds.parse().map_err(|_| {
                QctlError::usage(format!(
                    "invalid connect_timeout '{seconds}': give whole seconds"
                ))
            })?),
            None => connect_timeout,
        };
        if !timeout.is_zero() {
            config.connect_timeout(timeout);
        }
        // Recognisable in pg_stat_activity unless the user names it.
        config.application_name(self.get("application_name").unwrap_or("qctl"));
        if let Some(options) = self.get("options") {
            config.options(options);
        }
        Ok(config)
    }
}

/// One server of the host list.
#[derive(Debug, Clone)]
pub struct Endpoint {
    pub host: String,
    pub hostaddr: Option<std::net::IpAddr>,
    pub port: u16,
}

impl Endpoint {
    /// `host:port`, as messages name a server.
    pub fn shown(&self) -> String {
        format!("{}:{}", self.host, self.port)
    }
}

/// libpq's `target_session_attrs`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionAttrs {
    Any,
    /// A session that takes writes (`transaction_read_only` off).
    ReadWrite,
    /// A session that refuses writes (a standby, or read-only by default).
    ReadOnly,
    /// A server not in recovery.
    Primary,
    /// A server in recovery.
    Standby,
    /// A standby if any host has one, else any server.
    PreferStandby,
}

impl SessionAttrs {
    fn name(self) -> &'static str {
        match self {
            SessionAttrs::Any => "any",
            SessionAttrs::ReadWrite => "read-write",
            SessionAttrs::ReadOnly => "read-only",
            SessionAttrs::Primary => "primary",
            SessionAttrs::Standby => "standby",
            SessionAttrs::PreferStandby => "prefer-standby",
        }
    }
}

fn default_host() -> String {
    // libpq's compiled-in default on Debian is the socket directory.
    if std::path::Path::new("/var/run/postgresql").is_dir() {
        "/var/run/postgresql".into()
    } else {
        "localhost".into()
    }
}

fn os_user() -> String {
    std::env::var("USER")
        .or_else(|_| std::env::var("LOGNAME"))
        .unwrap_or_else(|_| "postgres".into())
}

/// The password for this connection from the password file, as libpq
/// reads it: `PGPASSFILE` or `~/.pgpass`, lines of
/// `host:port:database:user:password` where `*` matches anything and `\:`
/// is a colon; the first matching line wins. A file others can read is
/// ignored, as libpq does.
fn pgpass_password(host: &str, port: &str, dbname: &str, user: &str) -> Option<String> {
    use std::os::unix::fs::PermissionsExt;
    let path = std::env::var_os("PGPASSFILE")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".pgpass")))?;
    let metadata = std::fs::metadata(&path).ok()?;
    if metadata.permissions().mode() & 0o077 != 0 {
        eprintln!(
            "qctl: warning: password file {} has group or world access; it is ignored \
             (chmod 0600 it)",
            path.display()
        );
        return None;
    }
    let host = if host.starts_with('/') {
        "localhost"
    } else {
        host
    };
    let text = std::fs::read_to_string(&path).ok()?;
    for line in text.lines() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let mut fields = Vec::new();
        let mut field = String::new();
        let mut chars = line.chars();
        while let Some(c) = chars.next() {
            match c {
                '\\' => field.extend(chars.next()),
                ':' if fields.len() < 4 => fields.push(std::mem::take(&mut field)),
                c => field.push(c),
            }
        }
        fields.push(field);
        if fields.len() != 5 {
            continue;
        }
        let matches = |pattern: &str, value: &str| pattern == "*" || pattern == value;
        if matches(&fields[0], host)
            && matches(&fields[1], port)
            && matches(&fields[2], dbname)
            && matches(&fields[3], user)
        {
            return Some(fields[4].clone());
        }
    }
    None
}

/// A `postgres://` URL as libpq's parameters: several hosts (with their
/// ports) for failover, `dbname`, and the query's parameters as given.
fn parse_url(url: &str) -> Result<BTreeMap<String, String>> {
    let parsed = crate::url::parse(url)?;
    let mut params = BTreeMap::new();
    params.extend(parsed.user.map(|u| ("user".to_string(), u)));
    params.extend(parsed.password.map(|p| ("password".to_string(), p)));
    if !parsed.hosts.is_empty() {
        let hosts: Vec<&str> = parsed.hosts.iter().map(|(h, _)| h.as_str()).collect();
        params.insert("host".into(), hosts.join(","));
        let ports: Vec<&str> = parsed
            .hosts
            .iter()
            .filter_map(|(_, p)| p.as_deref())
            .collect();
        if !ports.is_empty() {
            params.insert("port".into(), ports.join(","));
        }
    }
    if !parsed.database.is_empty() {
        params.insert("dbname".into(), parsed.database);
    }
    params.extend(parsed.params);
    Ok(params)
}

fn parse_keywords(text: &str) -> Result<BTreeMap<String, String>> {
    let mut params = BTreeMap::new();
    let mut chars = text.chars().peekable();
    loop {
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        if chars.peek().is_none() {
            break;
        }
        let mut key = String::new();
        while let Some(c) = chars.next_if(|c| *c != '=' && !c.is_whitespace()) {
            key.push(c);
        }
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        if chars.next() != Some('=') {
            return Err(QctlError::usage(format!(
                "invalid connection string: '{key}' has no value (write key=value)"
            )));
        }
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        let mut value = String::new();
        if chars.next_if_eq(&'\'').is_some() {
            loop {
                match chars.next() {
                    Some('\\') => value.extend(chars.next()),
                    Some('\'') => break,
                    Some(c) => value.push(c),
                    None => {
                        return Err(QctlError::usage(
                            "invalid connection string: unterminated quoted value",
                        ));
                    }
                }
            }
        } else {
            while let Some(c) = chars.next_if(|c| !c.is_whitespace()) {
                if c == '\\' {
                    value.extend(chars.next());
                } else {
                    value.push(c);
                }
            }
        }
        params.insert(key, value);
    }
    Ok(params)
}

/// How to cancel what a connection is running: a cancel request goes over
/// a new connection, with the same TLS.
pub struct Canceller {
    token: postgres::CancelToken,
    tls: Option<rustls::ClientConfig>,
}

impl Canceller {
    /// Asks the server to cancel the running statement (best effort).
    pub fn cancel(&self) {
        let _ = match &self.tls {
            None => self.token.cancel_query(postgres::NoTls),
            Some(tls) => self
                .token
                .cancel_query(tokio_postgres_rustls::MakeRustlsConnect::new(tls.clone())),
        };
    }
}

/// The replication warnings a server sent on a connection since they were
/// last taken. A COMMIT whose wait for a synchronous standby was cut short
/// (a cancel, a standby that never answers) still succeeds: only a WARNING
/// says the standby never confirmed it.
#[derive(Clone, Default)]
pub struct Notices(Arc<std::sync::Mutex<Vec<String>>>);

impl Notices {
    /// The warnings since the last call.
    pub fn take(&self) -> Vec<String> {
        self.0
            .lock()
            .map(|mut n| std::mem::take(&mut *n))
            .unwrap_or_default()
    }

    fn keep(&self, notice: &postgres::error::DbError) {
        // Only what qctl acts on: the synchronous replication warnings
        // ("canceling wait for synchronous replication"), known by the
        // server function that sends them, which no lc_messages
        // translates (a trigger's RAISE WARNING shares their SQLSTATE).
        let from_syncrep = match notice.routine() {
            Some(routine) => routine == "SyncRepWaitForLSN",
            None => notice.message().contains("synchronous replication"),
        };
        if from_syncrep && let Ok(mut kept) = self.0.lock() {
            let mut text = notice.message().to_string();
            if let Some(detail) = notice.detail() {
                text.push_str(&format!(" ({detail})"));
            }
            kept.push(text);
        }
    }
}

/// A connection, how to cancel what it runs, its replication warnings,
/// and which server of the host list answered (`host:port`).
pub struct Connection {
    pub client: postgres::Client,
    pub canceller: Canceller,
    pub notices: Notices,
    pub answered: String,
}

/// Connects with the TLS the sslmode asks for.
pub fn connect(info: &ConnInfo, connect_timeout: Duration) -> Result<postgres::Client> {
    connect_cancellable(info, connect_timeout).map(|c| c.client)
}

/// Connects, and says how to cancel the connection's statements: each
/// host of the list in turn, as libpq does, until one answers and fits
/// `target_session_attrs` (`prefer-standby` looks for a standby first,
/// then takes any).
pub fn connect_cancellable(info: &ConnInfo, connect_timeout: Duration) -> Result<Connection> {
    let endpoints = info.endpoints()?;
    let attrs = info.session_attrs()?;
    let tls = tls_config(info)?;
    let passes: &[SessionAttrs] = match attrs {
        SessionAttrs::PreferStandby => &[SessionAttrs::Standby, SessionAttrs::Any],
        SessionAttrs::Any => &[SessionAttrs::Any],
        SessionAttrs::ReadWrite => &[SessionAttrs::ReadWrite],
        SessionAttrs::ReadOnly => &[SessionAttrs::ReadOnly],
        SessionAttrs::Primary => &[SessionAttrs::Primary],
        SessionAttrs::Standby => &[SessionAttrs::Standby],
    };
    let mut failures: Vec<String> = Vec::new();
    for want in passes {
        for endpoint in &endpoints {
            let connection = match connect_one(info, endpoint, connect_timeout, tls.clone()) {
                Ok(connection) => connection,
                Err(why) => {
                    if !failures.iter().any(|f| f.starts_with(&endpoint.shown())) {
                        failures.push(format!("{}: {why}", endpoint.shown()));
                    }
                    continue;
                }
            };
            let mut connection = connection;
            match fits(&mut connection.client, *want) {
                Ok(None) => return Ok(connection),
                Ok(Some(why)) => failures.push(format!("{}: {why}", endpoint.shown())),
                Err(err) => failures.push(format!("{}: {}", endpoint.shown(), db_text(&err))),
            }
        }
    }
    let asked = match attrs {
        SessionAttrs::Any => String::new(),
        other => format!(" with target_session_attrs={}", other.name()),
    };
    if endpoints.len() == 1 && failures.len() == 1 {
        let why = failures.remove(0);
        let why = why
            .strip_prefix(&format!("{}: ", endpoints[0].shown()))
            .unwrap_or(&why)
            .to_string();
        return Err(anyhow::anyhow!(
            "cannot connect to PostgreSQL at {}{asked}: {why}",
            info.describe()
        ));
    }
    Err(anyhow::anyhow!(
        "cannot connect to PostgreSQL at {}{asked}: no host would do — {}",
        info.describe(),
        failures.join("; ")
    ))
}

/// Why a server does not fit the session asked for (None: it fits).
fn fits(
    client: &mut postgres::Client,
    want: SessionAttrs,
) -> Result<Option<String>, postgres::Error> {
    let recovery = |client: &mut postgres::Client| -> Result<bool, postgres::Error> {
        client
            .query_one("SELECT pg_is_in_recovery()", &[])
            .map(|r| r.get(0))
    };
    let read_only = |client: &mut postgres::Client| -> Result<bool, postgres::Error> {
        client
            .query_one(
                "SELECT current_setting('transaction_read_only') = 'on'",
                &[],
            )
            .map(|r| r.get(0))
    };
    Ok(match want {
        SessionAttrs::Any | SessionAttrs::PreferStandby => None,
        SessionAttrs::Primary => recovery(client)?
            .then(|| "a standby (in recovery), and a primary was asked for".to_string()),
        SessionAttrs::Standby => (!recovery(client)?)
            .then(|| "a primary (not in recovery), and a standby was asked for".to_string()),
        SessionAttrs::ReadWrite => read_only(client)?
            .then(|| "takes no writes (a standby, or read-only by default)".to_string()),
        SessionAttrs::ReadOnly => (!read_only(client)?).then(|| "takes writes".to_string()),
    })
}

/// A server's error, or the driver's, in words.
fn db_text(err: &postgres::Error) -> String {
    match err.as_db_error() {
        Some(db) => db.message().to_string(),
        None => err.to_string(),
    }
}

/// Connects to one server; the error says why in words (never the
/// password).
fn connect_one(
    info: &ConnInfo,
    endpoint: &Endpoint,
    connect_timeout: Duration,
    tls: Option<rustls::ClientConfig>,
) -> std::result::Result<Connection, String> {
    let mut config = info
        .config(endpoint, connect_timeout)
        .map_err(|e| format!("{e:#}"))?;
    let notices = Notices::default();
    let sink = notices.clone();
    config.notice_callback(move |notice| sink.keep(&notice));
    let mode = info.sslmode().map_err(|e| format!("{e:#}"))?;
    config.ssl_mode(match (&tls, mode) {
        (None, _) => postgres::config::SslMode::Disable,
        (Some(_), SslMode::Allow | SslMode::Prefer) => postgres::config::SslMode::Prefer,
        (Some(_), _) => postgres::config::SslMode::Require,
    });
    let timeout = config.get_connect_timeout().copied().unwrap_or_default();
    let tls_config = tls.clone();
    let attempt = move || match tls {
        None => config.connect(postgres::NoTls),
        Some(tls) => config.connect(tokio_postgres_rustls::MakeRustlsConnect::new(tls)),
    };
    let client = crate::db::within(timeout, attempt)
        .ok_or_else(|| {
            format!(
                "no answer within {} — the server took the connection but did not finish the \
                 handshake (--connect-timeout, or connect_timeout in the URL, sets how long to \
                 wait)",
                crate::duration::format_duration(timeout)
            )
        })?
        .map_err(|err| connect_error(err, info))?;
    let canceller = Canceller {
        token: client.cancel_token(),
        tls: tls_config,
    };
    Ok(Connection {
        client,
        canceller,
        notices,
        answered: endpoint.shown(),
    })
}

/// Explains a failed connection without ever quoting the password.
fn connect_error(err: postgres::Error, info: &ConnInfo) -> String {
    let mut text = format!("{err}");
    let mut source = std::error::Error::source(&err);
    while let Some(cause) = source {
        text.push_str(&format!(": {cause}"));
        source = cause.source();
    }
    if let Some(password) = info.get("password")
        && !password.is_empty()
    {
        text = text.replace(password, "***");
    }
    let hint = if text.contains("password authentication failed") {
        " — check the user and password (PGPASSWORD, or the URL)"
    } else if text.contains("Connection refused") || text.contains("No such file") {
        " — is the server running and listening there? (pg_isready tells)"
    } else if text.contains("does not exist") && text.contains("database") {
        " — create it (createdb) or pass another database name"
    } else if text.contains("certificate") || text.contains("InvalidCertificate") {
        " — the server's certificate is not trusted for this sslmode; check sslrootcert and the host name"
    } else if text.contains("timed out") || text.contains("timeout") {
        " — the server did not answer within the connect timeout"
    } else {
        ""
    };
    format!("{text}{hint}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_with_every_part() {
        let p = parse_url(
            "postgresql://app:p%40ss@db.example:6543/queue?sslmode=verify-full&application_name=x",
        )
        .unwrap();
        assert_eq!(p["user"], "app");
        assert_eq!(p["password"], "p@ss");
        assert_eq!(p["host"], "db.example");
        assert_eq!(p["port"], "6543");
        assert_eq!(p["dbname"], "queue");
        assert_eq!(p["sslmode"], "verify-full");
        let p = parse_url("postgres:///q?host=%2Fvar%2Frun%2Fpostgresql").unwrap();
        assert_eq!(
            (p["dbname"].as_str(), p["host"].as_str()),
            ("q", "/var/run/postgresql")
        );
        let p = parse_url("postgres://[::1]:5433,h2:5434/q").unwrap();
        assert_eq!(
            (p["host"].as_str(), p["port"].as_str()),
            ("::1,h2", "5433,5434")
        );
    }

    #[test]
    fn keyword_strings_with_quotes() {
        let p = parse_keywords("host=db  port = 5432 user=a\\ b").unwrap();
        assert_eq!(
            (p["host"].as_str(), p["port"].as_str(), p["user"].as_str()),
            ("db", "5432", "a b")
        );
        let p = parse_keywords("password='se cret\\'s' dbname=q").unwrap();
        assert_eq!(p["password"], "se cret's");
        assert_eq!(p["dbname"], "q");
        assert!(parse_keywords("host").is_err());
        assert!(parse_keywords("password='open").is_err());
    }

    #[test]
    fn sslmodes() {
        for (text, mode) in [
            ("disable", SslMode::Disable),
            ("verify-full", SslMode::VerifyFull),
        ] {
            assert_eq!(SslMode::parse(text).unwrap(), mode);
        }
        assert!(SslMode::parse("verify_full").is_err());
    }
}
