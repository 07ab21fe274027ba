//! Every JSON document a test reads is validated against its committed
//! schema (docs/schema/vN/, N = the schema version qctl says), by the
//! jsonschema crate: a field renamed, dropped or of another type fails
//! the test that read it.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Mutex, OnceLock};

use serde_json::Value;

/// The directory of the current version's schemas.
pub fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("docs/schema")
        .join(format!("v{}", qctl::model::SCHEMA_VERSION))
}

/// The compiled validator of one document (`stats`, `reap-stream`, ...).
fn validator(name: &str) -> &'static jsonschema::Validator {
    static CACHE: OnceLock<Mutex<HashMap<String, &'static jsonschema::Validator>>> =
        OnceLock::new();
    let mut cache = CACHE
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    if let Some(found) = cache.get(name) {
        return found;
    }
    let path = dir().join(format!("{name}.json"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e}; run `QCTL_UPDATE_GENERATED=1 cargo test --test schema`",
            path.display()
        )
    });
    let schema: Value = serde_json::from_str(&text).unwrap();
    let compiled = jsonschema::draft202012::new(&schema)
        .unwrap_or_else(|e| panic!("{}: not a valid schema: {e}", path.display()));
    let leaked: &'static jsonschema::Validator = Box::leak(Box::new(compiled));
    cache.insert(name.to_string(), leaked);
    leaked
}

/// Fails the test unless `value` is valid against document `name`'s
/// schema.
pub fn validate(name: &str, value: &Value) {
    let errors: Vec<String> = validator(name)
        .iter_errors(value)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "the JSON does not follow docs/schema/v{}/{name}.json:\n{}\ndocument:\n{}",
        qctl::model::SCHEMA_VERSION,
        errors.join("\n"),
        serde_json::to_string_pretty(value).unwrap()
    );
}

/// A TOML document (the exporter's targets file), read as JSON.
pub fn validate_toml(name: &str, text: &str) {
    let value: toml::Value = toml::from_str(text).expect("TOML");
    validate(name, &serde_json::to_value(value).unwrap());
}

/// The global options that take a value, which come before the command.
const VALUED: [&str; 11] = [
    "-d",
    "--database",
    "--config",
    "--layout",
    "--table",
    "--format",
    "--color",
    "--busy-timeout",
    "--statement-timeout",
    "--connect-timeout",
    "--index-timeout",
];

/// The document a qctl run with these arguments prints with `--format
/// json`: the command's, the watch and stream forms by their flags.
pub fn document(args: &[String]) -> Option<String> {
    if args.iter().any(|a| a == "--version" || a == "-V") {
        return Some("version".into());
    }
    let mut rest = args.iter();
    let command = loop {
        let arg = rest.next()?;
        if VALUED.contains(&arg.as_str()) {
            rest.next();
        } else if !arg.starts_with('-') {
            break arg.as_str();
        }
    };
    let has = |flag: &str| args.iter().any(|a| a == flag);
    Some(match command {
        "stats" if has("--watch") => "stats-watch".into(),
        "reap" if has("--stream") => "reap-stream".into(),
        other => other.to_string(),
    })
}

/// Validates a document a run printed: against its command's schema when
/// the arguments are known, else against whichever schema fits.
pub fn validate_run(args: &[String], value: &Value) {
    match document(args) {
        Some(name) => validate(&name, value),
        None => {
            let names: Vec<String> = std::fs::read_dir(dir())
                .unwrap()
                .filter_map(|e| e.ok())
                .map(|e| {
                    e.file_name()
                        .to_string_lossy()
                        .trim_end_matches(".json")
                        .to_string()
                })
                .collect();
            assert!(
                names.iter().any(|n| validator(n).is_valid(value)),
                "the JSON follows no schema of docs/schema/v{}/:\n{value}",
                qctl::model::SCHEMA_VERSION
            );
        }
    }
}
