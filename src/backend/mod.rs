//! The databases qctl speaks to, one folder each, split by concern: each
//! implements [`crate::db::Backend`] from the side and registers a
//! [`Connector`] in [`CONNECTORS`], which is how the URL picks it (as
//! diesel's `Backend::for_url` does). Nothing above this module names a
//! database: adding one is a new folder, a new dialect and one line here.

pub mod mysql;
pub mod postgres;
pub mod sqlite;

use anyhow::Result;

use crate::db::{Backend, ConnectOptions};
use crate::error::QctlError;
use crate::layout::Layout;
use crate::url::redact;

/// How one database is reached from a URL.
pub trait Connector: Sync {
    /// Its name in reports and in a preset's `databases`.
    fn name(&self) -> &'static str;
    /// The URL schemes it takes (`postgres`, `mysql`): a mistyped one
    /// (`postgres:/...`) is refused, never read as a file name.
    fn schemes(&self) -> &'static [&'static str];
    /// Whether the URL is this database's.
    fn claims(&self, url: &str) -> bool;
    /// Refuses a URL it cannot read, before anything runs.
    fn check(&self, url: &str) -> Result<()>;
    /// The URL as a user may see it: no password.
    fn display(&self, url: &str) -> String {
        redact(url)
    }
    fn open(
        &self,
        url: &str,
        layout: &Layout,
        options: &ConnectOptions,
    ) -> Result<Box<dyn Backend + Send>>;
}

/// Every database, in the order URLs are offered to them: SQLite last,
/// since it takes any plain path.
pub static CONNECTORS: [&dyn Connector; 3] =
    [&postgres::CONNECTOR, &mysql::CONNECTOR, &sqlite::CONNECTOR];

/// Where the queue lives: the database URL and the database it names.
#[derive(Clone)]
pub struct Target {
    url: String,
    connector: &'static dyn Connector,
}

impl std::fmt::Debug for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Target({})", self.display())
    }
}

impl Target {
    pub fn parse(url: &str) -> Result<Target> {
        let url = url.trim();
        if url.is_empty() {
            return Err(QctlError::usage("the database URL is empty"));
        }
        refuse_malformed_url(url)?;
        let connector = CONNECTORS
            .iter()
            .copied()
            .find(|c| c.claims(url))
            .ok_or_else(|| {
                let scheme = url.split_once("://").map_or(url, |(s, _)| s);
                QctlError::usage(format!(
                    "unsupported database URL scheme '{scheme}://' in {}; use sqlite:PATH, \
                     postgres://..., mysql://... or a plain file path",
                    redact(url)
                ))
            })?;
        connector.check(url)?;
        Ok(Target {
            url: url.to_string(),
            connector,
        })
    }

    /// The URL as it may be shown to a user: passwords replaced by `***`.
    pub fn display(&self) -> String {
        self.connector.display(&self.url)
    }

    pub fn backend_name(&self) -> &'static str {
        self.connector.name()
    }

    /// Connects to the queue's database for the given kind of access.
    pub fn open(
        &self,
        layout: &Layout,
        options: &ConnectOptions,
    ) -> Result<Box<dyn Backend + Send>> {
        self.connector.open(&self.url, layout, options)
    }
}

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
    let server = CONNECTORS
        .iter()
        .any(|c| c.schemes().contains(&lower.as_str()));
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

#[cfg(test)]
mod tests {
    use super::*;

    fn sqlite_path(url: &str) -> String {
        let target = Target::parse(url).unwrap();
        assert_eq!(target.backend_name(), "sqlite", "{url}");
        sqlite::SqliteTarget::parse(url)
            .unwrap()
            .path
            .display()
            .to_string()
    }

    #[test]
    fn sqlite_forms() {
        assert_eq!(sqlite_path("sqlite:app.db"), "app.db");
        assert_eq!(sqlite_path("sqlite://app.db"), "app.db");
        assert_eq!(sqlite_path("sqlite:///var/q.db"), "/var/q.db");
        assert_eq!(sqlite_path("file:data/q.db"), "data/q.db");
        assert_eq!(sqlite_path("./q.db"), "./q.db");
        assert!(
            sqlite::SqliteTarget::parse("file:q.db?mode=ro")
                .unwrap()
                .read_only
        );
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
        assert_eq!(
            Target::parse("data:2024.db").unwrap().backend_name(),
            "sqlite"
        );
    }

    #[test]
    fn postgres_forms() {
        for url in [
            "postgres://a@h/db",
            "postgresql://h/db",
            "host=h dbname=q user=u",
        ] {
            assert!(
                Target::parse(url).unwrap().backend_name() == "postgres",
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
                Target::parse(url).unwrap().backend_name() == "mysql",
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
}
