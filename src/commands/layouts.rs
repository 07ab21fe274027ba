//! `qctl layouts [PRESET]`: the presets, with no database needed.

use anyhow::Result;

use crate::cli::LayoutsArgs;
use crate::error::exit;
use crate::model::LayoutsReport;
use crate::output::Output;

pub fn run(out: &Output, args: &LayoutsArgs) -> Result<u8> {
    let mut presets = crate::presets::infos();
    if let Some(name) = &args.name {
        presets.retain(|p| &p.name == name);
    }
    out.emit(&LayoutsReport {
        presets,
        detailed: args.name.is_some(),
    })?;
    Ok(exit::OK)
}
