//! [`Ctx`]: where a value is in the file (the offsets of a batch mapped back to the file's
//! lines), the errors that name it, and the checks of single values (numbers, counts,
//! frames, layers, terrains, cells, rectangles).

use std::ops::Range;

use horde::fields::{Direction, WALL};
use horde::{Cell, Layer, Map, Terrain};
use toml::Spanned;

use crate::error::{ScenarioError, ScenarioErrorKind};
use crate::raw::RawRect;

pub(crate) struct Ctx<'a> {
    /// The whole file.
    pub(crate) text: &'a str,
    pub(crate) source: &'a str,
    /// Where the text that was parsed starts in the file (spans are relative to it): 0 for
    /// the file, the start of a batch of `[[force]]` tables for that batch.
    pub(crate) base: usize,
    /// The ranges of the file left out of the parsed text (the `[[force]]` batches, when
    /// the rest of the file is parsed), in order.
    pub(crate) holes: &'a [Range<usize>],
}

impl Ctx<'_> {
    /// The offset in the file of byte `offset` of the parsed text.
    pub(crate) fn original(&self, offset: usize) -> usize {
        let mut at = offset.saturating_add(self.base);
        for h in self.holes {
            if h.start <= at {
                at += h.len();
            } else {
                break;
            }
        }
        at
    }

    /// 1-based line of byte `offset` of the parsed text.
    pub(crate) fn line(&self, offset: usize) -> usize {
        let bytes = self.text.as_bytes();
        let end = self.original(offset).min(bytes.len());
        bytes
            .get(..end)
            .map_or(0, |b| b.iter().filter(|&&c| c == b'\n').count())
            + 1
    }

    pub(crate) fn error(
        &self,
        span: Option<Range<usize>>,
        key: Option<String>,
        kind: ScenarioErrorKind,
        message: String,
    ) -> ScenarioError {
        ScenarioError {
            source: self.source.to_string(),
            line: span.map(|s| self.line(s.start)),
            key,
            kind,
            message,
        }
    }

    /// A bad value at `span`.
    pub(crate) fn bad(
        &self,
        span: Range<usize>,
        key: &str,
        message: impl Into<String>,
    ) -> ScenarioError {
        self.error(
            Some(span),
            Some(key.to_string()),
            ScenarioErrorKind::BadValue,
            message.into(),
        )
    }

    /// A missing or conflicting key in the table at `span`.
    pub(crate) fn missing(
        &self,
        span: Range<usize>,
        key: &str,
        message: impl Into<String>,
    ) -> ScenarioError {
        self.error(
            Some(span),
            Some(key.to_string()),
            ScenarioErrorKind::MissingKey,
            message.into(),
        )
    }

    pub(crate) fn toml_error(&self, e: &toml::de::Error) -> ScenarioError {
        let message = e.message().trim().to_string();
        let span = e.span();
        let kind = if message.starts_with("unknown field") {
            ScenarioErrorKind::UnknownKey
        } else if message.starts_with("missing field") {
            ScenarioErrorKind::MissingKey
        } else if message.starts_with("invalid type")
            || message.starts_with("invalid value")
            || message.starts_with("invalid length")
            || message.starts_with("data did not match")
        {
            ScenarioErrorKind::WrongType
        } else {
            ScenarioErrorKind::Syntax
        };
        let mut key = self.key_of(e, span.clone());
        // Name the unknown or missing key itself: `group[1].cuont`.
        if matches!(
            kind,
            ScenarioErrorKind::UnknownKey | ScenarioErrorKind::MissingKey
        ) && let Some(field) = message
            .split_once('`')
            .and_then(|(_, rest)| rest.split_once('`'))
            .map(|(field, _)| field.to_string())
        {
            key = Some(match key {
                Some(parent) => format!("{parent}.{field}"),
                None => field,
            });
        }
        let message = message
            .replace("expected i64", "expected an integer")
            .replace("expected f64", "expected a number");
        let message = if message.starts_with("data did not match") {
            match key.as_deref().map(|k| k.rsplit('.').next().unwrap_or(k)) {
                Some("radius" | "mass") => "expected a number or a list of numbers".to_string(),
                Some("spawn_near" | "goal_near") => {
                    "expected a cell [x, y] or a site name (\"centre\", \"lair\", \
                     \"enemy_spawn_N\", \"player_spawn_N\")"
                        .to_string()
                }
                Some("group") => "expected a group index (from 0) or a group name".to_string(),
                _ => message,
            }
        } else {
            message
        };
        self.error(span, key, kind, message)
    }

    /// The key path of a TOML error, with the index of array-of-tables entries
    /// (`group[1].count`).
    pub(crate) fn key_of(&self, e: &toml::de::Error, span: Option<Range<usize>>) -> Option<String> {
        // toml keeps the key path private but prints it when it has no input to quote.
        let mut bare = e.clone();
        bare.set_input(None);
        let shown = bare.to_string();
        let path = shown
            .trim_end()
            .rsplit_once("\nin `")
            .map(|(_, k)| k.trim_end_matches('`').to_string())
            .or_else(|| {
                shown
                    .trim_end()
                    .strip_prefix("in `")
                    .map(|k| k.trim_end_matches('`').to_string())
            })?;
        let (first, rest) = match path.split_once('.') {
            Some((a, b)) => (a.to_string(), Some(b.to_string())),
            None => (path.clone(), None),
        };
        let first = match (first.as_str(), span) {
            ("group" | "force" | "terrain_edit" | "goal_change", Some(span)) => {
                match self.table_index(&first, span.start) {
                    Some(i) => format!("{first}[{i}]"),
                    None => first,
                }
            }
            _ => first,
        };
        Some(match rest {
            Some(rest) => format!("{first}.{rest}"),
            None => first,
        })
    }

    /// Which `[[name]]` entry (from 0) holds byte `offset`: the number of `[[name]]` headers
    /// that start before it, minus one.
    pub(crate) fn table_index(&self, name: &str, offset: usize) -> Option<usize> {
        let offset = self.original(offset);
        let mut count = 0usize;
        let mut at = 0usize;
        for line in self.text.split_inclusive('\n') {
            if at > offset {
                break;
            }
            let t = line.trim();
            if let Some(inner) = t.strip_prefix("[[")
                && let Some((inner, _)) = inner.split_once("]]")
                && inner.trim() == name
            {
                count += 1;
            }
            at += line.len();
        }
        count.checked_sub(1)
    }
}

