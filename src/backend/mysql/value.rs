//! qctl's values on MySQL's wire, and back. MySQL converts between
//! numbers and text at a comparison itself, so a value is bound as what
//! it is; times are DATETIME values in UTC (the session's time zone is
//! `+00:00`). Rows are read by each column's type, whether the server
//! sent them typed (prepared statements) or as text.

use chrono::{NaiveDate, NaiveDateTime};
use mysql::consts::ColumnType;

use crate::sql::{Bind, Value};

/// The binary character set: bytes, not text.
const BINARY: u16 = 63;

pub fn to_mysql(bind: &Bind) -> mysql::Value {
    match bind {
        Bind::Null => mysql::Value::NULL,
        Bind::Int(n) => mysql::Value::Int(*n),
        Bind::Float(f) => mysql::Value::Double(*f),
        Bind::Text(t) | Bind::Json(t) => mysql::Value::Bytes(t.as_bytes().to_vec()),
        Bind::Time(t) => {
            use chrono::{Datelike, Timelike};
            let t = t.naive_utc();
            mysql::Value::Date(
                u16::try_from(t.year()).unwrap_or(0),
                t.month() as u8,
                t.day() as u8,
                t.hour() as u8,
                t.minute() as u8,
                t.second() as u8,
                t.nanosecond() / 1000,
            )
        }
        Bind::Bool(b) => mysql::Value::Int(i64::from(*b)),
    }
}

pub fn params(binds: &[Bind]) -> mysql::Params {
    if binds.is_empty() {
        mysql::Params::Empty
    } else {
        mysql::Params::Positional(binds.iter().map(to_mysql).collect())
    }
}

/// A value of a column, by the column's type.
pub fn from_mysql(value: mysql::Value, column: &mysql::Column) -> Value {
    match value {
        mysql::Value::NULL => Value::Null,
        mysql::Value::Int(n) => Value::Int(n),
        mysql::Value::UInt(n) => Value::Int(i64::try_from(n).unwrap_or(i64::MAX)),
        mysql::Value::Float(f) => Value::Float(f.into()),
        mysql::Value::Double(f) => Value::Float(f),
        mysql::Value::Date(y, m, d, h, mi, s, us) => date(y, m, d, h, mi, s, us),
        mysql::Value::Time(negative, days, h, m, s, us) => Value::Text(format!(
            "{}{}:{m:02}:{s:02}.{us:06}",
            if negative { "-" } else { "" },
            u32::from(h) + days * 24
        )),
        mysql::Value::Bytes(bytes) => from_text(bytes, column),
    }
}

fn date(y: u16, m: u8, d: u8, h: u8, mi: u8, s: u8, us: u32) -> Value {
    NaiveDate::from_ymd_opt(y.into(), m.into(), d.into())
        .and_then(|date| date.and_hms_micro_opt(h.into(), mi.into(), s.into(), us))
        .map_or(Value::Null, |t| Value::Time(t.and_utc()))
}

/// A value the server sent as text (the text protocol, DECIMAL, JSON).
fn from_text(bytes: Vec<u8>, column: &mysql::Column) -> Value {
    use ColumnType::*;
    let text = || String::from_utf8_lossy(&bytes).into_owned();
    match column.column_type() {
        MYSQL_TYPE_TINY | MYSQL_TYPE_SHORT | MYSQL_TYPE_LONG | MYSQL_TYPE_LONGLONG
        | MYSQL_TYPE_INT24 | MYSQL_TYPE_YEAR => {
            let t = text();
            t.parse().map_or(Value::Text(t), Value::Int)
        }
        MYSQL_TYPE_FLOAT | MYSQL_TYPE_DOUBLE => {
            let t = text();
            t.parse().map_or(Value::Text(t), Value::Float)
        }
        MYSQL_TYPE_DECIMAL | MYSQL_TYPE_NEWDECIMAL => decimal(&text()),
        MYSQL_TYPE_DATETIME
        | MYSQL_TYPE_TIMESTAMP
        | MYSQL_TYPE_DATE
        | MYSQL_TYPE_DATETIME2
        | MYSQL_TYPE_TIMESTAMP2 => {
            let t = text();
            NaiveDateTime::parse_from_str(&t, "%Y-%m-%d %H:%M:%S%.f")
                .or_else(|_| {
                    NaiveDate::parse_from_str(&t, "%Y-%m-%d")
                        .map(|d| d.and_hms_opt(0, 0, 0).unwrap_or_default())
                })
                .map_or(Value::Null, |t| Value::Time(t.and_utc()))
        }
        MYSQL_TYPE_BIT => Value::Int(bytes.iter().fold(0i64, |n, b| (n << 8) | i64::from(*b))),
        _ if column.character_set() == BINARY && column.column_type() != MYSQL_TYPE_JSON => {
            Value::Bytes(bytes)
        }
        _ => Value::Text(text()),
    }
}

/// A DECIMAL (sums, averages): an integer when it has no fraction.
fn decimal(text: &str) -> Value {
    let trimmed = match text.split_once('.') {
        Some((whole, fraction)) if fraction.chars().all(|c| c == '0') => whole,
        _ => text,
    };
    match trimmed.parse::<i64>() {
        Ok(n) => Value::Int(n),
        Err(_) => text
            .parse::<f64>()
            .map_or(Value::Text(text.to_string()), Value::Float),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimals() {
        assert_eq!(decimal("12"), Value::Int(12));
        assert_eq!(decimal("12.000"), Value::Int(12));
        assert_eq!(decimal("-1.5"), Value::Float(-1.5));
    }

    #[test]
    fn zero_dates_are_null() {
        assert_eq!(date(0, 0, 0, 0, 0, 0, 0), Value::Null);
        assert!(matches!(date(2026, 1, 2, 3, 4, 5, 6), Value::Time(_)));
    }
}
