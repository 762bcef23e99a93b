//! [`ScenarioError`]: what is wrong with a scenario, and where (file, line, key).

use std::fmt;

/// What kind of problem a [`ScenarioError`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScenarioErrorKind {
    /// The scenario file could not be read.
    Read,
    /// The text is not valid TOML.
    Syntax,
    /// A key the format does not know (a typo, or a key in the wrong table).
    UnknownKey,
    /// A required key is absent, or two keys that exclude each other are both present.
    MissingKey,
    /// A value has the wrong type (a string where a number belongs, ...).
    WrongType,
    /// A value of the right type that is impossible: a negative count, NaN, a spawn area
    /// outside the map, a goal inside a wall, more units than open cells, ...
    BadValue,
    /// The map could not be loaded (a missing file, a malformed map, a bad generator setting).
    Map,
    /// The simulation could not be set up for a reason that is not the file's fault (the
    /// worker pool did not start, ...).
    Setup,
}

/// A problem with a scenario file: where it is (file, line, key) and what is wrong.
///
/// Displays as `FILE:LINE: KEY: MESSAGE` (line and key when known), e.g.
/// `scenarios/x.toml:12: group[1].count: expected a count >= 1, found -3`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScenarioError {
    /// The file, as given to [`load_scenario`](crate::load_scenario) or as `source_name` to
    /// [`parse_scenario`](crate::parse_scenario).
    pub source: String,
    /// 1-based line of the offending key or value, when known.
    pub line: Option<usize>,
    /// The offending key as a path (`group[1].count`, `map.file`), when known. Array entries
    /// are numbered from 0 in file order.
    pub key: Option<String>,
    /// What kind of problem it is.
    pub kind: ScenarioErrorKind,
    /// What is wrong.
    pub message: String,
}

impl ScenarioError {
    /// Whether the error is the input's fault (exit code 2) rather than a failure to set up
    /// the simulation (exit code 1).
    #[must_use]
    pub fn is_bad_input(&self) -> bool {
        self.kind != ScenarioErrorKind::Setup
    }
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.source)?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
        }
        if let Some(key) = &self.key {
            write!(f, ": {key}")?;
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for ScenarioError {}
