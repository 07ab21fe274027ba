//! Every version people run: a preset's `[layout]` follows the newest
//! release, and each older release line whose tables differ is a
//! `[[versions]]` entry: what the catalog shows of it (`when`) and what
//! differs (a layout over the newest's, its own claim statement). qctl
//! reads the system's version marker and the catalog, picks the first
//! entry the tables fit, and so never names a column, table or enum value
//! this database lacks. Tables that fit no entry are refused, naming the
//! version and the range the preset supports.

use std::collections::BTreeMap;

use anyhow::Result;
use serde::Deserialize;

use super::Preset;
use crate::error::QctlError;
use crate::layout::{LayoutOverrides, TableName};

/// One release line of a system.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Version {
    /// How its users name it: `pg-boss 10`, `Oban migration 12`.
    pub name: String,
    /// The releases it covers: `10.0.0 to 10.4.2 (schema 21 to 24)`.
    pub releases: String,
    /// What the catalog shows of it.
    #[serde(default)]
    pub when: Shape,
    /// What differs from the newest release's layout.
    #[serde(default)]
    pub layout: LayoutOverrides,
    /// Per database, what differs besides.
    #[serde(default)]
    pub dialect: BTreeMap<String, LayoutOverrides>,
    /// Per database, this release's own claim statement.
    #[serde(default)]
    pub claim: BTreeMap<String, String>,
    /// Per database, how this release's client talks to it, where it
    /// differs from the newest's.
    #[serde(default)]
    pub driver: BTreeMap<String, crate::layout::Driver>,
    /// How this release's rules differ, for `qctl layouts NAME`.
    #[serde(default)]
    pub notes: Vec<String>,
    /// Commands qctl does not run on this release, beyond the preset's
    /// (GoodJob 3 has no stale state to reap).
    #[serde(default)]
    pub refuse: BTreeMap<crate::layout::Command, String>,
}

/// What a backend's catalog answers for detection.
pub trait Catalog {
    /// `sqlite`, `postgres` or `mysql`.
    fn database(&self) -> &'static str;
    /// Every table a user made, as (schema, name); the schema is `None`
    /// where the database has one namespace (SQLite's main database).
    fn tables(&mut self) -> Result<Vec<(Option<String>, String)>>;
    /// The column names of one table.
    fn column_names(&mut self, schema: Option<&str>, table: &str) -> Result<Vec<String>>;
    /// The labels of one table's enum-typed columns (PostgreSQL's
    /// `pg_enum`), where the database has enum types.
    fn enum_labels(&mut self, _schema: Option<&str>, _table: &str) -> Result<Vec<String>> {
        Ok(Vec::new())
    }
    /// The schema unqualified names resolve to first.
    fn current_schema(&mut self) -> Option<String>;
    /// The first value of a query, as text; `None` when it fails.
    fn probe(&mut self, sql: &str) -> Option<String>;
}

/// What a release's tables look like in the catalog. Every condition
/// given must hold; an empty shape fits anything.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Shape {
    /// Columns the jobs table has; `table.column` names a column of
    /// another table beside it (`solid_queue_processes.name`).
    #[serde(default)]
    pub columns: Vec<String>,
    /// Columns the jobs table lacks.
    #[serde(default)]
    pub lacks: Vec<String>,
    /// Tables beside it, in its schema.
    #[serde(default)]
    pub tables: Vec<String>,
    /// Tables that are not there.
    #[serde(default)]
    pub lacks_tables: Vec<String>,
    /// Labels the jobs table's enum types have (`pg_enum`).
    #[serde(default)]
    pub labels: Vec<String>,
    /// Labels they lack.
    #[serde(default)]
    pub lacks_labels: Vec<String>,
    /// The version marker, read as a number: at least this.
    pub marker_from: Option<f64>,
    /// ... and below this.
    pub marker_below: Option<f64>,
}

/// What the catalog shows of the system's tables, read once.
#[derive(Debug, Clone, Default)]
pub struct Facts {
    pub columns: Vec<String>,
    /// Columns of the other tables the preset's shapes name, as
    /// `table.column`.
    pub other_columns: Vec<String>,
    pub tables: Vec<String>,
    /// The labels of the jobs table's enum-typed columns.
    pub labels: Vec<String>,
    /// The system's own version marker, as it holds it.
    pub marker: Option<String>,
}

