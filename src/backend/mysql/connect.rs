//! Connecting to MySQL and MariaDB the way the `mysql` client does.
//!
//! A `mysql://` or `mariadb://` URL gives user, password, host, port,
//! database and the TLS options (`ssl-mode`, `ssl-ca`); what it leaves
//! out comes from the `[client]` group of `~/.my.cnf`, then from the
//! client's environment (`MYSQL_HOST`, `MYSQL_TCP_PORT`, `MYSQL_PWD`,
//! `MYSQL_UNIX_PORT`, `USER`), in the client's own order of precedence.
//! TLS is rustls (no system OpenSSL), with the client's five ssl-modes.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Result;
use mysql::{Conn, OptsBuilder, SslOpts};

use crate::error::QctlError;
use crate::url::redact;

/// The `mysql` client's `--ssl-mode` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SslMode {
    Disabled,
    Preferred,
    Required,
    VerifyCa,
    VerifyIdentity,
}

impl SslMode {
    pub fn parse(text: &str) -> Result<SslMode> {
        Ok(match text.to_ascii_uppercase().replace('-', "_").as_str() {
            "DISABLED" => SslMode::Disabled,
            "PREFERRED" => SslMode::Preferred,
            "REQUIRED" => SslMode::Required,
            "VERIFY_CA" => SslMode::VerifyCa,
            "VERIFY_IDENTITY" => SslMode::VerifyIdentity,
            _ => {
                return Err(QctlError::usage(format!(
                    "invalid ssl-mode '{text}': use DISABLED, PREFERRED, REQUIRED, VERIFY_CA or \
                     VERIFY_IDENTITY"
                )));
            }
        })
    }
}

/// Parameters a URL may carry, by their canonical name; `_` spellings are
/// accepted too (`ssl_mode`).
const KNOWN: [&str; 10] = [
    "user",
    "password",
    "host",
    "port",
    "database",
    "socket",
    "ssl-mode",
    "ssl-ca",
    "connect-timeout",
    "program-name",
];

/// The connection parameters after URL, option file and environment.
#[derive(Debug, Clone)]
pub struct ConnInfo {
    params: BTreeMap<String, String>,
    /// The URL as given, for messages (redacted when shown).
    url: String,
}

impl ConnInfo {
    /// Parses a `mysql://` or `mariadb://` URL and fills what it leaves out.
    pub fn parse(url: &str) -> Result<ConnInfo> {
        let mut params = parse_url(url)?;
        for (key, value) in option_file() {
            params.entry(key).or_insert(value);
        }
        for (var, key) in [
            ("MYSQL_HOST", "host"),
            ("MYSQL_TCP_PORT", "port"),
            ("MYSQL_PWD", "password"),
            ("MYSQL_UNIX_PORT", "socket"),
        ] {
            if let Ok(value) = std::env::var(var)
                && !value.is_empty()
            {
                params.entry(key.to_string()).or_insert(value);
            }
        }
        let info = ConnInfo {
            params,
            url: url.to_string(),
        };
        info.ssl_mode()?;
        if let Some(port) = info.get("port") {
            port.parse::<u16>().map_err(|_| {
                QctlError::usage(format!("invalid port '{port}' in {}", info.shown()))
            })?;
        }
        Ok(info)
    }

    pub fn get(&self, key: &str) -> Option<&str> {
        self.params.get(key).map(String::as_str)
    }

    /// The URL as given, password included, to open more connections.
    pub fn shown_raw(&self) -> String {
        self.url.clone()
    }

    /// The URL as it may be shown: no password.
    pub fn shown(&self) -> String {
        redact(&self.url)
    }

    pub fn ssl_mode(&self) -> Result<SslMode> {
        self.get("ssl-mode")
            .map_or(Ok(SslMode::Preferred), SslMode::parse)
    }

    pub fn database(&self) -> Option<&str> {
        self.get("database").filter(|d| !d.is_empty())
    }

    pub fn host(&self) -> &str {
        self.get("host").unwrap_or("localhost")
    }

