//! A spin lock: the lock of a request thread's lane ([`crate::request::lane`]).
//!
//! A lane is taken by its request thread on every call and by the agent's thread once a tick, only
//! to move the folded accesses out, so the lock is almost never contended. A spin lock rather than
//! a mutex: its release is a plain store, where a mutex's is a second locked instruction, and the
//! two locked instructions were the largest cost of a cache hit after the hash
//! (docs/benchmarks.md).
//!
//! Being hand-written, it is model-checked with loom (the tests at the bottom, run by scripts/test
//! with `RUSTFLAGS="--cfg loom"`): mutual exclusion, release when the closure panics, and the
//! hand-off of folded accesses between request threads and the agent's thread.

use std::sync::atomic::Ordering;

use crate::request::sync::{spin_loop, yield_now, AtomicBool, UnsafeCell};

/// A value behind a spin lock, reached only through [`SpinLock::with`].
pub(crate) struct SpinLock<T> {
    locked: AtomicBool,
    value: UnsafeCell<T>,
}

// SAFETY: the value is only reached through `with`, which holds `locked` (acquire on taking,
// release on leaving), so one thread at a time touches it; it is Send, so it may be that thread.
unsafe impl<T: Send> Sync for SpinLock<T> {}

impl<T: Default> Default for SpinLock<T> {
    fn default() -> SpinLock<T> {
        SpinLock::new(T::default())
    }
}

impl<T> SpinLock<T> {
    pub(crate) fn new(value: T) -> SpinLock<T> {
        SpinLock {
            locked: AtomicBool::new(false),
            value: UnsafeCell::new(value),
        }
    }

    /// Runs `f` with the value, holding the lock; the lock is released however `f` ends (a panic
    /// is caught further up and refuses).
    pub(crate) fn with<R>(&self, f: impl FnOnce(&mut T) -> R) -> R {
        let mut spins = 0u32;
        // A compare-exchange rather than a swap: a thread that finds the lock taken then writes
        // nothing, so the release is ordered after every value of `locked` it saw, and loom can
        // see it make progress (after a swap of its own, loom lets it read `true` for ever).
        while self
            .locked
            .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            while self.locked.load(Ordering::Relaxed) {
                spins += 1;
                if spins < 100 {
                    spin_loop();
                } else {
                    yield_now();
                }
            }
        }
        /// Releases the lock however `f` ends.
        struct Release<'a>(&'a AtomicBool);
        impl Drop for Release<'_> {
            fn drop(&mut self) {
                self.0.store(false, Ordering::Release);
            }
        }
        let _release = Release(&self.locked);
        // SAFETY: `locked` is held until `_release` drops, after `f` returns or unwinds.
        self.value.with_mut(|value| f(unsafe { &mut *value }))
    }
}

