//! Ed25519 signing keys, key ids, ETags and agent tokens, computed exactly as GrantForge computes them.

use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use base64::Engine as _;
use ring::digest::{digest, SHA256};
use ring::rand::{SecureRandom, SystemRandom};
use ring::signature::{Ed25519KeyPair, KeyPair};

/// The fixed DER prefix of an Ed25519 X.509 SubjectPublicKeyInfo; the 32-byte key follows it.
pub const ED25519_SPKI_PREFIX: [u8; 12] = [
    0x30, 0x2a, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x03, 0x21, 0x00,
];

/// Lower-case hex of some bytes.
pub(crate) fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for &b in bytes {
        out.push(char::from(DIGITS[usize::from(b >> 4)]));
        out.push(char::from(DIGITS[usize::from(b & 15)]));
    }
    out
}

/// Lower-case hex SHA-256 of some bytes.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex(digest(&SHA256, bytes).as_ref())
}

/// The key id of a public key: the first 16 lower-case hex digits of SHA-256 over its SPKI DER.
pub fn key_id_of_spki(spki_der: &[u8]) -> String {
    let mut id = sha256_hex(spki_der);
    id.truncate(16);
    id
}

/// The ETag of a snapshot body: `"` + the first 32 lower-case hex digits of SHA-256(body) + `"`.
pub fn etag_of(body: &[u8]) -> String {
    let digest = sha256_hex(body);
    format!("\"{}\"", &digest[..32])
}

/// An Ed25519 key pair with its SPKI encoding, Base64 public key and key id.
pub struct SigningKey {
    pair: Ed25519KeyPair,
    spki: Vec<u8>,
    public_b64: String,
    key_id: String,
}

impl std::fmt::Debug for SigningKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SigningKey")
            .field("key_id", &self.key_id)
            .finish_non_exhaustive()
    }
}

impl SigningKey {
    /// Generates a key pair; also returns its PKCS#8 document (to store it).
    pub(crate) fn generate(rng: &SystemRandom) -> Result<(Self, Vec<u8>), String> {
        let pkcs8 = Ed25519KeyPair::generate_pkcs8(rng)
            .map_err(|_| "cannot generate an Ed25519 key pair".to_string())?;
        let der = pkcs8.as_ref().to_vec();
        Ok((Self::from_pkcs8(&der)?, der))
    }

    /// Loads a key pair from a PKCS#8 document (v1 or v2).
    pub(crate) fn from_pkcs8(der: &[u8]) -> Result<Self, String> {
        let pair = Ed25519KeyPair::from_pkcs8_maybe_unchecked(der)
            .map_err(|e| format!("not an Ed25519 PKCS#8 private key ({e})"))?;
        let mut spki = ED25519_SPKI_PREFIX.to_vec();
        spki.extend_from_slice(pair.public_key().as_ref());
        let public_b64 = STANDARD.encode(&spki);
        let key_id = key_id_of_spki(&spki);
        Ok(Self {
            pair,
            spki,
            public_b64,
            key_id,
        })
    }

    /// The key id (16 hex digits).
    pub fn key_id(&self) -> &str {
        &self.key_id
    }

    /// Base64 of the X.509 SubjectPublicKeyInfo DER, as `GET /api/v1/agent/signing-key` gives it.
    pub fn public_key_base64(&self) -> &str {
        &self.public_b64
    }

    /// The 44-byte SubjectPublicKeyInfo DER.
    pub fn spki_der(&self) -> &[u8] {
        &self.spki
    }

    /// The Base64 Ed25519 signature of `message`.
    pub(crate) fn sign_base64(&self, message: &[u8]) -> String {
        STANDARD.encode(self.pair.sign(message).as_ref())
    }
}

/// A new agent token: `gfa_` + 43 base64url characters of 32 random bytes.
pub(crate) fn new_token(rng: &SystemRandom) -> Result<String, String> {
    let mut bytes = [0u8; 32];
    rng.fill(&mut bytes)
        .map_err(|_| "the system random generator failed".to_string())?;
    Ok(format!("gfa_{}", URL_SAFE_NO_PAD.encode(bytes)))
}

/// Whether the real server would look a token up at all: `gfa_` prefix, at most 128 UTF-16 units.
pub(crate) fn token_shape_ok(token: &str) -> bool {
    token.starts_with("gfa_")
        && token.encode_utf16().count() <= 128
        && token.bytes().all(|b| (0x21..=0x7e).contains(&b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_material() {
        let rng = SystemRandom::new();
        let (key, der) = SigningKey::generate(&rng).unwrap();
        assert_eq!(key.spki_der().len(), 44);
        assert_eq!(key.key_id().len(), 16);
        let again = SigningKey::from_pkcs8(&der).unwrap();
        assert_eq!(again.public_key_base64(), key.public_key_base64());
        let token = new_token(&rng).unwrap();
        assert_eq!(token.len(), 47);
        assert!(token_shape_ok(&token));
        assert_eq!(etag_of(b"").len(), 34);
        assert_eq!(etag_of(b""), "\"e3b0c44298fc1c149afbf4c8996fb924\"");
    }
}
