//! Moving AI `.map` and `.map.scen` files (<https://movingai.com/benchmarks/formats.html>).

use super::error::{MapFormatError, MapFormatErrorKind as K};
use super::{capacity_hint, map_from_rows, numbered_lines, push_row};
use crate::grid::{Cell, Grid};
use crate::map::Map;
use crate::terrain::Terrain;

/// Reads a Moving AI `.map` file. `source` labels the file in error messages (usually its path).
///
/// The file is a header and a body:
///
/// ```text
/// type octile
/// height 4
/// width 6
/// map
/// @@@@@@
/// @..TS@
/// @.W..@
/// @@@@@@
/// ```
///
/// - The first line is `type octile`. Then `height H` and `width W` follow in either order,
///   each exactly once, and then the line `map`. Any other header line is an error.
/// - Then exactly `H` rows of exactly `W` characters. Row 0 is the first row, so cell
///   `(x, y)` is character `x` of row `y`.
/// - Characters go through [`Terrain::from_char`]: `.` `G` empty, `S` swamp, `@` `O` `T`
///   blocked, `W` water. Horde's own legend characters (`#`, `F`, ...) are accepted too,
///   since that legend is a superset.
/// - LF or CRLF line endings, with or without a final newline; blank lines after the last row
///   are ignored, any other extra line is an error. A leading UTF-8 byte order mark is skipped.
///
/// The map gets the default [`CostTable`](crate::CostTable). Never panics, whatever the input.
pub fn parse_movingai_map(text: &str, source: &str) -> Result<Map, MapFormatError> {
    let err = |line: usize, kind: K| MapFormatError::at(source, line, kind);
    let mut lines = numbered_lines(text);

    // `type octile`
    let Some((n, first)) = lines.next() else {
        return Err(err(
            1,
            K::MissingHeader {
                expected: "`type octile`",
            },
        ));
    };
    match first.split_whitespace().collect::<Vec<_>>()[..] {
        ["type", "octile"] => {}
        _ => {
            return Err(err(
                n,
                K::BadHeader {
                    expected: "`type octile` as the first line",
                    found: first.to_owned(),
                },
            ));
        }
    }

    // `height H` / `width W` in any order, then `map`.
    let mut height: Option<u32> = None;
    let mut width: Option<u32> = None;
    let mut last_line = n;
    let (width, height) = loop {
        let Some((n, line)) = lines.next() else {
            let expected = match (height, width) {
                (None, _) => "`height H`",
                (_, None) => "`width W`",
                _ => "`map`",
            };
            return Err(err(last_line + 1, K::MissingHeader { expected }));
        };
        last_line = n;
        let words: Vec<&str> = line.split_whitespace().collect();
        match words[..] {
            ["map"] => match (width, height) {
                (Some(w), Some(h)) => break (w, h),
                (_, None) => {
                    return Err(err(
                        n,
                        K::MissingHeader {
                            expected: "`height H` before `map`",
                        },
                    ));
                }
                (None, _) => {
                    return Err(err(
                        n,
                        K::MissingHeader {
                            expected: "`width W` before `map`",
                        },
                    ));
                }
            },
            [key @ ("height" | "width"), value] => {
                let (slot, key) = if key == "height" {
                    (&mut height, "height")
                } else {
                    (&mut width, "width")
                };
                if slot.is_some() {
                    return Err(err(n, K::DuplicateHeader { key }));
                }
                let v = value.parse::<u32>().map_err(|_| {
                    err(
                        n,
                        K::BadNumber {
                            field: key,
                            expected: "a whole number of cells",
                            found: value.to_owned(),
                        },
                    )
                })?;
                *slot = Some(v);
            }
            _ => {
                return Err(err(
                    n,
                    K::BadHeader {
                        expected: "`height H`, `width W` or `map`",
                        found: line.to_owned(),
                    },
                ));
            }
        }
    };
    let grid = Grid::new(width, height).map_err(|e| err(last_line, K::BadGridSize(e)))?;

    // Exactly `height` rows, then only blank lines.
    let mut terrain = Vec::with_capacity(capacity_hint(grid.len()));
    for row in 0..height {
        let Some((n, line)) = lines.next() else {
            return Err(err(
                last_line + 1,
                K::TooFewRows {
                    expected: height,
                    found: row,
                },
            ));
        };
        last_line = n;
        push_row(&mut terrain, line, width, source, n)?;
    }
    if let Some((n, _)) = lines.find(|(_, line)| !line.trim().is_empty()) {
        return Err(err(n, K::TooManyRows { expected: height }));
    }
    Ok(map_from_rows(grid, terrain))
}

