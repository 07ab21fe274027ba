//! The config file, `qctl.toml`: the database URL and the `[layout]`.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde::Deserialize;

use crate::error::QctlError;
use crate::layout::LayoutOverrides;

pub const DEFAULT_FILE: &str = "qctl.toml";

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    pub database: Option<String>,
    #[serde(default)]
    pub layout: LayoutOverrides,
}

impl Config {
    /// Loads `--config FILE` (which must exist) or `qctl.toml` in the
    /// current directory (if present).
    pub fn load(explicit: Option<&Path>) -> Result<Config> {
        let path = match explicit {
            Some(path) => {
                if !path.exists() {
                    return Err(QctlError::usage(format!(
                        "config file {} does not exist",
                        path.display()
                    )));
                }
                path.to_path_buf()
            }
            None => {
                let path = PathBuf::from(DEFAULT_FILE);
                if !path.exists() {
                    return Ok(Config::default());
                }
                path
            }
        };
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("cannot read config file {}", path.display()))?;
        toml::from_str(&text).map_err(|err| {
            QctlError::usage(format!(
                "invalid config file {}: {}",
                path.display(),
                err.to_string().trim_end()
            ))
        })
    }
}

/// `qctl serve --targets FILE`: the exporter's own file (TOML), listing
/// the databases it watches; its flags (`--listen`, `--interval`,
/// `--claim-check`) win over the file's settings. Documented in
/// docs/metrics.md; its JSON Schema is docs/schema/vN/serve-config.json.
#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ServeConfig {
    /// The address to listen on, `HOST:PORT` [default: 127.0.0.1:9187].
    pub listen: Option<String>,
    /// How often each database is queried, however often qctl is scraped
    /// [default: 15s].
    #[schemars(regex(pattern = r"^\s*([0-9]+\s*(ms|s|m|h|d)\s*)+$"))]
    pub interval: Option<String>,
    /// How often to check the claim query's plan, as `qctl explain-claim`
    /// does [default: never].
    #[schemars(regex(pattern = r"^\s*([0-9]+\s*(ms|s|m|h|d)\s*)+$"))]
    pub claim_check: Option<String>,
    /// The databases, one `[[target]]` table each.
    #[serde(rename = "target")]
    #[schemars(length(min = 1))]
    pub targets: Vec<ServeTarget>,
}

/// One database `qctl serve` watches.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ServeTarget {
    /// The `target` label of its series; unique in the file.
    #[schemars(length(min = 1))]
    pub name: String,
    /// Its URL, as `--database` takes it.
    pub database: String,
    /// `auto` or a preset, as `--layout` takes it [default: auto].
    pub layout: Option<String>,
    /// The queue table, as `--table` takes it [default: the layout's].
    pub table: Option<String>,
    /// Judge running jobs stale by lock age, as `stats --timeout` does.
    #[schemars(regex(pattern = r"^\s*([0-9]+\s*(ms|s|m|h|d)\s*)+$"))]
    pub timeout: Option<String>,
    /// Count finished jobs exactly, as `stats --exact` does.
    #[serde(default)]
    pub exact: bool,
}

impl ServeConfig {
    /// Reads and checks the file: every target named, each name once.
    pub fn load(path: &Path) -> Result<ServeConfig> {
        let text = std::fs::read_to_string(path).map_err(|err| {
            QctlError::usage(format!("cannot read --targets {}: {err}", path.display()))
        })?;
        let config: ServeConfig = toml::from_str(&text).map_err(|err| {
            QctlError::usage(format!(
                "invalid --targets file {}: {}",
                path.display(),
                err.to_string().trim_end()
            ))
        })?;
        if config.targets.is_empty() {
            return Err(QctlError::usage(format!(
                "--targets file {} lists no database; add a [[target]] table with name and \
                 database",
                path.display()
            )));
        }
        let mut seen = std::collections::BTreeSet::new();
        for target in &config.targets {
            if target.name.trim().is_empty() {
                return Err(QctlError::usage(format!(
                    "--targets file {}: a target has an empty name",
                    path.display()
                )));
            }
            if !seen.insert(target.name.as_str()) {
                return Err(QctlError::usage(format!(
                    "--targets file {}: two targets are named {:?}; each name labels its own \
                     series, so they must differ",
                    path.display(),
                    target.name
                )));
            }
        }
        Ok(config)
    }
}
