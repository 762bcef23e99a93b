//! Every place outside Rust that lists the settings is written from the one list of them
//! (`horde::settings::SETTINGS`, declared in `core/src/config/settings.rs`):
//!
//! - the C ABI's `HordeConfig` (`ffi/src/config.rs`; cbindgen carries it into `horde.h`),
//! - the C# example's `Config` (`ffi/examples/csharp/EngineLoop.cs`),
//! - the C guide's table of config fields (`docs/ffi.md`),
//! - the scenario guide's table of `[config]` keys (`docs/scenario.md`).
//!
//! Each test fails when its file is not what the list makes now;
//! `HORDE_BLESS=1 cargo test --test settings` rewrites them (then
//! `HORDE_BLESS=1 cargo test -p horde-ffi --test header` carries the struct into the header).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use horde::SimConfig;
use horde::settings::{Kind, Place, Range, SETTINGS, Setting, Value};
use horde_scenario::{Overrides, parse_scenario};

fn path(relative: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(relative)
}

fn read(relative: &str) -> String {
    let full = path(relative);
    std::fs::read_to_string(&full).unwrap_or_else(|e| panic!("{}: {e}", full.display()))
}

/// Checks that `relative` is `expected`, or writes it under `HORDE_BLESS`.
fn check_file(relative: &str, expected: &str) {
    if std::env::var_os("HORDE_BLESS").is_some() {
        std::fs::write(path(relative), expected).unwrap_or_else(|e| panic!("{relative}: {e}"));
        return;
    }
    let committed = read(relative);
    if committed != expected {
        let line = committed
            .lines()
            .zip(expected.lines())
            .position(|(a, b)| a != b)
            .map_or(
                committed.lines().count().min(expected.lines().count()),
                |i| i,
            )
            + 1;
        panic!(
            "{relative} is not what the settings make now (first difference at line {line}): \
             rewrite it with HORDE_BLESS=1 cargo test --test settings, and commit it"
        );
    }
}

/// `text` with the lines between the line containing `begin` and the next containing `end`
/// replaced by `body`.
fn replace_between(text: &str, begin: &str, end: &str, body: &str) -> String {
    let start = text
        .find(begin)
        .unwrap_or_else(|| panic!("no {begin:?} marker"));
    let start = start + text[start..].find('\n').unwrap() + 1;
    let stop = start
        + text[start..]
            .find(end)
            .unwrap_or_else(|| panic!("no {end:?} marker"));
    let stop = text[..stop].rfind('\n').map_or(stop, |i| i + 1);
    format!("{}{body}{}", &text[..start], &text[stop..])
}

/// A setting's doc as lines, without the space `///` leaves.
fn doc_lines(s: &Setting) -> Vec<&'static str> {
    s.doc
        .lines()
        .map(|l| l.strip_prefix(' ').unwrap_or(l))
        .collect()
}

/// A setting's doc on one line, for a table cell.
fn doc_line(s: &Setting) -> String {
    doc_lines(s).join(" ")
}

/// The C type of a setting: 64 bits only where the range needs them.
fn c_type(s: &Setting) -> (&'static str, &'static str, &'static str) {
    let wide = match (s.kind, s.range) {
        (Kind::Int { max }, Range::Any) => max > u64::from(u32::MAX),
        (Kind::Int { .. }, Range::Ints { max, .. }) => max > u64::from(u32::MAX),
        _ => false,
    };
    match s.kind {
        Kind::Real => ("f32", "float", "float"),
        Kind::Int { .. } if wide => ("u64", "uint64_t", "ulong"),
        Kind::Int { .. } => ("u32", "uint32_t", "uint"),
    }
}

/// A setting's default as the C guide writes it.
fn c_default(s: &Setting) -> String {
    match (s.default_value(), s.range) {
        (Value::Int(i), Range::Choice(names)) => format!("{i} ({:?})", names[i as usize]),
        (v, _) => v.to_string(),
    }
}

/// A setting's default as a scenario file writes it.
fn scenario_default(s: &Setting) -> String {
    match (s.default_value(), s.range) {
        (Value::Int(i), Range::Choice(names)) => format!("{:?}", names[i as usize]),
        (Value::Int(i), Range::Flag) => (i == 1).to_string(),
        (Value::Real(r), _) if r.fract() == 0.0 => format!("{r:.1}"),
        (v, _) => v.to_string(),
    }
}

/// What a scenario key accepts.
fn scenario_valid(s: &Setting) -> String {
    match s.range {
        Range::Choice(names) => names
            .iter()
            .map(|n| format!("{n:?}"))
            .collect::<Vec<_>>()
            .join(" or "),
        Range::Flag => "true or false".to_owned(),
        range => range.describe(s.kind),
    }
}

