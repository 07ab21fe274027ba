//! Where the queue lives: the database URL, parsed and redacted.
//!
//! Resolution order (spec §2): `--database`, `QCTL_DATABASE_URL`,
//! `DATABASE_URL`, `database` in the config file, then `sqlite:qctl.db`.

use std::path::PathBuf;

use anyhow::Result;

use crate::error::QctlError;

/// The embedded default, relative to the current directory.
pub const DEFAULT_URL: &str = "sqlite:qctl.db";

/// A parsed database target.
#[derive(Debug, Clone)]
pub enum Target {
    Sqlite(SqliteTarget),
    Postgres(PostgresTarget),
    Mysql(MysqlTarget),
}

#[derive(Debug, Clone)]
pub struct SqliteTarget {
    pub path: PathBuf,
    /// `?mode=ro` in a `file:` URL: never write, even for write commands.
    pub read_only: bool,
}

#[derive(Debug, Clone)]
pub struct PostgresTarget {
    /// The URL or key=value string as the user gave it (may hold a password).
    pub conninfo: String,
}

#[derive(Debug, Clone)]
pub struct MysqlTarget {
    /// The `mysql://` or `mariadb://` URL as given (may hold a password).
    pub url: String,
}

impl Target {
    pub fn parse(url: &str) -> Result<Target> {
        let url = url.trim();
        if url.is_empty() {
            return Err(QctlError::usage("the database URL is empty"));
        }
        let lower = url.to_ascii_lowercase();
        if lower.starts_with("postgres://")
            || lower.starts_with("postgresql://")
            || looks_like_keyword_conninfo(url)
        {
            return Ok(Target::Postgres(PostgresTarget {
                conninfo: url.to_string(),
            }));
        }
        if lower.starts_with("mysql://") || lower.starts_with("mariadb://") {
            // Parsed now, so a bad URL is refused before anything runs.
            crate::backend::mysql::connect::parse_url(url)?;
            return Ok(Target::Mysql(MysqlTarget {
                url: url.to_string(),
            }));
        }
        refuse_malformed_url(url)?;
        let rest = if let Some(rest) = url.strip_prefix("sqlite:") {
            rest.strip_prefix("//").unwrap_or(rest)
        } else if let Some(rest) = url.strip_prefix("file:") {
            rest.strip_prefix("//").unwrap_or(rest)
        } else if let Some((scheme, _)) = url.split_once("://") {
            return Err(QctlError::usage(format!(
                "unsupported database URL scheme '{scheme}://' in {}; use sqlite:PATH, \
                 postgres://..., mysql://... or a plain file path",
                redact(url)
            )));
        } else {
            url
        };
        let (path, query) = match rest.split_once('?') {
            Some((path, query)) => (path, Some(query)),
            None => (rest, None),
        };
        let mut read_only = false;
        for pair in query.into_iter().flat_map(|q| q.split('&')) {
            match pair {
                "" | "mode=rw" | "mode=rwc" => {}
                "mode=ro" => read_only = true,
                other => {
                    return Err(QctlError::usage(format!(
                        "unsupported SQLite URL parameter '{other}' (qctl understands mode=ro)"
                    )));
                }
            }
        }
        if path.is_empty() {
            return Err(QctlError::usage(format!(
                "no file path in database URL '{url}'; write sqlite:PATH"
            )));
        }
        if path == ":memory:" {
            return Err(QctlError::usage(
                "an in-memory SQLite database holds no queue; give a file path",
            ));
        }
        Ok(Target::Sqlite(SqliteTarget {
            path: PathBuf::from(path),
            read_only,
        }))
    }

    /// The URL as it may be shown to a user: passwords replaced by `***`.
    pub fn display(&self) -> String {
        match self {
            Target::Sqlite(t) => format!("sqlite:{}", t.path.display()),
            Target::Postgres(t) => redact(&t.conninfo),
            Target::Mysql(t) => redact(&t.url),
        }
    }

    pub fn backend_name(&self) -> &'static str {
        match self {
            Target::Sqlite(_) => "sqlite",
            Target::Postgres(_) => "postgres",
            Target::Mysql(_) => "mysql",
        }
    }
}

/// The schemes of database servers: text that starts with one of them but
/// lacks the `//` is a mistyped URL, not a file name.
const SERVER_SCHEMES: [&str; 4] = ["postgres", "postgresql", "mysql", "mariadb"];

