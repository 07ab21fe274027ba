//! `qctl man [COMMAND]`: a man page on stdout, for installs without the
//! committed `docs/man/` (`cargo install`): `qctl man stats | man -l -`.

use anyhow::Result;

use crate::cli::ManArgs;
use crate::error::{QctlError, exit};
use crate::output::Output;

pub fn run(out: &Output, args: &ManArgs) -> Result<u8> {
    let Some(page) = crate::docs::man_page(args.command.as_deref()) else {
        let commands: Vec<String> = crate::docs::man_pages()
            .into_iter()
            .filter_map(|(file, _)| {
                Some(file.strip_prefix("qctl-")?.strip_suffix(".1")?.to_string())
            })
            .collect();
        return Err(QctlError::usage(format!(
            "no command {:?}; pages: {}",
            args.command.as_deref().unwrap_or_default(),
            commands.join(", ")
        )));
    };
    out.print(&page)?;
    Ok(exit::OK)
}
