//! Presets: the layouts of the queue systems people run, kept as data
//! (`src/presets/*.toml`, in the config file's own `[layout]` language),
//! and `--layout auto`, which finds the system that owns a database from
//! its catalog.

mod detect;
mod versions;

use std::collections::BTreeMap;
use std::sync::LazyLock;

use anyhow::Result;
use serde::{Deserialize, Serialize};

pub use detect::{AutoSpec, Detection, choose, settle};
pub use versions::{Catalog, Facts, Shape, Version};

use crate::error::QctlError;
use crate::layout::{Command, Layout, LayoutOverrides};

/// One preset file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Preset {
    pub name: String,
    /// The queue system, as its users call it.
    pub system: String,
    /// The release whose schema the preset's `[layout]` follows.
    pub version: String,
    /// The releases it supports, as `qctl layouts` shows them.
    #[serde(default)]
    pub supported: String,
    /// The newest release line: what its tables look like.
    #[serde(default)]
    pub current: Option<Version>,
    /// Older release lines whose tables differ, newest first.
    #[serde(default)]
    pub versions: Vec<Version>,
    /// The databases it is made for: `sqlite`, `postgres`, `mysql`.
    pub databases: Vec<String>,
    /// One line on what qctl does with it.
    pub about: String,
    /// The schema the system's installer creates its tables in, where it
    /// is not the connection's own (`pgboss`, `graphile_worker`). Every
    /// `{schema}` in the file's SQL stands for the schema the tables are
    /// found in, this one by default.
    #[serde(default)]
    pub schema: Option<String>,
    pub detect: Detect,
    /// qctl's own layouts (`default`, `app-job-queue`): `init` creates
    /// their table. A queue system's table is made by its own installer.
    #[serde(default)]
    pub init: bool,
    /// The layout, in the `[layout]` section's language.
    pub layout: LayoutOverrides,
    /// Per database, what differs (River on SQLite stores JSON blobs).
    #[serde(default)]
    pub dialect: BTreeMap<String, LayoutOverrides>,
    /// Per database, the system's own claim statement, which
    /// `explain-claim` checks.
    #[serde(default)]
    pub claim: BTreeMap<String, String>,
    /// Per database, how the system's own client talks to it, where that
    /// changes how its claim runs (see [`crate::layout::Driver`]).
    #[serde(default)]
    pub driver: BTreeMap<String, crate::layout::Driver>,
    /// Commands qctl does not run on this system, and what to use instead.
    #[serde(default)]
    pub refuse: BTreeMap<Command, String>,
    /// How the system's own rules map onto qctl's commands.
    #[serde(default)]
    pub notes: Vec<String>,
}

/// How `--layout auto` recognises the system.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Detect {
    /// The jobs table, in any schema.
    pub table: String,
    /// The jobs table's names in older releases, tried after `table`
    /// (Graphile Worker's `jobs`, renamed `_private_jobs` in 0.16). A
    /// newer name in the same schema wins over an older one.
    #[serde(default)]
    pub older_names: Vec<String>,
    /// Columns the jobs table must have.
    pub columns: Vec<String>,
    /// Other tables of the system, in the same schema.
    #[serde(default)]
    pub tables: Vec<String>,
    /// Per database, a query whose first value is the schema version.
    #[serde(default)]
    pub version: BTreeMap<String, String>,
}

impl Detect {
    /// The jobs table's names, the newest release's first.
    pub fn names(&self) -> Vec<&str> {
        std::iter::once(self.table.as_str())
            .chain(self.older_names.iter().map(String::as_str))
            .collect()
    }
}

macro_rules! preset_files {
    ($($name:literal),* $(,)?) => {
        [$(($name, include_str!(concat!($name, ".toml")))),*]
    };
}

const FILES: &[(&str, &str)] = &preset_files![
    "default",
    "app-job-queue",
    "river",
    "oban",
    "pg-boss",
    "graphile-worker",
    "procrastinate",
    "pgqueuer",
    "que",
    "delayed_job",
    "good_job",
    "solid_queue",
    "quartz",
    "laravel",
];

