//! The client side of Bolt over TLS, as the Neo4j drivers define the URI
//! schemes: `bolt+s://` / `neo4j+s://` verify the server's certificate
//! (against the system's trusted roots plus any CA file given), and
//! `bolt+ssc://` / `neo4j+ssc://` encrypt but accept any certificate
//! (a self-signed one, say) — the connection is private but not
//! authenticated.

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::crypto::{verify_tls12_signature, verify_tls13_signature, CryptoProvider};
use rustls::{ClientConfig, ClientConnection, DigitallySignedStruct, RootCertStore, StreamOwned};
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, ServerName, UnixTime};
use std::io;
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// How the server's certificate is checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TlsTrust {
    /// Verified against the system's roots and, if given, the
    /// certificates of a PEM file (a private CA, or a self-signed
    /// certificate trusted as it is).
    Verified {
        /// Extra trusted certificates.
        ca_file: Option<PathBuf>,
    },
    /// Any certificate is accepted (`+ssc`): encrypted, not authenticated.
    AnyCertificate,
}

/// A TLS stream over TCP, the handshake done.
pub type TlsStream = StreamOwned<ClientConnection, TcpStream>;

/// The host name of `address` (`host:port`, `[v6]:port`) as TLS checks it.
pub fn host_of(address: &str) -> &str {
    let host = address.rsplit_once(':').map_or(address, |(host, _)| host);
    host.trim_start_matches('[').trim_end_matches(']')
}

/// Opens a TLS session over `tcp` to the server at `address` and completes
/// the handshake, so a refused certificate is reported here with what to
/// do about it.
/// Gives up at `deadline` (the socket's read timeout lets it look).
pub fn handshake(
    tcp: TcpStream,
    address: &str,
    trust: &TlsTrust,
    deadline: std::time::Instant,
) -> io::Result<TlsStream> {
    let config = client_config(trust)?;
    let host = host_of(address);
    let name = ServerName::try_from(host.to_string()).map_err(|e| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("`{host}` is not a host name TLS can verify: {e}"),
        )
    })?;
    let connection = ClientConnection::new(Arc::new(config), name)
        .map_err(|e| io::Error::other(format!("TLS setup failed: {e}")))?;
    let mut stream = StreamOwned::new(connection, tcp);
    while stream.conn.is_handshaking() {
        match stream.conn.complete_io(&mut stream.sock) {
            Ok(_) => {}
            Err(e) if is_poll_tick(&e) => {
                if std::time::Instant::now() >= deadline {
                    return Err(super::login_timed_out("completing the TLS handshake"));
                }
            }
            Err(e) => return Err(explained(e, address, trust)),
        }
    }
    Ok(stream)
}

/// True for the errors a socket with a read timeout gives when nothing came.
pub fn is_poll_tick(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut | io::ErrorKind::Interrupted
    )
}

/// A handshake error with what the user can do about it.
fn explained(e: io::Error, address: &str, trust: &TlsTrust) -> io::Error {
    let refused_certificate = e
        .get_ref()
        .and_then(|inner| inner.downcast_ref::<rustls::Error>())
        .is_some_and(|r| matches!(r, rustls::Error::InvalidCertificate(_)));
    if !refused_certificate {
        return io::Error::new(e.kind(), format!("TLS handshake failed: {e}"));
    }
    let hint = match trust {
        TlsTrust::Verified { ca_file: None } => {
            "pass the CA that signed it with --tls-ca FILE (or $RHIZOME_TLS_CA), \
             or connect with bolt+ssc:// to encrypt without verifying"
        }
        _ => "check that --tls-ca names the CA that signed it and that the host name matches",
    };
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("the certificate of {address} is not trusted ({e}): {hint}"),
    )
}

fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