    /// The same connection at another server (`host:port`), as a cluster's
    /// node lists its peers.
    pub fn at(&self, address: &str) -> Option<ConnInfo> {
        let (host, port) = address.rsplit_once(':')?;
        port.parse::<u16>().ok()?;
        let mut one = self.clone();
        one.params.remove("hosts");
        one.params.remove("socket");
        one.params.insert("host".into(), host.to_string());
        one.params.insert("port".into(), port.to_string());
        Some(one)
    }

    /// One connection info per host of a multi-host URL, in order (just
    /// this one for a single host).
    pub fn each_host(&self) -> Vec<ConnInfo> {
        let Some(hosts) = self.get("hosts") else {
            return vec![self.clone()];
        };
        hosts
            .split(',')
            .filter_map(|pair| pair.rsplit_once(':'))
            .map(|(host, port)| {
                let mut one = self.clone();
                one.params.remove("hosts");
                one.params.insert("host".into(), host.to_string());
                one.params.insert("port".into(), port.to_string());
                one
            })
            .collect()
    }

    pub fn port(&self) -> u16 {
        self.get("port")
            .and_then(|p| p.parse().ok())
            .unwrap_or(3306)
    }

    /// Where the connection goes, for messages: `host:port/database`.
    pub fn describe(&self) -> String {
        if let Some(hosts) = self.get("hosts") {
            return format!("{hosts}/{}", self.database().unwrap_or(""));
        }
        match self.get("socket") {
            Some(socket) if self.get("host").is_none() => {
                format!("{socket}/{}", self.database().unwrap_or(""))
            }
            _ => format!(
                "{}:{}/{}",
                self.host(),
                self.port(),
                self.database().unwrap_or("")
            ),
        }
    }

    /// The driver's options, TLS as `tls` says (None: plain).
    fn opts(&self, connect_timeout: Duration, tls: Option<SslOpts>) -> Result<OptsBuilder> {
        let user = self
            .get("user")
            .map(str::to_string)
            .or_else(|| std::env::var("USER").ok())
            .unwrap_or_else(|| "root".into());
        let timeout = match self.get("connect-timeout") {
            Some(seconds) => Duration::from_secs(seconds.parse().map_err(|_| {
                QctlError::usage(format!(
                    "invalid connect-timeout '{seconds}': give whole seconds"
                ))
            })?),
            None => connect_timeout,
        };
        let mut opts = OptsBuilder::new()
            .user(Some(user))
            .pass(self.get("password"))
            .db_name(self.database())
            .prefer_socket(false)
            .tcp_nodelay(true)
            .stmt_cache_size(64)
            // An UPDATE's row count is the rows it matched, not only those
            // whose values changed: a fenced finish that matched its job
            // did finish it.
            .additional_capabilities(mysql::consts::CapabilityFlags::CLIENT_FOUND_ROWS)
            .ssl_opts(tls)
            // Recognisable in the process list unless the user names it.
            .connect_attrs(Some(std::collections::HashMap::from([(
                "program_name",
                self.get("program-name").unwrap_or("qctl"),
            )])));
        if !timeout.is_zero() {
            opts = opts.tcp_connect_timeout(Some(timeout));
        }
        match (self.get("socket"), self.get("host")) {
            (Some(socket), None) => opts = opts.socket(Some(socket)),
            _ => {
                opts = opts
                    .ip_or_hostname(Some(self.host().to_string()))
                    .tcp_port(self.port())
            }
        }
        Ok(opts)
    }

