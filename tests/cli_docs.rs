//! What users read: `--help` (snapshotted), and the committed generated
//! files (completions, docs/cli.md), regenerated in memory and compared.
//! `QCTL_UPDATE_GENERATED=1 cargo test` rewrites the generated files;
//! `cargo insta review` (or `INSTA_UPDATE=always`) the snapshots.

mod common;

use std::path::Path;

use common::Sandbox;

const COMMANDS: [&str; 18] = [
    "demo",
    "init",
    "enqueue",
    "stats",
    "list",
    "show",
    "claim",
    "complete",
    "fail",
    "retry",
    "reap",
    "purge",
    "explain-claim",
    "bench",
    "blocked",
    "locks",
    "doctor",
    "completions",
];

#[test]
fn help_snapshots() {
    let s = Sandbox::new();
    let top = s.run_raw(&["--help"]);
    top.assert_ok();
    insta::assert_snapshot!("help", top.stdout);
    for command in COMMANDS {
        let run = s.run_raw(&[command, "--help"]);
        run.assert_ok();
        insta::assert_snapshot!(format!("help_{command}"), run.stdout);
    }
}

#[test]
fn version_prints_the_crate_version() {
    let run = Sandbox::new().run_raw(&["--version"]);
    run.assert_ok();
    assert_eq!(run.stdout, format!("qctl {}\n", env!("CARGO_PKG_VERSION")));
}

#[test]
fn generated_files_are_up_to_date() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = vec![("docs/cli.md".to_string(), qctl::docs::cli_reference())];
    for (shell, name) in qctl::docs::COMPLETION_FILES {
        files.push((format!("completions/{name}"), qctl::docs::completion(shell)));
    }
    let update = std::env::var_os("QCTL_UPDATE_GENERATED").is_some();
    let mut stale = Vec::new();
    for (path, generated) in files {
        let full = root.join(&path);
        if update {
            std::fs::create_dir_all(full.parent().unwrap()).unwrap();
            std::fs::write(&full, &generated).unwrap();
        } else if std::fs::read_to_string(&full).ok().as_deref() != Some(generated.as_str()) {
            stale.push(path);
        }
    }
    assert!(
        stale.is_empty(),
        "out of date: {stale:?}; run `QCTL_UPDATE_GENERATED=1 cargo test --test cli_docs` and commit"
    );
}

#[test]
fn completions_command_prints_the_committed_script() {
    let run = Sandbox::new().run_raw(&["completions", "bash"]);
    run.assert_ok();
    let committed = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("completions/qctl.bash"),
    )
    .unwrap();
    assert_eq!(run.stdout, committed);
}
