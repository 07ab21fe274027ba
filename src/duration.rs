//! Durations and times as users (and tables) write them: `90s`, `10m`,
//! `1h30m`, `7d`; `2026-01-31T09:00:00Z`.

use std::time::Duration;

use chrono::{DateTime, NaiveDate, NaiveDateTime, Utc};

/// Parses a duration with a unit. A bare number is rejected with a hint,
/// because `--timeout 10` could mean seconds or minutes and guessing wrong
/// on a production queue requeues live jobs.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    if text.is_empty() {
        return Err("empty duration; write it with a unit, e.g. 90s, 10m, 1h30m or 7d".into());
    }
    if text.chars().all(|c| c.is_ascii_digit() || c == '.') {
        return Err(format!(
            "'{text}' has no unit; write {text}s for seconds or {text}m for minutes \
             (units: ms, s, m, h, d)"
        ));
    }
    // Only the documented units: humantime would also take `M` (months)
    // and `y`, and `--timeout 5M` must not quietly mean five months.
    let units_ok = text
        .split(|c: char| c.is_ascii_digit() || c.is_whitespace())
        .filter(|unit| !unit.is_empty())
        .all(|unit| matches!(unit, "ms" | "s" | "m" | "h" | "d"));
    if !units_ok {
        return Err(format!(
            "'{text}' is not a duration; write it like 90s, 10m, 1h30m or 7d (units: ms, s, m, h, d)"
        ));
    }
    let duration = humantime::parse_duration(text).map_err(|err| {
        format!("'{text}' is not a duration ({err}); write it like 90s, 10m, 1h30m or 7d")
    })?;
    // Ages are subtracted from now: keep them within a century.
    if duration > Duration::from_secs(100 * 365 * 86_400) {
        return Err(format!("'{text}' is longer than 100 years"));
    }
    Ok(duration)
}

/// A duration that must be longer than zero: a lease or a staleness
/// timeout of 0s would make every running job stale at once.
pub fn parse_positive_duration(text: &str) -> Result<Duration, String> {
    let duration = parse_duration(text)?;
    if duration.is_zero() {
        return Err(format!(
            "'{text}' is zero; this needs a duration longer than 0s (e.g. 30s, 10m)"
        ));
    }
    Ok(duration)
}

/// Formats a duration the way users write them (`1h30m`, `45s`).
pub fn format_duration(duration: Duration) -> String {
    let total = duration.as_secs();
    if total == 0 {
        return format!("{}ms", duration.as_millis());
    }
    let (days, hours, minutes, seconds) = (
        total / 86_400,
        total % 86_400 / 3600,
        total % 3600 / 60,
        total % 60,
    );
    let mut out = String::new();
    for (value, unit) in [(days, "d"), (hours, "h"), (minutes, "m"), (seconds, "s")] {
        if value > 0 {
            out.push_str(&format!("{value}{unit}"));
        }
    }
    out
}

/// Formats an age in seconds compactly for tables: `12.5s`, `3m20s`, `2d4h`.
pub fn format_age(seconds: f64) -> String {
    if seconds < 60.0 {
        return format!("{seconds:.1}s");
    }
    let whole = seconds as u64;
    let (days, hours, minutes, secs) = (
        whole / 86_400,
        whole % 86_400 / 3600,
        whole % 3600 / 60,
        whole % 60,
    );
    if days > 0 {
        format!("{days}d{hours}h")
    } else if hours > 0 {
        format!("{hours}h{minutes}m")
    } else {
        format!("{minutes}m{secs}s")
    }
}

/// Parses the text times real tables hold: RFC 3339, SQLite's datetime()
/// format with or without a fraction, and plain dates; zoneless means UTC.
pub fn parse_timestamp(text: &str) -> Option<DateTime<Utc>> {
    let text = text.trim();
    if let Ok(time) = DateTime::parse_from_rfc3339(text) {
        return Some(time.with_timezone(&Utc));
    }
    let zoneless = text.strip_suffix('Z').unwrap_or(text);
    for format in [
        "%Y-%m-%d %H:%M:%S%.f",
        "%Y-%m-%dT%H:%M:%S%.f",
        "%Y-%m-%d %H:%M",
    ] {
        if let Ok(naive) = NaiveDateTime::parse_from_str(zoneless, format) {
            return Some(naive.and_utc());
        }
    }
    NaiveDate::parse_from_str(zoneless, "%Y-%m-%d")
        .ok()
        .and_then(|d| d.and_hms_opt(0, 0, 0))
        .map(|naive| naive.and_utc())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_the_documented_forms() {
        assert_eq!(parse_duration("90s").unwrap(), Duration::from_secs(90));
        assert_eq!(parse_duration("10m").unwrap(), Duration::from_secs(600));
        assert_eq!(parse_duration("1h30m").unwrap(), Duration::from_secs(5400));
        assert_eq!(
            parse_duration("7d").unwrap(),
            Duration::from_secs(7 * 86_400)
        );
        assert_eq!(parse_duration("250ms").unwrap(), Duration::from_millis(250));
    }

    #[test]
    fn rejects_bare_numbers_with_a_hint() {
        let err = parse_duration("10").unwrap_err();
        assert!(err.contains("10s") && err.contains("10m"), "{err}");
        assert!(parse_duration("ten minutes").is_err());
        assert!(parse_duration("5M").is_err(), "months are not a unit here");
        assert!(parse_duration("1y").is_err());
        assert!(
            parse_duration("300000d").is_err(),
            "too long to subtract from now"
        );
        assert!(parse_duration("1.5h").is_err());
        assert!(parse_duration("").is_err());
    }

    #[test]
    fn timestamps_in_the_forms_tables_use() {
        let want = "2026-01-31T09:00:00Z";
        for text in [
            "2026-01-31T09:00:00Z",
            "2026-01-31 09:00:00",
            "2026-01-31T09:00:00",
            "2026-01-31T10:00:00+01:00",
        ] {
            assert_eq!(
                crate::model::rfc3339(&parse_timestamp(text).unwrap()),
                want,
                "{text}"
            );
        }
        assert_eq!(
            crate::model::rfc3339(&parse_timestamp("2026-01-31 09:00:00.250").unwrap()),
            "2026-01-31T09:00:00.250Z"
        );
        assert!(parse_timestamp("yesterday").is_none());
    }

    #[test]
    fn formats_round_trip() {
        assert_eq!(format_duration(Duration::from_secs(5400)), "1h30m");
        assert_eq!(format_duration(Duration::from_secs(7 * 86_400)), "7d");
        assert_eq!(format_duration(Duration::from_millis(200)), "200ms");
        assert_eq!(format_age(12.46), "12.5s");
        assert_eq!(format_age(200.0), "3m20s");
    }
}