    /// The TLS options of the ssl-mode, or None for a plain connection.
    fn tls(&self) -> Result<Option<SslOpts>> {
        let mode = self.ssl_mode()?;
        let ca = self.get("ssl-ca").map(PathBuf::from);
        if let Some(ca) = &ca
            && mode != SslMode::Disabled
            && !ca.exists()
        {
            return Err(QctlError::usage(format!(
                "ssl-ca {} does not exist — give the path of the server's CA certificate (PEM)",
                ca.display()
            )));
        }
        Ok(match mode {
            SslMode::Disabled => None,
            // Encrypted, not authenticated, as the mysql client does;
            // REQUIRED with a CA verifies the chain, as the client does.
            SslMode::Preferred | SslMode::Required if ca.is_none() => {
                Some(SslOpts::default().with_danger_accept_invalid_certs(true))
            }
            SslMode::Preferred | SslMode::Required | SslMode::VerifyCa => {
                let ca = ca.ok_or_else(|| {
                    QctlError::usage(
                        "ssl-mode=VERIFY_CA needs the server's CA certificate: add ssl-ca=FILE to \
                         the URL (or ssl-ca in ~/.my.cnf)",
                    )
                })?;
                Some(
                    SslOpts::default()
                        .with_root_cert_path(Some(ca))
                        .with_danger_skip_domain_validation(true),
                )
            }
            SslMode::VerifyIdentity => {
                let ca = ca.ok_or_else(|| {
                    QctlError::usage(
                        "ssl-mode=VERIFY_IDENTITY needs the server's CA certificate: add \
                         ssl-ca=FILE to the URL (or ssl-ca in ~/.my.cnf)",
                    )
                })?;
                Some(SslOpts::default().with_root_cert_path(Some(ca)))
            }
        })
    }
}

/// Connects to the first host of the URL's list that answers and takes
/// queries (a Galera node outside the Primary Component answers but
/// refuses them); returns the connection and the info of the host that
/// answered, for the connections opened later. Where every host fails,
/// the error says why for each.
pub fn connect_any(info: &ConnInfo, connect_timeout: Duration) -> Result<(Conn, ConnInfo)> {
    use mysql::prelude::Queryable;
    let hosts = info.each_host();
    if hosts.len() == 1 {
        return Ok((connect(info, connect_timeout)?, info.clone()));
    }
    let mut failures = Vec::new();
    for host in hosts {
        let shown = format!("{}:{}", host.host(), host.port());
        match connect(&host, connect_timeout) {
            // A Galera node says whether it takes queries; any other
            // server has no such variable.
            Ok(mut conn) => match conn.query_first::<(String, String), _>(
                "SHOW STATUS LIKE 'wsrep_ready'",
            ) {
                Ok(Some((_, ready))) if !ready.eq_ignore_ascii_case("ON") => failures.push(format!(
                    "{shown}: a Galera node outside the Primary Component (wsrep_ready is {ready})"
                )),
                Ok(_) => return Ok((conn, host)),
                Err(err) => failures.push(format!(
                    "{shown}: {}",
                    super::error::describe(&err)
                )),
            },
            Err(err) => failures.push(format!("{shown}: {err:#}")),
        }
    }
    Err(anyhow::anyhow!(
        "cannot connect to MySQL/MariaDB at {}: no host would do — {}",
        info.describe(),
        failures.join("; ")
    ))
}

/// Connects as the ssl-mode says: PREFERRED falls back to a plain
/// connection only when the server offers no TLS at all.
pub fn connect(info: &ConnInfo, connect_timeout: Duration) -> Result<Conn> {
    // One crypto provider for the process, whatever rustls features other
    // crates turn on.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let tls = info.tls()?;
    let preferred = info.ssl_mode()? == SslMode::Preferred;
    match open(info, info.opts(connect_timeout, tls.clone())?)? {
        Ok(conn) => Ok(conn),
        Err(mysql::Error::DriverError(mysql::DriverError::TlsNotSupported)) if preferred => {
            open(info, info.opts(connect_timeout, None)?)?.map_err(|e| connect_error(e, info))
        }
        Err(err) => Err(connect_error(err, info)),
    }
}

/// One connection attempt, the handshake included, within the connect
/// timeout.
fn open(info: &ConnInfo, opts: OptsBuilder) -> Result<Result<Conn, mysql::Error>> {
    let opts = mysql::Opts::from(opts);
    let timeout = opts.get_tcp_connect_timeout().unwrap_or_default();
    crate::db::within(timeout, move || Conn::new(opts)).ok_or_else(|| {
        anyhow::anyhow!(
            "cannot connect to MySQL/MariaDB at {}: no answer within {} — the server took the \
             connection but did not finish the handshake (--connect-timeout, or connect-timeout \
             in the URL, sets how long to wait)",
            info.describe(),
            crate::duration::format_duration(timeout)
        )
    })
}

