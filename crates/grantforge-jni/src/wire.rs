//! What every payload between the Java shim and this library is made of (`Wire.java`).
//!
//! ```text
//! integers  little-endian
//! str       := u32 byteLength  UTF-8 bytes
//! ```
//!
//! Each payload has its own codec file, named after the Java class that writes or reads it:
//! `request_encoder.rs` (`RequestEncoder`), `settings_encoder.rs` (`SettingsEncoder`),
//! `acl_view.rs` (`AclView`), `acl_migration.rs` (`AclMigration`), `agent_metrics.rs`
//! (`AgentMetrics`) and `native_log_drain.rs` (`NativeLogDrain`). Their golden bytes are in `tests/fixtures/jni/`, read by the Java tests too.

use std::fmt;

#[derive(Debug, PartialEq, Eq)]
pub struct MalformedRequest(pub &'static str);

impl fmt::Display for MalformedRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "malformed request from the Java shim: {}", self.0)
    }
}

/// Reads what Java wrote; every length is checked (Java's bytes are untrusted input). Its small
/// methods are `#[inline]`: the request path reads through them (`request_encoder.rs`).
pub(crate) struct Reader<'a> {
    pub(crate) bytes: &'a [u8],
    pub(crate) at: usize,
}

impl<'a> Reader<'a> {
    #[inline]
    pub(crate) fn new(bytes: &'a [u8]) -> Reader<'a> {
        Reader { bytes, at: 0 }
    }

    #[inline]
    pub(crate) fn take(
        &mut self,
        n: usize,
        what: &'static str,
    ) -> Result<&'a [u8], MalformedRequest> {
        let end = self
            .at
            .checked_add(n)
            .filter(|end| *end <= self.bytes.len())
            .ok_or(MalformedRequest(what))?;
        let slice = &self.bytes[self.at..end];
        self.at = end;
        Ok(slice)
    }

    #[inline]
    pub(crate) fn u8(&mut self, what: &'static str) -> Result<u8, MalformedRequest> {
        Ok(self.take(1, what)?[0])
    }

    #[inline]
    pub(crate) fn u32(&mut self, what: &'static str) -> Result<u32, MalformedRequest> {
        Ok(u32::from_le_bytes(
            self.take(4, what)?.try_into().expect("4 bytes"),
        ))
    }

    #[inline]
    pub(crate) fn i16(&mut self, what: &'static str) -> Result<i16, MalformedRequest> {
        Ok(i16::from_le_bytes(
            self.take(2, what)?.try_into().expect("2 bytes"),
        ))
    }

    #[inline]
    pub(crate) fn str(&mut self, what: &'static str) -> Result<&'a str, MalformedRequest> {
        let len = self.u32(what)? as usize;
        std::str::from_utf8(self.take(len, what)?).map_err(|_| MalformedRequest(what))
    }

    #[inline]
    pub(crate) fn is_at_end(&self) -> bool {
        self.at == self.bytes.len()
    }

    /// Nothing may follow the payload.
    #[inline]
    pub(crate) fn finish(&self) -> Result<(), MalformedRequest> {
        if self.is_at_end() {
            Ok(())
        } else {
            Err(MalformedRequest("trailing bytes"))
        }
    }
}

/// Appends a string in the layout above.
pub fn put_str(out: &mut Vec<u8>, s: &str) {
    out.extend_from_slice(&(s.len() as u32).to_le_bytes());
    out.extend_from_slice(s.as_bytes());
}

/// The golden bytes of each payload, `tests/fixtures/jni/<name>`: a test fails when what it encodes
/// differs from the committed file, and writes the file instead with `GF_UPDATE_GOLDEN=1`.
#[cfg(test)]
pub(crate) mod golden {
    use std::path::PathBuf;

    fn path(name: &str) -> PathBuf {
        crate::tests::in_crate("../../tests/fixtures/jni").join(name)
    }

    pub(crate) fn check(name: &str, bytes: &[u8]) {
        let path = path(name);
        if std::env::var_os("GF_UPDATE_GOLDEN").is_some_and(|v| v == "1") {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, bytes).unwrap();
            return;
        }
        let committed = std::fs::read(&path).unwrap_or_else(|e| {
            panic!("{}: {e}; write it with GF_UPDATE_GOLDEN=1", path.display())
        });
        assert!(
            committed == bytes,
            "{} differs from what the codec writes now (a layout change: bump the layout's version, update the Java side, and \
             regenerate with GF_UPDATE_GOLDEN=1)",
            path.display()
        );
    }

    pub(crate) fn read(name: &str) -> Vec<u8> {
        let path = path(name);
        std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_malformed_request_is_logged_naming_the_shim_and_the_part() {
        assert_eq!(
            MalformedRequest("client address").to_string(),
            "malformed request from the Java shim: client address"
        );
    }
}
