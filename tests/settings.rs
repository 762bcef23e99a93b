//! Every place a setting is written lists the same settings: the C header's `HordeConfig`,
//! the C# example's `Config`, the C guide's table of config fields (docs/ffi.md) and the
//! scenario format's `[config]` keys (docs/scenario.md). The guide's defaults are
//! `SimConfig::default()`'s (a scenario that sets every documented key to the guide's
//! default builds exactly the default settings), and the scenario guide's defaults are the
//! C guide's.

use std::collections::BTreeSet;
use std::path::Path;

use horde::SimConfig;
use horde_scenario::{Overrides, parse_scenario};

fn read(path: &str) -> String {
    let full = Path::new(env!("CARGO_MANIFEST_DIR")).join(path);
    std::fs::read_to_string(&full).unwrap_or_else(|e| panic!("{}: {e}", full.display()))
}

/// The lines of `text` from the first that starts with `from` up to the first after it that
/// starts with `to`.
fn between<'a>(text: &'a str, from: &str, to: &str) -> Vec<&'a str> {
    let mut lines = text
        .lines()
        .skip_while(|l| !l.trim_start().starts_with(from));
    lines
        .next()
        .unwrap_or_else(|| panic!("no line starts with {from:?}"));
    lines
        .take_while(|l| !l.trim_start().starts_with(to))
        .collect()
}

/// `HordeConfig`'s fields in `ffi/include/horde.h`, in struct order.
fn header_fields() -> Vec<String> {
    let header = read("ffi/include/horde.h");
    between(&header, "typedef struct HordeConfig {", "} HordeConfig;")
        .into_iter()
        .map(str::trim)
        .filter(|l| !l.starts_with("//") && l.ends_with(';'))
        .map(|l| {
            l.trim_end_matches(';')
                .rsplit(' ')
                .next()
                .unwrap()
                .to_owned()
        })
        .collect()
}

/// The C# example's `Config` fields, in struct order.
fn csharp_fields() -> Vec<String> {
    let cs = read("ffi/examples/csharp/EngineLoop.cs");
    between(&cs, "public struct Config", "}")
        .into_iter()
        .map(str::trim)
        .filter_map(|l| l.strip_prefix("public "))
        .flat_map(|l| {
            let names = l.trim_end_matches(';').split_once(' ').unwrap().1;
            names
                .split(',')
                .map(|n| n.trim().to_owned())
                .collect::<Vec<_>>()
        })
        .collect()
}

/// The cells of a Markdown table's rows, from the row after the one starting with `header`.
fn table_rows(doc: &str, header: &str) -> Vec<Vec<String>> {
    between(doc, header, "\u{0}")
        .into_iter()
        .skip(1)
        .take_while(|l| l.starts_with('|'))
        .map(|l| {
            l.trim_matches('|')
                .split(" | ")
                .map(|c| c.trim().to_owned())
                .collect()
        })
        .collect()
}

/// The names in backticks of a table cell (`` `a`, `b` `` is two).
fn ticked(cell: &str) -> Vec<String> {
    cell.split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_owned)
        .collect()
}

/// docs/ffi.md's config table: (field, default as written).
fn ffi_doc() -> Vec<(String, String)> {
    table_rows(&read("docs/ffi.md"), "| field | C type | default |")
        .into_iter()
        .map(|row| (ticked(&row[0]).remove(0), row[2].clone()))
        .collect()
}

/// docs/scenario.md's `[config]` table: (key with its table, `steering.probe_length`;
/// default as written), one per key of rows that list several.
fn scenario_doc() -> Vec<(String, String)> {
    let mut section = String::new();
    let mut keys = Vec::new();
    let doc = read("docs/scenario.md");
    let section_text = between(&doc, "## `[config]`", "## ").join("\n");
    for row in table_rows(&section_text, "| key | type | default |") {
        let mut names = ticked(&row[0]);
        if let Some(table) = names.first().and_then(|n| n.strip_prefix("[config.")) {
            section = format!("{}.", table.trim_end_matches(']'));
            names.remove(0);
        }
        let defaults = ticked(&row[2]);
        assert_eq!(names.len(), defaults.len(), "row {row:?}");
        for (name, default) in names.into_iter().zip(defaults) {
            keys.push((format!("{section}{name}"), default));
        }
    }
    keys
}

