//! The placeholders of an application's own claim query (`--sql`), and
//! what each stands for, guessed from the column it is compared with.

/// What value a placeholder of an application's own query stands for,
/// guessed from the column it is compared with. An unbound parameter is
/// NULL to SQLite's planner and makes a misleading plan, so `--sql` binds
/// realistic values instead.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Guess {
    Queue,
    PendingStatus,
    Worker,
    Now,
    Int(i64),
    Unknown,
}

/// Each placeholder of `sql` in order of appearance (`?`, `?3`, `:name`,
/// `@name`, `$name`, `$1`), with its guessed meaning.
pub fn guess_placeholders(sql: &str, layout: &crate::layout::Layout) -> Vec<(String, Guess)> {
    use crate::layout::Concept;
    let bytes = sql.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i] as char;
        if c == '\'' {
            // Skip a string literal ('' is an escaped quote).
            i += 1;
            while i < bytes.len() {
                if bytes[i] == b'\'' {
                    if bytes.get(i + 1) == Some(&b'\'') {
                        i += 2;
                        continue;
                    }
                    break;
                }
                i += 1;
            }
            i += 1;
            continue;
        }
        let starts = match c {
            '?' => true,
            ':' | '@' | '$' => {
                bytes
                    .get(i + 1)
                    .is_some_and(|n| n.is_ascii_alphanumeric() || *n == b'_')
                    && (i == 0 || bytes[i - 1] != b':')
            }
            _ => false,
        };
        if !starts {
            i += 1;
            continue;
        }
        let start = i;
        i += 1;
        while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
            i += 1;
        }
        let token = sql[start..i].to_string();
        let before = sql[..start].trim_end();
        let before = before
            .trim_end_matches(|ch: char| "=<>!(".contains(ch) || ch.is_whitespace())
            .trim_end();
        let before = before
            .strip_suffix("IN")
            .or_else(|| before.strip_suffix("in"))
            .or_else(|| before.strip_suffix("LIKE"))
            .unwrap_or(before)
            .trim_end_matches(|ch: char| ch.is_whitespace() || ch == '(');
        let word: String = before
            .chars()
            .rev()
            .take_while(|ch| ch.is_ascii_alphanumeric() || *ch == '_' || *ch == '"' || *ch == '.')
            .collect::<String>()
            .chars()
            .rev()
            .collect();
        let column = word
            .rsplit('.')
            .next()
            .unwrap_or("")
            .trim_matches('"')
            .to_ascii_lowercase();
        let is = |concept: Concept| {
            layout
                .column(concept)
                .is_some_and(|c| c.as_str().eq_ignore_ascii_case(&column))
        };
        let guess = if column == "limit" || column == "offset" {
            Guess::Int(1)
        } else if is(Concept::Queue) {
            Guess::Queue
        } else if is(Concept::Status) {
            Guess::PendingStatus
        } else if is(Concept::LockedBy) {
            Guess::Worker
        } else if [
            Concept::RunAt,
            Concept::LockedUntil,
            Concept::LockedAt,
            Concept::CreatedAt,
            Concept::UpdatedAt,
        ]
        .into_iter()
        .any(is)
        {
            Guess::Now
        } else if is(Concept::Attempts) {
            Guess::Int(0)
        } else if is(Concept::MaxAttempts) {
            Guess::Int(3)
        } else if is(Concept::Id) {
            Guess::Int(1)
        } else {
            Guess::Unknown
        };
        out.push((token, guess));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_guessed_from_their_columns() {
        let layout = crate::layout::Layout::preset("default").unwrap();
        let sql = "UPDATE jobs SET locked_by = :worker, locked_at = ?2 WHERE id = (SELECT j.id FROM jobs j \
                   WHERE j.\"status\" = ? AND queue IN (@q) AND run_at <= $now AND note = 'a ? b' \
                   ORDER BY run_at LIMIT ?)";
        let guesses: Vec<(String, Guess)> = guess_placeholders(sql, &layout);
        let want = vec![
            (":worker".to_string(), Guess::Worker),
            ("?2".into(), Guess::Now),
            ("?".into(), Guess::PendingStatus),
            ("@q".into(), Guess::Queue),
            ("$now".into(), Guess::Now),
            ("?".into(), Guess::Int(1)),
        ];
        assert_eq!(guesses, want);
        let pg = guess_placeholders(
            "SELECT id FROM jobs WHERE queue = $1 AND run_at <= $2::timestamptz",
            &layout,
        );
        assert_eq!(
            pg,
            vec![("$1".to_string(), Guess::Queue), ("$2".into(), Guess::Now)]
        );
        assert!(guess_placeholders("SELECT '?' , x::text FROM t", &layout).is_empty());
    }
}
