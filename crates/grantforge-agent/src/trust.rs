//! Trust in snapshots: GrantForge's Ed25519 signing key and signatures over the exact body bytes.
//!
//! The server signs every snapshot with one platform key (pure Ed25519, RFC 8032) and names it by
//! a key id: the first 16 lower-case hex digits of SHA-256 over the key's X.509
//! SubjectPublicKeyInfo DER. Bytes are verified before anything parses them.

use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD};
use base64::Engine;
use ring::digest::{digest, SHA256};
use ring::signature::{UnparsedPublicKey, ED25519};

/// The fixed DER prefix of an Ed25519 SubjectPublicKeyInfo (OID 1.3.101.112), before the 32-byte key.
const ED25519_SPKI_PREFIX: [u8; 12] = [
    0x30, 0x2a, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x03, 0x21, 0x00,
];

/// A server's Ed25519 public key, as GrantForge serves and names it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SigningKey {
    spki_der: Vec<u8>,
    key_id: String,
}

impl SigningKey {
    /// From the Base64 SPKI the signing-key endpoint returns (whitespace around it tolerated,
    /// padding optional, as the Java agent core reads it).
    pub fn from_base64(encoded: &str) -> Result<SigningKey, String> {
        let trimmed = encoded.trim();
        let der = STANDARD
            .decode(trimmed)
            .or_else(|_| STANDARD_NO_PAD.decode(trimmed.trim_end_matches('=')))
            .map_err(|_| "not Base64".to_string())?;
        if der.len() != ED25519_SPKI_PREFIX.len() + 32
            || der[..ED25519_SPKI_PREFIX.len()] != ED25519_SPKI_PREFIX
        {
            return Err(
                "not an Ed25519 public key (X.509 SubjectPublicKeyInfo, 44 bytes)".to_string(),
            );
        }
        let key_id = hex(&digest(&SHA256, &der).as_ref()[..8]);
        Ok(SigningKey {
            spki_der: der,
            key_id,
        })
    }

    /// The key id GrantForge puts in `X-GrantForge-Signing-Key`.
    pub fn key_id(&self) -> &str {
        &self.key_id
    }

    /// The Base64 SPKI, as the server serves it (for pinning to disk).
    pub fn to_base64(&self) -> String {
        STANDARD.encode(&self.spki_der)
    }

    /// Whether `signature_b64` is this key's Ed25519 signature over exactly `body`.
    pub fn verifies(&self, body: &[u8], signature_b64: &str) -> bool {
        let Ok(signature) = STANDARD.decode(signature_b64.trim()) else {
            return false;
        };
        let public = &self.spki_der[ED25519_SPKI_PREFIX.len()..];
        UnparsedPublicKey::new(&ED25519, public)
            .verify(body, &signature)
            .is_ok()
    }
}

/// The ETag GrantForge gives a body: `"` + the first 32 hex digits of SHA-256 + `"`.
pub fn etag_of(body: &[u8]) -> String {
    format!("\"{}\"", &hex(digest(&SHA256, body).as_ref())[..32])
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use ring::rand::SystemRandom;
    use ring::signature::{Ed25519KeyPair, KeyPair};

    /// A key pair as the server has one: (pair, Base64 SPKI).
    pub(crate) fn server_key() -> (Ed25519KeyPair, String) {
        let pkcs8 = Ed25519KeyPair::generate_pkcs8(&SystemRandom::new()).unwrap();
        let pair = Ed25519KeyPair::from_pkcs8(pkcs8.as_ref()).unwrap();
        let mut spki = ED25519_SPKI_PREFIX.to_vec();
        spki.extend_from_slice(pair.public_key().as_ref());
        (pair, STANDARD.encode(spki))
    }

    pub(crate) fn sign(pair: &Ed25519KeyPair, body: &[u8]) -> String {
        STANDARD.encode(pair.sign(body).as_ref())
    }

    #[test]
    fn verifies_the_exact_bytes_under_the_right_key_only() {
        let (pair, public) = server_key();
        let key = SigningKey::from_base64(&format!("  {public}\n")).unwrap();
        let body = br#"{"format":1}"#;
        let signature = sign(&pair, body);
        assert!(key.verifies(body, &signature));
        assert!(
            !key.verifies(br#"{"format":1} "#, &signature),
            "one more byte"
        );
        assert!(!key.verifies(body, "not base64!"));
        assert!(!key.verifies(body, &STANDARD.encode([0u8; 10])));
        let (_, other_public) = server_key();
        assert!(!SigningKey::from_base64(&other_public)
            .unwrap()
            .verifies(body, &signature));
    }

    #[test]
    fn key_ids_are_sixteen_hex_digits_of_the_spki_digest() {
        let (_, public) = server_key();
        let key = SigningKey::from_base64(&public).unwrap();
        assert_eq!(key.key_id().len(), 16);
        assert!(key
            .key_id()
            .chars()
            .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase()));
        assert_eq!(SigningKey::from_base64(&key.to_base64()).unwrap(), key);
    }

    #[test]
    fn rejects_keys_that_are_not_ed25519() {
        assert!(SigningKey::from_base64("garbage!!").is_err());
        assert!(SigningKey::from_base64(&STANDARD.encode([1u8; 44])).is_err());
        assert!(SigningKey::from_base64(&STANDARD.encode([0u8; 32])).is_err());
    }

    #[test]
    fn etags_are_quoted_sha256_prefixes() {
        let etag = etag_of(b"abc");
        assert_eq!(etag, "\"ba7816bf8f01cfea414140de5dae2223\"");
    }
}