/// The Moving AI character a terrain kind is written as by [`write_movingai_map`].
///
/// The projection keeps what the Moving AI format can say about ground movement:
///
/// | kind                                | char | read back as |
/// |-------------------------------------|------|--------------|
/// | empty, snow                         | `.`  | empty        |
/// | swamp, forest                       | `S`  | swamp        |
/// | water                               | `W`  | water        |
/// | blocked                             | `@`  | blocked      |
/// | brick wall, steel plate, lair       | `T`  | blocked      |
///
/// It is lossy for horde-only kinds (snow, forest, brick, steel, lair): use the ASCII format
/// ([`write_ascii_map`](super::write_ascii_map)) to keep every kind. Maps made only of empty,
/// swamp, water and blocked cells round-trip exactly.
#[must_use]
pub const fn movingai_char(terrain: Terrain) -> char {
    match terrain {
        Terrain::Empty | Terrain::Snow => '.',
        Terrain::Swamp | Terrain::Forest => 'S',
        Terrain::Water => 'W',
        Terrain::Blocked => '@',
        Terrain::BrickWall | Terrain::SteelPlate | Terrain::Lair => 'T',
    }
}

/// Writes `map` as a Moving AI `.map` file (`type octile`, `height`, `width`, `map`, rows; LF
/// line endings, final newline). Terrain is projected with [`movingai_char`], which is lossy for
/// horde-only kinds; the cost table, cell size and origin are not written.
#[must_use]
pub fn write_movingai_map(map: &Map) -> String {
    let (w, h) = (map.width() as usize, map.height() as usize);
    let mut out = String::with_capacity(40 + (w + 1) * h);
    out.push_str(&format!("type octile\nheight {h}\nwidth {w}\nmap\n"));
    for row in map.terrain().chunks(w.max(1)) {
        out.extend(row.iter().map(|&t| movingai_char(t)));
        out.push('\n');
    }
    out
}

/// A Moving AI scenario file (`.map.scen`): the benchmark's start/goal pairs.
#[derive(Clone, Debug, PartialEq)]
pub struct Scen {
    /// The file label given to [`parse_scen`], used in the errors of [`Scen::check_against`].
    pub source: String,
    /// The scenario lines, in file order.
    pub lines: Vec<ScenLine>,
}

/// One line of a scenario file: a start, a goal and the optimal path length between them.
#[derive(Clone, Debug, PartialEq)]
pub struct ScenLine {
    /// 1-based line number in the file.
    pub line_number: usize,
    /// Bucket (groups lines of similar length).
    pub bucket: u32,
    /// The map name as written, possibly with folders (`maps/sc1/Cauldron.map`).
    pub map_name: String,
    /// Map width given by the line.
    pub map_width: u32,
    /// Map height given by the line.
    pub map_height: u32,
    /// Start cell (`x` column, `y` row).
    pub start: Cell,
    /// Goal cell.
    pub goal: Cell,
    /// Optimal path length: 8 neighbours, diagonal sqrt(2), no corner cutting.
    pub optimal_length: f64,
    /// Digits after the decimal point as printed in the file (2 in `244.95`, 0 in `12`).
    pub length_decimals: u32,
}

impl ScenLine {
    /// The map name without its folders (`Cauldron.map` for `maps/sc1/Cauldron.map`).
    #[must_use]
    pub fn map_file_name(&self) -> &str {
        self.map_name
            .rsplit(['/', '\\'])
            .next()
            .unwrap_or(&self.map_name)
    }

