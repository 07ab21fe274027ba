//! The TLS connector an sslmode asks for: rustls, encrypting only
//! (`require`) or verifying the server's chain (`verify-ca`) and name
//! (`verify-full`) against `sslrootcert`.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context, Result};
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{CertificateError, DigitallySignedStruct, RootCertStore, SignatureScheme};

use super::{ConnInfo, SslMode};
use crate::error::QctlError;

/// The TLS the sslmode asks for (None: plain).
pub(super) fn tls_config(info: &ConnInfo) -> Result<Option<rustls::ClientConfig>> {
    let mode = info.sslmode()?;
    Ok(match mode {
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
    })
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
