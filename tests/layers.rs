//! qctl's layers point down, never up or round (docs/architecture.md):
//! every `crate::` path in a module names a module of a lower layer, so
//! the module graph has no cycle. A new module must be given its layer
//! here; an import that points up fails this test with the file and the
//! path that does it.

use std::collections::BTreeMap;
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

fn layer_of(module: &str) -> Option<usize> {
    LAYERS.iter().position(|layer| layer.contains(&module))
}

/// Every `.rs` file under `dir`.
fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// A file's code without its tests and comments: tests may use anything.
fn code(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap();
    let text = text.split("#[cfg(test)]").next().unwrap_or_default();
    text.lines()
        .map(|line| match line.find("//") {
            Some(at) => &line[..at],
            None => line,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The top-level module a file belongs to (`src/backend/sqlite/mod.rs`
/// is `backend`, `src/lib.rs` is `lib`), and its second-level module.
fn module_of(src: &Path, path: &Path) -> (String, Option<String>) {
    let relative = path.strip_prefix(src).unwrap();
    let mut parts = relative.iter().map(|p| p.to_string_lossy().to_string());
    let first = parts.next().unwrap();
    let top = first.trim_end_matches(".rs").to_string();
    let second = parts
        .next()
        .map(|s| s.trim_end_matches(".rs").to_string())
        .filter(|s| s != "mod");
    (top, second)
}

/// The modules a file's code names with `crate::` (and `super::` from a
/// submodule of another top-level module is impossible by construction).
fn crate_paths(code: &str) -> Vec<(String, Option<String>)> {
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find("crate::") {
        let after = &rest[at + "crate::".len()..];
        let name: String = after
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        let next = after[name.len()..].strip_prefix("::").map(|tail| {
            tail.chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect::<String>()
        });
        // `use crate::{a, b}` names several.
        if name.is_empty() && after.starts_with('{') {
            let group = &after[1..after.find('}').unwrap_or(after.len())];
            for item in group.split(',') {
                let item = item.trim();
                let module = item.split("::").next().unwrap_or_default();
                if !module.is_empty() {
                    out.push((module.to_string(), None));
                }
            }
        } else if !name.is_empty() {
            out.push((name, next));
        }
        rest = &rest[at + "crate::".len()..];
    }
    out
}

#[test]
fn imports_point_down() {
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    files.sort();
    let mut wrong = Vec::new();
    let mut graph: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for path in &files {
        let (module, _) = module_of(&src, path);
        if module == "main" {
            continue;
        }
        let Some(own) = layer_of(&module) else {
            wrong.push(format!(
                "{}: module `{module}` has no layer in tests/layers.rs",
                path.display()
            ));
            continue;
        };
        for (used, _) in crate_paths(&code(path)) {
            if used == module || used.chars().next().is_some_and(|c| c.is_uppercase()) {
                continue;
            }
            match layer_of(&used) {
                Some(layer) if layer < own => graph.entry(module.clone()).or_default().push(used),
                Some(_) => wrong.push(format!(
                    "{}: `{module}` uses `crate::{used}`, which is not below it",
                    path.display()
                )),
                None => wrong.push(format!(
                    "{}: `crate::{used}` is not a module with a layer",
                    path.display()
                )),
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "imports that do not point down:\n{}",
        wrong.join("\n")
    );
    assert!(!graph.is_empty(), "the scan found no imports at all");
}

/// A backend implements the db traits from the side: it never names the
/// engine, explain or another backend, so each database stays one folder.
#[test]
fn backends_stand_apart() {
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src.join("backend"), &mut files);
    let mut wrong = Vec::new();
    let mut seen = 0;
    for path in &files {
        let (_, own) = module_of(&src, path);
        let Some(own) = own else {
            continue; // backend/mod.rs registers them all
        };
        seen += 1;
        for (used, inner) in crate_paths(&code(path)) {
            // `crate::backend::Connector` is the registry's trait; a
            // lower-case name after `backend::` is another backend.
            let other_backend = used == "backend"
                && inner
                    .as_deref()
                    .is_some_and(|i| i != own && i.starts_with(|c: char| c.is_ascii_lowercase()));
            if other_backend || used == "engine" || used == "explain" {
                wrong.push(format!(
                    "{}: the {own} backend uses crate::{used}::{}",
                    path.display(),
                    inner.unwrap_or_default()
                ));
            }
        }
    }
    assert!(seen >= 3, "the backends' files were not found");
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