/// `ffi/src/config.rs`.
fn ffi_config_source() -> String {
    let mut out = String::from(
        "//! `HordeConfig`, written from horde's settings (`horde::settings::SETTINGS`) by\n\
         //! `HORDE_BLESS=1 cargo test --test settings`: change the settings, not this file.\n\
         \n\
         use horde::settings::Value;\n\
         \n\
         /// Every setting of a simulation. Get the defaults with `horde_config_default` and change\n\
         /// what you need; every value is checked when a simulation is created\n\
         /// (`HORDE_ERROR_INVALID_ARGUMENT` names the first bad one).\n\
         #[repr(C)]\n\
         #[derive(Clone, Copy, Debug, PartialEq)]\n\
         pub struct HordeConfig {\n",
    );
    for s in SETTINGS {
        for line in doc_lines(s) {
            writeln!(out, "    /// {line}").unwrap();
        }
        let valid = s.range.describe(s.kind);
        writeln!(out, "    ///\n    /// Default {}; {valid}.", c_default(s)).unwrap();
        writeln!(out, "    pub {}: {},", s.name, c_type(s).0).unwrap();
    }
    out.push_str("}\n\nimpl HordeConfig {\n");
    out.push_str(
        "    /// The fields as values, in the order of the settings.\n\
         \x20   pub(crate) fn values(&self) -> Vec<Value> {\n\
         \x20       vec![\n",
    );
    for s in SETTINGS {
        let value = match c_type(s).0 {
            "f32" => format!("Value::Real(self.{})", s.name),
            "u64" => format!("Value::Int(self.{})", s.name),
            _ => format!("Value::Int(u64::from(self.{}))", s.name),
        };
        writeln!(out, "            {value},").unwrap();
    }
    out.push_str(
        "        ]\n    }\n\n\
         \x20   /// The struct holding `values` (in the order of the settings; each one checked).\n\
         \x20   pub(crate) fn from_values(values: &[Value]) -> Self {\n\
         \x20       Self {\n",
    );
    for (i, s) in SETTINGS.iter().enumerate() {
        writeln!(out, "            {}: {}(values[{i}]),", s.name, c_type(s).0).unwrap();
    }
    out.push_str("        }\n    }\n}\n");
    out.push_str(
        "\n/// A whole number as a `u32` (the settings' ranges keep them in it).\n\
         fn u32(value: Value) -> u32 {\n\
         \x20   match value {\n\
         \x20       Value::Int(v) => u32::try_from(v).unwrap_or(u32::MAX),\n\
         \x20       Value::Real(_) => 0,\n\
         \x20   }\n\
         }\n\
         \n\
         /// A whole number as a `u64`.\n\
         fn u64(value: Value) -> u64 {\n\
         \x20   match value {\n\
         \x20       Value::Int(v) => v,\n\
         \x20       Value::Real(_) => 0,\n\
         \x20   }\n\
         }\n\
         \n\
         /// A real as an `f32`.\n\
         fn f32(value: Value) -> f32 {\n\
         \x20   match value {\n\
         \x20       Value::Real(v) => v,\n\
         \x20       Value::Int(_) => 0.0,\n\
         \x20   }\n\
         }\n",
    );
    out
}

#[test]
fn the_c_struct_is_the_settings() {
    check_file("ffi/src/config.rs", &ffi_config_source());
}

#[test]
fn the_csharp_struct_is_the_settings() {
    let mut fields = String::new();
    for s in SETTINGS {
        writeln!(fields, "        public {} {};", c_type(s).2, s.name).unwrap();
    }
    let file = "ffi/examples/csharp/EngineLoop.cs";
    let text = replace_between(
        &read(file),
        "// settings: begin",
        "// settings: end",
        &fields,
    );
    check_file(file, &text);
}

#[test]
fn the_c_guides_table_is_the_settings() {
    let mut rows = String::from(
        "| field | C type | default | valid | what it does |\n|---|---|---|---|---|\n",
    );
    for s in SETTINGS {
        writeln!(
            rows,
            "| `{}` | `{}` | {} | {} | {} |",
            s.name,
            c_type(s).1,
            c_default(s),
            s.range.describe(s.kind),
            doc_line(s)
        )
        .unwrap();
    }
    let file = "docs/ffi.md";
    let text = replace_between(
        &read(file),
        "<!-- settings: begin",
        "<!-- settings: end",
        &rows,
    );
    check_file(file, &text);
}

