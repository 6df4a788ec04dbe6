//! The coarse wall clock of the request path.
//!
//! A cache hit needs two times: "has this kept decision expired?" and, when the access is audited,
//! the time it happened. Both are wanted to the millisecond at best, and the decision TTL is
//! seconds long. The kernel's coarse clocks answer from the vDSO without a syscall, with ticks of a
//! few milliseconds, several times cheaper than the precise ones (`SystemTime::now`;
//! docs/benchmarks.md has the figures). Decisions themselves use the engine's precise clock:
//! validity periods are checked at the moment of deciding.
//!
//! Both are read from the wall clock, the one validity periods are written in: a kept decision
//! is then checked against the same clock its policies' periods are, and a step of that clock
//! (an NTP step, a paused VM resumed) cannot move one without the other.

use grantforge_engine::Instant;

/// The wall-clock time in milliseconds since 1970, to a few milliseconds (0 before 1970). It may
/// step back or forward with the system's clock.
#[inline]
pub fn wall_millis() -> u64 {
    u64::try_from(coarse::wall_now().unix_millis()).unwrap_or(0)
}

/// The wall-clock time, to a few milliseconds.
#[inline]
pub fn wall_now() -> Instant {
    coarse::wall_now()
}

/// How far [`wall_millis`] may lag the precise wall clock: its tick, rounded up to a millisecond,
/// plus the millisecond it truncates. Asked of the kernel once.
pub fn coarse_lag_millis() -> u64 {
    static LAG: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *LAG.get_or_init(|| coarse::tick_millis() + 1)
}

#[cfg(target_os = "linux")]
mod coarse {
    use grantforge_engine::Instant;

    fn read(clock: libc::clockid_t) -> libc::timespec {
        let mut now = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: `now` is a valid, writable timespec; the coarse clocks exist on every Linux
        // since 2.6.32, and a failure leaves the zeroed value (an old time: entries expire).
        unsafe { libc::clock_gettime(clock, &mut now) };
        now
    }

    #[allow(clippy::unnecessary_cast)] // time_t is 32 bits on some Linux targets
    pub fn tick_millis() -> u64 {
        let mut tick = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: `tick` is a valid, writable timespec. A failure leaves it zeroed: the 10 ms
        // of the slowest kernel tick (HZ=100) are assumed instead.
        let failed = unsafe { libc::clock_getres(libc::CLOCK_REALTIME_COARSE, &mut tick) } != 0;
        let nanos = (tick.tv_sec as u64).saturating_mul(1_000_000_000) + tick.tv_nsec as u64;
        if failed || nanos == 0 {
            10
        } else {
            nanos.div_ceil(1_000_000)
        }
    }

    #[inline]
    #[allow(clippy::unnecessary_cast)] // time_t is 32 bits on some Linux targets
    pub fn wall_now() -> Instant {
        let now = read(libc::CLOCK_REALTIME_COARSE);
        Instant::from_parts(now.tv_sec as i64, now.tv_nsec as u32)
    }
}

#[cfg(not(target_os = "linux"))]
mod coarse {
    use grantforge_engine::Instant;

    pub fn wall_now() -> Instant {
        Instant::now()
    }

    /// `std::time::Instant` is precise here: only the millisecond it truncates.
    pub fn tick_millis() -> u64 {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_coarse_clocks_follow_the_precise_ones() {
        let before = Instant::now().unix_millis();
        let coarse = wall_now().unix_millis();
        assert!(
            (coarse - before).abs() < 100,
            "coarse wall clock {coarse} vs {before}"
        );
        let start = wall_millis();
        std::thread::sleep(std::time::Duration::from_millis(30));
        let elapsed = wall_millis() - start;
        assert!((20..1000).contains(&elapsed), "{elapsed} ms");
    }
}
