//! [`MapFormatError`]: why a map or scenario file could not be read.

use std::fmt;

use crate::grid::{Cell, GridError};

/// A map or scenario file could not be read: which file, which line, and what was wrong.
///
/// Displays as `FILE:LINE: WHAT`, for example
/// `Cauldron.map:7: expected 1024 characters in the row, found 1023`, or `FILE: WHAT` when
/// no line applies (I/O errors, an unsupported extension). `FILE` is the label given to the
/// parser (the path for [`load_map`](super::load_map) and [`load_scen`](super::load_scen)).
#[derive(Debug)]
pub struct MapFormatError {
    /// The file label given to the parser (usually its path).
    pub file: String,
    /// 1-based line number in the file, if the error belongs to a line.
    pub line: Option<usize>,
    /// What was wrong.
    pub kind: MapFormatErrorKind,
}

impl MapFormatError {
    /// An error at line `line` (1-based) of `file`.
    #[must_use]
    pub fn at(file: &str, line: usize, kind: MapFormatErrorKind) -> Self {
        Self {
            file: file.to_owned(),
            line: Some(line),
            kind,
        }
    }

    /// An error about the whole of `file`, not one line.
    #[must_use]
    pub fn whole(file: &str, kind: MapFormatErrorKind) -> Self {
        Self {
            file: file.to_owned(),
            line: None,
            kind,
        }
    }
}

impl fmt::Display for MapFormatError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}:{}: {}", self.file, line, self.kind),
            None => write!(f, "{}: {}", self.file, self.kind),
        }
    }
}

impl std::error::Error for MapFormatError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.kind {
            MapFormatErrorKind::Io(e) => Some(e),
            MapFormatErrorKind::BadGridSize(e) => Some(e),
            _ => None,
        }
    }
}

/// What was wrong with a map or scenario file (see [`MapFormatError`] for where).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MapFormatErrorKind {
    /// The file could not be read.
    #[error("cannot read the file: {0}")]
    Io(#[source] std::io::Error),
    /// The file is not UTF-8 text (the line is where the first bad byte is).
    #[error("the file is not UTF-8 text")]
    NotUtf8,
    /// [`load_map`](super::load_map) does not know the file's extension.
    #[error(
        "unsupported map file extension {found:?}: expected `.map` (Moving AI) or `.txt` (horde ASCII)"
    )]
    UnsupportedExtension {
        /// The extension found (empty when there is none).
        found: String,
    },
    /// The file (or its header) ended before a required header line.
    #[error("missing header line: expected {expected}")]
    MissingHeader {
        /// What was expected, for example "`map`".
        expected: &'static str,
    },
    /// A header line is not what the format allows here.
    #[error("bad header line {found:?}: expected {expected}")]
    BadHeader {
        /// What was expected.
        expected: &'static str,
        /// The line as found.
        found: String,
    },
    /// A header key that may appear only once appears again.
    #[error("duplicate header key `{key}`")]
    DuplicateHeader {
        /// The key.
        key: &'static str,
    },
    /// The size in the header is not a valid grid size.
    #[error("bad map size: {0}")]
    BadGridSize(#[source] GridError),
    /// The file ended before all the rows the header announced (a truncated file).
    #[error("the file ends after {found} of the {expected} map rows (truncated file?)")]
    TooFewRows {
        /// Rows announced by the header.
        expected: u32,
        /// Rows found.
        found: u32,
    },
    /// More rows (non-blank lines) than the header announced.
    #[error("more map rows than the {expected} announced by the header")]
    TooManyRows {
        /// Rows announced by the header.
        expected: u32,
    },
    /// A map row has the wrong number of characters.
    #[error("expected {expected} characters in the row, found {found}")]
    RowWidth {
        /// The map width.
        expected: u32,
        /// Characters found in the row.
        found: usize,
    },
    /// A map row holds a character that is not in the format's legend.
    #[error("column {column}: unknown map character {ch:?}")]
    UnknownChar {
        /// The character.
        ch: char,
        /// 1-based column (in characters).
        column: usize,
    },
    /// An ASCII map holds no rows at all.
    #[error("the map has no rows")]
    NoRows,
    /// A field that must be a number is not one (or is out of range).
    #[error("field `{field}`: expected {expected}, found {found:?}")]
    BadNumber {
        /// Name of the field.
        field: &'static str,
        /// What kind of number was expected.
        expected: &'static str,
        /// The text found.
        found: String,
    },
    /// A scenario line does not have the expected number of fields.
    #[error("expected {expected} fields, found {found}")]
    FieldCount {
        /// Fields expected.
        expected: usize,
        /// Fields found.
        found: usize,
    },
    /// A scenario's `version` header names a version this reader does not know.
    #[error("unsupported scenario version {found:?}: expected `version 1` or `version 1.0`")]
    BadVersion {
        /// The version text found.
        found: String,
    },
    /// A scenario line's start or goal lies outside its map.
    #[error("{which} cell {cell} lies outside the {width}x{height} map")]
    CellOutsideMap {
        /// `"start"` or `"goal"`.
        which: &'static str,
        /// The cell.
        cell: Cell,
        /// Map width.
        width: u32,
        /// Map height.
        height: u32,
    },
    /// A scenario line gives a map size that differs from the map it is checked against.
    #[error(
        "the line gives a {line_width}x{line_height} map but the map is {map_width}x{map_height}"
    )]
    SizeMismatch {
        /// Width given by the scenario line.
        line_width: u32,
        /// Height given by the scenario line.
        line_height: u32,
        /// Width of the map.
        map_width: u32,
        /// Height of the map.
        map_height: u32,
    },
}
