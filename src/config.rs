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
