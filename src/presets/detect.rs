//! `--layout auto`: which queue system owns this database, read from the
//! catalog (tables, their columns, the system's own version marker).

use anyhow::Result;

use super::{Catalog, Facts, Preset, all, find};
use crate::error::QctlError;
use crate::layout::{Layout, LayoutOverrides, TableName};

/// How the layout is settled once the catalog can be read: found by
/// `--layout auto` (`detect`), or a named system preset fitted to the
/// release its tables are; then the config file's `[layout]` and
/// `--table` on top.
#[derive(Debug, Clone, Default)]
pub struct AutoSpec {
    pub detect: bool,
    pub overrides: LayoutOverrides,
    pub table: Option<String>,
}

/// The system found, and why.
#[derive(Debug, Clone)]
pub struct Detection {
    pub preset: &'static Preset,
    pub table: TableName,
    /// The schema version the system's own marker holds.
    pub version: Option<String>,
    pub reasons: Vec<String>,
}

impl Detection {
    /// One line for `doctor` and `-v`.
    pub fn summary(&self) -> String {
        let version = self
            .version
            .as_deref()
            .map(|v| format!(", schema version {v}"))
            .unwrap_or_default();
        format!(
            "{} ({}{version}) found: table {}",
            self.preset.name, self.preset.system, self.table
        )
    }
}

/// A table qctl can name safely: identifiers of letters, digits and `_`,
/// and a schema a preset's SQL can carry unquoted (lowercase). Anything
/// else is never a candidate, so no catalog name ever reaches SQL.
fn usable(schema: Option<&str>, name: &str) -> bool {
    let ident = |s: &str| crate::layout::Ident::new(s, "table").is_ok();
    ident(name)
        && schema.is_none_or(|s| {
            ident(s)
                && s.chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        })
}

/// Finds the queue systems of this database: every table a preset
/// recognises, the most specific preset for each.
fn detect(
    cat: &mut dyn Catalog,
    spec: &AutoSpec,
    tables: &[(Option<String>, String)],
    current: Option<&String>,
) -> Result<Vec<Detection>> {
    let database = cat.database();
    let wanted = spec.table.as_deref().map(TableName::parse).transpose()?;
    let mut found: Vec<(Detection, usize)> = Vec::new();
    for preset in all()
        .iter()
        .filter(|p| p.databases.iter().any(|d| d == database))
    {
        let names = preset.detect.names();
        for (schema, name) in tables {
            let Some(rank) = names.iter().position(|n| name.eq_ignore_ascii_case(n)) else {
                continue;
            };
            if !usable(schema.as_deref(), name) {
                continue;
            }
            // An older release's name beside a newer one's in the same
            // schema (Graphile Worker's `jobs` view beside `_private_jobs`):
            // the newer is the system's table.
            let newer_here = names[..rank].iter().any(|newer| {
                tables
                    .iter()
                    .any(|(s, n)| s == schema && n.eq_ignore_ascii_case(newer))
            });
            if newer_here {
                continue;
            }
            if let Some(wanted) = &wanted {
                let schema_matches = match (&wanted.schema, schema) {
                    (None, _) => true,
                    (Some(w), Some(s)) => w.as_str().eq_ignore_ascii_case(s),
                    (Some(_), None) => false,
                };
                if !wanted.name.as_str().eq_ignore_ascii_case(name) || !schema_matches {
                    continue;
                }
            }
            let columns = cat.column_names(schema.as_deref(), name)?;
            let has = |c: &str| columns.iter().any(|have| have.eq_ignore_ascii_case(c));
            if preset.detect.columns.iter().any(|c| !has(c)) {
                continue;
            }
            let siblings = preset.detect.tables.iter().all(|other| {
                tables
                    .iter()
                    .any(|(s, n)| s == schema && n.eq_ignore_ascii_case(other))
            });
            if !siblings {
                continue;
            }
            let qualified = match schema {
                Some(s) if Some(s) != current => format!("{s}.{name}"),
                _ => name.clone(),
            };
            let mut reasons = vec![format!(
                "table {qualified} has {}",
                preset.detect.columns.join(", ")
            )];
            if !preset.detect.tables.is_empty() {
                reasons.push(format!("beside {}", preset.detect.tables.join(", ")));
            }
            let version = preset.detect.version.get(database).and_then(|sql| {
                let sql = match schema {
                    Some(s) => sql.replace("{schema}", s),
                    None => sql.replace("{schema}.", ""),
                };
                cat.probe(&sql)
            });
            if let Some(v) = &version {
                reasons.push(format!("its schema version marker says {v}"));
            }
            found.push((
                Detection {
                    preset,
                    table: TableName::parse(&qualified)?,
                    version,
                    reasons,
                },
                preset.detect.columns.len(),
            ));
        }
    }
    // Where two presets match one table, the one that asks for more
    // columns is the more specific.
    found.sort_by_key(|f| std::cmp::Reverse(f.1));
    let mut chosen: Vec<Detection> = Vec::new();
    for (detection, _) in found {
        if !chosen.iter().any(|c| c.table == detection.table) {
            chosen.push(detection);
        }
    }
    Ok(chosen)
}