    /// One unit in the last printed decimal place of the optimal length (`0.01` for 2 decimals,
    /// `1e-8` for 8): the precision of the printed value. Some benchmark files round and others
    /// truncate (`16room_000` prints 11.899494936... as `11.89949493`), and the generators'
    /// own arithmetic adds a little more (`Berlin_1_256` line 136 prints 54.91168824543...
    /// as `54.91168823`), so compare with
    /// `(computed - optimal_length).abs() <= length_tolerance() + relative slack * optimal_length`
    /// (the relative slack is `RELATIVE_TOLERANCE`, 1e-4: docs/behaviour.md, "Integration field").
    pub fn length_tolerance(&self) -> f64 {
        10f64.powi(-(self.length_decimals.min(300) as i32))
    }
}

/// Number of fields of a scenario line.
const SCEN_FIELDS: usize = 9;

/// Reads a Moving AI scenario (`.map.scen`) file. `source` labels the file in error messages.
///
/// ```text
/// version 1
/// 1  maps/sc1/Cauldron.map  1024  1024  63  531  57  528  7.24264
/// ```
///
/// (most files separate the fields by tabs; shown here with spaces, also accepted)
///
/// - An optional first line `version 1` or `version 1.0` (other versions are an error).
/// - Then one line per scenario with 9 fields: bucket, map name, map width, map height,
///   start x, start y, goal x, goal y, optimal length. Fields are separated by tabs or by runs
///   of spaces. When splitting at tabs gives exactly 9 non-empty fields, that split is used, so
///   a tab-separated map name may contain spaces.
/// - Blank lines are skipped; LF or CRLF line endings, final newline or not.
/// - Numbers: bucket, sizes and cells are `u32`; the length is a finite number `>= 0`.
///
/// Each line's start and goal must lie inside the map size that the line itself gives; to
/// check the lines against an actual map, see [`Scen::check_against`]. Never panics.
pub fn parse_scen(text: &str, source: &str) -> Result<Scen, MapFormatError> {
    let err = |line: usize, kind: K| MapFormatError::at(source, line, kind);
    let mut out = Vec::with_capacity(capacity_hint(text.len() / 40));
    let mut first = true;
    for (n, line) in numbered_lines(text) {
        if line.trim().is_empty() {
            continue;
        }
        let fields = split_fields(line);
        if first {
            first = false;
            if let Some(&"version") = fields.first() {
                match fields[..] {
                    [_, "1" | "1.0"] => continue,
                    _ => {
                        let found = line.trim_start().trim_start_matches("version").trim();
                        return Err(err(
                            n,
                            K::BadVersion {
                                found: found.to_owned(),
                            },
                        ));
                    }
                }
            }
        }
        let [bucket, name, w, h, sx, sy, gx, gy, len] = fields[..] else {
            return Err(err(
                n,
                K::FieldCount {
                    expected: SCEN_FIELDS,
                    found: fields.len(),
                },
            ));
        };
        let int = |field: &'static str, text: &str| {
            text.parse::<u32>().map_err(|_| {
                err(
                    n,
                    K::BadNumber {
                        field,
                        expected: "a whole number (0 ..= 4294967295)",
                        found: text.to_owned(),
                    },
                )
            })
        };
        let (optimal_length, length_decimals) = parse_length(len).ok_or_else(|| {
            err(
                n,
                K::BadNumber {
                    field: "optimal length",
                    expected: "a decimal number >= 0",
                    found: len.to_owned(),
                },
            )
        })?;
        let line = ScenLine {
            line_number: n,
            bucket: int("bucket", bucket)?,
            map_name: name.to_owned(),
            map_width: int("map width", w)?,
            map_height: int("map height", h)?,
            start: Cell::new(int("start x", sx)?, int("start y", sy)?),
            goal: Cell::new(int("goal x", gx)?, int("goal y", gy)?),
            optimal_length,
            length_decimals,
        };
        check_cells(&line, line.map_width, line.map_height, source)?;
        out.push(line);
    }
    Ok(Scen {
        source: source.to_owned(),
        lines: out,
    })
}