impl Facts {
    /// Reads the jobs table's columns and enum labels, the tables beside
    /// it, and the version marker.
    pub fn read(cat: &mut dyn Catalog, preset: &Preset, table: &TableName) -> Result<Facts> {
        let current = cat.current_schema();
        let schema = table
            .schema
            .as_ref()
            .map(|s| s.to_string())
            .or(current.clone());
        let columns = cat.column_names(schema.as_deref(), table.name.as_str())?;
        let labels = cat.enum_labels(schema.as_deref(), table.name.as_str())?;
        let tables: Vec<String> = cat
            .tables()?
            .into_iter()
            .filter(|(s, _)| s.is_none() || *s == schema)
            .map(|(_, name)| name)
            .collect();
        let mut others: Vec<&str> = preset
            .current
            .iter()
            .chain(&preset.versions)
            .flat_map(|v| v.when.columns.iter().chain(&v.when.lacks))
            .filter_map(|c| c.split_once('.').map(|(t, _)| t))
            .collect();
        others.sort_unstable();
        others.dedup();
        let mut other_columns = Vec::new();
        for other in others {
            if tables.iter().any(|t| t.eq_ignore_ascii_case(other)) {
                for column in cat.column_names(schema.as_deref(), other)? {
                    other_columns.push(format!("{other}.{column}"));
                }
            }
        }
        let marker = preset
            .detect
            .version
            .get(cat.database())
            .and_then(|sql| {
                let sql = match &schema {
                    Some(s) => sql.replace("{schema}", s),
                    None => sql.replace("{schema}.", ""),
                };
                cat.probe(&sql)
            })
            .map(|m| m.trim().to_string())
            .filter(|m| !m.is_empty());
        Ok(Facts {
            columns,
            other_columns,
            tables,
            labels,
            marker,
        })
    }

    fn has_column(&self, column: &str) -> bool {
        let columns = match column.contains('.') {
            true => &self.other_columns,
            false => &self.columns,
        };
        columns.iter().any(|c| c.eq_ignore_ascii_case(column))
    }

    fn has_table(&self, table: &str) -> bool {
        self.tables.iter().any(|t| t.eq_ignore_ascii_case(table))
    }

    fn has_label(&self, label: &str) -> bool {
        self.labels.iter().any(|l| l == label)
    }

    fn marker_number(&self) -> Option<f64> {
        let marker = self.marker.as_deref()?;
        // "46", "14", "20240904193154", "2.5": the leading number.
        let number: String = marker
            .chars()
            .skip_while(|c| !c.is_ascii_digit())
            .take_while(|c| c.is_ascii_digit() || *c == '.')
            .collect();
        number.parse().ok()
    }
}

impl Shape {
    /// What keeps the tables from fitting, or nothing when they fit.
    fn misfits(&self, facts: &Facts) -> Vec<String> {
        let mut why = Vec::new();
        let missing: Vec<&str> = self
            .columns
            .iter()
            .filter(|c| !facts.has_column(c))
            .map(String::as_str)
            .collect();
        if !missing.is_empty() {
            why.push(format!("no column {}", missing.join(", ")));
        }
        let extra: Vec<&str> = self
            .lacks
            .iter()
            .filter(|c| facts.has_column(c))
            .map(String::as_str)
            .collect();
        if !extra.is_empty() {
            why.push(format!("a column {}", extra.join(", ")));
        }
        let missing: Vec<&str> = self
            .tables
            .iter()
            .filter(|t| !facts.has_table(t))
            .map(String::as_str)
            .collect();
        if !missing.is_empty() {
            why.push(format!("no table {}", missing.join(", ")));
        }
        let extra: Vec<&str> = self
            .lacks_tables
            .iter()
            .filter(|t| facts.has_table(t))
            .map(String::as_str)
            .collect();
        if !extra.is_empty() {
            why.push(format!("a table {}", extra.join(", ")));
        }
        // A database without enum types (SQLite), or a state column of
        // text, shows no labels: then the labels tell nothing.
        let missing: Vec<&str> = self
            .labels
            .iter()
            .filter(|l| !facts.labels.is_empty() && !facts.has_label(l))
            .map(String::as_str)
            .collect();
        if !missing.is_empty() {
            why.push(format!("no state {}", missing.join(", ")));
        }
        let extra: Vec<&str> = self
            .lacks_labels
            .iter()
            .filter(|l| facts.has_label(l))
            .map(String::as_str)
            .collect();
        if !extra.is_empty() {
            why.push(format!("a state {}", extra.join(", ")));
        }
        if let Some(n) = facts.marker_number() {
            if self.marker_from.is_some_and(|from| n < from) {
                why.push(format!(
                    "version marker {n} (from {})",
                    self.marker_from.unwrap()
                ));
            }
            if self.marker_below.is_some_and(|below| n >= below) {
                why.push(format!(
                    "version marker {n} (below {})",
                    self.marker_below.unwrap()
                ));
            }
        }
        why
    }

