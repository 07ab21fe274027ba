//! The coverage gate: every subcommand and every flag of qctl's command
//! tree (read from clap, so a new flag is seen the day it is added) is
//! passed by a test to its own subcommand. The tests' Rust is parsed, not
//! searched: comments do not count, and a flag counts for a subcommand
//! only where one argument list (`&["reap", "--timeout", "1h"]`,
//! `vec!["--format", "json", "explain-claim", "--queue", q]`) passes it
//! with that subcommand, in a function that asserts something. A flag no
//! test passes to its command is a flag whose effect nothing checks.

use std::collections::{BTreeMap, BTreeSet};

/// Flags and subcommands known to lack a test of their own, each with
/// the reason. The gate fails when one of them gains a test, so the list
/// only shrinks.
const EXPECTED_MISSING: &[(&str, &str)] = &[
    // serve is being rewritten, tests/serve.rs with it: its tests of these
    // flags come with the rewrite, and this gate then fails until these
    // two lines go.
    (
        "serve --exact",
        "serve rewrite in progress: no test passes --exact to serve",
    ),
    (
        "serve --timeout",
        "serve rewrite in progress: tests/serve.rs asserts its effect on qctl_stale_jobs, \
         but through its serve() helper, which adds `serve` in another list",
    ),
    (
        "doctor --max-lag",
        "needs a standby lagging by more than the limit without its replay paused (a \
         paused one fails whatever the limit): tests/clusters.rs has only the paused case",
    ),
];

/// One token of Rust source, as far as the gate needs: string literals,
/// brackets, and words; comments are dropped.
#[derive(Debug, Clone, PartialEq)]
enum Token {
    Str(String),
    Open(char),
    Close(char),
    Word(String),
}

/// Splits Rust source into tokens, dropping `//` and `/* */` comments and
/// keeping string literals (plain, byte and raw) as their text.
fn tokens(src: &str) -> Vec<Token> {
    let chars: Vec<char> = src.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if c == 'r' && matches!(next, Some('#' | '"')) && !word_before(&chars, i) {
            // A raw string: r"..." or r#"..."#.
            let mut j = i + 1;
            let mut hashes = 0;
            while chars.get(j) == Some(&'#') {
                hashes += 1;
                j += 1;
            }
            if chars.get(j) != Some(&'"') {
                out.push(Token::Word("r".into()));
                i += 1;
                continue;
            }
            let close: String = std::iter::once('"')
                .chain(std::iter::repeat_n('#', hashes))
                .collect();
            let body_start = j + 1;
            let rest: String = chars[body_start..].iter().collect();
            let len = rest.find(&close).expect("a closed raw string");
            out.push(Token::Str(rest[..len].to_string()));
            i = body_start + rest[..len].chars().count() + close.chars().count();
        } else if c == '"' {
            let mut text = String::new();
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                if chars[i] == '\\' {
                    i += 1;
                    match chars.get(i) {
                        Some('n') => text.push('\n'),
                        Some('t') => text.push('\t'),
                        Some('r') => text.push('\r'),
                        Some(other) => text.push(*other),
                        None => {}
                    }
                } else {
                    text.push(chars[i]);
                }
                i += 1;
            }
            out.push(Token::Str(text));
            i += 1;
        } else if c == '\'' {
            // A char literal ('x', '\n', '"'), else a lifetime ('a).
            let end = if next == Some('\\') {
                chars[i + 3..]
                    .iter()
                    .position(|&c| c == '\'')
                    .map(|p| i + 3 + p)
            } else if chars.get(i + 2) == Some(&'\'') {
                Some(i + 2)
            } else {
                None
            };
            i = end.map_or(i + 1, |e| e + 1);
        } else if matches!(c, '[' | '(' | '{') {
            out.push(Token::Open(c));
            i += 1;
        } else if matches!(c, ']' | ')' | '}') {
            out.push(Token::Close(c));
            i += 1;
        } else if c.is_alphanumeric() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            out.push(Token::Word(chars[start..i].iter().collect()));
        } else {
            i += 1;
        }
    }
    out
}

/// Whether an identifier character comes right before `i` (`for` in
/// `for"` is no raw string's `r`).
fn word_before(chars: &[char], i: usize) -> bool {
    i > 0 && (chars[i - 1].is_alphanumeric() || chars[i - 1] == '_')
}

