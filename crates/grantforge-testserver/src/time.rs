//! Minimal UTC time helpers (no date crate): ISO-8601 instants as Java's `Instant` parses and prints them.
//!
//! Apart from the engine's `Instant` on purpose: the test server plays GrantForge's Java server, the
//! oracle the agent is tested against, and shares no code with the agent. Both follow JDK 17's
//! `Instant.parse`, checked against it (`…00.Z` included).

use std::time::{SystemTime, UNIX_EPOCH};

/// Seconds and nanoseconds since the Unix epoch.
pub(crate) type Instant = (i64, u32);

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
pub(crate) fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let mp = (i64::from(month) + 9) % 12;
    let doy = (153 * mp + 2) / 5 + i64::from(day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The date of a day number (inverse of [`days_from_civil`]).
pub(crate) fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = if z >= 0 { z } else { z - 146_096 } / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if month <= 2 { y + 1 } else { y }, month, day)
}

fn is_leap(year: i64) -> bool {
    (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
}

fn days_in_month(year: i64, month: u32) -> u32 {
    match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if is_leap(year) => 29,
        2 => 28,
        _ => 0,
    }
}

struct Cursor<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl Cursor<'_> {
    fn digits(&mut self, count: usize) -> Option<u32> {
        let end = self.pos.checked_add(count)?;
        let slice = self.bytes.get(self.pos..end)?;
        let mut value = 0u32;
        for &b in slice {
            if !b.is_ascii_digit() {
                return None;
            }
            value = value * 10 + u32::from(b - b'0');
        }
        self.pos = end;
        Some(value)
    }

    fn byte(&mut self, wanted: &[u8]) -> Option<u8> {
        let b = *self.bytes.get(self.pos)?;
        if wanted.contains(&b) {
            self.pos += 1;
            Some(b)
        } else {
            None
        }
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }
}

/// Parses an instant the way `DateTimeFormatter.ISO_INSTANT` does: `yyyy-MM-ddTHH:mm:ss[.fraction]` followed
/// by `Z` or an offset `+HH:MM[:SS]` (case-insensitive `T`/`Z`). Returns `None` for anything else.
pub(crate) fn parse_instant(text: &str) -> Option<Instant> {
    let mut c = Cursor {
        bytes: text.as_bytes(),
        pos: 0,
    };
    let year = i64::from(c.digits(4)?);
    c.byte(b"-")?;
    let month = c.digits(2)?;
    c.byte(b"-")?;
    let day = c.digits(2)?;
    c.byte(b"Tt")?;
    let hour = c.digits(2)?;
    c.byte(b":")?;
    let minute = c.digits(2)?;
    c.byte(b":")?;
    let second = c.digits(2)?;
    let mut nanos = 0u32;
    if c.byte(b".").is_some() {
        let mut count = 0;
        while let Some(b) = c.peek() {
            if !b.is_ascii_digit() {
                break;
            }
            if count == 9 {
                return None;
            }
            nanos = nanos * 10 + u32::from(b - b'0');
            count += 1;
            c.pos += 1;
        }
        // Java's fraction parser takes 0 to 9 digits after the point: `…00.Z` is midnight.
        for _ in count..9 {
            nanos *= 10;
        }
    }
    let offset: i64 = match c.byte(b"Zz+-")? {
        b'Z' | b'z' => 0,
        sign => {
            let oh = c.digits(2)?;
            c.byte(b":")?;
            let om = c.digits(2)?;
            let os = if c.byte(b":").is_some() {
                c.digits(2)?
            } else {
                0
            };
            if oh > 18 || om > 59 || os > 59 {
                return None;
            }
            let total = i64::from(oh * 3600 + om * 60 + os);
            if sign == b'-' {
                -total
            } else {
                total
            }
        }
    };
    if c.pos != c.bytes.len() {
        return None;
    }
    if !(1..=12).contains(&month)
        || day == 0
        || day > days_in_month(year, month)
        || hour > 23
        || minute > 59
        || second > 59
    {
        return None;
    }
    let secs = days_from_civil(year, month, day) * 86_400
        + i64::from(hour * 3600 + minute * 60 + second)
        - offset;
    Some((secs, nanos))
}

/// Prints an instant as `Instant.toString()` does: seconds always, the fraction in groups of three digits, `Z`.
pub(crate) fn format_instant((secs, nanos): Instant) -> String {
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let (year, month, day) = civil_from_days(days);
    let year = if year > 9999 {
        format!("+{year}")
    } else {
        format!("{year:04}")
    };
    let mut out = format!(
        "{year}-{month:02}-{day:02}T{:02}:{:02}:{:02}",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    );
    if nanos > 0 {
        if nanos % 1_000_000 == 0 {
            out.push_str(&format!(".{:03}", nanos / 1_000_000));
        } else if nanos % 1000 == 0 {
            out.push_str(&format!(".{:06}", nanos / 1000));
        } else {
            out.push_str(&format!(".{nanos:09}"));
        }
    }
    out.push('Z');
    out
}

/// The current time.
pub(crate) fn now() -> Instant {
    match SystemTime::now().duration_since(UNIX_EPOCH) {
        Ok(d) => (
            i64::try_from(d.as_secs()).unwrap_or(i64::MAX),
            d.subsec_nanos(),
        ),
        Err(_) => (0, 0),
    }
}

/// The current time as an ISO-8601 string with millisecond precision.
pub(crate) fn now_iso() -> String {
    let (secs, nanos) = now();
    format_instant((secs, nanos / 1_000_000 * 1_000_000))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips() {
        assert_eq!(parse_instant("1970-01-01T00:00:00Z"), Some((0, 0)));
        assert_eq!(
            parse_instant("2026-01-01T00:00:00Z")
                .map(format_instant)
                .as_deref(),
            Some("2026-01-01T00:00:00Z")
        );
        assert_eq!(
            parse_instant("2024-02-29T12:30:15.5Z")
                .map(format_instant)
                .as_deref(),
            Some("2024-02-29T12:30:15.500Z")
        );
        assert_eq!(
            parse_instant("2024-02-29T12:30:15.000001Z")
                .map(format_instant)
                .as_deref(),
            Some("2024-02-29T12:30:15.000001Z")
        );
        assert_eq!(
            parse_instant("2024-01-01T01:00:00+01:00"),
            parse_instant("2024-01-01T00:00:00Z")
        );
        assert_eq!(
            parse_instant("2024-01-01t00:00:00z"),
            parse_instant("2024-01-01T00:00:00Z")
        );
        // As `Instant.parse` (JDK 17): a point with no digits after it is accepted.
        assert_eq!(
            parse_instant("2024-01-01T00:00:00.Z"),
            parse_instant("2024-01-01T00:00:00Z")
        );
        for bad in [
            "2023-02-29T00:00:00Z",
            "2024-01-01T00:00Z",
            "2024-01-01 00:00:00Z",
            "2024-01-01T00:00:00",
            "x",
            "",
            "2024-13-01T00:00:00Z",
            "2024-01-01T24:00:00Z",
            "2024-01-01T00:00:00.1234567890Z",
            "2024-01-01T00:00:00Zjunk",
        ] {
            assert_eq!(parse_instant(bad), None, "{bad}");
        }
        for days in [-800_000, -1, 0, 1, 19_000, 2_900_000] {
            let (y, m, d) = civil_from_days(days);
            assert_eq!(days_from_civil(y, m, d), days);
        }
    }
}
