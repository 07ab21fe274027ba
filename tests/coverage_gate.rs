//! The coverage gate: every subcommand and every flag of qctl's command
//! tree (read from clap, so a new flag is seen the day it is added) is
//! named by at least one test file. A flag no test names is a flag whose
//! effect nothing checks.

use std::collections::BTreeSet;

/// The text of every test source: tests/*.rs and tests/common/*.rs,
/// without this file (which names no flag on purpose).
fn test_sources() -> String {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let mut text = String::new();
    for dir in [root.clone(), root.join("common")] {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "rs")
                && path.file_name().is_some_and(|n| n != "coverage_gate.rs")
            {
                text.push_str(&std::fs::read_to_string(&path).unwrap());
                text.push('\n');
            }
        }
    }
    text
}

/// Whether `text` names `word` as a whole argument: `"word"` in a string
/// literal or a command line written in one string (`"... word ..."`).
fn named(text: &str, word: &str) -> bool {
    text.match_indices(word).any(|(i, _)| {
        let before = text[..i].chars().next_back();
        let after = text[i + word.len()..].chars().next();
        matches!(before, Some('"' | ' ' | '[' | '\''))
            && matches!(after, Some('"' | ' ' | '=' | '\'' | ']'))
    })
}

#[test]
fn every_subcommand_and_flag_is_named_by_a_test() {
    let text = test_sources();
    let root = <qctl::cli::Cli as clap::CommandFactory>::command();
    let mut missing = BTreeSet::new();
    let mut checked = 0;
    let mut walk = vec![(root.clone(), String::new())];
    while let Some((cmd, path)) = walk.pop() {
        for arg in cmd.get_arguments() {
            if arg.is_hide_set() || ["help", "version"].contains(&arg.get_id().as_str()) {
                continue;
            }
            let mut names: Vec<String> = Vec::new();
            if let Some(long) = arg.get_long() {
                names.push(format!("--{long}"));
            }
            if let Some(short) = arg.get_short() {
                names.push(format!("-{short}"));
            }
            for alias in arg.get_visible_aliases().unwrap_or_default() {
                names.push(format!("--{alias}"));
            }
            if names.is_empty() {
                continue; // a positional: named with its command
            }
            checked += 1;
            if !names.iter().any(|n| named(&text, n)) {
                missing.insert(format!("{path} {}", names.join("/")).trim().to_string());
            }
        }
        for sub in cmd.get_subcommands() {
            if sub.is_hide_set() || sub.get_name() == "help" {
                continue;
            }
            checked += 1;
            if !named(&text, sub.get_name()) {
                missing.insert(format!("command {}", sub.get_name()));
            }
            walk.push((sub.clone(), format!("{path} {}", sub.get_name())));
        }
    }
    assert!(checked > 50, "the walk saw clap's tree ({checked})");
    assert!(
        missing.is_empty(),
        "no test names these subcommands or flags: {missing:#?}"
    );
}
