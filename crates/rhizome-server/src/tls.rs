//! TLS for Bolt (`bolt+s://`) and HTTP (`https://`) with rustls: the
//! certificate chain and private key come from PEM files named in the
//! configuration (`tls_cert`, `tls_key`).

use rustls::ServerConfig as RustlsConfig;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use std::path::Path;
use std::sync::Arc;
use tokio_rustls::TlsAcceptor;

/// The TLS settings of both listeners.
#[derive(Clone)]
pub struct Tls {
    /// For Bolt (no ALPN).
    pub bolt: TlsAcceptor,
    /// For HTTP (ALPN `http/1.1`).
    pub http: TlsAcceptor,
}

/// Loads `cert` (a PEM chain, leaf first) and `key` (PEM, PKCS#8, PKCS#1
/// or SEC1); the error names the file and what is wrong with it.
pub fn load(cert: &Path, key: &Path) -> Result<Tls, String> {
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(cert)
        .map_err(|e| format!("cannot read the TLS certificate {}: {e}", cert.display()))?
        .collect::<Result<_, _>>()
        .map_err(|e| {
            format!(
                "the TLS certificate {} is not valid PEM: {e}",
                cert.display()
            )
        })?;
    if certs.is_empty() {
        return Err(format!(
            "the TLS certificate file {} holds no certificate (expected PEM `BEGIN CERTIFICATE`)",
            cert.display()
        ));
    }
    let key = PrivateKeyDer::from_pem_file(key).map_err(|e| {
        format!(
            "cannot read a private key from {} (expected PEM `BEGIN PRIVATE KEY`): {e}",
            key.display()
        )
    })?;
    let config =
        RustlsConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
            .with_safe_default_protocol_versions()
            .map_err(|e| format!("TLS setup failed: {e}"))?
            .with_no_client_auth()
            .with_single_cert(certs, key)
            .map_err(|e| {
                format!(
                    "the TLS certificate {} and its key do not fit together: {e}",
                    cert.display()
                )
            })?;
    let mut http = config.clone();
    http.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Tls {
        bolt: TlsAcceptor::from(Arc::new(config)),
        http: TlsAcceptor::from(Arc::new(http)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_or_wrong_files_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let cert = dir.path().join("cert.pem");
        let key = dir.path().join("key.pem");
        let err = load(&cert, &key).err().unwrap();
        assert!(err.contains("cert.pem"), "{err}");
        std::fs::write(&cert, "not a certificate").unwrap();
        let err = load(&cert, &key).err().unwrap();
        assert!(err.contains("holds no certificate"), "{err}");
        let generated = rcgen::generate_simple_self_signed(vec!["localhost".into()]).unwrap();
        std::fs::write(&cert, generated.cert.pem()).unwrap();
        let err = load(&cert, &key).err().unwrap();
        assert!(err.contains("key.pem"), "{err}");
        std::fs::write(&key, generated.signing_key.serialize_pem()).unwrap();
        assert!(load(&cert, &key).is_ok());
        let other = rcgen::generate_simple_self_signed(vec!["localhost".into()]).unwrap();
        std::fs::write(&key, other.signing_key.serialize_pem()).unwrap();
        let err = load(&cert, &key).err().unwrap();
        assert!(err.contains("do not fit"), "{err}");
    }
}
