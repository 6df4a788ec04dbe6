//! Allocation-free keys for the request path.
//!
//! The decision cache and the audit fold tables are asked on every action of every request. Their
//! keys are packed into a per-thread byte buffer (reused, so no allocation once warm) and hashed
//! with a small multiplicative hash; an owned copy is made only when an entry is inserted.

use std::cell::RefCell;
use std::hash::{BuildHasherDefault, Hasher};
use std::net::IpAddr;

/// FxHash (rustc's hash): fast on short keys; keys here are not attacker-chosen in a way that
/// matters (a collision only costs a longer probe, and entries are verified byte for byte).
#[derive(Default, Clone, Copy)]
pub struct FxHasher {
    hash: u64,
}

const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

impl FxHasher {
    #[inline]
    fn add(&mut self, word: u64) {
        self.hash = (self.hash.rotate_left(5) ^ word).wrapping_mul(SEED);
    }
}

impl Hasher for FxHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            self.add(u64::from_le_bytes(chunk.try_into().expect("8 bytes")));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut last = [0u8; 8];
            last[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(last));
        }
    }

    #[inline]
    fn write_u64(&mut self, n: u64) {
        self.add(n);
    }

    #[inline]
    fn write_usize(&mut self, n: usize) {
        self.add(n as u64);
    }

    #[inline]
    fn finish(&self) -> u64 {
        self.hash
    }
}

pub type FxBuildHasher = BuildHasherDefault<FxHasher>;

/// The hash of a packed key.
pub fn hash_of(bytes: &[u8]) -> u64 {
    let mut hasher = FxHasher::default();
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