/// Splits a scenario line into fields: at tabs when that gives exactly 9 non-empty fields,
/// otherwise at runs of whitespace.
fn split_fields(line: &str) -> Vec<&str> {
    if line.contains('\t') {
        let tabbed: Vec<&str> = line.split('\t').map(str::trim).collect();
        if tabbed.len() == SCEN_FIELDS && tabbed.iter().all(|f| !f.is_empty()) {
            return tabbed;
        }
    }
    line.split_whitespace().collect()
}

/// Parses a length like `244.95`, `12` or `1.5e2`: finite and `>= 0`. Returns the value and
/// the number of digits printed after the decimal point.
fn parse_length(text: &str) -> Option<(f64, u32)> {
    let ok_chars = text
        .chars()
        .all(|c| c.is_ascii_digit() || matches!(c, '.' | 'e' | 'E' | '+' | '-'));
    if !ok_chars || !text.starts_with(|c: char| c.is_ascii_digit() || c == '.') {
        return None;
    }
    let value: f64 = text.parse().ok()?;
    if !value.is_finite() || value < 0.0 {
        return None;
    }
    let decimals = text.split_once('.').map_or(0, |(_, frac)| {
        frac.chars().take_while(char::is_ascii_digit).count()
    });
    Some((value, u32::try_from(decimals).unwrap_or(u32::MAX)))
}

impl Scen {
    /// Checks every line against `map`: the line's map size must be the map's, and its start
    /// and goal must lie inside the map. The first bad line is reported with its line number.
    /// (Passability of the start and goal is not checked: that is not a format matter.)
    pub fn check_against(&self, map: &Map) -> Result<(), MapFormatError> {
        let (width, height) = (map.width(), map.height());
        for l in &self.lines {
            let err = |kind: K| MapFormatError::at(&self.source, l.line_number, kind);
            if l.map_width != width || l.map_height != height {
                return Err(err(K::SizeMismatch {
                    line_width: l.map_width,
                    line_height: l.map_height,
                    map_width: width,
                    map_height: height,
                }));
            }
            check_cells(l, width, height, &self.source)?;
        }
        Ok(())
    }
}

