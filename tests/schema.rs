//! The JSON Schemas in docs/schema/vN/ are the ones made from the report
//! types (`qctl::docs::json_schemas`), and they only ever grow: a field
//! removed, no longer always present, or of another type fails here
//! unless `SCHEMA_VERSION` (src/model.rs) is raised, which starts a new
//! directory and keeps the old one as released.
//! `QCTL_UPDATE_GENERATED=1 cargo test --test schema` writes the current
//! version's files, but never over a breaking change.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

fn schema_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("docs/schema")
}

/// What a reader of `old` documents relies on that `new` documents may
/// break: a property gone, a property no longer required, or a value of a
/// type `old` did not allow. Added properties, and types narrowed, break
/// nothing.
fn breaking_changes(old: &Value, new: &Value) -> Vec<String> {
    let mut out = Vec::new();
    compare(old, old, new, new, "$", &mut out, 0);
    out
}

/// Follows a `$ref` into the document's `$defs`.
fn resolve<'a>(schema: &'a Value, root: &'a Value) -> &'a Value {
    match schema.get("$ref").and_then(Value::as_str) {
        Some(reference) => {
            let pointer = reference.trim_start_matches('#');
            resolve(
                root.pointer(pointer)
                    .unwrap_or_else(|| panic!("{reference} not found")),
                root,
            )
        }
        None => schema,
    }
}

/// The branches a value may take: `anyOf`/`oneOf` alternatives, else the
/// schema itself.
fn branches<'a>(schema: &'a Value, root: &'a Value) -> Vec<&'a Value> {
    let schema = resolve(schema, root);
    for key in ["anyOf", "oneOf"] {
        if let Some(list) = schema.get(key).and_then(Value::as_array) {
            return list.iter().flat_map(|b| branches(b, root)).collect();
        }
    }
    vec![schema]
}

fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// The JSON types a schema allows; `any` when it does not say.
fn types(schema: &Value, root: &Value) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for branch in branches(schema, root) {
        if let Some(kind) = branch.get("type") {
            match kind {
                Value::String(t) => {
                    out.insert(t.clone());
                }
                Value::Array(list) => {
                    out.extend(list.iter().filter_map(Value::as_str).map(str::to_string))
                }
                _ => {}
            }
        } else if let Some(value) = branch.get("const") {
            out.insert(json_type(value).to_string());
        } else if let Some(values) = branch.get("enum").and_then(Value::as_array) {
            out.extend(values.iter().map(|v| json_type(v).to_string()));
        } else if branch.get("properties").is_some() {
            out.insert("object".into());
        } else if let Some(parts) = branch.get("allOf").and_then(Value::as_array) {
            for part in parts {
                out.extend(types(part, root));
            }
        } else {
            out.insert("any".into());
        }
    }
    out
}

/// Whether a reader expecting `allowed` takes a value of type `kind`.
fn accepts(allowed: &BTreeSet<String>, kind: &str) -> bool {
    allowed.contains("any")
        || allowed.contains(kind)
        || (kind == "integer" && allowed.contains("number"))
}

/// The properties of every object branch (merged), and those required in
/// every object branch.
fn properties<'a>(
    schema: &'a Value,
    root: &'a Value,
) -> (BTreeMap<String, &'a Value>, BTreeSet<String>) {
    let mut props = BTreeMap::new();
    let mut required: Option<BTreeSet<String>> = None;
    let mut objects = Vec::new();
    for branch in branches(schema, root) {
        match branch.get("allOf").and_then(Value::as_array) {
            Some(parts) => objects.extend(parts.iter().map(|p| resolve(p, root))),
            None => objects.push(branch),
        }
    }
    for object in objects {
        let Some(own) = object.get("properties").and_then(Value::as_object) else {
            continue;
        };
        for (name, schema) in own {
            props.entry(name.clone()).or_insert(schema);
        }
        let own_required: BTreeSet<String> = object
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect();
        required = Some(match required {
            Some(before) => before.intersection(&own_required).cloned().collect(),
            None => own_required,
        });
    }
    (props, required.unwrap_or_default())
}