/// Explains a failed connection without ever quoting the password.
fn connect_error(err: mysql::Error, info: &ConnInfo) -> anyhow::Error {
    let mut text = super::error::describe(&err);
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
    let code = match &err {
        mysql::Error::MySqlError(e) => Some(e.code),
        _ => None,
    };
    let hint = match code {
        Some(1045) => " — check the user and password (the URL, ~/.my.cnf or MYSQL_PWD)",
        Some(1049) => " — create the database (CREATE DATABASE) or name another one in the URL",
        Some(1044) => " — the user may not use this database: GRANT it access",
        _ if matches!(
            err,
            mysql::Error::DriverError(mysql::DriverError::TlsNotSupported)
        ) =>
        {
            " — the server offers no TLS: configure ssl-cert and ssl-key on it, or use \
             ssl-mode=PREFERRED or DISABLED"
        }
        _ if text.contains("Connection refused") || text.contains("No such file") => {
            " — is the server running and listening there? (`mariadb-admin ping` tells)"
        }
        _ if text.contains("certificate") || text.contains("InvalidCertificate") => {
            " — the server's certificate is not trusted for this ssl-mode; check ssl-ca and the \
             host name"
        }
        _ if text.contains("timed out") || text.contains("timeout") => {
            " — the server did not answer within the connect timeout"
        }
        _ => "",
    };
    anyhow::anyhow!(
        "cannot connect to MySQL/MariaDB at {}: {text}{hint}",
        info.describe()
    )
}

/// The `[client]` group of `~/.my.cnf` (and `[mariadb-client]`), as the
/// mysql client reads it; a file others may write is ignored, as the
/// client ignores it.
fn option_file() -> BTreeMap<String, String> {
    use std::os::unix::fs::PermissionsExt;
    let mut params = BTreeMap::new();
    let Some(path) = std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".my.cnf")) else {
        return params;
    };
    let Ok(metadata) = std::fs::metadata(&path) else {
        return params;
    };
    if metadata.permissions().mode() & 0o002 != 0 {
        eprintln!(
            "qctl: warning: option file {} is world-writable; it is ignored (chmod 0600 it)",
            path.display()
        );
        return params;
    }
    let Ok(text) = std::fs::read_to_string(&path) else {
        return params;
    };
    let mut in_client = false;
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        if let Some(group) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            in_client = matches!(group.trim(), "client" | "mariadb-client" | "client-mariadb");
            continue;
        }
        if !in_client {
            continue;
        }
        let (key, value) = match line.split_once('=') {
            Some((k, v)) => (k.trim(), v.trim()),
            None => (line, ""),
        };
        let key = key.replace('_', "-");
        let key = match key.as_str() {
            "pass" => "password".to_string(),
            "db" => "database".to_string(),
            _ => key,
        };
        let value = value
            .strip_prefix('"')
            .and_then(|v| v.strip_suffix('"'))
            .or_else(|| value.strip_prefix('\'').and_then(|v| v.strip_suffix('\'')))
            .unwrap_or(value);
        if KNOWN.contains(&key.as_str()) {
            params.entry(key).or_insert_with(|| value.to_string());
        }
    }
    params
}

