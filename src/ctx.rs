//! What a command needs, resolved once from flags, environment and the
//! config file: where the queue is, its layout, how to print, the time
//! limits. Commands take this, never clap's types for these.

use std::time::Duration;

use anyhow::Result;

use crate::backend::Target;
use crate::db::{Access, Backend, ConnectOptions, SqlLog};
use crate::layout::{Command, Layout, LayoutOverrides, TableName};
use crate::output::Output;
use crate::{error, presets};

/// The time limits every connection runs under (the global flags).
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub busy_timeout: Duration,
    pub statement_timeout: Duration,
    pub connect_timeout: Duration,
    pub index_timeout: Duration,
}

/// Where a queue is and how to read it, as given: a URL, a preset (or
/// `auto`), a table, and the config file's `[layout]`.
pub struct Where<'a> {
    pub url: &'a str,
    pub preset: Option<&'a str>,
    pub table: Option<&'a str>,
    pub overrides: &'a LayoutOverrides,
}

/// Everything a command needs, resolved from flags, environment and the
/// config file.
pub struct Ctx {
    pub target: Target,
    pub layout: Layout,
    pub out: Output,
    pub busy_timeout: Duration,
    pub statement_timeout: Duration,
    pub connect_timeout: Duration,
    pub index_timeout: Duration,
    pub sql_log: SqlLog,
    /// `--layout auto`: `layout` is the fallback, and the backend looks
    /// for a known queue system's table first.
    pub auto: Option<presets::AutoSpec>,
}

impl Ctx {
    /// Resolves where a queue is into a context: the URL checked, the
    /// layout of the preset (or, with none named, `--layout auto`'s
    /// fallback) with the config file's overrides and the table applied.
    pub fn resolve(at: &Where, out: Output, limits: Limits) -> Result<Ctx> {
        let target = Target::parse(at.url)?;
        let preset = at.preset.or(at.overrides.preset.as_deref());
        // With no preset named, qctl finds the queue system from the
        // catalog, unless the config file describes the table itself.
        let auto = match preset {
            Some("auto") => true,
            Some(_) => false,
            None => at.overrides.describes_only_table(),
        };
        let mut layout = match preset {
            Some(name) if name != "auto" => {
                // A table in another schema takes the system's other tables
                // (its workers, its executions) from there too.
                let schema = at
                    .table
                    .or(at.overrides.table.as_deref())
                    .map(TableName::parse)
                    .transpose()?
                    .and_then(|t| t.schema.map(|s| s.to_string()));
                presets::layout(name, target.backend_name(), schema.as_deref())?
            }
            _ => presets::own("default")?,
        };
        layout.apply_overrides(at.overrides)?;
        if let Some(table) = at.table {
            layout.set_table(table)?;
        }
        // A queue system's preset is fitted to the release its tables are
        // once the catalog can be read, as `--layout auto`'s choice is.
        let system_preset = preset.is_some_and(|name| presets::find(name).is_some_and(|p| !p.init));
        let auto = (auto || system_preset).then(|| presets::AutoSpec {
            detect: auto,
            overrides: at.overrides.clone(),
            table: at.table.map(str::to_string).or(at.overrides.table.clone()),
        });
        let verbose = out.verbose;
        Ok(Ctx {
            target,
            layout,
            out,
            busy_timeout: limits.busy_timeout,
            statement_timeout: limits.statement_timeout,
            connect_timeout: limits.connect_timeout,
            index_timeout: limits.index_timeout,
            sql_log: SqlLog { enabled: verbose },
            auto,
        })
    }

    /// Connects for a command that a queue system's preset may refuse
    /// (River's jobs are claimed by River's workers, not by qctl).
    pub fn open_for(&self, command: Command, access: Access) -> Result<Box<dyn Backend + Send>> {
        let backend = self.open(access)?;
        backend.table().layout.refuse(command)?;
        Ok(backend)
    }

    /// Connects to the queue's database for the given kind of access.
    pub fn open(&self, access: Access) -> Result<Box<dyn Backend + Send>> {
        self.connect(access).map_err(|err| self.open_error(err))
    }

    /// Connects, with the backend's own error: `open` without the words
    /// that say what to do about a missing table (`qctl serve` tells the
    /// causes apart by these errors' types).
    pub fn connect(&self, access: Access) -> Result<Box<dyn Backend + Send>> {
        self.target.open(
            &self.layout,
            &ConnectOptions {
                access,
                busy_timeout: self.busy_timeout,
                statement_timeout: self.statement_timeout,
                connect_timeout: self.connect_timeout,
                index_timeout: self.index_timeout,
                sql_log: self.sql_log.clone(),
                auto: self.auto.clone(),
            },
        )
    }

    /// What `connect`'s error means for this layout: a system's table is
    /// made by the system, not by `qctl init`.
    pub fn open_error(&self, err: anyhow::Error) -> anyhow::Error {
        let Some(error::QctlError::MissingTable { table, url }) =
            err.downcast_ref::<error::QctlError>()
        else {
            return err;
        };
        if self.auto.as_ref().is_some_and(|a| a.detect) {
            err.context(
                "no known queue system's table is here either (`qctl layouts` lists the ones \
                 --layout auto looks for)",
            )
        } else if let Some(system) = &self.layout.system {
            // `init` makes qctl's table, never a queue system's.
            error::QctlError::usage(format!(
                "table {table} does not exist in {url} — {system}'s own installer or \
                 migrations create it; pass --table (schema.table) if it is elsewhere"
            ))
        } else {
            err
        }
    }
}
