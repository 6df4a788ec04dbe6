//! A point on the UTC time line, as Java's `java.time.Instant`.
//!
//! Validity periods in snapshots are ISO-8601 instants that the Java agent reads with
//! `Instant.parse`; reading them the same way (and nothing more lenient) keeps a snapshot that Java
//! refuses refused here too.

use std::fmt;
use std::time::{SystemTime, UNIX_EPOCH};

const NANOS_PER_SEC: u32 = 1_000_000_000;
/// `Instant.MIN` (-1000000000-01-01T00:00:00Z) and `Instant.MAX` (+1000000000-12-31T23:59:59Z).
const MIN_SECS: i64 = -31_557_014_167_219_200;
const MAX_SECS: i64 = 31_556_889_864_403_199;

/// An instant: seconds since 1970-01-01T00:00:00Z and nanoseconds within the second.
///
/// Ordering is chronological, which is what validity periods (`from` inclusive, `until`
/// exclusive) compare.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Instant {
    secs: i64,
    nanos: u32,
}

impl Instant {
    /// The Unix epoch.
    pub const EPOCH: Instant = Instant { secs: 0, nanos: 0 };

    /// Reads an ISO-8601 instant the way Java's `Instant.parse` does: `2026-01-01T00:00:00Z`,
    /// seconds required, an optional fraction of up to nine digits, `Z` or an offset such as
    /// `+02:00` (accepted by Java 12 and later), years beyond 9999 with a `+` sign.
    pub fn parse(text: &str) -> Result<Instant, String> {
        Parser {
            bytes: text.as_bytes(),
            pos: 0,
        }
        .instant()
        .ok_or_else(|| format!("`{text}` is not an ISO-8601 instant such as 2026-01-01T00:00:00Z"))
    }

    /// The current time of the system clock.
    pub fn now() -> Instant {
        match SystemTime::now().duration_since(UNIX_EPOCH) {
            Ok(since) => Instant {
                secs: since.as_secs() as i64,
                nanos: since.subsec_nanos(),
            },
            Err(before) => {
                let back = before.duration();
                Instant::from_parts(-(back.as_secs() as i64), 0)
                    .plus_nanos(-(back.subsec_nanos() as i64))
            }
        }
    }

    /// The instant `ms` milliseconds after the epoch (before it when negative).
    pub fn from_unix_millis(ms: i64) -> Instant {
        Instant {
            secs: ms.div_euclid(1000),
            nanos: (ms.rem_euclid(1000) as u32) * 1_000_000,
        }
    }

    /// Milliseconds since the epoch, rounded towards the past (as Java's `toEpochMilli`), saturating.
    pub fn unix_millis(&self) -> i64 {
        self.secs
            .saturating_mul(1000)
            .saturating_add((self.nanos / 1_000_000) as i64)
    }

    /// An instant from seconds since the epoch and nanoseconds (carried into seconds when ≥ 10⁹).
    pub fn from_parts(secs: i64, nanos: u32) -> Instant {
        Instant {
            secs: secs + (nanos / NANOS_PER_SEC) as i64,
            nanos: nanos % NANOS_PER_SEC,
        }
    }

    /// Whole seconds since the epoch (the fraction is in [`Instant::subsec_nanos`]).
    pub fn unix_secs(&self) -> i64 {
        self.secs
    }

    /// Nanoseconds within the second, below 10⁹.
    pub fn subsec_nanos(&self) -> u32 {
        self.nanos
    }

    /// This instant moved by `secs` seconds (saturating at the ends of `i64`).
    pub fn plus_seconds(self, secs: i64) -> Instant {
        Instant {
            secs: self.secs.saturating_add(secs),
            nanos: self.nanos,
        }
    }

    /// This instant moved by `ms` milliseconds.
    pub fn plus_millis(self, ms: i64) -> Instant {
        self.plus_nanos(ms.saturating_mul(1_000_000))
    }

    fn plus_nanos(self, nanos: i64) -> Instant {
        let total = self.nanos as i64 + nanos.rem_euclid(NANOS_PER_SEC as i64);
        let secs = self
            .secs
            .saturating_add(nanos.div_euclid(NANOS_PER_SEC as i64))
            .saturating_add(total / NANOS_PER_SEC as i64);
        Instant {
            secs,
            nanos: (total % NANOS_PER_SEC as i64) as u32,
        }
    }
}