/// `mysql://user:password@host:port/database?ssl-mode=...&ssl-ca=...`
pub fn parse_url(url: &str) -> Result<BTreeMap<String, String>> {
    let parsed = crate::url::parse(url)?;
    let mut params = BTreeMap::new();
    params.extend(parsed.user.map(|u| ("user".to_string(), u)));
    params.extend(parsed.password.map(|p| ("password".to_string(), p)));
    match parsed.hosts.as_slice() {
        [] => {}
        [(host, port)] => {
            if !host.is_empty() {
                params.insert("host".into(), host.clone());
            }
            if let Some(port) = port {
                params.insert("port".into(), port.clone());
            }
        }
        several => {
            // Tried in order (a Galera cluster's nodes, a primary and its
            // replicas): `host:port,host:port`, each port defaulting to
            // 3306.
            let mut list = Vec::new();
            for (host, port) in several {
                let port = port.as_deref().unwrap_or("3306");
                port.parse::<u16>().map_err(|_| {
                    QctlError::usage(format!("invalid port '{port}' in {}", redact(url)))
                })?;
                list.push(format!("{host}:{port}"));
            }
            params.insert("hosts".into(), list.join(","));
        }
    }
    let database = parsed.database.trim_end_matches('/');
    if database.contains('/') {
        return Err(QctlError::usage(format!(
            "invalid database name in {}: write mysql://host/DATABASE",
            redact(url)
        )));
    }
    if !database.is_empty() {
        params.insert("database".into(), database.to_string());
    }
    for (key, value) in parsed.params {
        let key = key.to_ascii_lowercase().replace('_', "-");
        let key = match key.as_str() {
            "sslmode" => "ssl-mode".to_string(),
            "sslca" | "sslrootcert" => "ssl-ca".to_string(),
            _ => key,
        };
        if !KNOWN.contains(&key.as_str()) {
            return Err(QctlError::usage(format!(
                "unsupported connection parameter '{key}' in {} (qctl understands ssl-mode, \
                 ssl-ca, socket, connect-timeout, program-name, user, password)",
                redact(url)
            )));
        }
        if key == "ssl-mode" {
            SslMode::parse(&value)?;
        }
        params.insert(key, value);
    }
    Ok(params)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_with_every_part() {
        let p = parse_url(
            "mysql://app:p%40ss@db.example:3307/queue?ssl-mode=VERIFY_IDENTITY&ssl_ca=%2Fca.pem",
        )
        .unwrap();
        assert_eq!(p["user"], "app");
        assert_eq!(p["password"], "p@ss");
        assert_eq!(p["host"], "db.example");
        assert_eq!(p["port"], "3307");
        assert_eq!(p["database"], "queue");
        assert_eq!(p["ssl-mode"], "VERIFY_IDENTITY");
        assert_eq!(p["ssl-ca"], "/ca.pem");
        let p = parse_url("mariadb://[::1]:3306/q").unwrap();
        assert_eq!((p["host"].as_str(), p["port"].as_str()), ("::1", "3306"));
        let p = parse_url("mysql://root@127.0.0.1").unwrap();
        assert!(!p.contains_key("database"));
        assert!(parse_url("mysql://h/q?sslmode=REQUIRED").unwrap()["ssl-mode"] == "REQUIRED");
    }

    #[test]
    fn bad_urls_are_refused_without_their_password() {
        for url in [
            "mysql://u:SECRET@h/q?colour=red",
            "mysql://u:SECRET@h1,h2:x/q",
            "mysql://u:SECRET@h/a/b",
            "mysql://u:SECRET@h/q?%zz=1",
        ] {
            let err = parse_url(url).unwrap_err().to_string();
            assert!(!err.contains("SECRET"), "{url}: {err}");
        }
    }

    #[test]
    fn several_hosts_are_tried_in_order() {
        let params = parse_url("mysql://u@n1,n2:3307,[::1]/q").unwrap();
        assert_eq!(params["hosts"], "n1:3306,n2:3307,::1:3306");
        let info = ConnInfo {
            params,
            url: String::new(),
        };
        let each: Vec<(String, u16)> = info
            .each_host()
            .iter()
            .map(|h| (h.host().to_string(), h.port()))
            .collect();
        assert_eq!(
            each,
            [
                ("n1".to_string(), 3306),
                ("n2".to_string(), 3307),
                ("::1".to_string(), 3306)
            ]
        );
        assert_eq!(info.describe(), "n1:3306,n2:3307,::1:3306/q");
    }

    #[test]
    fn ssl_modes() {
        for (text, mode) in [
            ("DISABLED", SslMode::Disabled),
            ("preferred", SslMode::Preferred),
            ("REQUIRED", SslMode::Required),
            ("VERIFY_CA", SslMode::VerifyCa),
            ("verify-identity", SslMode::VerifyIdentity),
        ] {
            assert_eq!(SslMode::parse(text).unwrap(), mode);
        }
        assert!(SslMode::parse("verify-full").is_err());
    }
}
