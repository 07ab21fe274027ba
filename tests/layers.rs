//! qctl's layers point down, never up or round (docs/architecture.md).
//!
//! Every path a module's code names (`use` trees with their nested groups,
//! `crate::`, `super::` and `self::` paths in expressions) is resolved to
//! the module it reaches, and:
//!
//! - a top-level module names only modules of lower layers ([`LAYERS`]);
//! - inside `sql/` and `db/`, a file names only files below it
//!   ([`INNER`]), and the folder's `mod.rs` is a facade: its own code names
//!   no file of the folder except to re-export it (`pub use`);
//! - a database driver crate ([`DRIVERS`]) is named only under
//!   `src/backend/`;
//! - across all of `src/`, the files' import graph has no circle (a file
//!   using its own folder's items, `super::Shared`, is how a module is cut
//!   into files and is not drawn; a re-exported name is drawn to the file
//!   that defines it).
//!
//! Comments and the insides of string and character literals are blanked
//! before anything is read, and `#[cfg(test)]` modules are left out (tests
//! may use anything). The checker's own tests feed it sources that break
//! each rule.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The layers, bottom first. A module may use only modules of layers
/// below its own.
const LAYERS: &[&[&str]] = &[
    &["text", "error", "duration", "json"],
    &["interrupt", "url"],
    &["layout"],
    &["presets", "config"],
    &["model"],
    &["request"],
    &["sql"],
    &["db"],
    &["backend"],
    &["explain"],
    &["engine"],
    &["cli"],
    &["docs", "render"],
    &["output"],
    &["ctx"],
    &["serve"],
    &["commands"],
    &["lib"],
];

/// The files of a folder whose files are ordered too, bottom first; the
/// folder's `mod.rs` sits below them all (its own items are what every
/// file uses).
const INNER: &[(&str, &[&[&str]])] = &[
    (
        "sql",
        &[
            &["sqltext"],
            &["time"],
            &["column"],
            &["dialect"],
            &["stmt"],
            &["schema"],
            &["queue", "loads"],
            &["ddl", "probe"],
        ],
    ),
    ("db", &[&["plan"], &["catalog"]]),
];

/// Crates that talk to a database: only a backend may name them.
const DRIVERS: &[&str] = &[
    "rusqlite",
    "postgres",
    "postgres_types",
    "postgres_protocol",
    "tokio_postgres",
    "mysql",
    "mysql_common",
];

fn layer_of(module: &str) -> Option<usize> {
    LAYERS.iter().position(|layer| layer.contains(&module))
}

fn inner_layer(folder: &str, file: &str) -> Option<Option<usize>> {
    let (_, order) = INNER.iter().find(|(f, _)| *f == folder)?;
    Some(order.iter().position(|layer| layer.contains(&file)))
}