/// Refuses text that looks like a server URL with a typo
/// (`postgres:/user:secret@host/db`): taken as a SQLite path it would
/// create a file named after it and print the password in messages.
fn refuse_malformed_url(url: &str) -> Result<()> {
    let Some((scheme, rest)) = url.split_once(':') else {
        return Ok(());
    };
    let is_scheme = !scheme.is_empty()
        && scheme
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic())
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    if !is_scheme || rest.starts_with("//") {
        return Ok(());
    }
    let lower = scheme.to_ascii_lowercase();
    let server = SERVER_SCHEMES.contains(&lower.as_str());
    // Credentials in a path (`name:secret@host`) are never meant as a file.
    let credentials = !matches!(lower.as_str(), "sqlite" | "file") && rest.contains('@');
    if server || credentials {
        return Err(QctlError::usage(format!(
            "malformed database URL {}: a server URL needs two slashes after the scheme, as in              postgres://user:password@host:5432/dbname",
            redact(url)
        )));
    }
    Ok(())
}

/// A libpq keyword string: some known keyword, then `=` (spaces allowed
/// around it, as libpq allows).
fn looks_like_keyword_conninfo(text: &str) -> bool {
    const KEYS: [&str; 8] = [
        "host", "hostaddr", "port", "dbname", "user", "password", "sslmode", "service",
    ];
    let lower = text.to_ascii_lowercase();
    KEYS.iter()
        .any(|key| keyword_value_at(&lower, key).is_some())
}

/// Where the value of `key` starts in a keyword string (`key = value`),
/// with the key at the start of a word.
fn keyword_value_at(lower: &str, key: &str) -> Option<(usize, usize)> {
    let bytes = lower.as_bytes();
    let mut from = 0;
    while let Some(i) = lower[from..].find(key) {
        let pos = from + i;
        from = pos + 1;
        let boundary = pos == 0 || matches!(bytes[pos - 1], b' ' | b'\t' | b'\n' | b'?' | b'&');
        if !boundary {
            continue;
        }
        let mut j = pos + key.len();
        while j < bytes.len() && bytes[j].is_ascii_whitespace() {
            j += 1;
        }
        if j < bytes.len() && bytes[j] == b'=' {
            j += 1;
            while j < bytes.len() && bytes[j].is_ascii_whitespace() {
                j += 1;
            }
            return Some((pos, j));
        }
    }
    None
}

/// Replaces every password in a URL or libpq keyword string with `***`.
///
/// It errs on the side of hiding: in a URL everything between the scheme
/// and the last `@` after the first `:` is the password, and query
/// parameters are matched after percent-decoding their names; in keyword
/// strings `password = value` may have spaces and quotes.
pub fn redact(text: &str) -> String {
    if let Some(scheme_end) = text.find("://") {
        return redact_url(text, scheme_end + 3);
    }
    // A URL with a slash missing still hides its password.
    if let Some((scheme, _)) = text.split_once(':')
        && !scheme.contains(['/', '=', ' '])
        && text.contains('@')
    {
        let start = scheme.len() + 1;
        let start = start + text[start..].len() - text[start..].trim_start_matches('/').len();
        return redact_url(text, start);
    }
    redact_keywords(text)
}

/// Hides the password of `scheme://user:password@host...`; `authority`
/// is where the user name starts.
fn redact_url(text: &str, authority: usize) -> String {
    let (scheme, rest) = text.split_at(authority);
    let (userinfo, after) = match rest.rfind('@') {
        Some(at) => {
            let userinfo = &rest[..at];
            let shown = match userinfo.find(':') {
                Some(colon) => format!("{}:***@", &userinfo[..colon]),
                None => format!("{userinfo}@"),
            };
            (shown, &rest[at + 1..])
        }
        None => (String::new(), rest),
    };
    let after = match after.split_once('?') {
        Some((path, query)) => {
            let pairs: Vec<String> = query
                .split('&')
                .map(|pair| match pair.split_once('=') {
                    Some((key, _)) if percent_decoded(key).eq_ignore_ascii_case("password") => {
                        format!("{key}=***")
                    }
                    _ => pair.to_string(),
                })
                .collect();
            format!("{path}?{}", pairs.join("&"))
        }
        None => after.to_string(),
    };
    format!("{scheme}{userinfo}{after}")
}

/// A URL key decoded for comparing, or as written where it is not valid
/// percent-encoding (such a URL is refused when it is parsed anyway).
fn percent_decoded(text: &str) -> String {
    crate::url::percent_decode(text).unwrap_or_else(|_| text.to_string())
}

