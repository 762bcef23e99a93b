//! [`World`]: the scenario's map (rows, a Moving AI file or a generated level) and the
//! places that name its cells (a cell, a rectangle, a site of a generated level).

use std::ops::Range;
use std::path::Path;

use horde::fields::Regions;
use horde::formats::{load_map, parse_ascii_map};
use horde::level::{Level, LevelConfig, generate_level};
use horde::{Cell, GoalSet, Layer, Map};
use toml::Spanned;

use crate::MAX_MAP_CELLS;
use crate::ctx::{Ctx, cell_in, cells_near, goal_ok, integer_in, rect_cells};
use crate::error::{ScenarioError, ScenarioErrorKind};
use crate::raw::{RawGoal, RawMap, RawPlace};

/// The map and, when generated, its level (for named sites).
pub(crate) struct World {
    pub(crate) map: Map,
    pub(crate) level: Option<Level>,
    /// The level was generated with `guarantee_reachable`: units spawn only where they can
    /// reach their goal.
    pub(crate) guaranteed: bool,
}

impl World {
    /// The cell a place names.
    pub(crate) fn place(
        &self,
        ctx: &Ctx<'_>,
        p: &Spanned<RawPlace>,
        key: &str,
    ) -> Result<Cell, ScenarioError> {
        let grid = self.map.grid();
        match p.get_ref() {
            RawPlace::Cell(xy) => cell_in(ctx, &self.map, *xy, p.span(), key),
            RawPlace::Site(name) => {
                let centre = grid.origin() + grid.world_size() * 0.5;
                if name == "centre" {
                    return Ok(grid.clamped_cell_at(centre));
                }
                let Some(level) = &self.level else {
                    return Err(ctx.bad(
                        p.span(),
                        key,
                        format!(
                            "site {name:?} needs a generated map (only \"centre\" works on any map)"
                        ),
                    ));
                };
                let pick = |prefix: &str, tiles: &[Cell]| -> Option<Result<Cell, ScenarioError>> {
                    let index = name.strip_prefix(prefix)?;
                    Some(
                        index
                            .parse::<usize>()
                            .ok()
                            .and_then(|i| tiles.get(i))
                            .map(|&t| grid.clamped_cell_at(level.tile_centre(t)))
                            .ok_or_else(|| {
                                ctx.bad(
                                    p.span(),
                                    key,
                                    format!(
                                        "{name:?}: this level has {prefix}0 to {prefix}{}",
                                        tiles.len().saturating_sub(1)
                                    ),
                                )
                            }),
                    )
                };
                if name == "lair" {
                    return Ok(grid.clamped_cell_at(level.lair_centre()));
                }
                if let Some(r) = pick("enemy_spawn_", level.enemy_spawn_tiles()) {
                    return r;
                }
                if let Some(r) = pick("player_spawn_", level.player_spawn_tiles()) {
                    return r;
                }
                Err(ctx.bad(
                    p.span(),
                    key,
                    format!(
                        "unknown site {name:?}: expected \"centre\", \"lair\", \
                         \"enemy_spawn_N\" or \"player_spawn_N\""
                    ),
                ))
            }
        }
    }

