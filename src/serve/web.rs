//! `--web-config FILE`: TLS and basic authentication in the format the
//! Prometheus exporters share (exporter-toolkit's web configuration), so
//! one file serves node_exporter and qctl alike:
//!
//! ```yaml
//! tls_server_config:
//!   cert_file: server.crt
//!   key_file: server.key
//! basic_auth_users:
//!   prometheus: $2y$10$...   # a bcrypt hash, as htpasswd -B makes it
//! ```
//!
//! Paths are read relative to the file's folder, as exporter-toolkit
//! reads them. Keys qctl does not implement (client certificates, TLS
//! versions and ciphers, HTTP headers) are refused by name rather than
//! ignored: a setting that protects the endpoint must not pass silently.
//! No password or hash is ever printed.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use anyhow::{Context, Result};
use base64::Engine;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use serde::Deserialize;

use crate::error::QctlError;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    tls_server_config: Option<TlsFile>,
    #[serde(default)]
    basic_auth_users: BTreeMap<String, String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TlsFile {
    cert_file: PathBuf,
    key_file: PathBuf,
}

/// Successful credentials remembered, so a scrape every few seconds does
/// not pay a bcrypt verification each time (exporter-toolkit caches them
/// too); failures are never remembered.
const REMEMBERED: usize = 16;

/// TLS and the users allowed in; `WebConfig::default()` is plain HTTP
/// open to all.
#[derive(Default)]
pub struct WebConfig {
    pub tls: Option<Arc<rustls::ServerConfig>>,
    /// User name to bcrypt hash.
    users: BTreeMap<String, String>,
    /// `Authorization` header values that passed.
    passed: Mutex<Vec<String>>,
}

impl std::fmt::Debug for WebConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebConfig")
            .field("tls", &self.tls.is_some())
            .field("users", &self.users.keys().collect::<Vec<_>>())
            .finish()
    }
}

impl WebConfig {
    /// Reads and checks the file: certificate and key loaded, every hash a
    /// bcrypt hash.
    pub fn load(path: &Path) -> Result<WebConfig> {
        let text = std::fs::read_to_string(path).map_err(|err| {
            QctlError::usage(format!(
                "cannot read --web-config {}: {err}",
                path.display()
            ))
        })?;
        let file: File = serde_norway::from_str(&text).map_err(|err| {
            QctlError::usage(format!(
                "invalid --web-config {}: {err} (qctl reads tls_server_config's cert_file and \
                 key_file, and basic_auth_users)",
                path.display()
            ))
        })?;
        let folder = path.parent().unwrap_or(Path::new("."));
        for (user, hash) in &file.basic_auth_users {
            let known = ["$2a$", "$2b$", "$2y$"]
                .iter()
                .any(|prefix| hash.starts_with(prefix));
            if !known || hash.len() != 60 {
                return Err(QctlError::usage(format!(
                    "--web-config {}: the password of user {user:?} is not a bcrypt hash; make \
                     one with `htpasswd -nBC 10 {user}` and give the part after the colon",
                    path.display()
                )));
            }
        }
        let tls = file
            .tls_server_config
            .map(|tls| server_config(&folder.join(&tls.cert_file), &folder.join(&tls.key_file)))
            .transpose()
            .with_context(|| format!("--web-config {}", path.display()))?;
        Ok(WebConfig {
            tls: tls.map(Arc::new),
            users: file.basic_auth_users,
            passed: Mutex::new(Vec::new()),
        })
    }

    /// What the log says of it at the start.
    pub fn describe(&self) -> String {
        let auth = match self.users.len() {
            0 => String::new(),
            1 => ", basic auth for 1 user".to_string(),
            n => format!(", basic auth for {n} users"),
        };
        format!(
            "{}{auth}",
            if self.tls.is_some() {
                "TLS"
            } else {
                "plain HTTP"
            }
        )
    }

    pub fn scheme(&self) -> &'static str {
        if self.tls.is_some() { "https" } else { "http" }
    }

    /// Whether a request with this `Authorization` header may be served.
    pub fn authorized(&self, header: Option<&str>) -> bool {
        if self.users.is_empty() {
            return true;
        }
        let Some(header) = header else {
            return false;
        };
        let mut passed = self.passed.lock().unwrap_or_else(|e| e.into_inner());
        if passed.iter().any(|p| p == header) {
            return true;
        }
        drop(passed);
        let Some((user, password)) = credentials(header) else {
            return false;
        };
        let ok = match self.users.get(&user) {
            Some(hash) => bcrypt::verify(&password, hash).unwrap_or(false),
            None => {
                // As long as a known user's check: the answer's time does
                // not tell which users exist.
                if let Some(hash) = self.users.values().next() {
                    let _ = bcrypt::verify(&password, hash);
                }
                false
            }
        };
        if ok {
            passed = self.passed.lock().unwrap_or_else(|e| e.into_inner());
            if passed.len() >= REMEMBERED {
                passed.remove(0);
            }
            passed.push(header.to_string());
        }
        ok
    }
}

/// `Basic base64(user:password)`.
fn credentials(header: &str) -> Option<(String, String)> {
    let (scheme, encoded) = header.split_once(' ')?;
    if !scheme.eq_ignore_ascii_case("basic") {
        return None;
    }
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(encoded.trim())
        .ok()?;
    let text = String::from_utf8(decoded).ok()?;
    let (user, password) = text.split_once(':')?;
    Some((user.to_string(), password.to_string()))
}

fn server_config(cert: &Path, key: &Path) -> Result<rustls::ServerConfig> {
    let certs = CertificateDer::pem_file_iter(cert)
        .with_context(|| format!("cannot read cert_file {}", cert.display()))?
        .collect::<Result<Vec<_>, _>>()
        .with_context(|| format!("cert_file {} is not a PEM certificate file", cert.display()))?;
    if certs.is_empty() {
        return Err(QctlError::usage(format!(
            "cert_file {} holds no certificate",
            cert.display()
        )));
    }
    let key = PrivateKeyDer::from_pem_file(key)
        .with_context(|| format!("key_file {} holds no PEM private key", key.display()))?;
    rustls::ServerConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
        .with_safe_default_protocol_versions()
        .context("TLS versions")?
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .context("the certificate and key do not make a TLS server configuration")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn basic_credentials_are_decoded() {
        assert_eq!(
            credentials("Basic dXNlcjpwYTpzcw=="),
            Some(("user".into(), "pa:ss".into()))
        );
        assert_eq!(credentials("Bearer dXNlcjpwYXNz"), None);
        assert_eq!(credentials("Basic !!!"), None);
    }
}