fn redact_keywords(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some((_, value_start)) = keyword_value_at(&rest.to_ascii_lowercase(), "password") {
        out.push_str(&rest[..value_start]);
        out.push_str("***");
        let value = &rest[value_start..];
        let value_len = if let Some(quoted) = value.strip_prefix('\'') {
            // A quoted libpq value ends at the first unescaped quote.
            let mut chars = quoted.char_indices();
            let mut end = quoted.len();
            while let Some((i, c)) = chars.next() {
                if c == '\\' {
                    chars.next();
                } else if c == '\'' {
                    end = i + 1;
                    break;
                }
            }
            end + 1
        } else {
            let mut end = value.len();
            let mut chars = value.char_indices();
            while let Some((i, c)) = chars.next() {
                if c == '\\' {
                    chars.next();
                } else if c.is_whitespace() || c == '&' {
                    end = i;
                    break;
                }
            }
            end
        };
        rest = &value[value_len.min(value.len())..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sqlite_path(url: &str) -> String {
        match Target::parse(url).unwrap() {
            Target::Sqlite(t) => t.path.display().to_string(),
            other => panic!("{url} parsed as {}", other.backend_name()),
        }
    }

    #[test]
    fn sqlite_forms() {
        assert_eq!(sqlite_path("sqlite:app.db"), "app.db");
        assert_eq!(sqlite_path("sqlite://app.db"), "app.db");
        assert_eq!(sqlite_path("sqlite:///var/q.db"), "/var/q.db");
        assert_eq!(sqlite_path("file:data/q.db"), "data/q.db");
        assert_eq!(sqlite_path("./q.db"), "./q.db");
        match Target::parse("file:q.db?mode=ro").unwrap() {
            Target::Sqlite(t) => assert!(t.read_only),
            _ => unreachable!(),
        }
        assert!(Target::parse("file:q.db?cache=shared").is_err());
        assert!(Target::parse("oracle://x").is_err());
        assert!(Target::parse("sqlite::memory:").is_err());
    }

    #[test]
    fn mistyped_server_urls_are_refused_without_their_password() {
        for url in [
            "postgres:/user:SECRET@127.0.0.1:5432/db",
            "postgresql:user:SECRET@127.0.0.1/db",
            "mysql:/root:SECRET@127.0.0.1/db",
            "pg:/user:SECRET@host/db",
        ] {
            let err = Target::parse(url).unwrap_err().to_string();
            assert!(err.contains("malformed database URL"), "{url}: {err}");
            assert!(!err.contains("SECRET"), "{url}: {err}");
        }
        assert_eq!(
            redact("postgres:/user:SECRET@h/db"),
            "postgres:/user:***@h/db"
        );
        // Plain paths with a colon stay paths.
        assert!(matches!(
            Target::parse("data:2024.db").unwrap(),
            Target::Sqlite(_)
        ));
    }

    #[test]
    fn postgres_forms() {
        for url in [
            "postgres://a@h/db",
            "postgresql://h/db",
            "host=h dbname=q user=u",
        ] {
            assert!(
                matches!(Target::parse(url).unwrap(), Target::Postgres(_)),
                "{url}"
            );
        }
    }

    #[test]
    fn mysql_forms() {
        for url in [
            "mysql://root@127.0.0.1:3306/q",
            "mariadb://app:secret@db/q?ssl-mode=REQUIRED",
            "MySQL://h/q",
        ] {
            assert!(
                matches!(Target::parse(url).unwrap(), Target::Mysql(_)),
                "{url}"
            );
        }
        let shown = Target::parse("mariadb://app:s3cret@db/q")
            .unwrap()
            .display();
        assert_eq!(shown, "mariadb://app:***@db/q");
        let err = Target::parse("mysql://app:s3cret@db/q?ssl-mode=sometimes")
            .unwrap_err()
            .to_string();
        assert!(err.contains("invalid ssl-mode"), "{err}");
        let err = Target::parse("mysql://app:s3cret@db/q?nope=1")
            .unwrap_err()
            .to_string();
        assert!(err.contains("nope") && !err.contains("s3cret"), "{err}");
    }

    #[test]
    fn redacts_every_password_form() {
        assert_eq!(
            redact("postgres://app:s3cret@db/queue"),
            "postgres://app:***@db/queue"
        );
        assert_eq!(
            redact("postgres://app:p@ss@db:5432/q"),
            "postgres://app:***@db:5432/q"
        );
        assert_eq!(redact("postgres://app@db/q"), "postgres://app@db/q");
        assert_eq!(
            redact("postgres://db/q?user=a&password=s3cret&sslmode=require"),
            "postgres://db/q?user=a&password=***&sslmode=require"
        );
        assert_eq!(
            redact("host=db password='se cret' user=app"),
            "host=db password=*** user=app"
        );
        assert_eq!(
            redact("host=db PASSWORD=x user=app"),
            "host=db PASSWORD=*** user=app"
        );
        assert_eq!(
            redact("sqlite:my-password=file.db"),
            "sqlite:my-password=file.db"
        );
    }
}