    /// The goal set of a `goal` / `goal_area` / `goal_near` / `goal_site` description, checked
    /// for `layer` against `map` (the map as it will be when the goal is set).
    pub(crate) fn goal(
        &self,
        ctx: &Ctx<'_>,
        map: &Map,
        g: &RawGoal<'_>,
        layer: Layer,
        prefix: &str,
        table: Range<usize>,
    ) -> Result<GoalSet, ScenarioError> {
        let given = usize::from(g.goal.is_some())
            + usize::from(g.goal_area.is_some())
            + usize::from(g.goal_near.is_some())
            + usize::from(g.goal_site.is_some());
        if given != 1 {
            return Err(ctx.missing(
                table,
                prefix,
                "give exactly one of `goal`, `goal_area`, `goal_near` and `goal_site`",
            ));
        }
        if let (Some(n), None) = (g.goal_cells, g.goal_near) {
            return Err(ctx.bad(
                n.span(),
                &format!("{prefix}.goal_cells"),
                "`goal_cells` only goes with `goal_near`",
            ));
        }
        let check = |cell: Cell, span: Range<usize>, key: &str| {
            if goal_ok(map, layer, cell) {
                Ok(cell)
            } else {
                Err(ctx.bad(
                    span,
                    key,
                    format!(
                        "goal cell [{}, {}] is inside a wall ({}) for {} units",
                        cell.x,
                        cell.y,
                        map.terrain_at(cell).name(),
                        layer.name()
                    ),
                ))
            }
        };
        let cells = if let Some(list) = g.goal {
            let key = format!("{prefix}.goal");
            if list.get_ref().is_empty() {
                return Err(ctx.bad(list.span(), &key, "expected at least one cell"));
            }
            let mut cells = Vec::with_capacity(list.get_ref().len());
            for c in list.get_ref() {
                let cell = cell_in(ctx, map, *c.get_ref(), c.span(), &key)?;
                cells.push(check(cell, c.span(), &key)?);
            }
            cells
        } else if let Some(area) = g.goal_area {
            let key = format!("{prefix}.goal_area");
            let cells: Vec<Cell> = rect_cells(ctx, map, area, &key)?
                .into_iter()
                .filter(|&c| goal_ok(map, layer, c))
                .collect();
            if cells.is_empty() {
                return Err(ctx.bad(
                    area.span(),
                    &key,
                    format!(
                        "every cell of the goal area is a wall for {} units",
                        layer.name()
                    ),
                ));
            }
            cells
        } else if let Some(near) = g.goal_near {
            let key = format!("{prefix}.goal_near");
            let n = match g.goal_cells {
                Some(n) => integer_in(
                    ctx,
                    n,
                    &format!("{prefix}.goal_cells"),
                    "a count",
                    1,
                    i64::try_from(map.grid().len()).unwrap_or(i64::MAX),
                )? as usize,
                None => 1,
            };
            let centre = self.place(ctx, near, &key)?;
            // On a level generated with reachability guaranteed, the area lies where the
            // armies go: in the regions of the lair's approach (every spawn reaches it), not
            // in a pocket walled all round that the site happens to fall in.
            let lair_regions = self
                .level
                .as_ref()
                .filter(|_| self.guaranteed)
                .map(|level| {
                    let regions = Regions::of(map.cost_field(layer));
                    let ids = regions.regions_of(&level.lair_approach_cells());
                    (regions, ids)
                });
            let ok = |c| {
                goal_ok(map, layer, c)
                    && lair_regions
                        .as_ref()
                        .is_none_or(|(r, ids)| r.in_any(c, ids))
            };
            let cells = cells_near(map, centre, n, ok, ok);
            if cells.len() < n {
                return Err(ctx.bad(
                    near.span(),
                    &key,
                    format!(
                        "the map has only {} goal cells for {} units, fewer than goal_cells = {n}",
                        cells.len(),
                        layer.name()
                    ),
                ));
            }
            cells
        } else if let Some(site) = g.goal_site {
            let key = format!("{prefix}.goal_site");
            if site.get_ref() != "lair_approach" {
                return Err(ctx.bad(
                    site.span(),
                    &key,
                    format!("expected \"lair_approach\", found {:?}", site.get_ref()),
                ));
            }
            let Some(level) = &self.level else {
                return Err(ctx.bad(site.span(), &key, "\"lair_approach\" needs a generated map"));
            };
            let mut cells = Vec::new();
            for c in level.lair_approach_cells() {
                cells.push(check(c, site.span(), &key)?);
            }
            cells
        } else {
            Vec::new()
        };
        GoalSet::new(cells).map_err(|e| ctx.bad(table, prefix, format!("the goal is empty: {e}")))
    }
}

