//! Allocation-free keys for the request path.
//!
//! The decision cache and the audit fold tables are asked on every action of every request. Both
//! key on one [`Access`] (who asked for what, from where, in which request), each adding what it
//! alone reads; the audit's events carry the same access. Keys are packed into a reused byte buffer
//! (no allocation once warm) and hashed with a small multiplicative hash; an owned copy is made
//! only when an entry is inserted.

use std::cell::RefCell;
use std::hash::{BuildHasher, BuildHasherDefault, Hasher};
use std::net::IpAddr;
use std::sync::OnceLock;

use grantforge_kafka::{Action, Operation, RequestContext, ResourceType};

/// One access: the principal, the resource and the operation asked about, the client's address
/// and the request type. Borrowed (`Access<&str>`) on the request path, owned once kept. The
/// decision cache keys on it (with what the snapshot's conditions read), the audit folds by it
/// (with the deciding policy), and an audit event tells it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Access<S = String> {
    pub principal_type: S,
    pub principal_name: S,
    pub client: Option<IpAddr>,
    pub resource_type: Option<ResourceType>,
    pub resource: S,
    pub operation: Option<Operation>,
    pub request_type: i16,
}

impl<'a> Access<&'a str> {
    /// The access a request's action asks for, its names as the client sent them.
    pub fn of(context: &'a RequestContext, action: &Action<'a>) -> Access<&'a str> {
        Access {
            principal_type: &context.principal.principal_type,
            principal_name: &context.principal.name,
            client: context.conditions.client_address,
            resource_type: action.resource_type,
            resource: action.name,
            operation: action.operation,
            request_type: context.request_type,
        }
    }

    /// An owned copy, to keep.
    pub fn owned(&self) -> Access {
        Access {
            principal_type: self.principal_type.to_string(),
            principal_name: self.principal_name.to_string(),
            client: self.client,
            resource_type: self.resource_type,
            resource: self.resource.to_string(),
            operation: self.operation,
            request_type: self.request_type,
        }
    }
}

impl Access {
    /// The access, borrowed.
    pub fn borrowed(&self) -> Access<&str> {
        Access {
            principal_type: &self.principal_type,
            principal_name: &self.principal_name,
            client: self.client,
            resource_type: self.resource_type,
            resource: &self.resource,
            operation: self.operation,
            request_type: self.request_type,
        }
    }
}

impl Access<&str> {
    /// Packs the access, the principal first: a key's principal part is
    /// [`Access::principal_bytes`] long.
    pub fn pack(&self, w: &mut KeyWriter<'_>) {
        w.str(self.principal_type).str(self.principal_name);
        w.byte(self.resource_type.map_or(0, |t| t.code()))
            .byte(self.operation.map_or(0, |o| o.code()))
            .str(self.resource)
            .address(self.client)
            .i16(self.request_type);
    }

    /// How many bytes the principal takes at the start of a packed access.
    pub fn principal_bytes(&self) -> usize {
        2 * 4 + self.principal_type.len() + self.principal_name.len()
    }
}

/// A folded-multiply hash (the construction of wyhash and foldhash) over 16 bytes a step: a packed
/// key is 30 to 80 bytes, and FxHash's one multiplication per 8 bytes, each waiting for the last,
/// was the largest single cost of a cache hit in the profile (docs/benchmarks.md). Clients choose
/// most of a key (names), so the seeds are drawn once per process: without them, a client could
/// compute names that all land in one shard and one probe sequence. Entries are compared byte for
/// byte, so a collision costs time, never a wrong answer.
#[derive(Clone, Copy)]
pub struct KeyHasher {
    hash: u64,
    seeds: &'static [u64; 3],
}

impl Default for KeyHasher {
    #[inline]
    fn default() -> KeyHasher {
        KeyHasher {
            hash: 0,
            seeds: seeds(),
        }
    }
}

/// This process's seeds, drawn on first use from the standard library's per-process random keys
/// (the ones `HashMap` uses, from the operating system's random source).
#[inline]
fn seeds() -> &'static [u64; 3] {
    static SEEDS: OnceLock<[u64; 3]> = OnceLock::new();
    SEEDS.get_or_init(|| {
        let random = std::collections::hash_map::RandomState::new();
        // Odd, so that no seed multiplies a hash to zero.
        [0u64, 1, 2].map(|n| random.hash_one(n) | 1)
    })
}

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
    let u32_at = |at: usize| {
        u64::from(u32::from_le_bytes(
            rest[at..at + 4].try_into().expect("4 bytes"),
        ))
    };
    match n {
        8.. => (word(&rest[..8]), word(&rest[n - 8..])),
        4.. => (u32_at(0), u32_at(n - 4)),
        1.. => (
            u64::from(rest[0]) | u64::from(rest[n / 2]) << 8 | u64::from(rest[n - 1]) << 16,
            0,
        ),
        0 => (0, 0),
    }
}

