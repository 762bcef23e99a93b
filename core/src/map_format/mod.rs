//! Map and scenario files: Moving AI `.map` / `.map.scen` and horde's ASCII `.txt` maps.
//!
//! | format            | read                      | write                   | kinds kept        |
//! |-------------------|---------------------------|-------------------------|-------------------|
//! | Moving AI `.map`  | [`parse_movingai_map`]    | [`write_movingai_map`]  | lossy projection (see [`movingai_char`]) |
//! | Moving AI `.scen` | [`parse_scen`]        | -                       | -                 |
//! | horde ASCII `.txt`| [`parse_ascii_map`]       | [`write_ascii_map`]     | every kind        |
//!
//! [`load_map`] and [`load_scen`] read a file and pick the parser by extension
//! ([`MapFormat::from_path`]). Cell `(x, y)` is character `x` of map row `y`, row 0 being the
//! first row of the file (see [`Grid`]).
//!
//! Every parser takes a `source` label (usually the path) and reports errors as
//! [`MapFormatError`]: `FILE:LINE: what was expected`, with 1-based line numbers. Parsers never
//! panic, whatever the input, and never allocate more up front than the input can fill.

mod ascii;
mod error;
mod movingai;

use std::path::Path;

pub use ascii::{parse_ascii_map, write_ascii_map};
pub use error::{MapFormatError, MapFormatErrorKind};
pub use movingai::{
    Scen, ScenLine, movingai_char, parse_movingai_map, parse_scen, write_movingai_map,
};

use crate::grid::Grid;
use crate::map::Map;
use crate::terrain::{CostTable, Terrain};

/// A map file format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MapFormat {
    /// Moving AI `.map` ([`parse_movingai_map`], [`write_movingai_map`]).
    MovingAi,
    /// horde ASCII `.txt` ([`parse_ascii_map`], [`write_ascii_map`]).
    Ascii,
}

impl MapFormat {
    /// The format for a path's extension, case-insensitive: `.map` -> Moving AI, `.txt` ->
    /// ASCII, anything else (including `.map.scen` and no extension) -> `None`.
    #[must_use]
    pub fn from_path(path: &Path) -> Option<Self> {
        let ext = path.extension()?.to_str()?;
        if ext.eq_ignore_ascii_case("map") {
            Some(Self::MovingAi)
        } else if ext.eq_ignore_ascii_case("txt") {
            Some(Self::Ascii)
        } else {
            None
        }
    }

    /// Parses `text` in this format; `source` labels the file in errors.
    pub fn parse(self, text: &str, source: &str) -> Result<Map, MapFormatError> {
        match self {
            Self::MovingAi => parse_movingai_map(text, source),
            Self::Ascii => parse_ascii_map(text, source),
        }
    }

    /// Parses raw file bytes in this format: like [`MapFormat::parse`], but bytes that are not
    /// UTF-8 are an error ([`MapFormatErrorKind::NotUtf8`]) instead of a precondition.
    pub fn parse_bytes(self, bytes: &[u8], source: &str) -> Result<Map, MapFormatError> {
        self.parse(decode(bytes, source)?, source)
    }

    /// Writes `map` in this format.
    #[must_use]
    pub fn write(self, map: &Map) -> String {
        match self {
            Self::MovingAi => write_movingai_map(map),
            Self::Ascii => write_ascii_map(map),
        }
    }
}

/// Reads a map file, choosing the format by extension: `.map` -> Moving AI, `.txt` -> horde
/// ASCII, anything else -> [`MapFormatErrorKind::UnsupportedExtension`] (the file is not read).
/// Errors name the file by `path` as given.
pub fn load_map(path: impl AsRef<Path>) -> Result<Map, MapFormatError> {
    let path = path.as_ref();
    let source = path.display().to_string();
    let Some(format) = MapFormat::from_path(path) else {
        let found = path
            .extension()
            .map(|e| e.to_string_lossy().into_owned())
            .unwrap_or_default();
        return Err(MapFormatError::whole(
            &source,
            MapFormatErrorKind::UnsupportedExtension { found },
        ));
    };
    let bytes = read(path, &source)?;
    format.parse_bytes(&bytes, &source)
}

/// Reads a Moving AI scenario file (any extension; usually `.map.scen`) with [`parse_scen`].
/// Errors name the file by `path` as given.
pub fn load_scen(path: impl AsRef<Path>) -> Result<Scen, MapFormatError> {
    let path = path.as_ref();
    let source = path.display().to_string();
    let bytes = read(path, &source)?;
    parse_scen(decode(&bytes, &source)?, &source)
}