#[test]
fn the_scenario_guides_table_is_the_settings() {
    let mut rows = String::from("| key | default | valid | what it does |\n|---|---|---|---|\n");
    for s in SETTINGS.iter().filter(|s| s.is_in(Place::Scenario)) {
        writeln!(
            rows,
            "| `{}` | `{}` | {} | {} |",
            s.key,
            scenario_default(s),
            scenario_valid(s),
            doc_line(s)
        )
        .unwrap();
    }
    let file = "docs/scenario.md";
    let text = replace_between(
        &read(file),
        "<!-- settings: begin",
        "<!-- settings: end",
        &rows,
    );
    check_file(file, &text);
}

/// `[config]` tables setting every scenario key to `value(setting)`.
fn config_tables(value: impl Fn(&Setting) -> String) -> String {
    let mut tables: Vec<(String, Vec<String>)> = Vec::new();
    for s in SETTINGS.iter().filter(|s| s.is_in(Place::Scenario)) {
        let (table, name) = match s.key.rsplit_once('.') {
            Some((table, name)) => (format!("config.{table}"), name),
            None => ("config".to_owned(), s.key),
        };
        let line = format!("{name} = {}", value(s));
        match tables.iter_mut().find(|(t, _)| *t == table) {
            Some((_, lines)) => lines.push(line),
            None => tables.push((table, vec![line])),
        }
    }
    tables
        .iter()
        .map(|(table, lines)| format!("[{table}]\n{}\n", lines.join("\n")))
        .collect()
}

fn scenario_with(config: &str) -> Result<SimConfig, horde_scenario::ScenarioError> {
    let text = format!(
        "{config}\n[map]\nrows = \"\"\"\n....\n....\n\"\"\"\n\n[[group]]\ncount = 1\n\
         spawn = {{ x = 0, y = 0, w = 1, h = 1 }}\ngoal = [[3, 1]]\n"
    );
    let overrides = Overrides {
        threads: Some(1),
        ..Overrides::default()
    };
    let plan = parse_scenario(&text, "settings.toml", Path::new("."), &overrides)?;
    Ok(*plan.sim.horde().config())
}

#[test]
fn a_scenario_writing_every_default_as_the_guide_does_builds_the_defaults() {
    let config = config_tables(scenario_default);
    assert_eq!(
        scenario_with(&config).unwrap_or_else(|e| panic!("{e}\n{config}")),
        SimConfig::default(),
        "{config}"
    );
}

#[test]
fn every_scenario_key_sets_its_setting_and_refuses_what_its_range_refuses() {
    let defaults = SimConfig::default();
    for s in SETTINGS.iter().filter(|s| s.is_in(Place::Scenario)) {
        let (table, name) = match s.key.rsplit_once('.') {
            Some((table, name)) => (format!("config.{table}"), name),
            None => ("config".to_owned(), s.key),
        };
        // A value other than the default, as a file writes it.
        let (written, value) = match (s.range, s.default_value()) {
            (Range::Choice(names), Value::Int(i)) => {
                let other = (i as usize + 1) % names.len();
                (format!("{:?}", names[other]), Value::Int(other as u64))
            }
            (Range::Flag, Value::Int(i)) => ((i == 0).to_string(), Value::Int(1 - i)),
            (_, Value::Int(i)) => {
                let other = if s.check(Value::Int(i + 1)).is_ok() {
                    i + 1
                } else {
                    i - 1
                };
                (other.to_string(), Value::Int(other))
            }
            (_, Value::Real(r)) => (format!("{:?}", r * 0.5), Value::Real(r * 0.5)),
        };
        let config = scenario_with(&format!("[{table}]\n{name} = {written}\n"))
            .unwrap_or_else(|e| panic!("{}: {e}", s.key));
        assert_eq!(s.get(&config), value, "{}", s.key);
        assert_eq!(
            horde_scenario_differences(&config, &defaults),
            vec![s.name],
            "{} set only itself",
            s.key
        );
        // Out of range, or of the wrong type: refused, naming the key.
        let bad = match s.range {
            Range::Ints { max, .. } => (max + 1).to_string(),
            Range::Reals { max, .. } => format!("{:?}", f64::from(max) * 2.0 + 1.0),
            Range::Any | Range::Flag | Range::Choice(_) => "[1]".to_owned(),
        };
        let e = scenario_with(&format!("[{table}]\n{name} = {bad}\n"))
            .expect_err(&format!("{} = {bad}", s.key));
        assert_eq!(
            e.key.as_deref(),
            Some(format!("config.{}", s.key).as_str()),
            "{e}"
        );
    }
}

/// The settings that differ between two configs.
fn horde_scenario_differences(a: &SimConfig, b: &SimConfig) -> Vec<&'static str> {
    SETTINGS
        .iter()
        .filter(|s| s.get(a) != s.get(b))
        .map(|s| s.name)
        .collect()
}