/// Formats as Java's `Instant.toString`: `2026-01-01T00:00:00Z`, with 3, 6 or 9 fraction digits
/// when there is a fraction.
impl fmt::Display for Instant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let days = self.secs.div_euclid(86_400);
        let in_day = self.secs.rem_euclid(86_400);
        let (year, month, day) = civil_from_days(days);
        if year > 9999 {
            write!(f, "+{year}")?;
        } else if year < 0 {
            write!(f, "-{:04}", -year)?;
        } else {
            write!(f, "{year:04}")?;
        }
        write!(
            f,
            "-{month:02}-{day:02}T{:02}:{:02}:{:02}",
            in_day / 3600,
            in_day / 60 % 60,
            in_day % 60
        )?;
        if self.nanos != 0 {
            if self.nanos % 1_000_000 == 0 {
                write!(f, ".{:03}", self.nanos / 1_000_000)?;
            } else if self.nanos % 1000 == 0 {
                write!(f, ".{:06}", self.nanos / 1000)?;
            } else {
                write!(f, ".{:09}", self.nanos)?;
            }
        }
        f.write_str("Z")
    }
}

/// A strict reader of `uuuu-MM-ddTHH:mm:ss[.fffffffff](Z|±HH:MM[:SS])`.
struct Parser<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl Parser<'_> {
    fn instant(mut self) -> Option<Instant> {
        let year = self.year()?;
        self.literal(b'-')?;
        let month = self.digits(2)?;
        self.literal(b'-')?;
        let day = self.digits(2)?;
        self.literal(b'T')?;
        let hour = self.digits(2)?;
        self.literal(b':')?;
        let minute = self.digits(2)?;
        self.literal(b':')?;
        let second = self.digits(2)?;
        let nanos = self.fraction()?;
        let offset = self.offset()?;
        if self.pos != self.bytes.len() {
            return None;
        }
        if !(1..=12).contains(&month) || day < 1 || day > days_in_month(year, month) {
            return None;
        }
        // Java accepts 24:00:00 as the next midnight and a leap second 60 as second 59.
        let (hour, extra_day) = match (hour, minute, second, nanos) {
            (24, 0, 0, 0) => (0, 1),
            (0..=23, _, _, _) => (hour, 0),
            _ => return None,
        };
        if minute > 59 || second > 60 {
            return None;
        }
        let second = second.min(59);
        let days = days_from_civil(year, month, day) + extra_day;
        let secs = days * 86_400 + hour * 3600 + minute * 60 + second - offset;
        (MIN_SECS..=MAX_SECS)
            .contains(&secs)
            .then_some(Instant { secs, nanos })
    }

    /// Four digits, or a sign and up to ten: Java's `appendValue(YEAR, 4, 10, EXCEEDS_PAD)`.
    fn year(&mut self) -> Option<i64> {
        let sign = match self.bytes.get(self.pos) {
            Some(b'+') => Some(1),
            Some(b'-') => Some(-1),
            _ => None,
        };
        if sign.is_some() {
            self.pos += 1;
        }
        let start = self.pos;
        while self.pos < self.bytes.len()
            && self.bytes[self.pos].is_ascii_digit()
            && self.pos - start < 10
        {
            self.pos += 1;
        }
        let count = self.pos - start;
        let valid = match sign {
            None => count == 4,
            Some(1) => (5..=10).contains(&count),
            Some(_) => (4..=10).contains(&count),
        };
        if !valid {
            return None;
        }
        let value = number(&self.bytes[start..self.pos]);
        Some(value * sign.unwrap_or(1))
    }

    fn digits(&mut self, count: usize) -> Option<i64> {
        let slice = self.bytes.get(self.pos..self.pos + count)?;
        if !slice.iter().all(u8::is_ascii_digit) {
            return None;
        }
        self.pos += count;
        Some(number(slice))
    }

    fn literal(&mut self, byte: u8) -> Option<()> {
        (self.bytes.get(self.pos) == Some(&byte)).then(|| self.pos += 1)
    }

    /// An optional `.` and up to nine digits (Java accepts a bare `.`).
    fn fraction(&mut self) -> Option<u32> {
        if self.literal(b'.').is_none() {
            return Some(0);
        }
        let start = self.pos;
        while self.pos < self.bytes.len() && self.bytes[self.pos].is_ascii_digit() {
            self.pos += 1;
        }
        let digits = &self.bytes[start..self.pos];
        if digits.len() > 9 {
            return None;
        }
        let mut nanos = number(digits) as u32;
        for _ in digits.len()..9 {
            nanos *= 10;
        }
        Some(nanos)
    }

    /// Seconds east of UTC: `Z`, `±HH:MM` or `±HH:MM:SS`, at most 18 hours.
    fn offset(&mut self) -> Option<i64> {
        let sign = match self.bytes.get(self.pos)? {
            b'Z' => {
                self.pos += 1;
                return Some(0);
            }
            b'+' => 1,
            b'-' => -1,
            _ => return None,
        };
        self.pos += 1;
        let hours = self.digits(2)?;
        self.literal(b':')?;
        let minutes = self.digits(2)?;
        let seconds = if self.literal(b':').is_some() {
            self.digits(2)?
        } else {
            0
        };
        if hours > 18 || minutes > 59 || seconds > 59 {
            return None;
        }
        let total = hours * 3600 + minutes * 60 + seconds;
        (total <= 18 * 3600).then_some(sign * total)
    }
}

