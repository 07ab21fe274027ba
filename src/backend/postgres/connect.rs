//! Connecting to PostgreSQL the way `psql` does.
//!
//! The `postgres` crate neither reads the libpq environment nor knows
//! `verify-ca`, `verify-full` or `sslrootcert`, so qctl parses the URL or
//! key=value string itself, fills what is missing from `PG*` variables,
//! and builds the TLS connector (rustls, no system libraries) for the
//! sslmode asked for.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{CertificateError, DigitallySignedStruct, RootCertStore, SignatureScheme};

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

    /// Where the connection goes, for messages: `host:port/dbname`.
    pub fn describe(&self) -> String {
        format!(
            "{}:{}/{}",
            self.get("host").unwrap_or("localhost"),
            self.get("port").unwrap_or("5432"),
            self.get("dbname").or(self.get("user")).unwrap_or("")
        )
    }

    /// The `postgres` crate's config: everything but TLS.
    pub fn config(&self, connect_timeout: Duration) -> Result<postgres::Config> {
        let mut config = postgres::Config::new();
        let hosts = self
            .get("host")
            .map(str::to_string)
            .unwrap_or_else(default_host);
        for host in hosts.split(',') {
            config.host(host);
        }
        if let Some(addrs) = self.get("hostaddr") {
            for addr in addrs.split(',') {
                config.hostaddr(addr.parse().map_err(|_| {
                    QctlError::usage(format!("invalid hostaddr '{addr}': give an IP address"))
                })?);
            }
        }
        // One port for every host, or one per host (`port=5433,5434`).
        if let Some(ports) = self.get("port") {
            for port in ports.split(',') {
                let port: u16 = port
                    .trim()
                    .parse()
                    .map_err(|_| QctlError::usage(format!("invalid port '{port}'")))?;
                config.port(port);
            }
        }
        if let Some(attrs) = self.get("target_session_attrs") {
            use postgres::config::TargetSessionAttrs;
            config.target_session_attrs(match attrs {
                "any" => TargetSessionAttrs::Any,
                "read-write" => TargetSessionAttrs::ReadWrite,
                "read-only" => TargetSessionAttrs::ReadOnly,
                other => {
                    return Err(QctlError::usage(format!(
                        "invalid target_session_attrs '{other}': use any, read-write or read-only"
                    )));
                }
            });
        }
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
                let host = hosts.split(',').next().unwrap_or_default();
                let port = self
                    .get("port")
                    .and_then(|p| p.split(',').next())
                    .unwrap_or("5432");
                let dbname = self.get("dbname").unwrap_or(&user);
                if let Some(password) = pgpass_password(host, port, dbname, &user) {
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

/// Connects with the TLS the sslmode asks for.
pub fn connect(info: &ConnInfo, connect_timeout: Duration) -> Result<postgres::Client> {
    connect_cancellable(info, connect_timeout).map(|(client, _)| client)
}

/// Connects, and says how to cancel the connection's statements.
pub fn connect_cancellable(
    info: &ConnInfo,
    connect_timeout: Duration,
) -> Result<(postgres::Client, Canceller)> {
    let mut config = info.config(connect_timeout)?;
    let mode = info.sslmode()?;
    let tls_config = match mode {
        SslMode::Disable => None,
        SslMode::Allow | SslMode::Prefer | SslMode::Require => {
            // libpq: with a root certificate at hand, require verifies the
            // chain as verify-ca does.
            match info.get("sslrootcert") {
                Some(root) if mode == SslMode::Require => Some(verifying(root, false)?),
                _ => Some(encrypt_only()),
            }
        }
        SslMode::VerifyCa | SslMode::VerifyFull => {
            if let Some(root) = info.get("sslrootcert")
                && !std::path::Path::new(root).exists()
            {
                return Err(QctlError::usage(format!(
                    "sslrootcert {root} does not exist — give the path of the server's root \
                     certificate (PEM)"
                )));
            }
            let root = info
                .get("sslrootcert")
                .map(PathBuf::from)
                .or_else(|| {
                    std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".postgresql/root.crt"))
                })
                .filter(|p| p.exists())
                .ok_or_else(|| {
                    QctlError::usage(format!(
                        "sslmode={} needs the server's root certificate: pass sslrootcert=FILE \
                         (or put it in ~/.postgresql/root.crt)",
                        info.get("sslmode").unwrap_or_default()
                    ))
                })?;
            Some(verifying(
                &root.display().to_string(),
                mode == SslMode::VerifyFull,
            )?)
        }
    };
    config.ssl_mode(match (&tls_config, mode) {
        (None, _) => postgres::config::SslMode::Disable,
        (Some(_), SslMode::Allow | SslMode::Prefer) => postgres::config::SslMode::Prefer,
        (Some(_), _) => postgres::config::SslMode::Require,
    });
    let timeout = config.get_connect_timeout().copied().unwrap_or_default();
    let tls = tls_config.clone();
    let attempt = move || match tls {
        None => config.connect(postgres::NoTls),
        Some(tls) => config.connect(tokio_postgres_rustls::MakeRustlsConnect::new(tls)),
    };
    let client = crate::db::within(timeout, attempt)
        .ok_or_else(|| {
            anyhow::anyhow!(
                "cannot connect to PostgreSQL at {}: no answer within {} — the server took the \
                 connection but did not finish the handshake (--connect-timeout, or \
                 connect_timeout in the URL, sets how long to wait)",
                info.describe(),
                crate::duration::format_duration(timeout)
            )
        })?
        .map_err(|err| connect_error(err, info))?;
    let canceller = Canceller {
        token: client.cancel_token(),
        tls: tls_config,
    };
    Ok((client, canceller))
}

