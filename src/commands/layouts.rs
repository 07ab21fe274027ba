//! `qctl layouts [PRESET]`: the presets, with no database needed.

use anyhow::Result;

use crate::cli::LayoutsArgs;
use crate::error::exit;
use crate::output::Output;
use crate::presets::PresetInfo;

/// `qctl layouts`' document.
#[derive(Debug, serde::Serialize)]
pub struct LayoutsReport {
    pub presets: Vec<PresetInfo>,
    /// Set when one preset was asked for: its notes are shown in full.
    #[serde(skip)]
    pub detailed: bool,
}

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