/// One argument list of a test: the string literals written directly in
/// one `[...]`, in order, and whether the function around it asserts.
struct ArgList {
    words: Vec<String>,
    asserted: bool,
    file: String,
}

/// The argument lists of one source file.
fn arg_lists(file: &str, src: &str) -> Vec<ArgList> {
    let toks = tokens(src);
    // The body of each function, as a token range: `fn name ... {` to its
    // matching `}`.
    let mut bodies: Vec<(usize, usize, bool)> = Vec::new();
    for (i, t) in toks.iter().enumerate() {
        if *t != Token::Word("fn".into()) {
            continue;
        }
        let Some(open) = (i..toks.len()).find(|&j| matches!(toks[j], Token::Open('{'))) else {
            continue;
        };
        // A `;` before the body (a trait's declaration) has no token
        // here; a declaration's next `{` belongs to another item, which
        // only widens the range checked for an assertion.
        let close = matching(&toks, open);
        let asserted = toks[open..close]
            .iter()
            .any(|t| matches!(t, Token::Word(w) if w.starts_with("assert")));
        bodies.push((open, close, asserted));
    }
    let mut out = Vec::new();
    for (i, t) in toks.iter().enumerate() {
        if *t != Token::Open('[') {
            continue;
        }
        let close = matching(&toks, i);
        let mut depth = 0;
        let mut words = Vec::new();
        for t in &toks[i + 1..close] {
            match t {
                Token::Open(_) => depth += 1,
                Token::Close(_) => depth -= 1,
                Token::Str(s) if depth == 0 => words.push(s.clone()),
                _ => {}
            }
        }
        if words.is_empty() {
            continue;
        }
        // The innermost function around the list.
        let asserted = bodies
            .iter()
            .filter(|(open, close, _)| *open < i && i < *close)
            .min_by_key(|(open, close, _)| close - open)
            .is_some_and(|b| b.2);
        out.push(ArgList {
            words,
            asserted,
            file: file.to_string(),
        });
    }
    out
}

/// The index of the bracket closing the one at `open`.
fn matching(toks: &[Token], open: usize) -> usize {
    let mut depth = 0;
    for (j, t) in toks.iter().enumerate().skip(open) {
        match t {
            Token::Open(_) => depth += 1,
            Token::Close(_) => {
                depth -= 1;
                if depth == 0 {
                    return j;
                }
            }
            _ => {}
        }
    }
    toks.len()
}

/// Every test source (tests/*.rs, tests/common/*.rs) but this file,
/// whose lists name flags on purpose.
fn test_sources() -> Vec<(String, String)> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let mut out = Vec::new();
    for dir in [root.clone(), root.join("common")] {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "rs")
                && path.file_name().is_some_and(|n| n != "coverage_gate.rs")
            {
                let name = path.strip_prefix(&root).unwrap().display().to_string();
                out.push((name, std::fs::read_to_string(&path).unwrap()));
            }
        }
    }
    out
}

/// The names a flag is passed by: `--long`, `-s`, visible aliases.
fn flag_names(arg: &clap::Arg) -> Vec<String> {
    let mut names = Vec::new();
    if let Some(long) = arg.get_long() {
        names.push(format!("--{long}"));
    }
    if let Some(short) = arg.get_short() {
        names.push(format!("-{short}"));
    }
    for alias in arg.get_visible_aliases().unwrap_or_default() {
        names.push(format!("--{alias}"));
    }
    names
}

/// What the tests pass: each (command path, flag id) and each command
/// path, with the files that pass them.
#[derive(Default)]
struct Passed {
    flags: BTreeMap<(String, String), BTreeSet<String>>,
    commands: BTreeMap<String, BTreeSet<String>>,
}

