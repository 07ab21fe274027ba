//! The one reader of server URLs (`postgres://`, `mysql://`): user,
//! password, hosts, database and parameters, percent-decoded by one
//! decoder, so every backend refuses the same malformed URL the same way.
//! What the parts mean (libpq's parameter names, MySQL's `ssl-mode`) is
//! each backend's business.

use anyhow::Result;

use crate::error::QctlError;

/// A server URL's parts, decoded.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ServerUrl {
    pub user: Option<String>,
    pub password: Option<String>,
    /// Each host with its port as written (a port is checked by the
    /// backend, which knows its range and default).
    pub hosts: Vec<(String, Option<String>)>,
    /// The path after the authority, decoded; empty when absent.
    pub database: String,
    /// `key=value` parameters in order, both decoded.
    pub params: Vec<(String, String)>,
}

/// Splits `scheme://user:password@host:port,host2/database?k=v&k2=v2`.
pub fn parse(url: &str) -> Result<ServerUrl> {
    let mut out = ServerUrl::default();
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    let (rest, query) = match rest.split_once('?') {
        Some((rest, query)) => (rest, Some(query)),
        None => (rest, None),
    };
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i + 1..]),
        None => (rest, ""),
    };
    let hosts = match authority.rfind('@') {
        Some(at) => {
            let userinfo = &authority[..at];
            let (user, password) = match userinfo.split_once(':') {
                Some((user, password)) => (user, Some(password)),
                None => (userinfo, None),
            };
            if !user.is_empty() {
                out.user = Some(percent_decode(user)?);
            }
            out.password = password.map(percent_decode).transpose()?;
            &authority[at + 1..]
        }
        None => authority,
    };
    for entry in hosts.split(',').filter(|h| !h.is_empty()) {
        let (host, port) = if let Some(bracketed) = entry.strip_prefix('[') {
            // [::1]:5432
            let (host, rest) = bracketed
                .split_once(']')
                .ok_or_else(|| QctlError::usage("unclosed [ in the database URL's host"))?;
            (host.to_string(), rest.strip_prefix(':').map(str::to_string))
        } else {
            match entry.rsplit_once(':') {
                Some((host, port)) => (host.to_string(), Some(port.to_string())),
                None => (entry.to_string(), None),
            }
        };
        out.hosts
            .push((percent_decode(&host)?, port.filter(|p| !p.is_empty())));
    }
    out.database = percent_decode(path)?;
    for pair in query
        .into_iter()
        .flat_map(|q| q.split('&'))
        .filter(|p| !p.is_empty())
    {
        let (key, value) = pair.split_once('=').ok_or_else(|| {
            QctlError::usage(format!(
                "invalid URL parameter '{}': write key=value",
                redact(pair)
            ))
        })?;
        out.params
            .push((percent_decode(key)?, percent_decode(value)?));
    }
    Ok(out)
}

/// `%XX` escapes to their bytes; a `%` not followed by two hex digits is
/// refused, as is text that is not UTF-8 once decoded.
pub fn percent_decode(text: &str) -> Result<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let byte = text
                .get(i + 1..i + 3)
                .filter(|hex| hex.bytes().all(|b| b.is_ascii_hexdigit()))
                .and_then(|hex| u8::from_str_radix(hex, 16).ok())
                .ok_or_else(|| QctlError::usage("invalid percent-encoding in the database URL"))?;
            out.push(byte);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out)
        .map_err(|_| QctlError::usage("the database URL is not UTF-8 once decoded"))
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
    percent_decode(text).unwrap_or_else(|_| text.to_string())
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

/// Where the value of `key` starts in a keyword string (`key = value`),
/// with the key at the start of a word.
pub fn keyword_value_at(lower: &str, key: &str) -> Option<(usize, usize)> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_part_decoded() {
        let url = parse("postgres://app:p%40ss@[::1]:5433,db2/queue%2Fx?sslmode=require&a=%2Fca")
            .unwrap();
        assert_eq!(url.user.as_deref(), Some("app"));
        assert_eq!(url.password.as_deref(), Some("p@ss"));
        assert_eq!(
            url.hosts,
            vec![
                ("::1".to_string(), Some("5433".to_string())),
                ("db2".to_string(), None)
            ]
        );
        assert_eq!(url.database, "queue/x");
        assert_eq!(
            url.params,
            vec![
                ("sslmode".to_string(), "require".to_string()),
                ("a".to_string(), "/ca".to_string())
            ]
        );
    }

    #[test]
    fn broken_escapes_are_refused_wherever_they_stand() {
        for url in [
            "mysql://u:s3cret%4@h/d",
            "postgres://u:%zz@h/d",
            "postgres://u@h/d%",
            "mysql://u@h/d?ssl-ca=%4",
            "postgres://u@h/d?x=%C3%28",
        ] {
            let err = parse(url).unwrap_err().to_string();
            assert!(
                err.contains("percent-encoding") || err.contains("UTF-8"),
                "{url}: {err}"
            );
            assert!(!err.contains("s3cret"), "{err}");
        }
    }

    #[test]
    fn a_parameter_without_a_value_is_named_without_its_secret() {
        let err = parse("mysql://h/d?password").unwrap_err().to_string();
        assert!(err.contains("key=value"), "{err}");
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