/// A source with its comments removed and the insides of its string and
/// character literals blanked (`"http://x"` holds no comment, `"use
/// crate::x"` no import); lines and lengths are kept.
fn blank(source: &str) -> String {
    let b = source.as_bytes();
    let mut out = String::with_capacity(source.len());
    let mut i = 0;
    let keep = |out: &mut String, c: u8| out.push(if c == b'\n' { '\n' } else { ' ' });
    while i < b.len() {
        let c = b[i];
        if c == b'/' && b.get(i + 1) == Some(&b'/') {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if c == b'/' && b.get(i + 1) == Some(&b'*') {
            let mut depth = 0;
            while i < b.len() {
                if b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
                    depth += 1;
                    out.push_str("  ");
                    i += 2;
                } else if b[i] == b'*' && b.get(i + 1) == Some(&b'/') {
                    depth -= 1;
                    out.push_str("  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    keep(&mut out, b[i]);
                    i += 1;
                }
            }
        } else if c == b'r'
            && (b.get(i + 1) == Some(&b'"') || b.get(i + 1) == Some(&b'#'))
            && (i == 0 || !ident_byte(b[i - 1]))
        {
            // A raw string: r"...", r#"..."#.
            let mut j = i + 1;
            let mut hashes = 0;
            while b.get(j) == Some(&b'#') {
                hashes += 1;
                j += 1;
            }
            if b.get(j) != Some(&b'"') {
                out.push(c as char);
                i += 1;
                continue;
            }
            out.push('"');
            j += 1;
            loop {
                if j >= b.len() {
                    break;
                }
                if b[j] == b'"' && (0..hashes).all(|k| b.get(j + 1 + k) == Some(&b'#')) {
                    j += 1 + hashes;
                    break;
                }
                keep(&mut out, b[j]);
                j += 1;
            }
            out.push('"');
            i = j;
        } else if c == b'"' {
            out.push('"');
            i += 1;
            while i < b.len() && b[i] != b'"' {
                if b[i] == b'\\' {
                    keep(&mut out, b[i]);
                    i += 1;
                }
                if i < b.len() {
                    keep(&mut out, b[i]);
                    i += 1;
                }
            }
            out.push('"');
            i += 1;
        } else if c == b'\'' {
            // A character literal ('x', '\n', '\u{1}'), not a lifetime.
            let close = if b.get(i + 1) == Some(&b'\\') {
                (i + 2..b.len()).find(|&j| b[j] == b'\'')
            } else {
                let ch = source[i + 1..].chars().next().map_or(1, char::len_utf8);
                (b.get(i + 1 + ch) == Some(&b'\'')).then_some(i + 1 + ch)
            };
            match close {
                Some(end) => {
                    out.push('\'');
                    for _ in i + 1..end {
                        out.push(' ');
                    }
                    out.push('\'');
                    i = end + 1;
                }
                None => {
                    out.push('\'');
                    i += 1;
                }
            }
        } else {
            // Copy one whole character.
            let ch = source[i..].chars().next().unwrap();
            out.push(ch);
            i += ch.len_utf8();
        }
    }
    out
}

fn ident_byte(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// The code of a blanked source outside its `#[cfg(test)]` modules.
fn without_tests(code: &str) -> String {
    code.split("#[cfg(test)]")
        .next()
        .unwrap_or_default()
        .to_string()
}

/// One path the code names, as written (`["crate", "sql", "Stmt"]`), and
/// whether it is a re-export (`pub use`).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Named {
    path: Vec<String>,
    reexport: bool,
}

/// Every path of every `use` declaration (nested groups expanded), and
/// every `crate::`/`super::`/`self::` path or driver-crate path written in
/// expressions and types.
fn named_paths(code: &str) -> Vec<Named> {
    let mut out = Vec::new();
    let b = code.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let at_word = i == 0 || !(ident_byte(b[i - 1]) || b[i - 1] == b':');
        if at_word
            && code[i..].starts_with("use")
            && b.get(i + 3).is_some_and(|c| c.is_ascii_whitespace())
        {
            let end = code[i..].find(';').map_or(b.len(), |e| i + e);
            let before = code[..i].trim_end();
            let reexport = before.ends_with("pub") || before.ends_with(')');
            let mut paths = Vec::new();
            expand(code[i + 3..end].trim(), Vec::new(), &mut paths);
            out.extend(paths.into_iter().map(|path| Named { path, reexport }));
            i = end;
            continue;
        }
        if at_word && ident_byte(b[i]) && !b[i].is_ascii_digit() {
            let word_end = (i..b.len()).find(|&j| !ident_byte(b[j])).unwrap_or(b.len());
            let word = &code[i..word_end];
            // Any `a::b` path: those that start at the crate, a parent,
            // the module itself or one of its modules are resolved; the
            // rest (`Vec::new`) are not the crate's.
            let pathy = code[word_end..].starts_with("::") && !code[word_end..].starts_with("::{");
            if pathy {
                let mut path = vec![word.to_string()];
                let mut j = word_end;
                while code[j..].starts_with("::") {
                    let start = j + 2;
                    let end = (start..b.len())
                        .find(|&k| !ident_byte(b[k]))
                        .unwrap_or(b.len());
                    if end == start {
                        break;
                    }
                    path.push(code[start..end].to_string());
                    j = end;
                }
                out.push(Named {
                    path,
                    reexport: false,
                });
                i = j;
                continue;
            }
            i = word_end;
            continue;
        }
        i += 1;
    }
    out
}