/// Several queue tables: qctl asks which.
fn ambiguous(tables: Vec<String>) -> anyhow::Error {
    QctlError::usage(format!(
        "this database holds several queue tables: {} — pass --layout NAME (and --table if one \
         system is installed twice)",
        tables.join(", ")
    ))
}

/// The layout `--layout auto` settles on: the detected preset's, or
/// `fallback` (the default layout with the config file applied) when no
/// known table is here; then the config file and `--table` on top.
pub fn choose(cat: &mut dyn Catalog, spec: &AutoSpec, fallback: Layout) -> Result<Layout> {
    // The catalog is read once: every command pays for it at start.
    let tables = cat.tables()?;
    let current = cat.current_schema();
    let mut found = detect(cat, spec, &tables, current.as_ref())?;
    // The fallback's own table (qctl's `jobs`, or the one named) when it
    // is where unqualified names go and no preset recognised it: a
    // candidate too, so another system's table elsewhere never wins
    // silently over it.
    let fallback_here = fallback.table.schema.is_none()
        && !found
            .iter()
            .any(|d| d.table.schema.is_none() && d.table.name == fallback.table.name)
        && tables.iter().any(|(s, n)| {
            (s.is_none() || *s == current) && n.eq_ignore_ascii_case(fallback.table.name.as_str())
        });
    if fallback_here && !found.is_empty() {
        let mut tables = vec![format!(
            "{} (the {} layout)",
            fallback.table, fallback.preset
        )];
        tables.extend(
            found
                .iter()
                .map(|d| format!("{} ({})", d.table, d.preset.name)),
        );
        return Err(ambiguous(tables));
    }
    if found.len() > 1 {
        return Err(ambiguous(
            found
                .iter()
                .map(|d| format!("{} ({})", d.table, d.preset.name))
                .collect(),
        ));
    }
    let Some(found) = found.pop() else {
        let mut layout = fallback;
        layout.detected = Some(format!(
            "no known queue system's table here: the {} layout, table {}",
            layout.preset, layout.table
        ));
        return Ok(layout);
    };
    let schema = found.table.schema.as_ref().map(|s| s.as_str().to_string());
    let schema = schema.or(current);
    let facts = Facts::read(cat, found.preset, &found.table)?;
    let mut layout = found
        .preset
        .layout_fitting(cat.database(), schema.as_deref(), &facts)?;
    layout.set_table(&found.table.to_string())?;
    layout.apply_overrides(&spec.overrides)?;
    if let Some(table) = &spec.table {
        layout.set_table(table)?;
    }
    layout.detected = Some(format!(
        "{} ({})",
        found.summary(),
        found.reasons.join("; ")
    ));
    Ok(layout)
}

