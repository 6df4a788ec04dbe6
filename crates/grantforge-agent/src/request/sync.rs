//! The primitives the hand-written spin lock ([`crate::request::spin`]) is built on: the standard library's,
//! or [loom](https://docs.rs/loom)'s when the crate's tests are built with `--cfg loom`, so that the
//! model checker sees every atomic access, every access to the guarded value and every spin.
//!
//! Only the tests use loom (it is a dev-dependency): a build with `--cfg loom` that is not a test
//! build gets the standard library's primitives.

#[cfg(all(loom, test))]
pub(crate) use loom::{
    cell::UnsafeCell, hint::spin_loop, sync::atomic::AtomicBool, thread::yield_now,
};

#[cfg(not(all(loom, test)))]
pub(crate) use std::{hint::spin_loop, sync::atomic::AtomicBool, thread::yield_now};

/// `std::cell::UnsafeCell` with loom's interface: the value is reached only inside `with_mut`.
#[cfg(not(all(loom, test)))]
pub(crate) struct UnsafeCell<T>(std::cell::UnsafeCell<T>);

#[cfg(not(all(loom, test)))]
impl<T> UnsafeCell<T> {
    pub(crate) const fn new(value: T) -> UnsafeCell<T> {
        UnsafeCell(std::cell::UnsafeCell::new(value))
    }

    /// Runs `f` with a pointer to the value (no check: the caller guarantees exclusive access).
    #[inline(always)]
    pub(crate) fn with_mut<R>(&self, f: impl FnOnce(*mut T) -> R) -> R {
        f(self.0.get())
    }
}