/// Expands one use tree (`a::{b, c::{d, e as f}, self}`) into its paths.
fn expand(tree: &str, prefix: Vec<String>, out: &mut Vec<Vec<String>>) {
    let tree = tree.trim().trim_start_matches("::");
    if let Some(open) = tree.find('{') {
        let mut head = prefix;
        head.extend(
            tree[..open]
                .split("::")
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_string),
        );
        let close = tree.rfind('}').unwrap_or(tree.len());
        for item in split_top(&tree[open + 1..close]) {
            if item.trim() == "self" {
                out.push(head.clone());
            } else if !item.trim().is_empty() {
                expand(item, head.clone(), out);
            }
        }
    } else {
        let tree = tree.split(" as ").next().unwrap_or(tree);
        let mut path = prefix;
        path.extend(
            tree.split("::")
                .map(str::trim)
                .filter(|s| !s.is_empty() && *s != "*")
                .map(str::to_string),
        );
        if !path.is_empty() {
            out.push(path);
        }
    }
}

/// Splits a group's items at its top-level commas.
fn split_top(group: &str) -> Vec<&str> {
    let mut items = Vec::new();
    let mut depth = 0;
    let mut start = 0;
    for (i, c) in group.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                items.push(&group[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    items.push(&group[start..]);
    items
}

/// One source file: its path under `src/` and its text.
struct Source {
    relative: PathBuf,
    text: String,
}

/// The module a file is (`sql/queue.rs` is `sql::queue`, `sql/mod.rs` is
/// `sql`, `lib.rs` is the crate root).
fn module_path(relative: &Path) -> Vec<String> {
    let mut parts: Vec<String> = relative
        .iter()
        .map(|p| p.to_string_lossy().trim_end_matches(".rs").to_string())
        .collect();
    if parts.last().is_some_and(|p| p == "mod" || p == "lib") {
        parts.pop();
    }
    parts
}

/// A named path made absolute (from the crate root), when it starts at
/// the crate, a parent or the module itself, or at a module the file's
/// module has (2018 paths: `use dialect::Dialect` in `sql/mod.rs`).
fn resolve(
    own: &[String],
    path: &[String],
    children: &BTreeSet<Vec<String>>,
) -> Option<Vec<String>> {
    let mut at: Vec<String> = own.to_vec();
    let mut rest = path;
    match path.first().map(String::as_str) {
        Some("crate") => {
            at.clear();
            rest = &path[1..];
        }
        Some("self") => rest = &path[1..],
        Some("super") => {
            while rest.first().is_some_and(|s| s == "super") {
                at.pop()?;
                rest = &rest[1..];
            }
        }
        Some(first) => {
            let mut child = own.to_vec();
            child.push(first.to_string());
            if !children.contains(&child) {
                return None;
            }
        }
        None => return None,
    }
    at.extend(rest.iter().cloned());
    Some(at)
}

/// The longest prefix of `path` that is a module of the crate.
fn module_of_path(path: &[String], modules: &BTreeSet<Vec<String>>) -> Vec<String> {
    (0..=path.len())
        .rev()
        .map(|n| path[..n].to_vec())
        .find(|p| modules.contains(p))
        .unwrap_or_default()
}

/// Everything wrong with the sources' imports, one line each.
fn violations(sources: &[Source]) -> Vec<String> {
    let modules: BTreeSet<Vec<String>> = sources.iter().map(|s| module_path(&s.relative)).collect();
    let mut wrong = Vec::new();
    let mut graph: BTreeMap<Vec<String>, BTreeSet<Vec<String>>> = BTreeMap::new();
    // What each folder's mod.rs re-exports: `sql::Dialect` is
    // `sql::dialect::Dialect`.
    let mut reexports: BTreeMap<Vec<String>, Vec<String>> = BTreeMap::new();
    for s in sources {
        let own = module_path(&s.relative);
        for named in named_paths(&without_tests(&blank(&s.text))) {
            if named.reexport
                && let Some(target) = resolve(&own, &named.path, &modules)
            {
                let mut alias = own.clone();
                alias.push(named.path.last().cloned().unwrap_or_default());
                reexports.insert(alias, target);
            }
        }
    }
    for s in sources {
        let own = module_path(&s.relative);
        let file = s.relative.display().to_string();
        let Some(top) = own.first().cloned().or(Some("lib".into())) else {
            continue;
        };
        if top == "main" {
            continue;
        }
        let Some(own_layer) = layer_of(&top) else {
            wrong.push(format!(
                "{file}: module `{top}` has no layer in tests/layers.rs"
            ));
            continue;
        };
        for named in named_paths(&without_tests(&blank(&s.text))) {
            let first = named.path.first().map(String::as_str).unwrap_or_default();
            if DRIVERS.contains(&first) && top != "backend" {
                wrong.push(format!(
                    "{file}: names the database driver `{first}` outside src/backend/"
                ));
                continue;
            }
            let Some(mut target) = resolve(&own, &named.path, &modules) else {
                continue;
            };
            // A re-exported name is the item of the file that defines it.
            let renamed = (1..=target.len())
                .rev()
                .find_map(|n| reexports.get(&target[..n]).map(|real| (n, real)));
            if let Some((n, real)) = renamed
                && !named.reexport
            {
                let mut full = real.clone();
                full.extend(target.iter().skip(n).cloned());
                target = full;
            }
            let reached = module_of_path(&target, &modules);
            let Some(their_top) = reached.first() else {
                continue;
            };
            if reached == own {
                continue;
            }
            if *their_top != top {
                match layer_of(their_top) {
                    Some(layer) if layer < own_layer => {}
                    Some(_) => wrong.push(format!(
                        "{file}: `{}` names `{}`, which is not below it",
                        own.join("::"),
                        target.join("::")
                    )),
                    None => wrong.push(format!(
                        "{file}: `{}` is not a module with a layer",
                        target.join("::")
                    )),
                }
            } else if INNER.iter().any(|(folder, _)| *folder == top) {
                let mine = own.get(1).map(String::as_str);
                let theirs = reached.get(1).map(String::as_str);
                match (mine, theirs) {
                    // The facade names its files only to re-export them.
                    (None, Some(theirs)) if !named.reexport => wrong.push(format!(
                        "{file}: the {top}/ facade's own code names `{top}::{theirs}` (move \
                         the code into a file of the folder)"
                    )),
                    (Some(mine), Some(theirs)) if mine != theirs => {
                        let (a, b) = (
                            inner_layer(&top, mine).flatten(),
                            inner_layer(&top, theirs).flatten(),
                        );
                        match (a, b) {
                            (Some(a), Some(b)) if b < a => {}
                            (None, _) | (_, None) => wrong.push(format!(
                                "{file}: {top}/{} has no place in tests/layers.rs INNER",
                                if a.is_none() { mine } else { theirs }
                            )),
                            _ => wrong.push(format!(
                                "{file}: `{}` names `{}`, which is not below it in {top}/",
                                own.join("::"),
                                target.join("::")
                            )),
                        }
                    }
                    _ => {}
                }
            }
            // A file using its folder's own items (`super::Shared`) is how
            // a module is cut into files: not drawn, so a folder's mod.rs
            // and its files make no circle; files naming each other do.
            let ancestor = own.starts_with(&reached);
            if !ancestor && !named.reexport {
                graph.entry(own.clone()).or_default().insert(reached);
            }
        }
    }
    for circle in circles(&graph) {
        wrong.push(format!(
            "an import circle: {}",
            circle
                .iter()
                .map(|m| m.join("::"))
                .collect::<Vec<_>>()
                .join(" -> ")
        ));
    }
    wrong
}

/// The circles of a module graph (each once, from its smallest module),
/// found by a depth-first walk; a module that names its own submodule and
/// is named back is a circle too.
fn circles(graph: &BTreeMap<Vec<String>, BTreeSet<Vec<String>>>) -> Vec<Vec<Vec<String>>> {
    let mut found: BTreeSet<Vec<Vec<String>>> = BTreeSet::new();
    for start in graph.keys() {
        let mut stack = vec![(start.clone(), vec![start.clone()])];
        while let Some((node, trail)) = stack.pop() {
            for next in graph.get(&node).into_iter().flatten() {
                if next == start {
                    let mut circle = trail.clone();
                    circle.push(start.clone());
                    if trail.iter().min() == Some(start) {
                        found.insert(circle);
                    }
                } else if !trail.contains(next) && next > start {
                    let mut longer = trail.clone();
                    longer.push(next.clone());
                    stack.push((next.clone(), longer));
                }
            }
        }
    }
    found.into_iter().collect()
}

/// Every `.rs` file under `dir`.
fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

fn project_sources() -> Vec<Source> {
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut paths = Vec::new();
    files(&src, &mut paths);
    paths.sort();
    paths
        .into_iter()
        .map(|path| Source {
            relative: path.strip_prefix(&src).unwrap().to_path_buf(),
            text: std::fs::read_to_string(&path).unwrap(),
        })
        .collect()
}

#[test]
fn imports_point_down() {
    let sources = project_sources();
    assert!(sources.len() > 50, "the sources were not found");
    let wrong = violations(&sources);
    assert!(
        wrong.is_empty(),
        "imports that do not point down:\n{}",
        wrong.join("\n")
    );
}

/// A backend implements the db traits from the side: it never names the
/// engine, explain or another backend, so each database stays one folder.
#[test]
fn backends_stand_apart() {
    let sources = project_sources();
    let modules: BTreeSet<Vec<String>> = sources.iter().map(|s| module_path(&s.relative)).collect();
    let mut wrong = Vec::new();
    let mut seen = BTreeSet::new();
    for s in &sources {
        let own = module_path(&s.relative);
        if own.first().map(String::as_str) != Some("backend") || own.len() < 2 {
            continue;
        }
        let backend = own[1].clone();
        seen.insert(backend.clone());
        for named in named_paths(&without_tests(&blank(&s.text))) {
            let Some(target) = resolve(&own, &named.path, &modules) else {
                continue;
            };
            let reached = module_of_path(&target, &modules);
            let other_backend = reached.first().map(String::as_str) == Some("backend")
                && reached.get(1).is_some_and(|b| *b != backend);
            let above =
                ["engine", "explain"].contains(&reached.first().map(String::as_str).unwrap_or(""));
            if other_backend || above {
                wrong.push(format!(
                    "{}: the {backend} backend names {}",
                    s.relative.display(),
                    target.join("::")
                ));
            }
        }
    }
    assert!(
        seen.len() >= 3,
        "the backends' files were not found: {seen:?}"
    );
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// The checker on sources made to break each rule: each is found.
mod the_checker_catches {
    use super::*;

    fn check(files: &[(&str, &str)]) -> Vec<String> {
        let mut sources: Vec<Source> = files
            .iter()
            .map(|(path, text)| Source {
                relative: PathBuf::from(path),
                text: text.to_string(),
            })
            .collect();
        // The modules the paths reach.
        for module in [
            "lib.rs",
            "sql/mod.rs",
            "sql/queue.rs",
            "sql/dialect.rs",
            "engine/mod.rs",
            "model.rs",
            "commands/mod.rs",
        ] {
            if !sources.iter().any(|s| s.relative == Path::new(module)) {
                sources.push(Source {
                    relative: PathBuf::from(module),
                    text: String::new(),
                });
            }
        }
        violations(&sources)
    }

    #[test]
    fn an_upward_import_inside_a_nested_use_group() {
        let wrong = check(&[(
            "sql/queue.rs",
            "use crate::{model::Job, engine::{self, claim::Claim}};\n",
        )]);
        assert!(
            wrong.iter().any(|w| w.contains("names `engine")),
            "{wrong:?}"
        );
        assert!(check(&[("sql/queue.rs", "use crate::{model::{Job, Status}};\n")]).is_empty());
    }

    #[test]
    fn super_super_reaching_up() {
        let wrong = check(&[("sql/queue.rs", "fn f() { super::super::engine::run(); }\n")]);
        assert!(
            wrong.iter().any(|w| w.contains("names `engine::run`")),
            "{wrong:?}"
        );
    }

    #[test]
    fn an_import_after_a_comment_marker_inside_a_string() {
        let wrong = check(&[(
            "sql/queue.rs",
            "const U: &str = \"http://x\"; use crate::engine::Run;\n",
        )]);
        assert!(
            wrong.iter().any(|w| w.contains("names `engine::Run`")),
            "{wrong:?}"
        );
        // ... and none in a comment or a string.
        assert!(
            check(&[(
                "sql/queue.rs",
                "// use crate::engine::Run;\nconst S: &str = \"crate::engine::x\";\n"
            )])
            .is_empty()
        );
    }

    #[test]
    fn a_driver_crate_outside_the_backends() {
        let wrong = check(&[(
            "commands/demo.rs",
            "use rusqlite::params;\nfn f() { rusqlite::Connection::open(\"x\"); }\n",
        )]);
        assert_eq!(
            wrong
                .iter()
                .filter(|w| w.contains("driver `rusqlite`"))
                .count(),
            2,
            "{wrong:?}"
        );
    }

    #[test]
    fn a_circle_inside_a_folder() {
        let wrong = check(&[
            ("sql/dialect.rs", "use super::queue::QueueSql;\n"),
            ("sql/queue.rs", "use super::dialect::Dialect;\n"),
        ]);
        assert!(
            wrong.iter().any(|w| w.contains("not below it in sql/")),
            "{wrong:?}"
        );
        assert!(
            wrong.iter().any(|w| w.contains("an import circle")),
            "{wrong:?}"
        );
    }

    #[test]
    fn a_facade_that_uses_its_own_files() {
        let wrong = check(&[(
            "sql/mod.rs",
            "pub mod queue;\npub use queue::QueueSql;\nfn f() { queue::run(); }\n",
        )]);
        assert!(wrong.iter().any(|w| w.contains("facade")), "{wrong:?}");
        assert!(check(&[("sql/mod.rs", "pub mod queue;\npub use queue::QueueSql;\n")]).is_empty());
    }
}

/// No file of `src/` over 900 lines and no function over 120 (tests
/// aside): a file is one subject, a function one job a reader can hold.
#[test]
fn files_and_functions_stay_readable() {
    let mut wrong = Vec::new();
    for s in project_sources() {
        let lines: Vec<&str> = s.text.lines().collect();
        if lines.len() > 900 {
            wrong.push(format!(
                "{}: {} lines (at most 900)",
                s.relative.display(),
                lines.len()
            ));
        }
        let code = without_tests(&blank(&s.text));
        let code: Vec<&str> = code.lines().collect();
        for (at, line) in code.iter().enumerate() {
            let trimmed = line.trim_start();
            let indent = line.len() - trimmed.len();
            let is_fn = ["fn ", "pub fn ", "pub(crate) fn ", "pub(super) fn "]
                .iter()
                .any(|p| trimmed.starts_with(p));
            if !is_fn || trimmed.trim_end().ends_with(';') {
                continue;
            }
            let close = format!("{}}}", " ".repeat(indent));
            if let Some(end) = (at + 1..code.len()).find(|&k| code[k] == close) {
                let length = end - at + 1;
                if length > 120 {
                    let name = trimmed.split(['(', '<']).next().unwrap_or(trimmed);
                    wrong.push(format!(
                        "{}:{}: {name} is {length} lines (at most 120)",
                        s.relative.display(),
                        at + 1
                    ));
                }
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
