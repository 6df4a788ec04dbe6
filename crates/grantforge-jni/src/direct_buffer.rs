//! The calling thread's direct buffer, where `RequestEncoder.java` wrote the request
//! (`request_encoder.rs`) and where `authorize` writes one byte per action when there are more
//! than its bit mask holds (`ACTIONS_IN_A_MASK`).

use jni::sys::{jint, jlong};

use crate::export::BridgeError;

/// The calling thread's direct buffer, as the shim passed it: the address `bufferAddress` gave
/// for it, its capacity, and the length of the request written into it.
pub(crate) struct DirectBuffer {
    address: *mut u8,
    capacity: usize,
    length: usize,
}

impl DirectBuffer {
    #[inline]
    pub(crate) fn new(
        address: jlong,
        capacity: jint,
        length: jint,
    ) -> Result<DirectBuffer, BridgeError> {
        let capacity = usize::try_from(capacity).map_err(|_| BridgeError::BadBuffer)?;
        let length = usize::try_from(length)
            .ok()
            .filter(|len| *len <= capacity)
            .ok_or(BridgeError::BadBuffer)?;
        if address == 0 {
            return Err(BridgeError::BadBuffer);
        }
        Ok(DirectBuffer {
            address: address as *mut u8,
            capacity,
            length,
        })
    }

    #[inline]
    pub(crate) fn request(&self) -> &[u8] {
        // SAFETY: the shim passes the address and capacity of a direct buffer that its calling
        // thread holds (a thread-local `RequestEncoder`), so the memory stays valid while that
        // thread is blocked in this call, and nothing else writes to it.
        unsafe { std::slice::from_raw_parts(self.address, self.length) }
    }

    /// The `n` bytes after the first `from` of the capacity (what follows the request).
    pub(crate) fn tail(&self, from: usize, n: usize) -> Result<&[u8], BridgeError> {
        let end = from.checked_add(n).ok_or(BridgeError::BadBuffer)?;
        if end > self.capacity {
            return Err(BridgeError::BadBuffer);
        }
        // SAFETY: as in `request`, and within the capacity.
        Ok(unsafe { std::slice::from_raw_parts(self.address.add(from), n) })
    }

    /// Writes `bytes` at `from`, within the capacity.
    pub(crate) fn write_at(&mut self, from: usize, bytes: &[u8]) -> Result<(), BridgeError> {
        let end = from
            .checked_add(bytes.len())
            .ok_or(BridgeError::BadBuffer)?;
        if end > self.capacity {
            return Err(BridgeError::BadBuffer);
        }
        // SAFETY: as in `request`, within the capacity; no borrow of the buffer is alive.
        let out = unsafe { std::slice::from_raw_parts_mut(self.address.add(from), bytes.len()) };
        out.copy_from_slice(bytes);
        Ok(())
    }

    /// Writes one byte per action (1 allowed, 0 refused) at the start of the buffer.
    pub(crate) fn write_results(&mut self, allowed: &[bool]) -> Result<(), BridgeError> {
        if allowed.len() > self.capacity {
            return Err(BridgeError::BadBuffer);
        }
        // SAFETY: as in `request`, and within the capacity; no borrow of the request is alive.
        let out = unsafe { std::slice::from_raw_parts_mut(self.address, allowed.len()) };
        out.iter_mut()
            .zip(allowed)
            .for_each(|(byte, a)| *byte = u8::from(*a));
        Ok(())
    }
}