fn items<'a>(schema: &'a Value, root: &'a Value) -> Option<&'a Value> {
    branches(schema, root)
        .into_iter()
        .find_map(|b| b.get("items").filter(|i| i.is_object()))
}

fn additional<'a>(schema: &'a Value, root: &'a Value) -> Option<&'a Value> {
    branches(schema, root)
        .into_iter()
        .find_map(|b| b.get("additionalProperties").filter(|i| i.is_object()))
}

fn compare(
    old: &Value,
    old_root: &Value,
    new: &Value,
    new_root: &Value,
    path: &str,
    out: &mut Vec<String>,
    depth: usize,
) {
    // Recursive types (a plan inside a plan) end somewhere.
    if depth > 32 {
        return;
    }
    let (old_types, new_types) = (types(old, old_root), types(new, new_root));
    let widened: Vec<&String> = new_types
        .iter()
        .filter(|t| !accepts(&old_types, t))
        .collect();
    if !widened.is_empty() {
        out.push(format!(
            "{path}: was {old_types:?}, now also {widened:?} (a type change)"
        ));
    }
    let (old_props, old_required) = properties(old, old_root);
    let (new_props, new_required) = properties(new, new_root);
    for (name, old_schema) in &old_props {
        let at = format!("{path}.{name}");
        match new_props.get(name) {
            None => out.push(format!("{at}: removed")),
            Some(new_schema) => {
                if old_required.contains(name) && !new_required.contains(name) {
                    out.push(format!("{at}: no longer always present"));
                }
                compare(
                    old_schema,
                    old_root,
                    new_schema,
                    new_root,
                    &at,
                    out,
                    depth + 1,
                );
            }
        }
    }
    if let (Some(old_items), Some(new_items)) = (items(old, old_root), items(new, new_root)) {
        compare(
            old_items,
            old_root,
            new_items,
            new_root,
            &format!("{path}[]"),
            out,
            depth + 1,
        );
    }
    if let (Some(old_values), Some(new_values)) =
        (additional(old, old_root), additional(new, new_root))
    {
        compare(
            old_values,
            old_root,
            new_values,
            new_root,
            &format!("{path}.*"),
            out,
            depth + 1,
        );
    }
}

fn parse(text: &str) -> Value {
    serde_json::from_str(text).expect("a schema is JSON")
}

