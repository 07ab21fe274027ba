//! qctl's values on PostgreSQL's wire. A bound value takes the type the
//! server expects at its placeholder (an id as bigint or uuid, a status as
//! text or an enum, a time as timestamptz or timestamp), so the SQL never
//! casts text to reach a column's type and indexes stay usable. Rows come
//! back as qctl's values whatever the column types.

use std::error::Error as StdError;

use chrono::{DateTime, NaiveDateTime, Utc};
use postgres::types::private::BytesMut;
use postgres::types::{FromSql, IsNull, Kind, ToSql, Type, to_sql_checked};

use crate::sql::{Bind, Value};

type BoxError = Box<dyn StdError + Sync + Send>;

/// A bound value, encoded for the placeholder's type.
#[derive(Debug)]
pub struct PgBind<'a>(pub &'a Bind);

fn text_like(ty: &Type) -> bool {
    matches!(
        *ty,
        Type::TEXT | Type::VARCHAR | Type::BPCHAR | Type::NAME | Type::UNKNOWN
    ) || matches!(ty.kind(), Kind::Enum(_))
        || ty.name() == "citext"
}

/// An integer in `numeric`'s binary form: base-10000 digits, most
/// significant first.
fn numeric_of_int(n: i64, out: &mut BytesMut) {
    let mut digits: Vec<i16> = Vec::new();
    let mut rest = n.unsigned_abs();
    while rest > 0 {
        digits.push((rest % 10_000) as i16);
        rest /= 10_000;
    }
    digits.reverse();
    let weight = digits.len().saturating_sub(1) as i16;
    let sign: u16 = if n < 0 { 0x4000 } else { 0 };
    out.extend_from_slice(&(digits.len() as i16).to_be_bytes());
    out.extend_from_slice(&weight.to_be_bytes());
    out.extend_from_slice(&sign.to_be_bytes());
    out.extend_from_slice(&0u16.to_be_bytes()); // scale
    for digit in digits {
        out.extend_from_slice(&digit.to_be_bytes());
    }
}

fn mismatch(bind: &Bind, ty: &Type) -> BoxError {
    let what = match bind {
        Bind::Null => "NULL".to_string(),
        Bind::Int(n) => format!("the number {n}"),
        Bind::Float(f) => format!("the number {f}"),
        Bind::Text(t) => format!("the text '{t}'"),
        Bind::Json(_) => "a JSON value".to_string(),
        Bind::Time(t) => format!("the time {}", crate::model::rfc3339(t)),
        Bind::Bool(b) => format!("the boolean {b}"),
    };
    format!("cannot bind {what} to a {} parameter", ty.name()).into()
}

/// An integer for a narrower column, or why it does not fit.
fn narrow<T: TryFrom<i64>>(n: i64, ty: &Type) -> Result<T, BoxError> {
    let (min, max) = match *ty {
        Type::INT2 => (i64::from(i16::MIN), i64::from(i16::MAX)),
        _ => (i64::from(i32::MIN), i64::from(i32::MAX)),
    };
    T::try_from(n).map_err(|_| {
        format!(
            "{n} is out of range for this {} column ({min} to {max})",
            ty.name()
        )
        .into()
    })
}

impl ToSql for PgBind<'_> {
    fn to_sql(&self, ty: &Type, out: &mut BytesMut) -> Result<IsNull, BoxError> {
        // One value where an array is expected (`id = ANY($1)`, a
        // `text[]` column): a one-element array of it.
        if let Kind::Array(element) = ty.kind()
            && !matches!(self.0, Bind::Null)
        {
            let mut item = BytesMut::new();
            self.to_sql(element, &mut item)?;
            out.extend_from_slice(&1i32.to_be_bytes()); // dimensions
            out.extend_from_slice(&0i32.to_be_bytes()); // no NULLs
            out.extend_from_slice(&element.oid().to_be_bytes());
            out.extend_from_slice(&1i32.to_be_bytes()); // length
            out.extend_from_slice(&1i32.to_be_bytes()); // lower bound
            out.extend_from_slice(&i32::try_from(item.len())?.to_be_bytes());
            out.extend_from_slice(&item);
            return Ok(IsNull::No);
        }
        if *ty == Type::NUMERIC
            && let Bind::Int(n) = self.0
        {
            numeric_of_int(*n, out);
            return Ok(IsNull::No);
        }
        match self.0 {
            Bind::Null => Ok(IsNull::Yes),
            Bind::Int(n) => match *ty {
                Type::INT2 => narrow::<i16>(*n, ty)?.to_sql(ty, out),
                Type::INT4 => narrow::<i32>(*n, ty)?.to_sql(ty, out),
                Type::INT8 => n.to_sql(ty, out),
                Type::FLOAT8 => (*n as f64).to_sql(ty, out),
                Type::FLOAT4 => (*n as f32).to_sql(ty, out),
                Type::BOOL => (*n != 0).to_sql(ty, out),
                _ if text_like(ty) => {
                    out.extend_from_slice(n.to_string().as_bytes());
                    Ok(IsNull::No)
                }
                _ => Err(mismatch(self.0, ty)),
            },
            Bind::Float(f) => match *ty {
                Type::FLOAT8 => f.to_sql(ty, out),
                Type::FLOAT4 => (*f as f32).to_sql(ty, out),
                Type::INT8 => (f.round() as i64).to_sql(ty, out),
                Type::INT4 => narrow::<i32>(f.round() as i64, ty)?.to_sql(ty, out),
                _ => Err(mismatch(self.0, ty)),
            },
            Bind::Text(text) => match *ty {
                Type::INT2 | Type::INT4 | Type::INT8 => {
                    let n: i64 = text.trim().parse().map_err(|_| {
                        format!(
                            "'{text}' is not a number, as this {} column needs",
                            ty.name()
                        )
                    })?;
                    PgBind(&Bind::Int(n)).to_sql(ty, out)
                }
                Type::UUID => {
                    out.extend_from_slice(&parse_uuid(text)?);
                    Ok(IsNull::No)
                }
                Type::JSONB => {
                    // jsonb's binary form is a version byte, then the text.
                    out.extend_from_slice(&[1]);
                    out.extend_from_slice(text.as_bytes());
                    Ok(IsNull::No)
                }
                Type::BOOL => (text == "true" || text == "t").to_sql(ty, out),
                Type::TIMESTAMPTZ | Type::TIMESTAMP => {
                    let time = crate::duration::parse_timestamp(text)
                        .ok_or_else(|| format!("'{text}' is not a time"))?;
                    PgBind(&Bind::Time(time)).to_sql(ty, out)
                }
                _ => {
                    // text, varchar, enums, json, bytea and anything else
                    // whose binary form is its text.
                    out.extend_from_slice(text.as_bytes());
                    Ok(IsNull::No)
                }
            },
            Bind::Json(text) => {
                if *ty == Type::JSONB {
                    out.extend_from_slice(&[1]);
                }
                out.extend_from_slice(text.as_bytes());
                Ok(IsNull::No)
            }
            Bind::Time(time) => match *ty {
                Type::TIMESTAMP => time.naive_utc().to_sql(ty, out),
                Type::TIMESTAMPTZ => time.to_sql(ty, out),
                Type::INT8 => time.timestamp().to_sql(ty, out),
                _ if text_like(ty) => {
                    out.extend_from_slice(crate::model::rfc3339(time).as_bytes());
                    Ok(IsNull::No)
                }
                _ => Err(mismatch(self.0, ty)),
            },
            Bind::Bool(b) => match *ty {
                Type::BOOL => b.to_sql(ty, out),
                _ => PgBind(&Bind::Int(i64::from(*b))).to_sql(ty, out),
            },
        }
    }

    fn accepts(_: &Type) -> bool {
        true
    }

    to_sql_checked!();
}