// ---------------------------------------------------------------------------------------------
// Checked values.

pub(crate) fn integer_in(
    ctx: &Ctx<'_>,
    v: &Spanned<i64>,
    key: &str,
    what: &str,
    min: i64,
    max: i64,
) -> Result<i64, ScenarioError> {
    let value = *v.get_ref();
    if value < min {
        return Err(ctx.bad(
            v.span(),
            key,
            format!("expected {what} >= {min}, found {value}"),
        ));
    }
    if value > max {
        return Err(ctx.bad(
            v.span(),
            key,
            format!("expected {what} <= {max}, found {value}"),
        ));
    }
    Ok(value)
}

/// A finite `f32` that is `> 0` (or `>= 0` when `zero_ok`).
pub(crate) fn number(
    ctx: &Ctx<'_>,
    v: &Spanned<f64>,
    key: &str,
    zero_ok: bool,
) -> Result<f32, ScenarioError> {
    check_number(ctx, *v.get_ref(), v.span(), key, zero_ok)
}

pub(crate) fn check_number(
    ctx: &Ctx<'_>,
    value: f64,
    span: Range<usize>,
    key: &str,
    zero_ok: bool,
) -> Result<f32, ScenarioError> {
    let as_f32 = value as f32;
    let ok = as_f32.is_finite() && (as_f32 > 0.0 || (zero_ok && as_f32 == 0.0));
    if ok {
        Ok(as_f32)
    } else {
        let bound = if zero_ok { ">= 0" } else { "> 0" };
        Err(ctx.bad(
            span,
            key,
            format!("expected a finite number {bound}, found {value}"),
        ))
    }
}

/// Frame of an event given by `time` seconds or `frame` (neither: frame 0).
pub(crate) fn event_frame(
    ctx: &Ctx<'_>,
    prefix: &str,
    time_key: &str,
    time: Option<&Spanned<f64>>,
    frame: Option<&Spanned<i64>>,
    table: Range<usize>,
    dt: f64,
) -> Result<u32, ScenarioError> {
    match (time, frame) {
        (Some(_), Some(_)) => Err(ctx.missing(
            table,
            prefix,
            format!("give either `{time_key}` (seconds) or `frame`, not both"),
        )),
        (None, None) => Ok(0),
        (None, Some(f)) => Ok(integer_in(
            ctx,
            f,
            &format!("{prefix}.frame"),
            "a frame",
            0,
            i64::from(u32::MAX),
        )? as u32),
        (Some(t), None) => {
            let key = format!("{prefix}.{time_key}");
            let secs = *t.get_ref();
            if !(secs.is_finite() && secs >= 0.0) {
                return Err(ctx.bad(
                    t.span(),
                    &key,
                    format!("expected a time in seconds >= 0, found {secs}"),
                ));
            }
            let frame = (secs / dt).round();
            if frame > f64::from(u32::MAX) {
                return Err(ctx.bad(t.span(), &key, format!("{secs} s is too far in the future")));
            }
            Ok(frame as u32)
        }
    }
}