#[test]
fn committed_schemas_are_generated_and_only_grow() {
    let version = qctl::model::SCHEMA_VERSION;
    let update = std::env::var_os("QCTL_UPDATE_GENERATED").is_some();
    let current = schema_root().join(format!("v{version}"));
    let previous = schema_root().join(format!("v{}", version - 1));
    let generated = qctl::docs::json_schemas();
    let mut problems = Vec::new();
    for (name, text) in &generated {
        let path = current.join(name);
        let committed = std::fs::read_to_string(&path).ok();
        if committed.as_deref() == Some(text.as_str()) {
            continue;
        }
        if let Some(committed) = &committed {
            let breaking = breaking_changes(&parse(committed), &parse(text));
            if !breaking.is_empty() {
                // Never written over: scripts validate against the file
                // as it was released.
                problems.push(format!(
                    "{name}: {} — a field removed or changed type breaks the readers of schema \
                     version {version}: raise SCHEMA_VERSION in src/model.rs to {} and run \
                     `QCTL_UPDATE_GENERATED=1 cargo test --test schema`",
                    breaking.join("; "),
                    version + 1
                ));
                continue;
            }
        }
        if update {
            std::fs::create_dir_all(&current).unwrap();
            std::fs::write(&path, text).unwrap();
        } else {
            problems.push(format!(
                "docs/schema/v{version}/{name} is out of date (a field or a document added): run \
                 `QCTL_UPDATE_GENERATED=1 cargo test --test schema` and commit"
            ));
        }
    }
    // A file of the current version for no document is stale.
    let names: BTreeSet<&str> = generated.iter().map(|(n, _)| n.as_str()).collect();
    for entry in std::fs::read_dir(&current).into_iter().flatten() {
        let file = entry.unwrap().file_name().to_string_lossy().into_owned();
        if !names.contains(file.as_str()) {
            problems.push(format!("docs/schema/v{version}/{file}: no such document"));
        }
    }
    // Every earlier version stays as released, beside the current one.
    for older in 1..version {
        let dir = schema_root().join(format!("v{older}"));
        assert!(
            dir.is_dir(),
            "docs/schema/v{older}/ is gone; released schemas are kept"
        );
    }
    if version > 1 {
        // A raised version has its reason: something the previous one's
        // readers relied on changed.
        let broke = generated.iter().any(|(name, text)| {
            std::fs::read_to_string(previous.join(name))
                .is_ok_and(|old| !breaking_changes(&parse(&old), &parse(text)).is_empty())
        });
        assert!(
            broke,
            "SCHEMA_VERSION is {version} but no document changed incompatibly since v{}: lower it",
            version - 1
        );
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_version_rule_catches_what_breaks_a_reader() {
    let old = json!({
        "type": "object",
        "properties": {
            "count": {"type": "integer"},
            "age": {"type": ["number", "null"]},
            "queue": {"type": ["string", "null"]},
            "nested": {"$ref": "#/$defs/Inner"},
            "list": {"type": "array", "items": {"$ref": "#/$defs/Inner"}}
        },
        "required": ["count", "age", "queue", "nested", "list"],
        "$defs": {"Inner": {"type": "object", "properties": {"id": {"type": "integer"}},
                             "required": ["id"]}}
    });
    assert!(breaking_changes(&old, &old).is_empty());
    let with = |pointer: &str, value: Option<Value>| {
        let mut new = old.clone();
        let (parent, key) = pointer.rsplit_once('/').unwrap();
        let object = new.pointer_mut(parent).unwrap().as_object_mut().unwrap();
        match value {
            Some(value) => {
                object.insert(key.to_string(), value);
            }
            None => {
                object.remove(key);
            }
        }
        new
    };
    // Breaking: removed, retyped, nullable, no longer required, and the
    // same inside a definition and inside array items.
    for (new, what) in [
        (with("/properties/count", None), "$.count: removed"),
        (
            with("/properties/count", Some(json!({"type": "string"}))),
            "$.count: was",
        ),
        (
            with(
                "/properties/count",
                Some(json!({"type": ["integer", "null"]})),
            ),
            "now also [\"null\"]",
        ),
        (
            with("/required", Some(json!(["age", "queue", "nested", "list"]))),
            "$.count: no longer always present",
        ),
        (
            with(
                "/$defs/Inner/properties/id",
                Some(json!({"type": "string"})),
            ),
            "$.nested.id: was",
        ),
        (
            with("/$defs/Inner/properties/id", None),
            "$.list[].id: removed",
        ),
    ] {
        let found = breaking_changes(&old, &new);
        assert!(
            found.iter().any(|f| f.contains(what)),
            "{what} not found in {found:?}"
        );
    }
    // Not breaking: a field added, a type narrowed, integer for number.
    for new in [
        with("/properties/added", Some(json!({"type": "string"}))),
        with("/properties/age", Some(json!({"type": "number"}))),
        with("/properties/queue", Some(json!({"type": "string"}))),
        with("/properties/age", Some(json!({"type": "integer"}))),
    ] {
        assert_eq!(breaking_changes(&old, &new), Vec::<String>::new());
    }
}

/// The rule on the real schemas: the stats document without `ready`, or
/// with `oldest_ready_age_seconds` a string, needs a new version.
#[test]
fn the_version_rule_holds_for_the_real_documents() {
    let (_, text) = qctl::docs::json_schemas()
        .into_iter()
        .find(|(name, _)| name == "stats.json")
        .unwrap();
    let stats = parse(&text);
    let mut without = stats.clone();
    // `Counts` is the total's; a queue's counts are flattened into
    // `QueueCounts`.
    for counts in ["Counts", "QueueCounts"] {
        without
            .pointer_mut(&format!("/$defs/{counts}/properties"))
            .unwrap()
            .as_object_mut()
            .unwrap()
            .remove("ready");
    }
    let found = breaking_changes(&stats, &without);
    assert!(
        found.iter().any(|f| f == "$.total.ready: removed"),
        "{found:?}"
    );
    assert!(
        found.iter().any(|f| f.contains("$.queues[].ready")),
        "{found:?}"
    );
    let mut retyped = stats.clone();
    *retyped
        .pointer_mut("/$defs/Counts/properties/oldest_ready_age_seconds")
        .unwrap() = json!({"type": ["string", "null"]});
    assert!(!breaking_changes(&stats, &retyped).is_empty());
}

#[test]
fn version_json_names_the_schema_version() {
    let s = common::Sandbox::new();
    for args in [
        &["--version", "--format", "json"][..],
        &["--format=json", "--version"],
        &["stats", "--version", "--format", "json"],
    ] {
        let run = s.run_raw(args);
        run.assert_ok();
        let doc = run.json();
        assert_eq!(doc["name"], "qctl");
        assert_eq!(doc["version"], env!("CARGO_PKG_VERSION"));
        assert_eq!(doc["schema_version"], qctl::model::SCHEMA_VERSION);
        assert!(
            schema_root()
                .join(format!("v{}", doc["schema_version"]))
                .join("version.json")
                .is_file()
        );
    }
    let plain = s.run_raw(&["--version"]);
    assert_eq!(
        plain.stdout,
        format!("qctl {}\n", env!("CARGO_PKG_VERSION"))
    );
}

/// Every schema is a valid 2020-12 schema with an `$id` naming its
/// version; every command that prints JSON has one.
#[test]
fn every_document_has_a_valid_schema() {
    let dir = common::schema::dir();
    let names: Vec<String> = qctl::docs::json_schemas()
        .into_iter()
        .map(|(name, _)| name)
        .collect();
    for name in &names {
        let schema = parse(&std::fs::read_to_string(dir.join(name)).unwrap());
        assert!(jsonschema::meta::is_valid(&schema), "{name}");
        let stem = name.trim_end_matches(".json");
        assert_eq!(
            schema["$id"],
            format!("urn:qctl:schema:v{}:{stem}", qctl::model::SCHEMA_VERSION)
        );
    }
    let command = <qctl::cli::Cli as clap::CommandFactory>::command();
    for sub in command.get_subcommands() {
        let name = sub.get_name();
        // These print a script or a page, or only logs on stderr.
        if ["completions", "man", "help", "serve"].contains(&name) {
            continue;
        }
        assert!(
            names.contains(&format!("{name}.json")),
            "{name} has no schema"
        );
    }
    assert!(names.contains(&"serve-log.json".to_string()));
    assert!(names.contains(&"serve-config.json".to_string()));
}

/// The example targets file in docs/metrics.md follows the schema.
#[test]
fn the_documented_targets_file_follows_its_schema() {
    let text =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/metrics.md"))
            .unwrap();
    let example = text
        .split("```toml\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("docs/metrics.md shows a targets file");
    common::schema::validate_toml("serve-config", example);
    // ... and the schema refuses what qctl refuses.
    let value: Value =
        serde_json::to_value(toml::from_str::<toml::Value>(example).unwrap()).unwrap();
    let mut unknown = value.clone();
    unknown["target"][0]["port"] = json!(5432);
    let schema =
        parse(&std::fs::read_to_string(common::schema::dir().join("serve-config.json")).unwrap());
    let validator = jsonschema::draft202012::new(&schema).unwrap();
    assert!(!validator.is_valid(&unknown));
    let mut unnamed = value;
    unnamed["target"][0].as_object_mut().unwrap().remove("name");
    assert!(!validator.is_valid(&unnamed));
}