impl Hasher for KeyHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let seeds = self.seeds;
        let mut hash = self.hash ^ seeds[0] ^ bytes.len() as u64;
        let mut chunks = bytes.chunks_exact(16);
        for chunk in &mut chunks {
            hash = folded_multiply(word(&chunk[..8]) ^ seeds[1], word(&chunk[8..]) ^ hash);
        }
        let (a, b) = tail(chunks.remainder());
        hash = folded_multiply(a ^ seeds[1], b ^ hash);
        self.hash = folded_multiply(hash, seeds[2]);
    }

    #[inline]
    fn write_u64(&mut self, n: u64) {
        self.hash = folded_multiply(self.hash ^ n, self.seeds[2]);
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

    pub fn i16(&mut self, n: i16) -> &mut Self {
        self.0.extend_from_slice(&n.to_le_bytes());
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

/// A key buffer's usual capacity, and the most it keeps between calls: keys are bounded (decision
/// keys by `MAX_KEY_BYTES`, fold keys by the audit's clamped names), and a buffer grown past this
/// by one long key is given back rather than held by the thread for good.
const KEY_BUFFER_BYTES: usize = 256;
const KEY_BUFFER_KEPT_BYTES: usize = 8 * 1024;

thread_local! {
    static KEY: RefCell<Vec<u8>> = RefCell::new(Vec::with_capacity(KEY_BUFFER_BYTES));
}

/// Runs `f` with this thread's (cleared) key buffer.
pub fn with_key_buffer<R>(f: impl FnOnce(&mut Vec<u8>) -> R) -> R {
    KEY.with(|key| match key.try_borrow_mut() {
        Ok(mut buffer) => {
            buffer.clear();
            let result = f(&mut buffer);
            if buffer.capacity() > KEY_BUFFER_KEPT_BYTES {
                *buffer = Vec::with_capacity(KEY_BUFFER_BYTES);
            }
            result
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
        // And in every tail of 1 to 15 bytes, each read its own way (`tail`).
        for len in 1..16 {
            let base: Vec<u8> = (0..len).collect();
            let hashes: std::collections::HashSet<u64> = (0..len as usize)
                .map(|i| {
                    let mut changed = base.clone();
                    changed[i] ^= 1;
                    hash_of(&changed)
                })
                .chain([hash_of(&base)])
                .collect();
            assert_eq!(hashes.len(), len as usize + 1, "a tail of {len} bytes");
        }
    }

    /// The decision cache and the audit fold both key on a packed [`Access`]: a part it left out
    /// would let two different accesses share a decision or a fold group.
    #[test]
    fn every_part_of_an_access_tells_two_keys_apart() {
        let alice = Access {
            principal_type: "User",
            principal_name: "alice",
            client: Some("10.0.0.1".parse().unwrap()),
            resource_type: Some(ResourceType::Topic),
            resource: "orders",
            operation: Some(Operation::Write),
            request_type: 0,
        };
        let others = [
            Access {
                principal_type: "Group",
                ..alice
            },
            Access {
                principal_name: "bob",
                ..alice
            },
            Access {
                client: Some("10.0.0.2".parse().unwrap()),
                ..alice
            },
            Access {
                resource_type: Some(ResourceType::Group),
                ..alice
            },
            Access {
                resource: "payments",
                ..alice
            },
            Access {
                operation: Some(Operation::Read),
                ..alice
            },
            Access {
                request_type: 1,
                ..alice
            },
        ];
        let packed = |access: &Access<&str>| {
            let mut key = Vec::new();
            access.pack(&mut KeyWriter(&mut key));
            key
        };
        for other in others {
            assert_ne!(packed(&alice), packed(&other), "{other:?}");
        }
        assert_eq!(packed(&alice), packed(&alice.owned().borrowed()));
        assert_eq!(
            &packed(&alice)[..alice.principal_bytes()],
            b"\x04\0\0\0User\x05\0\0\0alice",
            "the principal's part starts the key"
        );
    }

    #[test]
    fn the_seeds_are_drawn_and_odd() {
        // Odd, so that no seed multiplies a hash to zero; drawn, so that they are not 0 or 1.
        assert!(
            seeds().iter().all(|seed| seed % 2 == 1 && *seed > 1),
            "{:?}",
            seeds()
        );
    }

    /// Prints this process's hash of a fixed key when asked to by the test below.
    #[test]
    fn print_hash_for_the_seed_test() {
        if std::env::var_os("GF_PRINT_KEY_HASH").is_some() {
            println!("key-hash={}", hash_of(b"group-id"));
        }
    }

    #[test]
    fn hashes_are_seeded_per_process() {
        let hash_in_a_new_process = || {
            let out = std::process::Command::new(std::env::current_exe().unwrap())
                .args([
                    "--exact",
                    "keys::tests::print_hash_for_the_seed_test",
                    "--nocapture",
                    "--test-threads=1",
                ])
                .env("GF_PRINT_KEY_HASH", "1")
                .output()
                .unwrap();
            let text = String::from_utf8_lossy(&out.stdout).to_string();
            let at = text
                .find("key-hash=")
                .unwrap_or_else(|| panic!("no hash in {text}"))
                + "key-hash=".len();
            text[at..]
                .chars()
                .take_while(char::is_ascii_digit)
                .collect::<String>()
        };
        let (a, b) = (hash_in_a_new_process(), hash_in_a_new_process());
        assert_ne!(
            a, b,
            "two processes hash the same key alike: a client could aim its names at one shard"
        );
        assert_eq!(
            hash_of(b"group-id"),
            hash_of(b"group-id"),
            "stable within a process"
        );
    }

    #[test]
    fn a_buffer_grown_by_a_long_key_is_given_back() {
        with_key_buffer(|buffer| buffer.extend(std::iter::repeat_n(7u8, 1 << 20)));
        KEY.with(|key| assert!(key.borrow().capacity() <= KEY_BUFFER_KEPT_BYTES));
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
