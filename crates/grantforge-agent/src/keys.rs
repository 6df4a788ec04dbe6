//! Allocation-free keys for the request path.
//!
//! The decision cache and the audit fold tables are asked on every action of every request. Their
//! keys are packed into a reused byte buffer (no allocation once warm) and hashed with a small
//! multiplicative hash; an owned copy is made only when an entry is inserted.

use std::cell::RefCell;
use std::hash::{BuildHasherDefault, Hasher};
use std::net::IpAddr;

/// A folded-multiply hash (the construction of wyhash and foldhash) over 16 bytes a step: a packed
/// key is 30 to 80 bytes, and FxHash's one multiplication per 8 bytes, each waiting for the last,
/// was the largest single cost of a cache hit in the profile (docs/benchmarks.md). Keys here are not
/// attacker-chosen in a way that matters: a collision only costs a longer probe in a bounded table,
/// and entries are compared byte for byte.
#[derive(Default, Clone, Copy)]
pub struct KeyHasher {
    hash: u64,
}

const SEEDS: [u64; 3] = [0x243f_6a88_85a3_08d3, 0x1319_8a2e_0370_7344, 0xa409_3822_299f_31d0];

#[inline]
fn folded_multiply(a: u64, b: u64) -> u64 {
    let product = u128::from(a) * u128::from(b);
    (product as u64) ^ ((product >> 64) as u64)
}

#[inline]
fn word(bytes: &[u8]) -> u64 {
    u64::from_le_bytes(bytes.try_into().expect("8 bytes"))
}

/// The last 0 to 15 bytes as two words, read in place (overlapping reads, as wyhash does): copying
/// them into a zeroed block first stalled the loads that followed (store forwarding), the largest
/// cost of the hash. The length, hashed in, tells the overlaps apart.
#[inline]
fn tail(rest: &[u8]) -> (u64, u64) {
    let n = rest.len();
    let u32_at = |at: usize| u64::from(u32::from_le_bytes(rest[at..at + 4].try_into().expect("4 bytes")));
    match n {
        8.. => (word(&rest[..8]), word(&rest[n - 8..])),
        4.. => (u32_at(0), u32_at(n - 4)),
        1.. => (u64::from(rest[0]) | u64::from(rest[n / 2]) << 8 | u64::from(rest[n - 1]) << 16, 0),
        0 => (0, 0),
    }
}

impl Hasher for KeyHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut hash = self.hash ^ SEEDS[0] ^ bytes.len() as u64;
        let mut chunks = bytes.chunks_exact(16);
        for chunk in &mut chunks {
            hash = folded_multiply(word(&chunk[..8]) ^ SEEDS[1], word(&chunk[8..]) ^ hash);
        }
        let (a, b) = tail(chunks.remainder());
        hash = folded_multiply(a ^ SEEDS[1], b ^ hash);
        self.hash = folded_multiply(hash, SEEDS[2]);
    }

    #[inline]
    fn write_u64(&mut self, n: u64) {
        self.hash = folded_multiply(self.hash ^ n, SEEDS[2]);
    }

    #[inline]
    fn write_usize(&mut self, n: usize) {
        self.write_u64(n as u64);
    }

    #[inline]
    fn finish(&self) -> u64 {
        self.hash
    }
}

pub type KeyBuildHasher = BuildHasherDefault<KeyHasher>;

/// The hash of a packed key.
pub fn hash_of(bytes: &[u8]) -> u64 {
    let mut hasher = KeyHasher::default();
    hasher.write(bytes);
    hasher.finish()
}

/// Appends parts to a packed key; each part is length-prefixed, so different parts never run
/// into each other.
pub struct KeyWriter<'a>(pub &'a mut Vec<u8>);

impl KeyWriter<'_> {
    pub fn str(&mut self, s: &str) -> &mut Self {
        self.0.extend_from_slice(&(s.len() as u32).to_le_bytes());
        self.0.extend_from_slice(s.as_bytes());
        self
    }

    pub fn byte(&mut self, b: u8) -> &mut Self {
        self.0.push(b);
        self
    }

    pub fn i64(&mut self, n: i64) -> &mut Self {
        self.0.extend_from_slice(&n.to_le_bytes());
        self
    }

    pub fn address(&mut self, address: Option<IpAddr>) -> &mut Self {
        match address {
            None => self.byte(0),
            Some(IpAddr::V4(v4)) => {
                self.byte(4);
                self.0.extend_from_slice(&v4.octets());
                self
            }
            Some(IpAddr::V6(v6)) => {
                self.byte(16);
                self.0.extend_from_slice(&v6.octets());
                self
            }
        }
    }
}

thread_local! {
    static KEY: RefCell<Vec<u8>> = RefCell::new(Vec::with_capacity(256));
}

/// Runs `f` with this thread's (cleared) key buffer.
pub fn with_key_buffer<R>(f: impl FnOnce(&mut Vec<u8>) -> R) -> R {
    KEY.with(|key| match key.try_borrow_mut() {
        Ok(mut buffer) => {
            buffer.clear();
            f(&mut buffer)
        }
        // Re-entered on this thread (a closure asking again): use a fresh buffer.
        Err(_) => f(&mut Vec::new()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_are_delimited_and_hashes_differ() {
        let mut a = Vec::new();
        KeyWriter(&mut a).str("ab").str("c");
        let mut b = Vec::new();
        KeyWriter(&mut b).str("a").str("bc");
        assert_ne!(a, b);
        assert_ne!(hash_of(&a), hash_of(&b));
        assert_eq!(hash_of(&a), hash_of(&a.clone()));
        // Every byte counts, in every position of a 16-byte step and of the tail.
        let base: Vec<u8> = (0..40).collect();
        let hashes: std::collections::HashSet<u64> = (0..base.len())
            .map(|i| {
                let mut changed = base.clone();
                changed[i] ^= 1;
                hash_of(&changed)
            })
            .chain([hash_of(&base), hash_of(&base[..39])])
            .collect();
        assert_eq!(hashes.len(), base.len() + 2);
    }

    #[test]
    fn the_buffer_is_reused_and_reentry_is_safe() {
        let n = with_key_buffer(|outer| {
            outer.push(1);
            with_key_buffer(|inner| {
                inner.push(2);
                inner.len()
            })
        });
        assert_eq!(n, 1);
        with_key_buffer(|buffer| assert!(buffer.is_empty()));
    }
}