/// Explains a failed connection without ever quoting the password.
fn connect_error(err: postgres::Error, info: &ConnInfo) -> anyhow::Error {
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
    anyhow::anyhow!(
        "cannot connect to PostgreSQL at {}: {text}{hint}",
        info.describe()
    )
}

fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

fn client_config(verifier: Arc<dyn ServerCertVerifier>) -> rustls::ClientConfig {
    rustls::ClientConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .expect("ring supports the default protocol versions")
        .dangerous()
        .with_custom_certificate_verifier(verifier)
        .with_no_client_auth()
}

/// `prefer` and `require` without a root certificate: encrypted, not
/// authenticated, exactly as libpq.
fn encrypt_only() -> rustls::ClientConfig {
    client_config(Arc::new(AcceptAnyCertificate {
        provider: provider(),
    }))
}

/// `verify-ca` (chain only) and `verify-full` (chain and host name).
fn verifying(root: &str, check_host: bool) -> Result<rustls::ClientConfig> {
    let mut roots = RootCertStore::empty();
    let certs = CertificateDer::pem_file_iter(root)
        .with_context(|| format!("cannot read sslrootcert {root}"))?
        .collect::<Result<Vec<_>, _>>()
        .with_context(|| format!("sslrootcert {root} is not a PEM certificate file"))?;
    if certs.is_empty() {
        return Err(QctlError::usage(format!(
            "sslrootcert {root} holds no certificate"
        )));
    }
    for cert in certs {
        roots
            .add(cert)
            .with_context(|| format!("sslrootcert {root} holds an unusable certificate"))?;
    }
    let inner =
        rustls::client::WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider())
            .build()
            .context("cannot build the certificate verifier")?;
    Ok(client_config(Arc::new(ChainVerifier { inner, check_host })))
}

#[derive(Debug)]
struct ChainVerifier {
    inner: Arc<rustls::client::WebPkiServerVerifier>,
    check_host: bool,
}

impl ServerCertVerifier for ChainVerifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        match self
            .inner
            .verify_server_cert(end_entity, intermediates, server_name, ocsp, now)
        {
            // verify-ca trusts any name on a certificate the CA signed.
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) if !self.check_host => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.inner.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.inner.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.inner.supported_verify_schemes()
    }
}

#[derive(Debug)]
struct AcceptAnyCertificate {
    provider: Arc<rustls::crypto::CryptoProvider>,
}

impl ServerCertVerifier for AcceptAnyCertificate {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
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