/// The layout a command works with: `--layout auto`'s choice, or the
/// named system preset fitted to the release its tables are, with the
/// config file and `--table` on top. qctl's own layouts are as given.
pub fn settle(cat: &mut dyn Catalog, spec: &AutoSpec, layout: Layout) -> Result<Layout> {
    if spec.detect {
        return choose(cat, spec, layout);
    }
    let Some(preset) = find(&layout.preset).filter(|p| !p.init) else {
        return Ok(layout);
    };
    // The table under its newest name, else under an older release's
    // name in the same schema.
    let mut table = layout.table.clone();
    let mut facts = Facts::read(cat, preset, &table)?;
    for older in &preset.detect.older_names {
        if !facts.columns.is_empty() {
            break;
        }
        let candidate = TableName {
            schema: layout.table.schema.clone(),
            name: crate::layout::Ident::new(older, "table")?,
        };
        let older_facts = Facts::read(cat, preset, &candidate)?;
        if !older_facts.columns.is_empty() {
            (table, facts) = (candidate, older_facts);
        }
    }
    if facts.columns.is_empty() {
        // No such table: the command says so when it loads the table.
        return Ok(layout);
    }
    let schema = match &layout.table.schema {
        Some(schema) => Some(schema.to_string()),
        None => cat.current_schema(),
    };
    let mut fitted = preset.layout_fitting(cat.database(), schema.as_deref(), &facts)?;
    fitted.set_table(&table.to_string())?;
    fitted.apply_overrides(&spec.overrides)?;
    if let Some(table) = &spec.table {
        fitted.set_table(table)?;
    }
    Ok(fitted)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A catalog of (schema, table, columns), and a version marker.
    struct Fake {
        tables: Vec<(&'static str, &'static str, Vec<&'static str>)>,
        marker: &'static str,
    }

    impl Catalog for Fake {
        fn database(&self) -> &'static str {
            "postgres"
        }
        fn tables(&mut self) -> Result<Vec<(Option<String>, String)>> {
            Ok(self
                .tables
                .iter()
                .map(|(s, t, _)| (Some(s.to_string()), t.to_string()))
                .collect())
        }
        fn column_names(&mut self, schema: Option<&str>, table: &str) -> Result<Vec<String>> {
            Ok(self
                .tables
                .iter()
                .find(|(s, t, _)| Some(*s) == schema && *t == table)
                .map(|(_, _, c)| c.iter().map(|c| c.to_string()).collect())
                .unwrap_or_default())
        }
        fn current_schema(&mut self) -> Option<String> {
            Some("public".into())
        }
        fn probe(&mut self, _sql: &str) -> Option<String> {
            Some(self.marker.into())
        }
    }

    const GRAPHILE_0_14: [&str; 17] = [
        "id",
        "job_queue_id",
        "task_id",
        "payload",
        "priority",
        "run_at",
        "attempts",
        "max_attempts",
        "last_error",
        "created_at",
        "updated_at",
        "key",
        "locked_at",
        "locked_by",
        "revision",
        "flags",
        "is_available",
    ];

    fn graphile_0_14(jobs: &'static str) -> Fake {
        Fake {
            tables: vec![
                ("graphile_worker", jobs, GRAPHILE_0_14.to_vec()),
                ("graphile_worker", "job_queues", vec!["id", "queue_name"]),
                ("graphile_worker", "tasks", vec!["id", "identifier"]),
                ("graphile_worker", "migrations", vec!["id", "ts"]),
            ],
            marker: "14",
        }
    }

    #[test]
    fn a_table_under_an_older_releases_name_is_found_and_fitted() {
        let mut cat = graphile_0_14("jobs");
        let spec = AutoSpec {
            detect: true,
            ..AutoSpec::default()
        };
        let layout = choose(&mut cat, &spec, crate::presets::own("default").unwrap()).unwrap();
        assert_eq!(layout.preset, "graphile-worker");
        assert_eq!(layout.table.to_string(), "graphile_worker.jobs");
        assert!(layout.version.unwrap().contains("0.14 to 0.15"));
        // Named, without --table: the preset finds it under that name too.
        let named = find("graphile-worker").unwrap().layout("postgres").unwrap();
        let spec = AutoSpec::default();
        let layout = settle(&mut cat, &spec, named).unwrap();
        assert_eq!(layout.table.to_string(), "graphile_worker.jobs");
    }

    #[test]
    fn a_newer_name_beside_an_older_one_in_the_same_schema_wins() {
        let mut cat = graphile_0_14("jobs");
        // 0.16+: _private_jobs, and an older-looking `jobs` beside it.
        cat.tables
            .push(("graphile_worker", "_private_jobs", GRAPHILE_0_14.to_vec()));
        cat.tables
            .push(("graphile_worker", "_private_job_queues", vec!["id"]));
        cat.tables
            .push(("graphile_worker", "_private_tasks", vec!["id"]));
        cat.marker = "20";
        let spec = AutoSpec {
            detect: true,
            ..AutoSpec::default()
        };
        let layout = choose(&mut cat, &spec, crate::presets::own("default").unwrap()).unwrap();
        assert_eq!(layout.table.to_string(), "graphile_worker._private_jobs");
    }
}
