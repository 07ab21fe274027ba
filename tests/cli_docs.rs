//! What users read: `--help` (snapshotted), and the committed generated
//! files (completions, docs/cli.md, docs/man/), regenerated in memory and
//! compared.
//! `QCTL_UPDATE_GENERATED=1 cargo test` rewrites the generated files;
//! `cargo insta review` (or `INSTA_UPDATE=always`) the snapshots.

mod common;

use std::path::Path;

use common::Sandbox;

const COMMANDS: [&str; 21] = [
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
    "layouts",
    "completions",
    "man",
    "serve",
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
    let mut files = vec![
        ("docs/cli.md".to_string(), qctl::docs::cli_reference()),
        (
            "docs/presets.md".to_string(),
            qctl::docs::presets_reference(),
        ),
    ];
    for (shell, name) in qctl::docs::COMPLETION_FILES {
        files.push((format!("completions/{name}"), qctl::docs::completion(shell)));
    }
    let man_pages = qctl::docs::man_pages();
    for (name, page) in &man_pages {
        files.push((format!("docs/man/{name}"), page.clone()));
    }
    let update = std::env::var_os("QCTL_UPDATE_GENERATED").is_some();
    let mut stale = Vec::new();
    // A page of a command that is gone is stale too.
    for entry in std::fs::read_dir(root.join("docs/man"))
        .into_iter()
        .flatten()
    {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        if !man_pages.iter().any(|(page, _)| *page == name) {
            if update {
                std::fs::remove_file(root.join("docs/man").join(&name)).unwrap();
            } else {
                stale.push(format!("docs/man/{name} (no such command)"));
            }
        }
    }
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

#[test]
fn man_pages_cover_every_command_and_pass_groff() {
    let pages = qctl::docs::man_pages();
    let mut names: Vec<&str> = pages.iter().map(|(name, _)| name.as_str()).collect();
    names.sort();
    let mut expected: Vec<String> = COMMANDS.iter().map(|c| format!("qctl-{c}.1")).collect();
    expected.push("qctl.1".into());
    expected.sort();
    assert_eq!(names, expected);
    let s = Sandbox::new();
    for (name, page) in &pages {
        assert!(page.contains(".TH "), "{name}");
        assert!(
            page.contains(&format!("\"qctl {}\"", env!("CARGO_PKG_VERSION"))),
            "{name}: the footer names qctl and its version"
        );
        // groff (man's formatter; groff-base is on every machine of the
        // project) with every warning on: the roff must be clean.
        let path = s.path(name);
        std::fs::write(&path, page).unwrap();
        let groff = std::process::Command::new("groff")
            .args(["-man", "-ww", "-z", "-Tutf8"])
            .arg(&path)
            .output()
            .expect("groff is needed to check the man pages: apt-get install groff-base");
        assert!(
            groff.status.success() && groff.stderr.is_empty(),
            "{name}: {}",
            String::from_utf8_lossy(&groff.stderr)
        );
    }
    // Every option of a command is on its page.
    let stats = &pages.iter().find(|(n, _)| n == "qctl-stats.1").unwrap().1;
    for option in ["\\-\\-watch", "\\-\\-output", "\\-\\-format", "prometheus"] {
        assert!(stats.contains(option), "qctl-stats.1 lacks {option}");
    }
}

#[test]
fn man_command_prints_the_committed_page() {
    let s = Sandbox::new();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for (args, file) in [
        (&["man"][..], "qctl.1"),
        (&["man", "stats"], "qctl-stats.1"),
        (&["man", "explain-claim"], "qctl-explain-claim.1"),
    ] {
        let run = s.run_raw(args);
        run.assert_ok();
        let committed = std::fs::read_to_string(root.join("docs/man").join(file)).unwrap();
        assert_eq!(run.stdout, committed, "{args:?}");
    }
    s.run_raw(&["man", "stat"])
        .assert_error("no command \"stat\"; pages: demo, init");
}