/// Follows one argument list down clap's tree: each word that names a
/// subcommand of the command reached so far descends; each flag counts
/// for the deepest command on the way that defines it (a root flag is
/// global).
fn follow(root: &clap::Command, list: &ArgList, passed: &mut Passed) {
    let mut path: Vec<&clap::Command> = vec![root];
    let mut flags: Vec<&str> = Vec::new();
    for word in &list.words {
        let here = *path.last().unwrap();
        if let Some(sub) = here
            .get_subcommands()
            .find(|s| s.get_name() == word || s.get_all_aliases().any(|a| a == word))
        {
            path.push(sub);
        } else if word.starts_with('-') && word.len() > 1 {
            flags.push(word.split('=').next().unwrap());
        }
    }
    let name_of = |depth: usize| -> String {
        path[1..=depth]
            .iter()
            .map(|c| c.get_name())
            .collect::<Vec<_>>()
            .join(" ")
    };
    for depth in 1..path.len() {
        passed
            .commands
            .entry(name_of(depth))
            .or_default()
            .insert(list.file.clone());
    }
    for flag in flags {
        for depth in (0..path.len()).rev() {
            let found = path[depth]
                .get_arguments()
                .find(|a| flag_names(a).iter().any(|n| n == flag));
            if let Some(arg) = found {
                passed
                    .flags
                    .entry((name_of(depth), arg.get_id().to_string()))
                    .or_default()
                    .insert(list.file.clone());
                break;
            }
        }
    }
}

#[test]
fn the_parser_skips_comments_and_reads_literals() {
    let src = r##"
        // run(&["reap", "--timeout", "1h"]) in a comment
        /* and &["doctor", "--sort-threshold", "5"] in a block */
        fn t() {
            let q = 'x';
            let lines = r#"["stats", "--exact"]"#;
            run(&["--format", "json", "explain-claim", "--queue", q, &format!("{}", "--strict")]);
            assert!(true);
        }
        fn u() { run(&["list", "--limit", "5"]); }
    "##;
    let lists = arg_lists("x.rs", src);
    let words: Vec<Vec<String>> = lists.iter().map(|l| l.words.clone()).collect();
    assert_eq!(
        words,
        vec![
            vec!["--format", "json", "explain-claim", "--queue"],
            vec!["list", "--limit", "5"],
        ]
    );
    assert_eq!(
        lists.iter().map(|l| l.asserted).collect::<Vec<_>>(),
        [true, false]
    );
    let root = <qctl::cli::Cli as clap::CommandFactory>::command();
    let mut passed = Passed::default();
    for list in &lists {
        follow(&root, list, &mut passed);
    }
    assert!(
        passed
            .flags
            .contains_key(&("explain-claim".into(), "queue".into()))
    );
    assert!(passed.flags.contains_key(&("".into(), "format".into())));
    assert!(!passed.flags.keys().any(|(_, id)| id == "timeout"));
}

#[test]
fn every_subcommand_and_flag_is_passed_to_its_command_by_a_test() {
    let root = <qctl::cli::Cli as clap::CommandFactory>::command();
    let mut passed = Passed::default();
    for (file, src) in test_sources() {
        for list in arg_lists(&file, &src) {
            if list.asserted {
                follow(&root, &list, &mut passed);
            }
        }
    }
    let mut missing = BTreeSet::new();
    let mut checked = 0;
    let mut walk = vec![(root.clone(), String::new())];
    while let Some((cmd, path)) = walk.pop() {
        for arg in cmd.get_arguments() {
            if arg.is_hide_set() || ["help", "version"].contains(&arg.get_id().as_str()) {
                continue;
            }
            let names = flag_names(arg);
            if names.is_empty() {
                continue; // a positional: passed with its command
            }
            checked += 1;
            if !passed
                .flags
                .contains_key(&(path.clone(), arg.get_id().to_string()))
            {
                missing.insert(format!("{path} {}", names.join("/")).trim().to_string());
            }
        }
        for sub in cmd.get_subcommands() {
            if sub.is_hide_set() || sub.get_name() == "help" {
                continue;
            }
            let name = format!("{path} {}", sub.get_name()).trim().to_string();
            checked += 1;
            if !passed.commands.contains_key(&name) {
                missing.insert(format!("command {name}"));
            }
            walk.push((sub.clone(), name));
        }
    }
    assert!(checked > 50, "the walk saw clap's tree ({checked})");
    let expected: BTreeSet<String> = EXPECTED_MISSING
        .iter()
        .map(|(k, _)| k.to_string())
        .collect();
    let now_covered: Vec<&String> = expected.difference(&missing).collect();
    assert!(
        now_covered.is_empty(),
        "these have a test now: take them out of EXPECTED_MISSING: {now_covered:#?}"
    );
    let unexpected: Vec<&String> = missing.difference(&expected).collect();
    assert!(
        unexpected.is_empty(),
        "no test passes these flags to their own subcommand (or no test asserts \
         where one does): {unexpected:#?}"
    );
}