/// The most bytes a map or Moving AI scenario file may hold (a 16384 x 16384 Moving AI map
/// is about 256 MiB); a larger file, a device such as `/dev/zero` or a folder is refused before
/// it is read ([`crate::files::read_bounded`]).
pub const MAX_MAP_FILE_BYTES: u64 = 256 << 20;

fn read(path: &Path, source: &str) -> Result<Vec<u8>, MapFormatError> {
    crate::files::read_bounded(path, MAX_MAP_FILE_BYTES, "a map or Moving AI scenario file")
        .map_err(|e| MapFormatError::whole(source, MapFormatErrorKind::Io(e)))
}

/// The bytes as UTF-8 text, or [`MapFormatErrorKind::NotUtf8`] at the line of the first bad byte.
fn decode<'a>(bytes: &'a [u8], source: &str) -> Result<&'a str, MapFormatError> {
    std::str::from_utf8(bytes).map_err(|e| {
        let good = bytes.get(..e.valid_up_to()).unwrap_or_default();
        let line = good.iter().filter(|&&b| b == b'\n').count() + 1;
        MapFormatError::at(source, line, MapFormatErrorKind::NotUtf8)
    })
}

/// The lines of `text` with their 1-based numbers: split at `\n`, one trailing `\r` removed
/// from each (CRLF), no extra empty line after a final newline, a leading byte order mark skipped.
fn numbered_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let body = text.strip_suffix('\n').unwrap_or(text);
    let empty = text.is_empty();
    body.split('\n')
        .filter(move |_| !empty)
        .map(|line| line.strip_suffix('\r').unwrap_or(line))
        .enumerate()
        .map(|(i, line)| (i + 1, line))
}

/// A capacity to reserve for `wanted` items announced by a header: capped, so that a forged
/// header cannot make a parser allocate gigabytes before it finds the file is short.
fn capacity_hint(wanted: usize) -> usize {
    wanted.min(1 << 20)
}

/// Appends the terrain of one map row (line `line_number` of `source`), which must hold
/// exactly `width` legend characters.
fn push_row(
    terrain: &mut Vec<Terrain>,
    line: &str,
    width: u32,
    source: &str,
    line_number: usize,
) -> Result<(), MapFormatError> {
    let found = line.chars().count();
    if u32::try_from(found) != Ok(width) {
        return Err(MapFormatError::at(
            source,
            line_number,
            MapFormatErrorKind::RowWidth {
                expected: width,
                found,
            },
        ));
    }
    for (i, ch) in line.chars().enumerate() {
        let Some(t) = Terrain::from_char(ch) else {
            return Err(MapFormatError::at(
                source,
                line_number,
                MapFormatErrorKind::UnknownChar { ch, column: i + 1 },
            ));
        };
        terrain.push(t);
    }
    Ok(())
}