pub(crate) fn parse_layer(
    ctx: &Ctx<'_>,
    v: &Spanned<String>,
    key: &str,
) -> Result<Layer, ScenarioError> {
    Layer::ALL
        .into_iter()
        .find(|l| l.name() == v.get_ref())
        .ok_or_else(|| {
            ctx.bad(
                v.span(),
                key,
                format!(
                    "expected \"ground\", \"hover\" or \"air\", found {:?}",
                    v.get_ref()
                ),
            )
        })
}

pub(crate) fn parse_terrain(
    ctx: &Ctx<'_>,
    v: &Spanned<String>,
    key: &str,
) -> Result<Terrain, ScenarioError> {
    Terrain::ALL
        .into_iter()
        .find(|t| t.name() == v.get_ref())
        .ok_or_else(|| {
            let names: Vec<&str> = Terrain::ALL.iter().map(|t| t.name()).collect();
            ctx.bad(
                v.span(),
                key,
                format!(
                    "expected a terrain name ({}), found {:?}",
                    names.join(", "),
                    v.get_ref()
                ),
            )
        })
}

/// A cell `[x, y]` inside the map.
pub(crate) fn cell_in(
    ctx: &Ctx<'_>,
    map: &Map,
    xy: [i64; 2],
    span: Range<usize>,
    key: &str,
) -> Result<Cell, ScenarioError> {
    let [x, y] = xy;
    if map.grid().contains(x, y) {
        Ok(Cell::new(x as u32, y as u32))
    } else {
        Err(ctx.bad(
            span,
            key,
            format!(
                "cell [{x}, {y}] lies outside the {}x{} map",
                map.width(),
                map.height()
            ),
        ))
    }
}

/// The cells of a rectangle that lies inside the map, row by row.
pub(crate) fn rect_cells(
    ctx: &Ctx<'_>,
    map: &Map,
    r: &Spanned<RawRect>,
    key: &str,
) -> Result<Vec<Cell>, ScenarioError> {
    let RawRect { x, y, w, h } = *r.get_ref();
    if w < 1 || h < 1 {
        return Err(ctx.bad(
            r.span(),
            key,
            format!("expected w >= 1 and h >= 1, found w = {w}, h = {h}"),
        ));
    }
    let inside = x >= 0
        && y >= 0
        && x.saturating_add(w) <= i64::from(map.width())
        && y.saturating_add(h) <= i64::from(map.height());
    if !inside {
        return Err(ctx.bad(
            r.span(),
            key,
            format!(
                "the area x = {x}, y = {y}, w = {w}, h = {h} does not fit the {}x{} map",
                map.width(),
                map.height()
            ),
        ));
    }
    let mut cells = Vec::new();
    for cy in y..y + h {
        for cx in x..x + w {
            cells.push(Cell::new(cx as u32, cy as u32));
        }
    }
    Ok(cells)
}

pub(crate) fn open(map: &Map, layer: Layer, cell: Cell) -> bool {
    map.cost_field(layer).get(cell) != WALL
}

/// Whether `cell` can be a goal of a group on `layer`: that layer can enter it, and (as the
/// simulation requires of every goal) ground or hover units can.
pub(crate) fn goal_ok(map: &Map, layer: Layer, cell: Cell) -> bool {
    open(map, layer, cell) && (open(map, Layer::Ground, cell) || open(map, Layer::Hover, cell))
}

/// Up to `n` cells that `keep` accepts, nearest `centre` on foot: from the cell nearest
/// `centre` (ring by ring) that `walk` accepts, step by step over cells `walk` accepts (8
/// neighbours, a diagonal step only where both cells beside it are walkable too), the
/// cells of each step row by row. In open ground the steps are the square rings round
/// `centre`; near walls the cells stay on `centre`'s side of them instead of reaching
/// through a wall into a corridor joined to it only the long way round (a goal area split
/// so fills its near part and leaves its army resting outside the far one). Only when the
/// walkable piece round `centre` holds fewer than `n` such cells (a pocket walled all round)
/// does it go on from the nearest walkable cell outside it, and so on.
pub(crate) fn cells_near(
    map: &Map,
    centre: Cell,
    n: usize,
    walk: impl Fn(Cell) -> bool,
    keep: impl Fn(Cell) -> bool,
) -> Vec<Cell> {
    let grid = map.grid();
    let mut out = Vec::new();
    let mut seen = vec![false; grid.len()];
    while out.len() < n {
        let Some(start) = nearest(map, centre, |c| !seen[grid.index(c)] && walk(c)) else {
            break;
        };
        flood(map, start, n, &walk, &keep, &mut seen, &mut out);
    }
    out
}

