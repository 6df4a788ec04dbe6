//! The smallest bound Kafka's own throttle arithmetic can enforce, per quota type.
//!
//! Kafka turns a violated bound into a throttle time in milliseconds and casts it to an `int`
//! (3.7–4.3, `ClientQuotaManager`, `ControllerMutationQuotaManager`). When the throttle passes
//! 2³¹ − 1 ms the cast wraps to a negative number and the request is **not throttled at all**:
//!
//! - produce and fetch: `(observed − bound) / bound × window`, where `observed` is the bytes recorded
//!   in the window divided by the window. Before the request that violates it the group was within
//!   its bound (at most `bound × window` bytes recorded), so the throttle is at most
//!   `request bytes / bound × 1000` ms, whatever the window. The largest request Kafka accepts is
//!   `socket.request.max.bytes` (a fetch response that is not cut to the window's budget is one batch,
//!   which arrived in such a request), so a bound holds when
//!   `bound ≥ socket.request.max.bytes × 1000 / (2³¹ − 1)`: 48.8 bytes/s for the default 100 MiB
//!   (49 rounded up);
//! - `controller_mutation_rate`: `−tokens / bound × 1000` ms, with the bucket at most one request's
//!   mutations short. The controller writes at most 10,000 records for one request (Kafka's
//!   `MAX_RECORDS_PER_USER_OP`, one per partition), so a bound holds from
//!   `10,000 × 1000 / (2³¹ − 1)` = 0.0047 mutations/s (0.005 rounded up);
//! - `request_percentage`: Kafka caps the throttle at one window before the cast, so every positive
//!   bound holds; a remainder of zero or less needs a positive one all the same (Kafka divides by the
//!   bound), and gets 0.01 % (100 µs of a request thread a second).

use crate::entity::QuotaType;

/// Kafka's default `socket.request.max.bytes`: 100 MiB.
pub const DEFAULT_SOCKET_REQUEST_MAX_BYTES: u64 = 100 * 1024 * 1024;

/// The longest throttle Kafka's `int` cast keeps, in milliseconds.
const LONGEST_THROTTLE_MS: f64 = i32::MAX as f64;

/// The most partitions one request can create or delete (Kafka's `MAX_RECORDS_PER_USER_OP`).
const MOST_MUTATIONS_PER_REQUEST: f64 = 10_000.0;

/// The positive `request_percentage` a remainder of zero or less becomes.
const SMALLEST_REQUEST_PERCENTAGE: f64 = 0.01;

/// The smallest bound per quota type that Kafka's throttle arithmetic enforces on a node that
/// accepts requests of up to `socket.request.max.bytes`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SafeBounds {
    socket_request_max_bytes: u64,
}

impl Default for SafeBounds {
    fn default() -> SafeBounds {
        SafeBounds::for_requests_up_to(DEFAULT_SOCKET_REQUEST_MAX_BYTES)
    }
}

impl SafeBounds {
    /// The bounds of a node whose `socket.request.max.bytes` is `bytes`.
    pub fn for_requests_up_to(bytes: u64) -> SafeBounds {
        SafeBounds {
            socket_request_max_bytes: bytes,
        }
    }

    /// The `socket.request.max.bytes` these bounds were derived from.
    pub fn socket_request_max_bytes(&self) -> u64 {
        self.socket_request_max_bytes
    }

    /// The smallest bound Kafka enforces for `quota_type`, rounded up to a whole byte a second or a
    /// thousandth of a mutation: what a remainder below it becomes.
    pub fn smallest(&self, quota_type: QuotaType) -> f64 {
        let exact = self.threshold(quota_type);
        match quota_type {
            QuotaType::Produce | QuotaType::Fetch => exact.ceil(),
            QuotaType::ControllerMutation => (exact * 1000.0).ceil() / 1000.0,
            QuotaType::Request => exact,
        }
    }

    /// Whether Kafka's throttle for a bound of `value` can overflow on a request it accepts, so
    /// that the client goes unthrottled (never for `request_percentage`, whose throttle is capped).
    pub fn overflows(&self, quota_type: QuotaType, value: f64) -> bool {
        match quota_type {
            QuotaType::Request => value.is_nan() || value <= 0.0,
            _ => value.is_nan() || value < self.threshold(quota_type),
        }
    }

    /// The exact bound at which the longest throttle just fits Kafka's `int`.
    fn threshold(&self, quota_type: QuotaType) -> f64 {
        match quota_type {
            QuotaType::Produce | QuotaType::Fetch => {
                self.socket_request_max_bytes as f64 * 1000.0 / LONGEST_THROTTLE_MS
            }
            QuotaType::ControllerMutation => {
                MOST_MUTATIONS_PER_REQUEST * 1000.0 / LONGEST_THROTTLE_MS
            }
            QuotaType::Request => SMALLEST_REQUEST_PERCENTAGE,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_byte_rate_bound_follows_the_largest_request() {
        let default = SafeBounds::default();
        let exact = default.threshold(QuotaType::Produce);
        assert!((48.82..48.83).contains(&exact), "{exact}");
        // The threshold is exactly where the longest throttle fits in an int of milliseconds.
        let throttle_ms = DEFAULT_SOCKET_REQUEST_MAX_BYTES as f64 / exact * 1000.0;
        assert!((throttle_ms - LONGEST_THROTTLE_MS).abs() < 1.0);
        assert_eq!(default.smallest(QuotaType::Produce), 49.0);
        assert_eq!(default.smallest(QuotaType::Fetch), 49.0);
        assert!(!default.overflows(QuotaType::Produce, 48.83));
        let smaller = SafeBounds::for_requests_up_to(1024 * 1024);
        assert!((exact / smaller.threshold(QuotaType::Produce) - 100.0).abs() < 1e-9);
        assert_eq!(smaller.smallest(QuotaType::Produce), 1.0);
        assert_eq!(default.smallest(QuotaType::ControllerMutation), 0.005);
    }

    #[test]
    fn every_type_has_a_positive_bound_and_request_percentage_never_overflows() {
        let bounds = SafeBounds::default();
        for t in QuotaType::ALL {
            assert!(bounds.smallest(t) > 0.0, "{t}");
            assert!(!bounds.overflows(t, bounds.smallest(t)), "{t}");
            assert!(bounds.overflows(t, 0.0), "{t}");
            assert!(bounds.overflows(t, f64::NAN), "{t}");
        }
        assert!(!bounds.overflows(QuotaType::Request, 0.001));
        assert!(bounds.overflows(QuotaType::Produce, 48.0));
        assert!(!bounds.overflows(QuotaType::ControllerMutation, 0.2));
        assert!(bounds.overflows(QuotaType::ControllerMutation, 0.004));
    }
}