/// The `HordeConfig` field a scenario key sets.
fn c_field(key: &str) -> String {
    match key.split_once('.') {
        Some(("contacts", rest)) => format!("contact_{rest}"),
        Some((_, rest)) => rest.to_owned(),
        None => key.to_owned(),
    }
}

/// A number, bool or navigation as the C guide writes its default (`0 (HORDE_...)`,
/// `0.17453292 (10 degrees)`), as a number.
fn c_default(text: &str) -> f64 {
    text.split_whitespace().next().unwrap().parse().unwrap()
}

/// A scenario default (`1.5`, `true`, `"flat"`) as the C guide's number.
fn scenario_default(text: &str) -> f64 {
    match text {
        "true" => 1.0,
        "false" => 0.0,
        "\"flat\"" => 0.0,
        "\"hierarchical\"" => 1.0,
        number => number.parse().unwrap(),
    }
}

#[test]
fn the_header_the_csharp_struct_and_the_guide_list_the_same_config_fields() {
    let header = header_fields();
    assert!(header.len() > 20, "{header:?}");
    assert_eq!(csharp_fields(), header, "the C# Config");
    let doc: Vec<String> = ffi_doc().into_iter().map(|(f, _)| f).collect();
    assert_eq!(doc, header, "docs/ffi.md's config table");
}

#[test]
fn the_scenario_keys_are_the_config_fields_but_seed_and_threads() {
    let keys = scenario_doc();
    let fields: Vec<String> = keys.iter().map(|(k, _)| c_field(k)).collect();
    let unique: BTreeSet<&String> = fields.iter().collect();
    assert_eq!(unique.len(), fields.len(), "a key listed twice: {fields:?}");
    let mut expected: BTreeSet<String> = header_fields().into_iter().collect();
    assert!(expected.remove("seed") && expected.remove("threads"));
    assert_eq!(
        unique.into_iter().cloned().collect::<BTreeSet<_>>(),
        expected
    );
}

#[test]
fn the_guides_defaults_are_the_defaults() {
    let c: Vec<(String, f64)> = ffi_doc()
        .into_iter()
        .map(|(f, d)| (f, c_default(&d)))
        .collect();
    let c_value = |field: &str| c.iter().find(|(f, _)| f == field).unwrap().1;
    // The scenario guide rounds a few (fan_step 0.1745); the C guide gives them whole.
    for (key, default) in scenario_doc() {
        let (scenario, c) = (scenario_default(&default), c_value(&c_field(&key)));
        assert!(
            (scenario - c).abs() <= 1e-3 * c.abs().max(1.0),
            "{key}: docs/scenario.md says {default}, docs/ffi.md {c}"
        );
    }
    // A scenario setting every key to the C guide's default builds the default settings.
    let mut tables: Vec<(String, Vec<String>)> = Vec::new();
    for (key, default) in scenario_doc() {
        let (table, name) = match key.split_once('.') {
            Some((table, name)) => (format!("config.{table}"), name.to_owned()),
            None => ("config".to_owned(), key.clone()),
        };
        let value = match default.as_str() {
            "true" | "false" | "\"flat\"" | "\"hierarchical\"" => default.clone(),
            _ => {
                let number = c_value(&c_field(&key));
                if default.contains('.') || number.fract() != 0.0 {
                    format!("{number:?}")
                } else {
                    format!("{}", number as i64)
                }
            }
        };
        match tables.iter_mut().find(|(t, _)| *t == table) {
            Some((_, lines)) => lines.push(format!("{name} = {value}")),
            None => tables.push((table, vec![format!("{name} = {value}")])),
        }
    }
    let config: String = tables
        .iter()
        .map(|(table, lines)| format!("[{table}]\n{}\n", lines.join("\n")))
        .collect();
    let text = format!(
        "{config}\n[map]\nrows = \"\"\"\n....\n....\n\"\"\"\n\n[[group]]\ncount = 1\n\
         spawn = {{ x = 0, y = 0, w = 1, h = 1 }}\ngoal = [[3, 1]]\n"
    );
    let overrides = Overrides {
        threads: Some(1),
        ..Overrides::default()
    };
    let plan = parse_scenario(&text, "defaults.toml", Path::new("."), &overrides)
        .unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert_eq!(*plan.sim.horde().config(), SimConfig::default(), "{text}");
}