/// [`cells_near`] over the walkable piece round `start`: its cells `keep` accepts, step by
/// step, added to `out` until it holds `n`; marks what it visits in `seen`.
fn flood(
    map: &Map,
    start: Cell,
    n: usize,
    walk: &impl Fn(Cell) -> bool,
    keep: &impl Fn(Cell) -> bool,
    seen: &mut [bool],
    out: &mut Vec<Cell>,
) {
    let grid = map.grid();
    let (w, h) = (i64::from(grid.width()), i64::from(grid.height()));
    let at = |x: i64, y: i64| (0..w).contains(&x) && (0..h).contains(&y);
    let walkable = |x: i64, y: i64| at(x, y) && walk(Cell::new(x as u32, y as u32));
    seen[grid.index(start)] = true;
    let mut step = vec![start];
    while !step.is_empty() && out.len() < n {
        step.sort_unstable_by_key(|c| (c.y, c.x));
        let mut next = Vec::new();
        for &c in &step {
            if out.len() < n && keep(c) {
                out.push(c);
            }
            let (x, y) = (i64::from(c.x), i64::from(c.y));
            for (dx, dy) in Direction::OFFSETS {
                let (nx, ny) = (x + i64::from(dx), y + i64::from(dy));
                let diagonal_open = dx == 0 || dy == 0 || (walkable(nx, y) && walkable(x, ny));
                if walkable(nx, ny) && diagonal_open {
                    let to = Cell::new(nx as u32, ny as u32);
                    let i = grid.index(to);
                    if !seen[i] {
                        seen[i] = true;
                        next.push(to);
                    }
                }
            }
        }
        step = next;
    }
}

/// The cell nearest `centre` (ring by ring, each ring row by row) that `walk` accepts.
fn nearest(map: &Map, centre: Cell, walk: impl Fn(Cell) -> bool) -> Option<Cell> {
    let grid = map.grid();
    let max_r = i64::from(grid.width().max(grid.height()));
    for r in 0..max_r {
        for y in -r..=r {
            // The ring's top and bottom rows whole, its side columns only at the edges: each
            // cell of the ring once, row by row, without visiting its inside.
            let step = if y.abs() == r { 1 } else { (2 * r).max(1) };
            let mut x = -r;
            while x <= r {
                let (cx, cy) = (i64::from(centre.x) + x, i64::from(centre.y) + y);
                if grid.contains(cx, cy) && walk(Cell::new(cx as u32, cy as u32)) {
                    return Some(Cell::new(cx as u32, cy as u32));
                }
                x += step;
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use horde::formats::parse_ascii_map;

    use super::*;

    /// The cells `cells_near` picks on `rows` (`X` a wall) round `centre`, drawn back as
    /// rows (`o` picked).
    fn picked(rows: &str, centre: Cell, n: usize) -> String {
        let map = parse_ascii_map(rows, "test").unwrap();
        let walk = |c| open(&map, Layer::Ground, c);
        let cells = cells_near(&map, centre, n, walk, walk);
        assert_eq!(cells.len(), n);
        let mut out: Vec<Vec<char>> = rows.lines().map(|l| l.chars().collect()).collect();
        for c in cells {
            out[c.y as usize][c.x as usize] = 'o';
        }
        out.iter()
            .map(|l| l.iter().collect::<String>() + "\n")
            .collect()
    }

    #[test]
    fn in_open_ground_cells_near_are_the_square_rings() {
        let rows = ".......\n.......\n.......\n.......\n.......\n";
        // The centre, its ring of 8, then the next ring row by row.
        let want = ".ooo...\n..ooo..\n..ooo..\n..ooo..\n.......\n";
        assert_eq!(picked(rows, Cell::new(3, 2), 12), want);
    }

    #[test]
    fn cells_near_stay_on_the_centres_side_of_a_wall() {
        let rows = "....X..\n....X..\n....X..\n....X..\n.......\n";
        // Round the wall's end, not through it: rings would take (5, 0) before (5, 4).
        let want = "ooooX..\nooooX..\nooooX..\nooooX..\noooooo.\n";
        assert_eq!(picked(rows, Cell::new(2, 2), 22), want);
    }

    #[test]
    fn cells_near_go_on_outside_a_pocket_too_small() {
        let rows = "XXX....\nX.X....\nXXX....\n.......\n";
        let want = "XXXoo..\nXoX....\nXXX....\n.......\n";
        assert_eq!(picked(rows, Cell::new(1, 1), 3), want);
    }
}
