//! horde's ASCII maps (`.txt`): the lossless text format for every [`Terrain`](crate::Terrain) kind.

use super::error::{MapFormatError, MapFormatErrorKind as K};
use super::{capacity_hint, map_from_rows, numbered_lines, push_row};
use crate::grid::Grid;
use crate::map::Map;

/// Reads a horde ASCII map. `source` labels the file in error messages (usually its path).
///
/// ```text
/// ; a comment: lines whose first character is `;` are skipped anywhere
/// ##########
/// #..FF..~~#
/// #.L:..XX.#
/// ##########
/// ```
///
/// - Every other non-blank line is a row of the map, top row first (row 0 = first row, so
///   cell `(x, y)` is character `x` of row `y`). All rows have the same number of characters;
///   the width is that of the first row and the height is the number of rows.
/// - Characters are [`Terrain::from_char`](crate::Terrain::from_char)'s legend: `.` `G` empty, `#` brick wall,
///   `X` steel plate, `F` forest, `~` `W` water, `:` snow, `L` lair, `S` swamp,
///   `@` `O` `T` blocked. So a Moving AI map body is also a valid ASCII map body.
/// - There is no header; `#` is a brick wall, not a comment.
/// - Blank lines before the first row and after the last row are ignored; a blank line between
///   rows is an error (a row of 0 characters). Spaces and tabs are not legend characters.
/// - LF or CRLF line endings, with or without a final newline. A leading UTF-8 byte order mark
///   is skipped.
///
/// The map gets the default [`CostTable`](crate::CostTable). Never panics, whatever the input.
pub fn parse_ascii_map(text: &str, source: &str) -> Result<Map, MapFormatError> {
    let err = |line: usize, kind: K| MapFormatError::at(source, line, kind);
    let lines: Vec<(usize, &str)> = numbered_lines(text)
        .filter(|(_, line)| !line.starts_with(';'))
        .collect();
    let is_blank = |l: &&(usize, &str)| l.1.trim().is_empty();
    let first = lines.iter().position(|l| !is_blank(&l));
    let last = lines.iter().rposition(|l| !is_blank(&l));
    let rows = match (first, last) {
        (Some(first), Some(last)) => lines.get(first..=last).unwrap_or_default(),
        _ => &[],
    };
    let Some(&(first_line, first_row)) = rows.first() else {
        return Err(MapFormatError::whole(source, K::NoRows));
    };
    let width = u32::try_from(first_row.chars().count()).unwrap_or(u32::MAX);
    let height = u32::try_from(rows.len()).unwrap_or(u32::MAX);
    let grid = Grid::new(width, height).map_err(|e| err(first_line, K::BadGridSize(e)))?;
    let mut terrain = Vec::with_capacity(capacity_hint(grid.len()));
    for &(n, line) in rows {
        push_row(&mut terrain, line, width, source, n)?;
    }
    Ok(map_from_rows(grid, terrain))
}