/// Loom models of the lock (`RUSTFLAGS="--cfg loom" cargo test -p grantforge-agent --lib loom`,
/// in a target directory of its own). Every model is explored exhaustively up to
/// `LOOM_MAX_PREEMPTIONS` preemptions per execution (4 unless the environment says otherwise);
/// loom also fails any execution in which the guarded value is reached by two threads without the
/// lock ordering them.
#[cfg(all(test, loom))]
mod loom_models {
    use super::SpinLock;
    use loom::sync::atomic::{AtomicUsize, Ordering};
    use loom::sync::{Arc, Mutex};
    use loom::thread;
    use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};

    fn model(f: impl Fn() + Sync + Send + 'static) {
        let mut builder = loom::model::Builder::new();
        if builder.preemption_bound.is_none() {
            builder.preemption_bound = Some(4);
        }
        builder.check(f);
    }

    /// Adds one through the lock as a read and a separate write, with a preemption point between
    /// them, and checks that no other thread is inside meanwhile.
    fn increment(lock: &SpinLock<u32>, inside: &AtomicUsize) {
        lock.with(|n| {
            assert_eq!(
                inside.fetch_add(1, Ordering::Relaxed),
                0,
                "two threads inside the lock"
            );
            let seen = *n;
            thread::yield_now();
            *n = seen + 1;
            assert_eq!(
                inside.fetch_sub(1, Ordering::Relaxed),
                1,
                "two threads inside the lock"
            );
        });
    }

    #[test]
    fn loom_two_threads_never_overlap_nor_lose_an_update() {
        model(|| {
            let lock = Arc::new(SpinLock::new(0u32));
            let inside = Arc::new(AtomicUsize::new(0));
            let other = {
                let (lock, inside) = (Arc::clone(&lock), Arc::clone(&inside));
                thread::spawn(move || {
                    increment(&lock, &inside);
                    increment(&lock, &inside);
                })
            };
            increment(&lock, &inside);
            increment(&lock, &inside);
            other.join().unwrap();
            assert_eq!(lock.with(|n| *n), 4, "an update was lost");
        });
    }

    #[test]
    fn loom_a_panic_inside_releases_the_lock() {
        model(|| {
            let lock = Arc::new(SpinLock::new(0u32));
            let other = {
                let lock = Arc::clone(&lock);
                thread::spawn(move || {
                    let ended = catch_unwind(AssertUnwindSafe(|| {
                        lock.with(|n| {
                            *n += 1;
                            // A panic without the panic hook's message on every execution.
                            resume_unwind(Box::new("the closure panicked"))
                        })
                    }));
                    assert!(ended.is_err());
                })
            };
            // Spins until the panicking thread has released the lock (a lock left taken would spin
            // past loom's branch bound and fail the model).
            lock.with(|n| *n += 1);
            other.join().unwrap();
            assert_eq!(lock.with(|n| *n), 2);
        });
    }

    /// What a lane holds in the model: accesses folded since the agent's thread took them, and
    /// accesses counted.
    #[derive(Default)]
    struct Lane {
        folded: u32,
        counted: u32,
    }

    /// `Lanes` of `request/lane.rs` reduced to what the lock guards, with loom's mutex for parking_lot's
    /// and a counter for the auditor. `Lanes` itself keeps its lanes in a `thread_local!` and its
    /// lists behind parking_lot, which loom cannot schedule; this is its `hand_on` and `counts`
    /// with the same `SpinLock` and the same order of locks.
    #[derive(Default)]
    struct Lanes {
        all: Mutex<Vec<Arc<SpinLock<Lane>>>>,
        retired: Mutex<u32>,
        audited: Mutex<u32>,
    }

    impl Lanes {
        /// A request thread's first call: its lane, made and registered (`with_mine`).
        fn register(&self) -> Arc<SpinLock<Lane>> {
            let lane = Arc::new(SpinLock::default());
            self.all.lock().unwrap().push(Arc::clone(&lane));
            lane
        }

        /// The agent's tick (`Lanes::hand_on`): takes every lane's folded accesses, retires the
        /// lanes of ended threads, and hands the accesses on after the locks are released.
        fn hand_on(&self) {
            let mut taken = 0;
            {
                let mut all = self.all.lock().unwrap();
                let mut retired = self.retired.lock().unwrap();
                all.retain(|lane| {
                    let alive = Arc::strong_count(lane) > 1;
                    lane.with(|lane| {
                        taken += std::mem::take(&mut lane.folded);
                        if !alive {
                            *retired += lane.counted;
                        }
                    });
                    alive
                });
            }
            *self.audited.lock().unwrap() += taken;
        }

        /// `Lanes::counts`: every lane's counts and the retired ones, in `hand_on`'s lock order.
        fn counts(&self) -> u32 {
            let all = self.all.lock().unwrap();
            let mut total = *self.retired.lock().unwrap();
            for lane in all.iter() {
                total += lane.with(|lane| lane.counted);
            }
            total
        }
    }

    #[test]
    fn loom_folded_accesses_are_handed_on_once_and_counted_once() {
        // Two request threads, folding two accesses each, while the agent's thread ticks.
        const THREADS: u32 = 2;
        const ACCESSES: u32 = 2;
        const TOTAL: u32 = THREADS * ACCESSES;
        model(|| {
            let lanes = Arc::new(Lanes::default());
            let requests: Vec<_> = (0..THREADS)
                .map(|_| {
                    let lanes = Arc::clone(&lanes);
                    thread::spawn(move || {
                        let lane = lanes.register();
                        for _ in 0..ACCESSES {
                            lane.with(|lane| {
                                lane.folded += 1;
                                lane.counted += 1;
                            });
                        }
                        // The thread ends: its lane is referenced from `all` alone.
                        drop(lane);
                    })
                })
                .collect();
            // The agent's thread ticks while the request threads work.
            lanes.hand_on();
            let first = lanes.counts();
            lanes.hand_on();
            let second = lanes.counts();
            assert!(
                first <= second && second <= TOTAL,
                "counts went back or beyond: {first}, {second}"
            );
            assert!(*lanes.audited.lock().unwrap() <= TOTAL);
            for request in requests {
                request.join().unwrap();
            }
            lanes.hand_on();
            assert_eq!(
                *lanes.audited.lock().unwrap(),
                TOTAL,
                "an access was lost or handed on twice"
            );
            assert_eq!(lanes.counts(), TOTAL, "an access was lost or counted twice");
            assert!(
                lanes.all.lock().unwrap().is_empty(),
                "the ended threads' lanes were retired"
            );
        });
    }
}