fn client_config(trust: &TlsTrust) -> io::Result<ClientConfig> {
    let builder = ClientConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .map_err(|e| io::Error::other(format!("TLS setup failed: {e}")))?;
    let config = match trust {
        TlsTrust::Verified { ca_file } => {
            let mut roots = RootCertStore::empty();
            // Unreadable system certificates are skipped: a CA file may
            // still make the server trusted.
            let (system, _) =
                roots.add_parsable_certificates(rustls_native_certs::load_native_certs().certs);
            let pinned = match ca_file {
                Some(path) => read_certificates(path)?,
                None => Vec::new(),
            };
            for cert in &pinned {
                roots.add(cert.clone()).map_err(|e| {
                    io::Error::new(
                        io::ErrorKind::InvalidData,
                        format!("a certificate in the CA file cannot be trusted: {e}"),
                    )
                })?;
            }
            if system + pinned.len() == 0 {
                return Err(io::Error::new(
                    io::ErrorKind::NotFound,
                    "no trusted certificates: the system has none (set SSL_CERT_FILE) \
                     and no --tls-ca was given",
                ));
            }
            let webpki = WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider())
                .build()
                .map_err(|e| io::Error::other(format!("TLS setup failed: {e}")))?;
            builder
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(PinnedOrVerified { webpki, pinned }))
                .with_no_client_auth()
        }
        TlsTrust::AnyCertificate => builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(AnyCertificate(provider())))
            .with_no_client_auth(),
    };
    Ok(config)
}

/// The certificates of a PEM file; the error names the file.
fn read_certificates(path: &Path) -> io::Result<Vec<CertificateDer<'static>>> {
    let bad = |why: String| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("cannot read the CA file {}: {why}", path.display()),
        )
    };
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(path)
        .map_err(|e| bad(e.to_string()))?
        .collect::<Result<_, _>>()
        .map_err(|e| bad(e.to_string()))?;
    if certs.is_empty() {
        return Err(bad(
            "it holds no certificate (expected PEM `BEGIN CERTIFICATE`)".into(),
        ));
    }
    Ok(certs)
}

/// The usual verification (chain to a trusted root, host name, validity),
/// except that a server certificate given itself in the CA file is
/// accepted as it is: a self-signed certificate made with `openssl req
/// -x509` is marked as a CA, which the usual rules refuse as a server's
/// own, yet the user named exactly that certificate as trusted. The
/// handshake signatures are checked either way.
#[derive(Debug)]
struct PinnedOrVerified {
    webpki: Arc<WebPkiServerVerifier>,
    pinned: Vec<CertificateDer<'static>>,
}

impl ServerCertVerifier for PinnedOrVerified {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        self.webpki
            .verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
            .or_else(|refused| {
                if self
                    .pinned
                    .iter()
                    .any(|cert| cert.as_ref() == end_entity.as_ref())
                {
                    Ok(ServerCertVerified::assertion())
                } else {
                    Err(refused)
                }
            })
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.webpki.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.webpki.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.webpki.supported_verify_schemes()
    }
}

/// Accepts any certificate, but still checks that the server holds its
/// key (the handshake signatures), as the drivers' `+ssc` does.
#[derive(Debug)]
struct AnyCertificate(Arc<CryptoProvider>);

impl ServerCertVerifier for AnyCertificate {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
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
        verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_are_taken_from_addresses() {
        assert_eq!(host_of("db.example:7687"), "db.example");
        assert_eq!(host_of("[::1]:7687"), "::1");
        assert_eq!(host_of("127.0.0.1:1"), "127.0.0.1");
    }

    #[test]
    fn a_missing_or_empty_ca_file_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ca.pem");
        let trust = TlsTrust::Verified {
            ca_file: Some(path.clone()),
        };
        let err = client_config(&trust).err().unwrap();
        assert!(err.to_string().contains("ca.pem"), "{err}");
        std::fs::write(&path, "no pem here").unwrap();
        let err = client_config(&trust).err().unwrap();
        assert!(err.to_string().contains("no certificate"), "{err}");
    }
}