/// The map of `grid` from rows read by [`push_row`] (exactly `width * height` cells).
fn map_from_rows(grid: Grid, terrain: Vec<Terrain>) -> Map {
    Map::from_terrain(grid, terrain, CostTable::default())
        .expect("the parsers push exactly width * height cells")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grid::Cell;
    use crate::terrain::{Layer, WALL};
    use proptest::prelude::*;
    use std::path::PathBuf;

    const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/map_format");
    const MOVINGAI: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/data/movingai");

    fn fixture(name: &str) -> PathBuf {
        Path::new(FIXTURES).join(name)
    }

    #[test]
    fn format_by_extension() {
        let f = |p: &str| MapFormat::from_path(Path::new(p));
        assert_eq!(f("a/b/Cauldron.map"), Some(MapFormat::MovingAi));
        assert_eq!(f("LEVEL.TXT"), Some(MapFormat::Ascii));
        assert_eq!(f("x.map.scen"), None);
        assert_eq!(f("x.png"), None);
        assert_eq!(f("map"), None);
    }

    #[test]
    fn load_fixtures() {
        let map = load_map(fixture("tiny.map")).unwrap();
        assert_eq!((map.width(), map.height()), (4, 3));
        assert_eq!(map.terrain_at(Cell::new(2, 1)), Terrain::Blocked);
        let scen = load_scen(fixture("tiny.map.scen")).unwrap();
        assert_eq!(scen.lines.len(), 1);
        assert_eq!(scen.lines[0].map_name, "maps/tiny/tiny.map");
        assert_eq!(scen.lines[0].start, Cell::new(1, 1));
        scen.check_against(&map).unwrap();
        let ascii = load_map(fixture("tiny.txt")).unwrap();
        let kinds: Vec<Terrain> = "#X~:LFS@".chars().filter_map(Terrain::from_char).collect();
        assert_eq!(ascii.terrain().get(..8), Some(&kinds[..]));
        assert_eq!(
            MapFormat::Ascii.write(&ascii),
            std::fs::read_to_string(fixture("tiny.txt"))
                .unwrap()
                .lines()
                .skip(1)
                .map(|l| format!("{l}\n"))
                .collect::<String>()
        );
    }

    #[test]
    fn load_unsupported_extension() {
        let e = load_map("levels/castle.png").unwrap_err();
        assert_eq!(e.line, None);
        assert!(
            matches!(&e.kind, MapFormatErrorKind::UnsupportedExtension { found } if found == "png"),
            "{e}"
        );
        assert!(
            e.to_string()
                .starts_with("levels/castle.png: unsupported map file extension")
        );
        let e = load_map(fixture("tiny.map.scen")).unwrap_err();
        assert!(
            matches!(e.kind, MapFormatErrorKind::UnsupportedExtension { .. }),
            "{e}"
        );
    }

    #[test]
    fn load_io_error_names_the_path() {
        let path = fixture("does_not_exist.map");
        let e = load_map(&path).unwrap_err();
        assert!(matches!(e.kind, MapFormatErrorKind::Io(_)), "{e}");
        assert!(std::error::Error::source(&e).is_some());
        let msg = e.to_string();
        assert!(
            msg.starts_with(&format!("{}: cannot read the file", path.display())),
            "{msg}"
        );
        let e = load_scen(fixture("does_not_exist.map.scen")).unwrap_err();
        assert!(matches!(e.kind, MapFormatErrorKind::Io(_)), "{e}");
    }

    #[test]
    fn load_not_utf8_names_the_line() {
        let e = load_map(fixture("not_utf8.txt")).unwrap_err();
        assert_eq!(e.line, Some(2));
        assert!(matches!(e.kind, MapFormatErrorKind::NotUtf8), "{e}");
        let e = MapFormat::MovingAi
            .parse_bytes(b"type octile\xc3", "b.map")
            .unwrap_err();
        assert_eq!(
            (e.line, e.to_string().as_str()),
            (Some(1), "b.map:1: the file is not UTF-8 text")
        );
    }

    #[test]
    fn numbered_lines_endings() {
        fn v(t: &str) -> Vec<(usize, &str)> {
            numbered_lines(t).collect()
        }
        assert_eq!(v(""), vec![]);
        assert_eq!(v("a"), vec![(1, "a")]);
        assert_eq!(v("a\n"), vec![(1, "a")]);
        assert_eq!(v("a\r\nb\r\n"), vec![(1, "a"), (2, "b")]);
        assert_eq!(v("\u{feff}a\n\nb"), vec![(1, "a"), (2, ""), (3, "b")]);
        assert_eq!(v("\n"), vec![(1, "")]);
    }

    /// Every vendored Moving AI map and scenario parses, and the scenarios fit their maps.
    #[test]
    fn movingai_benchmark_files() {
        let dir = Path::new(MOVINGAI);
        if !dir.is_dir() {
            eprintln!(
                "SKIP movingai_benchmark_files: {} not found (the vendored Moving AI benchmark set)",
                dir.display()
            );
            return;
        }
        let mut maps: Vec<PathBuf> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "map"))
            .collect();
        maps.sort();
        assert!(
            maps.len() >= 12,
            "expected the 12 vendored maps, found {}",
            maps.len()
        );
        let mut lines_checked = 0;
        for map_path in &maps {
            let map = load_map(map_path).unwrap_or_else(|e| panic!("{e}"));
            let name = map_path.file_name().unwrap().to_str().unwrap();
            // Both writers round-trip the benchmark maps (only `.`, `@` and `T` occur).
            let back = parse_movingai_map(&write_movingai_map(&map), name).unwrap();
            assert_eq!(back.terrain(), map.terrain(), "{name}");
            assert_eq!(parse_ascii_map(&write_ascii_map(&map), name).unwrap(), map);

            let scen_path = map_path.with_extension("map.scen");
            let scen = load_scen(&scen_path).unwrap_or_else(|e| panic!("{e}"));
            assert!(!scen.lines.is_empty(), "{}", scen_path.display());
            scen.check_against(&map).unwrap_or_else(|e| panic!("{e}"));
            let ground = map.cost_field(Layer::Ground);
            for l in &scen.lines {
                assert_eq!(l.map_file_name(), name, "{}:{}", scen.source, l.line_number);
                assert!(ground.get(l.start) < WALL && ground.get(l.goal) < WALL);
                // The optimal length is never shorter than the octile distance.
                let dx = f64::from(l.start.x.abs_diff(l.goal.x));
                let dy = f64::from(l.start.y.abs_diff(l.goal.y));
                let octile = dx.max(dy) + (std::f64::consts::SQRT_2 - 1.0) * dx.min(dy);
                assert!(
                    l.optimal_length + l.length_tolerance() + 1e-6 * octile >= octile,
                    "{}:{}: {} < octile {octile}",
                    scen.source,
                    l.line_number,
                    l.optimal_length
                );
                lines_checked += 1;
            }
            match name {
                "Berlin_1_256.map" => {
                    let raw = std::fs::read_to_string(map_path).unwrap();
                    assert!(raw.contains("\r\n"), "Berlin_1_256.map is the CRLF example");
                    assert_eq!((map.width(), map.height()), (256, 256));
                    assert_eq!(scen.lines.len(), 910);
                }
                "AR0011SR.map" => {
                    let raw = std::fs::read_to_string(&scen_path).unwrap();
                    assert!(raw.starts_with("version 1.0\n") && !raw.contains('\t'));
                    assert_eq!(scen.lines.len(), 1280);
                    assert_eq!(scen.lines[0].map_name, "maps/bgmaps/AR0011SR.map");
                    assert!(scen.lines.iter().all(|l| l.length_decimals == 2));
                    assert_eq!(scen.lines[0].optimal_length, 244.95);
                    assert_eq!(scen.lines[0].line_number, 2);
                }
                "Cauldron.map" => {
                    assert_eq!((map.width(), map.height()), (1024, 1024));
                    assert_eq!(scen.lines.len(), 4000);
                    assert!(
                        scen.lines
                            .iter()
                            .all(|l| l.map_name == "maps/sc1/Cauldron.map")
                    );
                }
                "den520d.map" => assert_eq!((map.width(), map.height()), (256, 257)),
                "brc202d.map" => assert_eq!((map.width(), map.height()), (530, 481)),
                _ => {}
            }
        }
        eprintln!(
            "checked {} maps and {lines_checked} scenario lines",
            maps.len()
        );
    }

    /// Text made of the characters the formats care about, so that the parsers get past the
    /// header often enough to exercise the body code.
    fn formatish() -> impl Strategy<Value = String> {
        let header = prop_oneof![
            Just(String::new()),
            Just("type octile\n".to_owned()),
            (0u32..6, 0u32..6)
                .prop_map(|(h, w)| format!("type octile\nheight {h}\nwidth {w}\nmap\n")),
            (0u32..6, 0u32..6)
                .prop_map(|(h, w)| format!("type octile\r\nwidth {w}\r\nheight {h}\r\nmap\r\n")),
            Just("version 1\n".to_owned()),
            Just("version 1.0\r\n".to_owned()),
        ];
        (header, "[.@TSWG#XF~:LO;é\t 0-9a-z\r\n-]{0,80}").prop_map(|(h, b)| h + &b)
    }

    fn never_panics(text: &str) {
        let _ = parse_movingai_map(text, "fuzz.map");
        let _ = parse_ascii_map(text, "fuzz.txt");
        if let Ok(s) = parse_scen(text, "fuzz.scen") {
            let map = Map::new(Grid::new(3, 3).unwrap());
            let _ = s.check_against(&map);
        }
    }

    proptest! {
        #[test]
        fn parsers_never_panic_on_strings(text in ".{0,200}") {
            never_panics(&text);
        }

        #[test]
        fn parsers_never_panic_on_format_like_text(text in formatish()) {
            never_panics(&text);
        }

        #[test]
        fn parsers_never_panic_on_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
            for format in [MapFormat::MovingAi, MapFormat::Ascii] {
                let _ = format.parse_bytes(&bytes, "fuzz");
            }
            if let Ok(text) = decode(&bytes, "fuzz") {
                never_panics(text);
            }
        }

        #[test]
        fn ascii_round_trips_any_map(w in 1u32..12, h in 1u32..12, seed in any::<u64>()) {
            let grid = Grid::new(w, h).unwrap();
            let terrain: Vec<Terrain> = (0..grid.len())
                .map(|i| Terrain::ALL[((seed >> (i % 61)) as usize ^ i) % Terrain::COUNT])
                .collect();
            let map = Map::from_terrain(grid, terrain, CostTable::default()).unwrap();
            let text = write_ascii_map(&map);
            prop_assert_eq!(parse_ascii_map(&text, "p.txt").unwrap(), map);
        }
    }
}
