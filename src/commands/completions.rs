//! `qctl completions SHELL`: the completion script on stdout.

use anyhow::Result;

use crate::cli::CompletionsArgs;
use crate::error::exit;
use crate::output::Output;

pub fn run(out: &Output, args: &CompletionsArgs) -> Result<u8> {
    out.print(&crate::docs::completion(args.shell))?;
    Ok(exit::OK)
}