/// The `[map]` table turned into the scenario's [`World`].
pub(crate) fn build_map(
    ctx: &Ctx<'_>,
    raw: &Spanned<RawMap>,
    base_dir: &Path,
    seed: u64,
) -> Result<World, ScenarioError> {
    let m = raw.get_ref();
    let given = usize::from(m.file.is_some())
        + usize::from(m.rows.is_some())
        + usize::from(m.generate.is_some());
    if given != 1 {
        return Err(ctx.missing(
            raw.span(),
            "map",
            "give exactly one of `file`, `rows` and `generate`",
        ));
    }
    let map_error = |span: Range<usize>, key: &str, message: String| {
        ctx.error(
            Some(span),
            Some(key.to_string()),
            ScenarioErrorKind::Map,
            message,
        )
    };
    let world = if let Some(file) = &m.file {
        let path = base_dir.join(file.get_ref());
        let map = load_map(&path).map_err(|e| map_error(file.span(), "map.file", e.to_string()))?;
        World {
            map,
            level: None,
            guaranteed: false,
        }
    } else if let Some(rows) = &m.rows {
        let label = format!("{} (map.rows)", ctx.source);
        let map = parse_ascii_map(rows.get_ref(), &label).map_err(|e| {
            // A multi-line string drops the newline right after its opening quotes, so row
            // `k` of the map is `k` lines below the quotes.
            let start = rows.span().start;
            let after = ctx.text.get(start..).unwrap_or_default();
            let skipped = ["\"\"\"\n", "\"\"\"\r\n", "'''\n", "'''\r\n"]
                .iter()
                .any(|q| after.starts_with(q));
            let line = match e.line {
                Some(k) => ctx.line(start) + k - usize::from(!skipped),
                None => ctx.line(start),
            };
            ScenarioError {
                line: Some(line),
                ..map_error(rows.span(), "map.rows", e.kind.to_string())
            }
        })?;
        World {
            map,
            level: None,
            guaranteed: false,
        }
    } else if let Some(g) = &m.generate {
        let gen_ref = g.get_ref();
        let level_seed = match &gen_ref.seed {
            Some(s) => integer_in(ctx, s, "map.generate.seed", "a seed", 0, i64::MAX)? as u64,
            None => seed,
        };
        let side = i64::from(horde::formats::MAX_GRID_SIDE);
        let width = integer_in(
            ctx,
            &gen_ref.width,
            "map.generate.width",
            "a width in tiles",
            i64::from(LevelConfig::MIN_SIDE),
            side,
        )? as u32;
        let height = integer_in(
            ctx,
            &gen_ref.height,
            "map.generate.height",
            "a height in tiles",
            i64::from(LevelConfig::MIN_SIDE),
            side,
        )? as u32;
        let cpt = match &gen_ref.cells_per_tile {
            Some(c) => {
                integer_in(ctx, c, "map.generate.cells_per_tile", "a count", 1, side)? as u32
            }
            None => LevelConfig::default().cells_per_tile,
        };
        let cells = u64::from(width) * u64::from(height) * u64::from(cpt) * u64::from(cpt);
        if cells > MAX_MAP_CELLS {
            return Err(ctx.bad(
                g.span(),
                "map.generate",
                format!(
                    "a {width}x{height} level of {cpt}x{cpt} cells per tile has {cells} cells, \
                     more than the {MAX_MAP_CELLS} allowed"
                ),
            ));
        }
        let config = LevelConfig::default()
            .with_size(width, height)
            .with_cells_per_tile(cpt)
            .with_guarantee_reachable(gen_ref.guarantee_reachable.unwrap_or(false));
        let level = generate_level(level_seed, &config)
            .map_err(|e| map_error(g.span(), "map.generate", e.to_string()))?;
        World {
            map: level.map().clone(),
            level: Some(level),
            guaranteed: config.guarantee_reachable,
        }
    } else {
        return Err(ctx.missing(raw.span(), "map", "no map given"));
    };
    let cells = u64::from(world.map.width()) * u64::from(world.map.height());
    if cells > MAX_MAP_CELLS {
        return Err(ctx.bad(
            raw.span(),
            "map",
            format!("the map has {cells} cells, more than the {MAX_MAP_CELLS} allowed"),
        ));
    }
    Ok(world)
}