/// Writes `map` as a horde ASCII map: one row per line with [`Terrain::to_char`](crate::Terrain::to_char), LF line
/// endings and a final newline, no comments. Lossless for terrain: [`parse_ascii_map`] gives
/// back the same map (the cost table, cell size and origin are not written; they come back
/// as the defaults).
#[must_use]
pub fn write_ascii_map(map: &Map) -> String {
    let (w, h) = (map.width() as usize, map.height() as usize);
    let mut out = String::with_capacity((w + 1) * h);
    for row in map.terrain().chunks(w.max(1)) {
        out.extend(row.iter().map(|&t| t.to_char()));
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grid::Cell;
    use crate::terrain::{CostTable, Terrain};

    fn kind(r: Result<Map, MapFormatError>) -> (Option<usize>, K, String) {
        let e = r.expect_err("expected an error");
        let msg = e.to_string();
        (e.line, e.kind, msg)
    }

    #[test]
    fn ascii_round_trip_is_exact_for_every_kind() {
        let grid = Grid::new(11, 7).unwrap();
        let terrain: Vec<Terrain> = (0..grid.len())
            .map(|i| Terrain::ALL[(i * 5 + i / 11) % Terrain::COUNT])
            .collect();
        let map = Map::from_terrain(grid, terrain, CostTable::default()).unwrap();
        let text = write_ascii_map(&map);
        assert_eq!(text.lines().count(), 7);
        let back = parse_ascii_map(&text, "rt.txt").unwrap();
        assert_eq!(back, map);
        assert_eq!(write_ascii_map(&back), text);
    }

    #[test]
    fn ascii_comments_blank_edges_and_crlf() {
        let text =
            "; level 1\r\n\r\n#####\r\n; inside\r\n#.F~#\r\n#L:X#\r\n#####\r\n\r\n; end\r\n\r\n";
        let map = parse_ascii_map(text, "c.txt").unwrap();
        assert_eq!((map.width(), map.height()), (5, 4));
        assert_eq!(map.terrain_at(Cell::new(2, 1)), Terrain::Forest);
        assert_eq!(map.terrain_at(Cell::new(3, 1)), Terrain::Water);
        assert_eq!(map.terrain_at(Cell::new(1, 2)), Terrain::Lair);
        assert_eq!(map.terrain_at(Cell::new(2, 2)), Terrain::Snow);
        assert_eq!(map.terrain_at(Cell::new(3, 2)), Terrain::SteelPlate);
        assert_eq!(map.terrain_at(Cell::new(0, 0)), Terrain::BrickWall);
        // A Moving AI body is a valid ASCII map, no final newline needed.
        let m = parse_ascii_map("@T.\nGSW\nO..", "mai.txt").unwrap();
        assert_eq!(m.terrain_at(Cell::new(2, 1)), Terrain::Water);
        assert_eq!(m.terrain_at(Cell::new(0, 2)), Terrain::Blocked);
    }

    #[test]
    fn ascii_wrong_row_width() {
        let (line, k, msg) = kind(parse_ascii_map("....\n...\n....\n", "r.txt"));
        assert_eq!(line, Some(2));
        assert!(
            matches!(
                k,
                K::RowWidth {
                    expected: 4,
                    found: 3
                }
            ),
            "{k:?}"
        );
        assert_eq!(msg, "r.txt:2: expected 4 characters in the row, found 3");
        // A blank line between rows is a row of 0 characters.
        let (line, k, _) = kind(parse_ascii_map("..\n\n..\n", "r.txt"));
        assert_eq!(line, Some(2));
        assert!(
            matches!(
                k,
                K::RowWidth {
                    expected: 2,
                    found: 0
                }
            ),
            "{k:?}"
        );
    }

    #[test]
    fn ascii_unknown_character() {
        let (line, k, msg) = kind(parse_ascii_map("; c\n...\n.. \n", "u.txt"));
        assert_eq!(line, Some(3));
        assert!(matches!(k, K::UnknownChar { ch: ' ', column: 3 }), "{k:?}");
        assert_eq!(msg, "u.txt:3: column 3: unknown map character ' '");
    }

    #[test]
    fn ascii_no_rows() {
        for text in ["", "\n\n", "; only a comment\n", "  \r\n"] {
            let (line, k, msg) = kind(parse_ascii_map(text, "n.txt"));
            assert_eq!(line, None);
            assert!(matches!(k, K::NoRows), "{k:?}");
            assert_eq!(msg, "n.txt: the map has no rows");
        }
    }

    #[test]
    fn ascii_too_wide() {
        let text = ".".repeat(crate::grid::MAX_GRID_SIDE as usize + 1);
        let (line, k, _) = kind(parse_ascii_map(&text, "w.txt"));
        assert_eq!(line, Some(1));
        assert!(matches!(k, K::BadGridSize(_)), "{k:?}");
    }
}