static PRESETS: LazyLock<Vec<Preset>> = LazyLock::new(|| {
    FILES
        .iter()
        .map(|(file, text)| {
            let preset: Preset = toml::from_str(text)
                .unwrap_or_else(|e| panic!("preset {file}.toml does not parse: {e}"));
            assert_eq!(preset.name, *file, "preset file and name differ");
            preset
        })
        .collect()
});

/// Every preset, built-in ones first.
pub fn all() -> &'static [Preset] {
    &PRESETS
}

pub fn find(name: &str) -> Option<&'static Preset> {
    PRESETS.iter().find(|p| p.name == name)
}

/// The names of the presets, for messages.
pub fn names() -> Vec<&'static str> {
    PRESETS.iter().map(|p| p.name.as_str()).collect()
}

/// The layout of one of qctl's own presets (`default`, `app-job-queue`),
/// which is the same on every database.
pub fn own(name: &str) -> Result<Layout> {
    let preset = find(name).filter(|p| p.init).ok_or_else(|| {
        QctlError::usage(format!("no layout preset of qctl's own is named '{name}'"))
    })?;
    preset.layout(&preset.databases[0])
}

impl Preset {
    /// The preset's layout for a database (`sqlite`, `postgres`, ...), with
    /// its tables in their default schema.
    pub fn layout(&self, database: &str) -> Result<Layout> {
        self.layout_in(database, self.schema.as_deref())
    }

    /// The preset's layout with the system's tables in `schema` (`None`:
    /// the connection's search path).
    pub fn layout_in(&self, database: &str, schema: Option<&str>) -> Result<Layout> {
        self.layout_of(database, schema, None)
    }

    /// The layout of the release line these tables fit (see
    /// [`Preset::fit`]), saying which in [`Layout::version`].
    pub fn layout_fitting(
        &self,
        database: &str,
        schema: Option<&str>,
        facts: &Facts,
    ) -> Result<Layout> {
        let fit = self.fit(facts)?;
        let index = fit
            .version
            .and_then(|v| self.versions.iter().position(|w| std::ptr::eq(w, v)));
        let mut layout = self.layout_of(database, schema, index)?;
        layout.version = Some(fit.summary);
        layout.version_warning = fit.warning;
        Ok(layout)
    }

    /// The newest layout, or with the `version`-th older release's over it.
    fn layout_of(
        &self,
        database: &str,
        schema: Option<&str>,
        version: Option<usize>,
    ) -> Result<Layout> {
        let (_, text) = FILES
            .iter()
            .find(|(name, _)| *name == self.name)
            .expect("every preset has a file");
        // Written unquoted into the preset's SQL: a schema name that would
        // need quoting is refused rather than folded to another schema.
        if let Some(s) = schema
            && !s
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        {
            return Err(QctlError::usage(format!(
                "the {} tables are in schema {s:?}, whose name needs quoting: qctl's presets \
                 support lowercase schema names; describe the table in qctl.toml instead",
                self.system
            )));
        }
        let prefix = schema.map(|s| format!("{s}.")).unwrap_or_default();
        let preset: Preset = toml::from_str(&text.replace("{schema}.", &prefix))
            .expect("the preset parsed at startup");
        let overrides = &preset.layout;
        if !self.databases.iter().any(|d| d == database) {
            return Err(QctlError::usage(format!(
                "the {} preset ({}) is made for {}, not {database}",
                self.name,
                self.system,
                self.databases.join(" and ")
            )));
        }
        let mut layout = Layout::bare(&self.name);
        layout.apply_overrides(overrides)?;
        if let Some(overlay) = preset.dialect.get(database) {
            layout.apply_overrides(overlay)?;
        }
        let older = version.and_then(|i| preset.versions.get(i));
        if let Some(older) = older {
            layout.apply_overrides(&older.layout)?;
            if let Some(overlay) = older.dialect.get(database) {
                layout.apply_overrides(overlay)?;
            }
        }
        // A preset's columns are optional: an older release may lack one,
        // and the commands that need it say so.
        layout.forget_explicit();
        layout.system_claim = older
            .and_then(|v| v.claim.get(database))
            .or(preset.claim.get(database))
            .cloned();
        layout.driver = older
            .and_then(|v| v.driver.get(database))
            .or(preset.driver.get(database))
            .cloned()
            .unwrap_or_default();
        layout.refusals = self.refusals();
        if let Some(older) = older {
            layout.refusals.extend(older.refuse.clone());
        }
        layout.system = (!self.init).then(|| self.system.clone());
        Ok(layout)
    }
}

