//! HTTPS for tests ([`Tls`]): the server presents a certificate made at start by its own test CA,
//! valid for `localhost` and `127.0.0.1`, or on purpose an expired one or one for another host.
//!
//! The CA's key is kept in the directory (`ca-key.pem`) and its certificate written once
//! (`ca.pem`, the file an agent trusts through `grantforge.ssl.ca.file`): a restarted server signs
//! with the same key under the same name, so what an agent trusts stays trusted.

use std::fs;
use std::io::Write;
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rcgen::{
    date_time_ymd, BasicConstraints, Certificate, CertificateParams, DnType, IsCa, KeyPair,
};
use rustls::pki_types::{PrivateKeyDer, PrivatePkcs8KeyDer};
use rustls::{ServerConfig, ServerConnection, StreamOwned};

use crate::http::{self, Connection};
use crate::store::write_atomic;
use crate::Error;

/// The CA certificate an agent trusts, in the TLS directory.
pub const CA_FILE: &str = "ca.pem";
const CA_KEY_FILE: &str = "ca-key.pem";
const CA_NAME: &str = "GrantForge test server CA (tests only)";

/// Serve HTTPS with certificates made in `dir`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tls {
    /// Holds the CA (`ca.pem`, `ca-key.pem`); created if needed.
    pub dir: PathBuf,
    /// The certificate the server presents.
    pub presents: Presented,
}

/// The certificate the server presents.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Presented {
    /// For `localhost` and `127.0.0.1`, valid now.
    Valid,
    /// For the same names, expired in 2021.
    Expired,
    /// Valid now, for `grantforge.example.com` only.
    OtherHost,
}

impl Presented {
    /// The command line's names: `valid`, `expired`, `other-host`.
    pub fn parse(name: &str) -> Option<Presented> {
        match name {
            "valid" => Some(Presented::Valid),
            "expired" => Some(Presented::Expired),
            "other-host" => Some(Presented::OtherHost),
            _ => None,
        }
    }
}

/// The server's TLS settings: its certificate (signed by the CA of `tls.dir`, made if missing).
pub(crate) fn server_config(tls: &Tls) -> Result<Arc<ServerConfig>, Error> {
    fs::create_dir_all(&tls.dir)
        .map_err(|e| format!("cannot create TLS directory {}: {e}", tls.dir.display()))?;
    let (ca, ca_key) = ca(&tls.dir)?;
    let names: Vec<String> = match tls.presents {
        Presented::OtherHost => vec!["grantforge.example.com".into()],
        Presented::Valid | Presented::Expired => vec!["localhost".into(), "127.0.0.1".into()],
    };
    let mut params = CertificateParams::new(names).map_err(tls_error)?;
    params
        .distinguished_name
        .push(DnType::CommonName, "grantforge-testserver");
    if tls.presents == Presented::Expired {
        params.not_before = date_time_ymd(2020, 1, 1);
        params.not_after = date_time_ymd(2021, 1, 1);
    }
    let key = KeyPair::generate().map_err(tls_error)?;
    let certificate = params.signed_by(&key, &ca, &ca_key).map_err(tls_error)?;
    let chain = vec![certificate.der().clone(), ca.der().clone()];
    let private = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der()));
    let config =
        ServerConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
            .with_safe_default_protocol_versions()
            .map_err(tls_error)?
            .with_no_client_auth()
            .with_single_cert(chain, private)
            .map_err(tls_error)?;
    Ok(Arc::new(config))
}

/// The CA: its key from `dir` (made and written with its certificate the first time).
fn ca(dir: &Path) -> Result<(Certificate, KeyPair), Error> {
    let key_path = dir.join(CA_KEY_FILE);
    let key = match fs::read_to_string(&key_path) {
        Ok(pem) => KeyPair::from_pem(&pem).map_err(tls_error)?,
        Err(_) => {
            let key = KeyPair::generate().map_err(tls_error)?;
            write_atomic(&key_path, key.serialize_pem().as_bytes(), true)?;
            key
        }
    };
    let mut params = CertificateParams::new(Vec::<String>::new()).map_err(tls_error)?;
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.distinguished_name.push(DnType::CommonName, CA_NAME);
    params.not_before = date_time_ymd(2024, 1, 1);
    params.not_after = date_time_ymd(2100, 1, 1);
    let certificate = params.self_signed(&key).map_err(tls_error)?;
    let ca_path = dir.join(CA_FILE);
    if !ca_path.exists() {
        write_atomic(&ca_path, certificate.pem().as_bytes(), false)?;
    }
    Ok((certificate, key))
}

fn tls_error(error: impl std::fmt::Display) -> Error {
    Error(format!("cannot make the test TLS certificates: {error}"))
}

/// A TLS connection; the handshake runs on the first read, so a client that refuses the
/// certificate ends it before any request is read.
pub(crate) fn accept(config: &Arc<ServerConfig>, tcp: TcpStream) -> Option<TlsConnection> {
    let connection = ServerConnection::new(Arc::clone(config)).ok()?;
    Some(StreamOwned::new(connection, tcp))
}

pub(crate) type TlsConnection = StreamOwned<ServerConnection, TcpStream>;

impl Connection for TlsConnection {
    fn tcp(&self) -> &TcpStream {
        &self.sock
    }

    fn finish(&mut self) {
        self.conn.send_close_notify();
        let _ = self.flush();
        http::close(&self.sock);
    }
}