/// Errors when `line`'s start or goal lies outside a `width x height` map.
fn check_cells(
    line: &ScenLine,
    width: u32,
    height: u32,
    source: &str,
) -> Result<(), MapFormatError> {
    for (which, cell) in [("start", line.start), ("goal", line.goal)] {
        if cell.x >= width || cell.y >= height {
            return Err(MapFormatError::at(
                source,
                line.line_number,
                K::CellOutsideMap {
                    which,
                    cell,
                    width,
                    height,
                },
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grid::Grid;
    use crate::terrain::CostTable;

    const SMALL: &str = "type octile\nheight 4\nwidth 6\nmap\n@@@@@@\n@..TS@\n@.W.G@\n@@@@@@\n";

    fn kind(r: Result<Map, MapFormatError>) -> (Option<usize>, K, String) {
        let e = r.expect_err("expected an error");
        let msg = e.to_string();
        (e.line, e.kind, msg)
    }

    fn scen_kind(r: Result<Scen, MapFormatError>) -> (Option<usize>, K, String) {
        let e = r.expect_err("expected an error");
        let msg = e.to_string();
        (e.line, e.kind, msg)
    }

    #[test]
    fn map_reads_the_moving_ai_characters() {
        let map = parse_movingai_map(SMALL, "small.map").unwrap();
        assert_eq!((map.width(), map.height()), (6, 4));
        assert_eq!(map.terrain_at(Cell::new(0, 0)), Terrain::Blocked);
        assert_eq!(map.terrain_at(Cell::new(1, 1)), Terrain::Empty);
        assert_eq!(map.terrain_at(Cell::new(3, 1)), Terrain::Blocked);
        assert_eq!(map.terrain_at(Cell::new(4, 1)), Terrain::Swamp);
        assert_eq!(map.terrain_at(Cell::new(2, 2)), Terrain::Water);
        assert_eq!(map.terrain_at(Cell::new(4, 2)), Terrain::Empty);
        assert_eq!(map.cost_table(), &CostTable::default());
    }

    #[test]
    fn map_header_keys_in_any_order_crlf_and_no_final_newline() {
        let crlf =
            "type octile\r\nwidth 6\r\nheight  4\r\nmap\r\n@@@@@@\r\n@..TS@\r\n@.W.G@\r\n@@@@@@";
        let a = parse_movingai_map(crlf, "crlf.map").unwrap();
        let b = parse_movingai_map(SMALL, "small.map").unwrap();
        assert_eq!(a, b);
        // Trailing blank lines are tolerated.
        let padded = format!("{SMALL}\n\r\n");
        assert_eq!(parse_movingai_map(&padded, "p.map").unwrap(), b);
    }

    #[test]
    fn map_missing_header() {
        let (line, k, msg) = kind(parse_movingai_map("", "e.map"));
        assert_eq!(line, Some(1));
        assert!(matches!(k, K::MissingHeader { .. }), "{k:?}");
        assert!(msg.starts_with("e.map:1: missing header line"), "{msg}");
        // The file ends inside the header.
        let (line, k, _) = kind(parse_movingai_map("type octile\nheight 3\n", "e.map"));
        assert_eq!(line, Some(3));
        assert!(
            matches!(k, K::MissingHeader { expected } if expected.contains("width")),
            "{k:?}"
        );
        // `map` before `width`.
        let (line, k, msg) = kind(parse_movingai_map(
            "type octile\nheight 3\nmap\n...",
            "e.map",
        ));
        assert_eq!(line, Some(3));
        assert!(matches!(k, K::MissingHeader { .. }), "{k:?}");
        assert!(msg.contains("`width W` before `map`"), "{msg}");
    }

    #[test]
    fn map_bad_header() {
        let (line, k, msg) = kind(parse_movingai_map(
            "type hex\nheight 1\nwidth 1\nmap\n.",
            "h.map",
        ));
        assert_eq!(line, Some(1));
        assert!(matches!(k, K::BadHeader { .. }), "{k:?}");
        assert_eq!(
            msg,
            "h.map:1: bad header line \"type hex\": expected `type octile` as the first line"
        );
        let (line, k, _) = kind(parse_movingai_map(
            "type octile\ndepth 2\nheight 1\nwidth 1\nmap\n.",
            "h.map",
        ));
        assert_eq!(line, Some(2));
        assert!(matches!(k, K::BadHeader { .. }), "{k:?}");
        // `type` must come first.
        let (line, k, _) = kind(parse_movingai_map("height 1\ntype octile\n", "h.map"));
        assert_eq!(line, Some(1));
        assert!(matches!(k, K::BadHeader { .. }), "{k:?}");
    }

    #[test]
    fn map_duplicate_header() {
        let text = "type octile\nheight 1\nwidth 1\nheight 1\nmap\n.";
        let (line, k, _) = kind(parse_movingai_map(text, "d.map"));
        assert_eq!(line, Some(4));
        assert!(matches!(k, K::DuplicateHeader { key: "height" }), "{k:?}");
    }

    #[test]
    fn map_non_numeric_size() {
        for text in [
            "type octile\nheight abc\nwidth 1\nmap\n.",
            "type octile\nheight 1\nwidth -1\nmap\n.",
            "type octile\nheight 1\nwidth 99999999999\nmap\n.",
        ] {
            let (_, k, _) = kind(parse_movingai_map(text, "n.map"));
            assert!(matches!(k, K::BadNumber { .. }), "{k:?}");
        }
        let (line, _, msg) = kind(parse_movingai_map(
            "type octile\nheight abc\nwidth 1\nmap\n.",
            "n.map",
        ));
        assert_eq!(line, Some(2));
        assert_eq!(
            msg,
            "n.map:2: field `height`: expected a whole number of cells, found \"abc\""
        );
    }

    #[test]
    fn map_bad_grid_size() {
        let (line, k, _) = kind(parse_movingai_map(
            "type octile\nheight 0\nwidth 1\nmap\n",
            "z.map",
        ));
        assert_eq!(line, Some(4));
        assert!(matches!(k, K::BadGridSize(_)), "{k:?}");
        let huge = "type octile\nheight 99999\nwidth 1\nmap\n.";
        assert!(matches!(
            kind(parse_movingai_map(huge, "z.map")).1,
            K::BadGridSize(_)
        ));
    }

    #[test]
    fn map_too_few_rows_is_a_truncated_file() {
        let text = "type octile\nheight 4\nwidth 6\nmap\n@@@@@@\n@..TS@\n";
        let (line, k, msg) = kind(parse_movingai_map(text, "t.map"));
        assert_eq!(line, Some(7));
        assert!(
            matches!(
                k,
                K::TooFewRows {
                    expected: 4,
                    found: 2
                }
            ),
            "{k:?}"
        );
        assert!(msg.contains("truncated"), "{msg}");
        // A header announcing a huge map with no rows fails fast without a huge allocation.
        let forged = "type octile\nheight 32768\nwidth 32768\nmap\n";
        assert!(matches!(
            kind(parse_movingai_map(forged, "f.map")).1,
            K::TooFewRows { found: 0, .. }
        ));
    }

    #[test]
    fn map_too_many_rows() {
        let text = format!("{SMALL}@@@@@@\n");
        let (line, k, _) = kind(parse_movingai_map(&text, "m.map"));
        assert_eq!(line, Some(9));
        assert!(matches!(k, K::TooManyRows { expected: 4 }), "{k:?}");
        // A non-blank line after blank ones counts too.
        let text = format!("{SMALL}\n\nx\n");
        assert_eq!(kind(parse_movingai_map(&text, "m.map")).0, Some(11));
    }

    #[test]
    fn map_wrong_row_width() {
        let mut text = String::from("type octile\nheight 3\nwidth 1024\nmap\n");
        text.push_str(&".".repeat(1024));
        text.push('\n');
        text.push_str(&".".repeat(1024));
        text.push('\n');
        text.push_str(&".".repeat(1023));
        text.push('\n');
        let (line, k, msg) = kind(parse_movingai_map(&text, "Cauldron.map"));
        assert_eq!(line, Some(7));
        assert!(
            matches!(
                k,
                K::RowWidth {
                    expected: 1024,
                    found: 1023
                }
            ),
            "{k:?}"
        );
        assert_eq!(
            msg,
            "Cauldron.map:7: expected 1024 characters in the row, found 1023"
        );
        // A row that is too long.
        let text = "type octile\nheight 1\nwidth 2\nmap\n...";
        assert!(matches!(
            kind(parse_movingai_map(text, "w.map")).1,
            K::RowWidth {
                expected: 2,
                found: 3
            }
        ));
    }

    #[test]
    fn map_unknown_character() {
        let text = "type octile\nheight 2\nwidth 3\nmap\n...\n.?.\n";
        let (line, k, msg) = kind(parse_movingai_map(text, "u.map"));
        assert_eq!(line, Some(6));
        assert!(matches!(k, K::UnknownChar { ch: '?', column: 2 }), "{k:?}");
        assert_eq!(msg, "u.map:6: column 2: unknown map character '?'");
        // Multi-byte characters count as one column, and a stray CR is reported.
        let text = "type octile\nheight 1\nwidth 3\nmap\n.é.";
        assert!(matches!(
            kind(parse_movingai_map(text, "u.map")).1,
            K::UnknownChar {
                ch: 'é', column: 2
            }
        ));
        let text = "type octile\nheight 1\nwidth 3\nmap\n.\r.";
        assert!(matches!(
            kind(parse_movingai_map(text, "u.map")).1,
            K::UnknownChar {
                ch: '\r',
                column: 2
            }
        ));
    }

    #[test]
    fn map_round_trip_for_the_kinds_the_projection_keeps() {
        let kinds = [
            Terrain::Empty,
            Terrain::Swamp,
            Terrain::Water,
            Terrain::Blocked,
        ];
        let grid = Grid::new(7, 5).unwrap();
        let terrain: Vec<Terrain> = (0..grid.len())
            .map(|i| kinds[(i * 7 + i / 3) % 4])
            .collect();
        let map = Map::from_terrain(grid, terrain, CostTable::default()).unwrap();
        let text = write_movingai_map(&map);
        assert!(
            text.starts_with("type octile\nheight 5\nwidth 7\nmap\n"),
            "{text}"
        );
        let back = parse_movingai_map(&text, "rt.map").unwrap();
        assert_eq!(back, map);
        assert_eq!(write_movingai_map(&back), text);
        // The small example reads `T`/`G`, which write back as `@`/`.`.
        let small = parse_movingai_map(SMALL, "small.map").unwrap();
        let again = parse_movingai_map(&write_movingai_map(&small), "again.map").unwrap();
        assert_eq!(again, small);
    }

    #[test]
    fn map_projection_of_horde_only_kinds() {
        let grid = Grid::new(Terrain::COUNT as u32, 1).unwrap();
        let map = Map::from_terrain(grid, Terrain::ALL.to_vec(), CostTable::default()).unwrap();
        let text = write_movingai_map(&map);
        assert_eq!(text.lines().nth(4), Some(".TTSW.TS@"));
        let back = parse_movingai_map(&text, "p.map").unwrap();
        for (&before, &after) in map.terrain().iter().zip(back.terrain()) {
            // The projection keeps whether ground units can enter.
            assert_eq!(
                before.props().blocks_ground,
                after.props().blocks_ground,
                "{before:?}"
            );
        }
    }

    const SCEN_TABS: &str = "version 1\n\
        1\tmaps/sc1/Cauldron.map\t1024\t1024\t63\t531\t57\t528\t7.24264\n\
        0\tden520d.map\t256\t257\t153\t226\t153\t224\t2.00000000\n";

    #[test]
    fn scenario_tab_separated() {
        let s = parse_scen(SCEN_TABS, "x.map.scen").unwrap();
        assert_eq!(s.source, "x.map.scen");
        assert_eq!(s.lines.len(), 2);
        let l = &s.lines[0];
        assert_eq!(l.line_number, 2);
        assert_eq!(l.bucket, 1);
        assert_eq!(l.map_name, "maps/sc1/Cauldron.map");
        assert_eq!(l.map_file_name(), "Cauldron.map");
        assert_eq!((l.map_width, l.map_height), (1024, 1024));
        assert_eq!(l.start, Cell::new(63, 531));
        assert_eq!(l.goal, Cell::new(57, 528));
        assert_eq!(l.optimal_length, 7.24264);
        assert_eq!(l.length_decimals, 5);
        assert!((l.length_tolerance() - 1e-5).abs() < 1e-15);
        let l = &s.lines[1];
        assert_eq!((l.line_number, l.length_decimals), (3, 8));
        assert_eq!(l.map_file_name(), "den520d.map");
    }

    #[test]
    fn scenario_space_separated_version_1_0_crlf_and_no_header() {
        let text = "version 1.0\r\n61 maps/bgmaps/AR0011SR.map 512 512 210 395 87 201 244.95\r\n\
                    33  maps/bgmaps/AR0011SR.map   512 512 244 370 359 376 132.40\r\n";
        let s = parse_scen(text, "AR0011SR.map.scen").unwrap();
        assert_eq!(s.lines.len(), 2);
        assert_eq!(s.lines[0].map_file_name(), "AR0011SR.map");
        assert_eq!(s.lines[0].optimal_length, 244.95);
        assert_eq!(s.lines[1].length_decimals, 2);
        assert!((s.lines[1].length_tolerance() - 0.01).abs() < 1e-12);
        assert_eq!(s.lines[1].line_number, 3);
        // No version line at all; a whole-number length has 0 decimals.
        let s = parse_scen("0 a.map 4 4 0 0 3 3 12", "n.scen").unwrap();
        assert_eq!((s.lines[0].line_number, s.lines[0].length_decimals), (1, 0));
        assert_eq!(s.lines[0].optimal_length, 12.0);
        // Tab-separated map names may hold spaces.
        let s = parse_scen("0\tmy map.map\t4\t4\t0\t0\t3\t3\t1.5\n", "s.scen").unwrap();
        assert_eq!(s.lines[0].map_name, "my map.map");
        // Empty file: no lines.
        assert!(parse_scen("", "e.scen").unwrap().lines.is_empty());
    }

    #[test]
    fn scenario_bad_version() {
        let (line, k, msg) = scen_kind(parse_scen("version 2\n", "v.scen"));
        assert_eq!(line, Some(1));
        assert!(
            matches!(&k, K::BadVersion { found } if found == "2"),
            "{k:?}"
        );
        assert!(
            msg.starts_with("v.scen:1: unsupported scenario version \"2\""),
            "{msg}"
        );
    }

    #[test]
    fn scenario_wrong_field_count() {
        let text = "version 1\n0\ta.map\t4\t4\t0\t0\t3\t3\n";
        let (line, k, msg) = scen_kind(parse_scen(text, "f.scen"));
        assert_eq!(line, Some(2));
        assert!(
            matches!(
                k,
                K::FieldCount {
                    expected: 9,
                    found: 8
                }
            ),
            "{k:?}"
        );
        assert_eq!(msg, "f.scen:2: expected 9 fields, found 8");
        let text = "0 a.map 4 4 0 0 3 3 1.0 extra";
        assert!(matches!(
            scen_kind(parse_scen(text, "f.scen")).1,
            K::FieldCount { found: 10, .. }
        ));
    }

    #[test]
    fn scenario_non_numeric_field() {
        let cases = [
            ("x a.map 4 4 0 0 3 3 1.0", "bucket"),
            ("0 a.map four 4 0 0 3 3 1.0", "map width"),
            ("0 a.map 4 4 -1 0 3 3 1.0", "start x"),
            ("0 a.map 4 4 0 0 3 3.5 1.0", "goal y"),
            ("0 a.map 4 4 0 0 3 3 long", "optimal length"),
            ("0 a.map 4 4 0 0 3 3 -1.0", "optimal length"),
            ("0 a.map 4 4 0 0 3 3 NaN", "optimal length"),
            ("0 a.map 4 4 0 0 3 3 inf", "optimal length"),
        ];
        for (text, want) in cases {
            let (line, k, _) = scen_kind(parse_scen(text, "b.scen"));
            assert_eq!(line, Some(1));
            assert!(
                matches!(k, K::BadNumber { field, .. } if field == want),
                "{text}: {k:?}"
            );
        }
    }

    #[test]
    fn scenario_cell_outside_the_map() {
        // Outside the size the line itself gives: caught while parsing.
        let text = "version 1\n0\ta.map\t4\t4\t0\t0\t3\t3\t4.2\n0\ta.map\t4\t4\t4\t0\t3\t3\t4.2\n";
        let (line, k, msg) = scen_kind(parse_scen(text, "o.scen"));
        assert_eq!(line, Some(3));
        assert!(
            matches!(k, K::CellOutsideMap { which: "start", .. }),
            "{k:?}"
        );
        assert_eq!(msg, "o.scen:3: start cell (4, 0) lies outside the 4x4 map");
        // Outside the map it is checked against.
        let map = Map::new(Grid::new(4, 4).unwrap());
        let mut s = parse_scen("0 a.map 4 4 0 0 3 3 4.2", "o.scen").unwrap();
        s.check_against(&map).unwrap();
        s.lines[0].goal = Cell::new(1, 9);
        let e = s.check_against(&map).unwrap_err();
        assert_eq!(e.line, Some(1));
        assert!(
            matches!(e.kind, K::CellOutsideMap { which: "goal", .. }),
            "{e}"
        );
    }

    #[test]
    fn scenario_map_size_mismatch() {
        let s = parse_scen(SCEN_TABS, "x.map.scen").unwrap();
        let map = Map::new(Grid::new(1024, 1024).unwrap());
        let e = s.check_against(&map).unwrap_err();
        assert_eq!(e.line, Some(3));
        assert!(
            matches!(
                e.kind,
                K::SizeMismatch {
                    line_width: 256,
                    line_height: 257,
                    map_width: 1024,
                    map_height: 1024
                }
            ),
            "{e}"
        );
        assert_eq!(
            e.to_string(),
            "x.map.scen:3: the line gives a 256x257 map but the map is 1024x1024"
        );
    }
}
