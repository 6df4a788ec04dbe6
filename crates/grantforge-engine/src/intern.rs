//! Names as small integers, and a fast hasher for the engine's own maps.
//!
//! Users, groups and roles are compared millions of times and stored once per item; as `u32`s an
//! item's subjects cost four bytes each and compare in one instruction.

use std::collections::HashMap;
use std::hash::{BuildHasher, Hasher};

/// A multiply-rotate hasher (the Fx hash of rustc) with a final mix. The engine's tables are keyed
/// by the snapshot's own names, which the signed snapshot fixes, so flooding is not a concern.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct FxBuild;

impl BuildHasher for FxBuild {
    type Hasher = FxHasher;

    fn build_hasher(&self) -> FxHasher {
        FxHasher(0)
    }
}

pub(crate) struct FxHasher(u64);

const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

impl FxHasher {
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(SEED);
    }
}

impl Hasher for FxHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            self.add(u64::from_le_bytes(chunk.try_into().unwrap_or_default()));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut word = [0u8; 8];
            word[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(word) ^ ((rest.len() as u64) << 59));
        }
    }

    fn write_u8(&mut self, value: u8) {
        self.add(value as u64);
    }

    fn write_u32(&mut self, value: u32) {
        self.add(value as u64);
    }

    fn write_u64(&mut self, value: u64) {
        self.add(value);
    }

    fn write_usize(&mut self, value: usize) {
        self.add(value as u64);
    }

    fn finish(&self) -> u64 {
        let mut x = self.0;
        x ^= x >> 33;
        x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
        x ^ (x >> 29)
    }
}

pub(crate) type FxMap<K, V> = HashMap<K, V, FxBuild>;

/// Distinct names, numbered in the order first seen.
#[derive(Debug, Default)]
pub(crate) struct Interner {
    ids: FxMap<Box<str>, u32>,
}

impl Interner {
    pub(crate) fn intern(&mut self, name: &str) -> u32 {
        if let Some(&id) = self.ids.get(name) {
            return id;
        }
        let id = self.ids.len() as u32;
        self.ids.insert(name.into(), id);
        id
    }

    pub(crate) fn get(&self, name: &str) -> Option<u32> {
        self.ids.get(name).copied()
    }

    pub(crate) fn len(&self) -> usize {
        self.ids.len()
    }

    pub(crate) fn shrink(&mut self) {
        self.ids.shrink_to_fit();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::Hash;

    fn hash<T: Hash>(value: T) -> u64 {
        FxBuild.hash_one(value)
    }

    #[test]
    fn numbers_names_in_order_and_hashes_apart() {
        let mut names = Interner::default();
        assert_eq!(names.intern("alice"), 0);
        assert_eq!(names.intern("bob"), 1);
        assert_eq!(names.intern("alice"), 0);
        assert_eq!(names.get("bob"), Some(1));
        assert_eq!(names.get("carol"), None);
        assert_eq!(names.len(), 2);
        assert_ne!(hash("ab"), hash("ba"));
        assert_ne!(hash("a"), hash("a\0"));
        assert_ne!(hash(1u64 << 40), hash(2u64 << 40));
    }
}
