//! What the scenario tests share: a small scenario, and checks of the errors' file, line
//! and key.
#![allow(dead_code)] // each test file uses part of it

use std::path::Path;

use horde_scenario::{Overrides, Plan, ScenarioError, ScenarioErrorKind, parse_scenario};

/// Overrides that set the thread count only.
pub fn threads(n: usize) -> Overrides {
    Overrides {
        threads: Some(n),
        ..Overrides::default()
    }
}

pub const SMALL: &str = r#"
seed = 3
frames = 50

[map]
rows = """
..........
..........
..###.....
..###.....
..........
..........
"""

[[group]]
count = 4
spawn = { x = 0, y = 0, w = 2, h = 2 }
goal = [[9, 5]]

[[group]]
name = "second"
count = 3
spawn = { x = 6, y = 0, w = 3, h = 1 }
goal_area = { x = 0, y = 4, w = 2, h = 2 }
"#;

pub fn parse(text: &str) -> Result<Plan, ScenarioError> {
    parse_scenario(text, "test.toml", Path::new("."), &threads(1))
}

pub fn err(text: &str) -> ScenarioError {
    match parse(text) {
        Ok(_) => panic!("expected an error for:\n{text}"),
        Err(e) => e,
    }
}

/// 1-based line of the first line of `text` that contains `needle`.
pub fn line_of(text: &str, needle: &str) -> usize {
    text.lines()
        .position(|l| l.contains(needle))
        .map(|i| i + 1)
        .unwrap_or_else(|| panic!("{needle:?} not in the text"))
}

pub fn assert_error(
    e: &ScenarioError,
    kind: ScenarioErrorKind,
    key: &str,
    line: usize,
    fragment: &str,
) {
    let shown = e.to_string();
    assert_eq!(e.kind, kind, "{shown}");
    assert_eq!(e.key.as_deref(), Some(key), "{shown}");
    assert_eq!(e.line, Some(line), "{shown}");
    assert!(
        shown.starts_with(&format!("test.toml:{line}: {key}: ")),
        "{shown}"
    );
    assert!(shown.contains(fragment), "{shown:?} lacks {fragment:?}");
}

pub fn scenarios_dir() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios")
}