/// The layout a preset name stands for, on a database, with the system's
/// tables in `schema` (where `--table` puts them), else their default.
pub fn layout(name: &str, database: &str, schema: Option<&str>) -> Result<Layout> {
    match find(name) {
        Some(preset) => match schema {
            Some(schema) => preset.layout_in(database, Some(schema)),
            None => preset.layout(database),
        },
        None => Err(QctlError::usage(format!(
            "unknown layout preset '{name}'; the presets are: auto, {}",
            names().join(", ")
        ))),
    }
}

impl Preset {
    /// What qctl leaves to the system's own tools: the file's list, and
    /// `init`, which makes qctl's table, never a system's.
    fn refusals(&self) -> BTreeMap<Command, String> {
        let mut refuse = self.refuse.clone();
        if !self.init {
            refuse.entry(Command::Init).or_insert_with(|| {
                format!(
                    "{}'s tables are made by its own installer or migrations; init makes qctl's \
                     own table",
                    self.system
                )
            });
        }
        refuse
    }
}

/// One release line, as `qctl layouts NAME` shows it.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct ReleaseInfo {
    pub name: String,
    pub releases: String,
    pub notes: Vec<String>,
}

/// What `qctl layouts` prints for one preset.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct PresetInfo {
    pub name: String,
    pub system: String,
    pub version: String,
    /// The releases it supports.
    pub supported: String,
    /// Each release line it knows, newest first.
    pub releases: Vec<ReleaseInfo>,
    pub databases: Vec<String>,
    pub table: String,
    pub about: String,
    /// The commands qctl runs on it.
    pub supports: Vec<&'static str>,
    /// The commands it refuses, and why.
    pub refuses: BTreeMap<String, String>,
    pub notes: Vec<String>,
}

/// Every preset as `qctl layouts` shows it.
pub fn infos() -> Vec<PresetInfo> {
    PRESETS
        .iter()
        .map(|p| PresetInfo {
            name: p.name.clone(),
            system: p.system.clone(),
            version: p.version.clone(),
            supported: if p.supported.is_empty() {
                p.version.clone()
            } else {
                p.supported.clone()
            },
            releases: p
                .current
                .iter()
                .chain(&p.versions)
                .map(|v| ReleaseInfo {
                    name: v.name.clone(),
                    releases: v.releases.clone(),
                    notes: v.notes.clone(),
                })
                .collect(),
            databases: p.databases.clone(),
            table: p
                .layout
                .table
                .clone()
                .unwrap_or_else(|| p.detect.table.clone())
                .replace(
                    "{schema}.",
                    &p.schema
                        .as_ref()
                        .map(|s| format!("{s}."))
                        .unwrap_or_default(),
                ),
            about: p.about.clone(),
            supports: [
                "stats",
                "list",
                "show",
                "explain-claim",
                "doctor",
                "blocked",
                "locks",
            ]
            .into_iter()
            .chain(
                Command::ALL
                    .into_iter()
                    .filter(|c| !p.refusals().contains_key(c))
                    .map(Command::name),
            )
            .collect(),
            refuses: p
                .refusals()
                .into_iter()
                .map(|(command, why)| (command.name().to_string(), why))
                .collect(),
            notes: p.notes.clone(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_preset_parses_and_builds_a_layout() {
        for preset in all() {
            for database in &preset.databases {
                preset
                    .layout(database)
                    .unwrap_or_else(|e| panic!("{} on {database}: {e:#}", preset.name));
            }
        }
    }
}
