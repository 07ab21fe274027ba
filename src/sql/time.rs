//! Times as tables store them: timestamps, epoch seconds or milliseconds,
//! ISO-8601 text in the table's own style, Julian days. Encoding a time
//! for a column and decoding what a column held, with no database at hand.

use chrono::{DateTime, TimeZone, Utc};

use super::{Bind, Value};
use crate::duration::parse_timestamp;
use crate::layout::TimeEncoding;

/// How a time column stores its times.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeRepr {
    /// PostgreSQL `timestamptz` (MySQL DATETIME read in UTC).
    Timestamptz,
    /// `timestamp without time zone`, holding UTC.
    Timestamp,
    EpochSeconds,
    EpochMillis,
    /// ISO-8601 text in the table's style (SQLite).
    Iso(IsoStyle),
    /// SQLite's julianday() numbers.
    JulianDay,
}

impl TimeRepr {
    pub fn of_encoding(encoding: TimeEncoding) -> TimeRepr {
        match encoding {
            TimeEncoding::Unix => TimeRepr::EpochSeconds,
            TimeEncoding::UnixMs => TimeRepr::EpochMillis,
            TimeEncoding::Iso8601 => TimeRepr::Iso(IsoStyle::SQLITE),
            TimeEncoding::JulianDay => TimeRepr::JulianDay,
        }
    }

    /// The encoding name, for messages about SQLite tables.
    pub fn name(self) -> &'static str {
        match self {
            TimeRepr::Timestamptz => "timestamptz",
            TimeRepr::Timestamp => "timestamp",
            TimeRepr::EpochSeconds => "unix",
            TimeRepr::EpochMillis => "unix_ms",
            TimeRepr::Iso(_) => "iso8601",
            TimeRepr::JulianDay => "julianday",
        }
    }
}

/// Integers above this are milliseconds: as seconds they would be past
/// the year 5138.
pub const MILLIS_ABOVE: i64 = 100_000_000_000;
/// Julian day numbers are about 2.4 million; Unix seconds stored as REAL
/// are far larger.
pub const JULIAN_BELOW: f64 = 10_000_000.0;

/// ISO-8601 text as the table writes it, so comparisons stay lexical.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IsoStyle {
    pub t_separator: bool,
    pub fraction_digits: usize,
    pub zulu: bool,
}

impl IsoStyle {
    /// SQLite's own `datetime('now')` format.
    pub const SQLITE: IsoStyle = IsoStyle {
        t_separator: false,
        fraction_digits: 0,
        zulu: false,
    };

    /// The style of a stored value.
    pub fn of(sample: &str) -> IsoStyle {
        let fraction_digits = sample.split_once('.').map_or(0, |(_, frac)| {
            frac.chars().take_while(char::is_ascii_digit).count()
        });
        IsoStyle {
            t_separator: sample.contains('T'),
            fraction_digits,
            zulu: sample.ends_with('Z'),
        }
    }

    fn format(self, time: DateTime<Utc>) -> String {
        let sep = if self.t_separator { 'T' } else { ' ' };
        let mut text = time.format(&format!("%Y-%m-%d{sep}%H:%M:%S")).to_string();
        if self.fraction_digits > 0 {
            let nanos = format!("{:09}", time.timestamp_subsec_nanos());
            text.push('.');
            text.push_str(&nanos[..self.fraction_digits.min(9)]);
        }
        if self.zulu {
            text.push('Z');
        }
        text
    }
}

/// A time as a value for a column stored as `repr`.
pub fn encode(time: DateTime<Utc>, repr: TimeRepr) -> Bind {
    match repr {
        TimeRepr::Timestamptz | TimeRepr::Timestamp => Bind::Time(time),
        TimeRepr::EpochSeconds => Bind::Int(time.timestamp()),
        TimeRepr::EpochMillis => Bind::Int(time.timestamp_millis()),
        TimeRepr::Iso(style) => Bind::Text(style.format(time)),
        TimeRepr::JulianDay => {
            Bind::Float(time.timestamp_millis() as f64 / 86_400_000.0 + 2_440_587.5)
        }
    }
}

/// A stored time, whatever kind of value holds it: a column of one
/// representation may hold a value of another (an integer in a text
/// column), and each value is read by its own kind.
pub fn decode(value: &Value, repr: TimeRepr) -> Option<DateTime<Utc>> {
    match value {
        Value::Null | Value::Bool(_) | Value::Bytes(_) => None,
        Value::Time(time) => Some(*time),
        // The column's unit, whatever the value's size: a job due in the
        // year 9999 is 253,402,300,799 seconds, not a time in 1978 in
        // milliseconds. A number in a column of another representation
        // (an integer in a text column) is read as seconds unless it can
        // only be milliseconds.
        Value::Int(n) => match repr {
            TimeRepr::EpochMillis => Utc.timestamp_millis_opt(*n).single(),
            TimeRepr::EpochSeconds => Utc.timestamp_opt(*n, 0).single(),
            _ if n.abs() > MILLIS_ABOVE => Utc.timestamp_millis_opt(*n).single(),
            _ => Utc.timestamp_opt(*n, 0).single(),
        },
        Value::Float(f) if *f < JULIAN_BELOW => Utc
            .timestamp_millis_opt(((f - 2_440_587.5) * 86_400_000.0) as i64)
            .single(),
        Value::Float(f) => Utc.timestamp_millis_opt((f * 1000.0) as i64).single(),
        Value::Text(text) => parse_timestamp(text),
    }
}

/// A time as microseconds since the epoch: the form a lock-time fence
/// token takes.
pub fn micros(time: DateTime<Utc>) -> i64 {
    time.timestamp_micros()
}

pub fn from_micros(micros: i64) -> Option<DateTime<Utc>> {
    Utc.timestamp_micros(micros).single()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn far_dates_keep_their_column_unit() {
        let far = Utc.with_ymd_and_hms(9999, 12, 31, 23, 59, 59).unwrap();
        for repr in [TimeRepr::EpochSeconds, TimeRepr::EpochMillis] {
            let value = match encode(far, repr) {
                Bind::Int(n) => Value::Int(n),
                other => panic!("{other:?}"),
            };
            assert_eq!(decode(&value, repr), Some(far), "{repr:?}");
        }
    }

    #[test]
    fn every_representation_round_trips() {
        let time = Utc.with_ymd_and_hms(2026, 1, 31, 9, 30, 15).unwrap();
        for repr in [
            TimeRepr::Timestamptz,
            TimeRepr::EpochSeconds,
            TimeRepr::EpochMillis,
            TimeRepr::Iso(IsoStyle::SQLITE),
            TimeRepr::Iso(IsoStyle {
                t_separator: true,
                fraction_digits: 3,
                zulu: true,
            }),
            TimeRepr::JulianDay,
        ] {
            let value = match encode(time, repr) {
                Bind::Time(t) => Value::Time(t),
                Bind::Int(n) => Value::Int(n),
                Bind::Float(f) => Value::Float(f),
                Bind::Text(t) => Value::Text(t),
                other => panic!("{other:?}"),
            };
            let back = decode(&value, repr).unwrap();
            assert!(
                (back - time).num_milliseconds().abs() <= 1,
                "{repr:?}: {back}"
            );
        }
    }
}