    /// Whether the marker, where there is one, is in this shape's range.
    fn marker_in_range(&self, facts: &Facts) -> bool {
        facts.marker_number().is_none_or(|n| {
            self.marker_from.is_none_or(|from| n >= from)
                && self.marker_below.is_none_or(|below| n < below)
        })
    }
}

/// The release line the tables fit, and what qctl says of it.
pub struct Fit<'p> {
    /// None: the newest, which the preset's `[layout]` describes.
    pub version: Option<&'p Version>,
    /// One line: which release, and what it was read from.
    pub summary: String,
    /// The marker names a release outside the preset's range, and the
    /// catalog decided instead.
    pub warning: Option<String>,
}

impl Preset {
    /// The newest release line and every older one, newest first.
    fn lines(&self) -> impl Iterator<Item = (Option<&Version>, &Shape, &str, &str)> {
        let current = self
            .current
            .as_ref()
            .map(|c| (None, &c.when, c.name.as_str(), c.releases.as_str()));
        current.into_iter().chain(
            self.versions
                .iter()
                .map(|v| (Some(v), &v.when, v.name.as_str(), v.releases.as_str())),
        )
    }

    /// Picks the release line these tables fit: the first whose shape
    /// they match. Tables that fit none are refused, saying which version
    /// the marker names and what the preset supports.
    pub fn fit(&self, facts: &Facts) -> Result<Fit<'_>> {
        let read_from = match &facts.marker {
            Some(marker) => format!("version marker {marker}, and the catalog"),
            None => "the catalog (the system keeps no version marker)".to_string(),
        };
        if self.current.is_none() {
            return Ok(Fit {
                version: None,
                summary: format!("{} {}", self.system, self.version),
                warning: None,
            });
        }
        let mut misfits = Vec::new();
        for (version, shape, name, releases) in self.lines() {
            let why = shape.misfits(facts);
            if why.is_empty() {
                return Ok(Fit {
                    version,
                    summary: format!("{name} ({releases}), read from {read_from}"),
                    warning: None,
                });
            }
            misfits.push(format!("{name}: {}", why.join(", ")));
        }
        // The marker may name a release no shape describes (a newer one):
        // follow the catalog where a shape fits but for the marker.
        for (version, shape, name, releases) in self.lines() {
            let relaxed = Shape {
                marker_from: None,
                marker_below: None,
                ..shape.clone()
            };
            if relaxed.misfits(facts).is_empty() && !shape.marker_in_range(facts) {
                let warning = format!(
                    "{} version marker {} is outside the releases qctl's {} preset knows ({}): \
                     following the catalog as {name}; check what qctl reports",
                    self.system,
                    facts.marker.as_deref().unwrap_or("?"),
                    self.name,
                    self.supported
                );
                return Ok(Fit {
                    version,
                    summary: format!("{name} ({releases}) by the catalog; warning: {warning}"),
                    warning: Some(warning),
                });
            }
        }
        Err(QctlError::usage(format!(
            "these {} tables ({}) fit none of the versions qctl's {} preset supports ({}): {} — \
             describe the table in qctl.toml, or upgrade the system's schema",
            self.system,
            facts
                .marker
                .as_deref()
                .map(|m| format!("version marker {m}"))
                .unwrap_or_else(|| "no version marker".into()),
            self.name,
            self.supported,
            misfits.join("; ")
        )))
    }
}
