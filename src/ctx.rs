//! What a command needs, resolved once from flags, environment and the
//! config file: where the queue is, its layout, how to print, the time
//! limits. Commands take this, never clap's types for these.

use std::time::Duration;

use anyhow::Result;

use crate::backend::Target;
use crate::db::{Access, Backend, ConnectOptions, SqlLog};
use crate::layout::Layout;
use crate::output::Output;
use crate::{error, presets};

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
    /// Connects for a command that a queue system's preset may refuse
    /// (River's jobs are claimed by River's workers, not by qctl).
    pub fn open_for(&self, command: &str, access: Access) -> Result<Box<dyn Backend + Send>> {
        let backend = self.open(access)?;
        backend.table().layout.refuse(command)?;
        Ok(backend)
    }

    /// Connects to the queue's database for the given kind of access.
    pub fn open(&self, access: Access) -> Result<Box<dyn Backend + Send>> {
        self.target
            .open(
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
            .map_err(|err| {
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
            })
    }
}