fn number(digits: &[u8]) -> i64 {
    digits.iter().fold(0, |acc, d| acc * 10 + (d - b'0') as i64)
}

fn is_leap(year: i64) -> bool {
    year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
}

fn days_in_month(year: i64, month: i64) -> i64 {
    match month {
        2 if is_leap(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + if month <= 2 { 1 } else { 0 };
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_what_java_instant_parse_reads() {
        let noon = Instant::parse("2026-06-15T12:00:00Z").unwrap();
        assert_eq!(noon.unix_secs(), 1_781_524_800);
        assert_eq!(
            Instant::parse("1970-01-01T00:00:00Z").unwrap(),
            Instant::EPOCH
        );
        assert_eq!(
            Instant::parse("2026-01-01T00:00:00.5Z")
                .unwrap()
                .subsec_nanos(),
            500_000_000
        );
        assert_eq!(
            Instant::parse("2026-01-01T00:00:00.123456789Z")
                .unwrap()
                .subsec_nanos(),
            123_456_789
        );
        assert_eq!(
            Instant::parse("2026-06-15T14:00:00+02:00").unwrap(),
            Instant::parse("2026-06-15T12:00:00Z").unwrap()
        );
        assert_eq!(
            Instant::parse("2026-06-15T24:00:00Z").unwrap(),
            Instant::parse("2026-06-16T00:00:00Z").unwrap()
        );
        assert_eq!(
            Instant::parse("1969-12-31T23:59:59Z")
                .unwrap()
                .unix_millis(),
            -1000
        );
        assert_eq!(
            Instant::parse("+10000-01-01T00:00:00Z")
                .unwrap()
                .to_string(),
            "+10000-01-01T00:00:00Z"
        );
        assert_eq!(
            Instant::parse("2024-02-29T00:00:00Z").unwrap().to_string(),
            "2024-02-29T00:00:00Z"
        );
    }

    #[test]
    fn refuses_what_java_instant_parse_refuses() {
        for bad in [
            "soon",
            "",
            "2026-01-01",
            "2026-01-01T00:00Z",
            "2026-01-01T00:00:00",
            "2026-01-01 00:00:00Z",
            "2026-13-01T00:00:00Z",
            "2025-02-29T00:00:00Z",
            "2026-01-01T25:00:00Z",
            "2026-01-01T00:60:00Z",
            "2026-01-01T00:00:00.1234567890Z",
            "2026-01-01T00:00:00z",
            "+2026-01-01T00:00:00Z",
            "12026-01-01T00:00:00Z",
            "2026-01-01T00:00:00Z ",
            "2026-01-01T00:00:00+19:00",
        ] {
            assert!(Instant::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn converts_milliseconds_and_prints_like_java() {
        let t = Instant::from_unix_millis(-1);
        assert_eq!(t.unix_secs(), -1);
        assert_eq!(t.subsec_nanos(), 999_000_000);
        assert_eq!(t.unix_millis(), -1);
        assert_eq!(
            Instant::from_unix_millis(1_500).to_string(),
            "1970-01-01T00:00:01.500Z"
        );
        assert_eq!(
            Instant::from_parts(0, 1_000).to_string(),
            "1970-01-01T00:00:00.000001Z"
        );
        assert_eq!(Instant::EPOCH.plus_millis(-1), t);
        assert!(Instant::now() > Instant::parse("2020-01-01T00:00:00Z").unwrap());
        let round = Instant::parse("2026-03-04T05:06:07.089Z").unwrap();
        assert_eq!(Instant::parse(&round.to_string()).unwrap(), round);
    }
}