/// 36-character uuid text as its 16 bytes.
fn parse_uuid(text: &str) -> Result<[u8; 16], BoxError> {
    let hex: String = text.chars().filter(|c| *c != '-').collect();
    if hex.len() != 32 {
        return Err(format!("'{text}' is not a uuid").into());
    }
    let mut bytes = [0u8; 16];
    for (i, byte) in bytes.iter_mut().enumerate() {
        *byte = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16)
            .map_err(|_| format!("'{text}' is not a uuid"))?;
    }
    Ok(bytes)
}

/// A value read from a row, whatever the column's type.
pub struct PgValue(pub Value);

impl<'a> FromSql<'a> for PgValue {
    fn from_sql(ty: &Type, raw: &'a [u8]) -> Result<PgValue, BoxError> {
        let text = || String::from_utf8_lossy(raw).into_owned();
        Ok(PgValue(match *ty {
            Type::INT2 => Value::Int(i16::from_sql(ty, raw)?.into()),
            Type::INT4 => Value::Int(i32::from_sql(ty, raw)?.into()),
            Type::INT8 => Value::Int(i64::from_sql(ty, raw)?),
            Type::OID => Value::Int(u32::from_sql(ty, raw)?.into()),
            Type::FLOAT4 => Value::Float(f32::from_sql(ty, raw)?.into()),
            Type::FLOAT8 => Value::Float(f64::from_sql(ty, raw)?),
            Type::NUMERIC => numeric(raw)?,
            Type::BOOL => Value::Bool(bool::from_sql(ty, raw)?),
            Type::TIMESTAMPTZ => Value::Time(DateTime::<Utc>::from_sql(ty, raw)?),
            Type::TIMESTAMP => Value::Time(NaiveDateTime::from_sql(ty, raw)?.and_utc()),
            Type::BYTEA => Value::Bytes(raw.to_vec()),
            Type::JSONB => {
                Value::Text(String::from_utf8_lossy(raw.get(1..).unwrap_or_default()).into_owned())
            }
            Type::UUID if raw.len() == 16 => {
                let hex: String = raw.iter().map(|b| format!("{b:02x}")).collect();
                Value::Text(format!(
                    "{}-{}-{}-{}-{}",
                    &hex[..8],
                    &hex[8..12],
                    &hex[12..16],
                    &hex[16..20],
                    &hex[20..]
                ))
            }
            _ => Value::Text(text()),
        }))
    }

    fn from_sql_null(_: &Type) -> Result<PgValue, BoxError> {
        Ok(PgValue(Value::Null))
    }

    fn accepts(_: &Type) -> bool {
        true
    }
}

/// A NUMERIC in its binary form (base-10000 digits), as an integer when
/// it has no fraction, else as a float.
fn numeric(raw: &[u8]) -> Result<Value, BoxError> {
    let word = |i: usize| -> Result<i16, BoxError> {
        raw.get(i..i + 2)
            .map(|b| i16::from_be_bytes([b[0], b[1]]))
            .ok_or_else(|| "a truncated numeric".into())
    };
    let (ndigits, weight, sign, dscale) = (word(0)?, word(2)?, word(4)? as u16, word(6)?);
    if sign == 0xC000 {
        return Ok(Value::Float(f64::NAN));
    }
    let mut value = 0f64;
    for i in 0..ndigits as usize {
        let digit = f64::from(word(8 + 2 * i)?);
        value += digit * 10_000f64.powi(i32::from(weight) - i as i32);
    }
    if sign == 0x4000 {
        value = -value;
    }
    Ok(if dscale == 0 && value.abs() < 9.0e15 {
        Value::Int(value as i64)
    } else {
        Value::Float(value)
    })
}
