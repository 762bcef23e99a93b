//! Seeded level generation after the TankBattle article (`seeds/002_*`), generalised to any
//! size, plus the expansion of the tile level into a crowd [`Map`]. See [`Level`] for the
//! coordinates, the exclusion zones and what reaching the lair means.

mod config;
mod generate;
#[cfg(test)]
mod tests;

pub use config::{LevelConfig, LevelError, LevelWeights};
pub use generate::generate_level;

use glam::Vec2;

use crate::grid::{Cell, Grid};
use crate::map::Map;
use crate::terrain::Terrain;

/// Where the lair, its ring and the spawns sit on a `width x height` tile grid.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Layout {
    lair: Cell,
    /// In the article's placement order: `(5,0) (5,1) (6,1) (7,0) (7,1)`.
    ring: [Cell; 5],
    players: [Cell; 2],
    enemies: [Cell; 3],
}

impl Layout {
    /// The layout for a validated size (each side at least [`LevelConfig::MIN_SIDE`]).
    fn new(width: u32, height: u32) -> Self {
        let (bottom, lx) = (height - 1, width / 2);
        let n = width - 1;
        let left = ((n + 1) / 3).min(lx - 2);
        let right = ((2 * n + 1) / 3).max(lx + 2);
        Self {
            lair: Cell::new(lx, bottom),
            ring: [
                Cell::new(lx - 1, bottom),
                Cell::new(lx - 1, bottom - 1),
                Cell::new(lx, bottom - 1),
                Cell::new(lx + 1, bottom),
                Cell::new(lx + 1, bottom - 1),
            ],
            players: [Cell::new(left, bottom), Cell::new(right, bottom)],
            enemies: [Cell::new(0, 0), Cell::new(lx, 0), Cell::new(width - 1, 0)],
        }
    }

    /// Every exclusion zone tile: lair, ring, player spawns, enemy spawns (all distinct).
    fn zone_tiles(&self) -> impl Iterator<Item = Cell> + '_ {
        std::iter::once(self.lair)
            .chain(self.ring)
            .chain(self.players)
            .chain(self.enemies)
    }

    /// Player spawns, then enemy spawns.
    fn spawns(&self) -> impl Iterator<Item = Cell> + '_ {
        self.players.iter().chain(&self.enemies).copied()
    }

    /// Tiles sharing an edge with a ring tile, outside the lair and ring, in row-major order.
    fn approach_tiles(&self, grid: &Grid) -> Vec<Cell> {
        let mut tiles = Vec::new();
        for ring in self.ring {
            for (dx, dy) in [(0i64, -1i64), (-1, 0), (1, 0), (0, 1)] {
                let (x, y) = (i64::from(ring.x) + dx, i64::from(ring.y) + dy);
                if !grid.contains(x, y) {
                    continue;
                }
                let cell = Cell::new(x as u32, y as u32);
                if cell != self.lair && !self.ring.contains(&cell) {
                    tiles.push(cell);
                }
            }
        }
        tiles.sort_by_key(|c| (c.y, c.x));
        tiles.dedup();
        tiles
    }
}

/// A generated level: the tile terrain, the crowd [`Map`] expanded from it, and where the
/// lair and the spawns are. Made by [`generate_level`].
///
/// # Tiles, cells and coordinates
///
/// A level is a grid of *tiles* (13x13 by default, as in the article). Each tile becomes
/// `cells_per_tile x cells_per_tile` *crowd cells* of the [`Map`] the simulation runs on, so
/// tile `(tx, ty)` covers the cells `tx * cpt .. (tx + 1) * cpt` by `ty * cpt .. (ty + 1) * cpt`.
/// Both use horde's convention (docs/behaviour.md, "Grid, terrain and coordinates"): `x` is the
/// column from the left, `y` the row from the **top** (row 0 = first line of [`Level::to_ascii`]).
///
/// The article indexes its map as `map[r, c]` with `(0, 0)` at the bottom-left. Its lair is
/// at `(6, 0)`, flanked by the player spawns `(4, 0)` and `(8, 0)`, and the enemies spawn at
/// `(0, 12)`, `(6, 12)` and `(12, 12)`: the Battle City layout (eagle at the bottom centre,
/// enemies along the top), so its *first* index runs left to right and its *second* bottom to
/// top, although it calls them "row" and "col" (with `Rows == Cols == 13` the names are
/// never put to the test). horde maps article `(a, b)` to
///
/// ```text
/// x = a,   y = (height - 1) - b
///
///   y   x:  0 1 2 3 4 5 6 7 8 9 10 11 12        article b
///   0       E . . . . . E . . . .  .  E           12      E enemy spawn
///   1       . . . . . . . . . . .  .  .           11
///   ...
///  11       . . . . . # # # . . .  .  .            1      # the lair's brick ring
///  12       . . . . P # L # P . .  .  .            0      L lair, P player spawn
/// ```
///
/// # Exclusion zones for other sizes
///
/// For a `width x height` level (each side at least [`LevelConfig::MIN_SIDE`]) with
/// `lx = width / 2` (the article's 6 for 13, i.e. `(width - 1) / 2` rounded half up):
///
/// - lair at `(lx, height - 1)`; ring at `(lx - 1, height - 1)`, `(lx - 1, height - 2)`,
///   `(lx, height - 2)`, `(lx + 1, height - 2)`, `(lx + 1, height - 1)`;
/// - player spawns on the bottom row at a third and two thirds of the width, the article's
///   columns `4/12` and `8/12` scaled to the width and rounded (`round((width - 1) / 3)` and
///   `round(2 (width - 1) / 3)`), but kept at least two columns from the lair so that the ring
///   never covers them: `x = min(that, lx - 2)` and `x = max(that, lx + 2)`;
/// - enemy spawns on the top row at the left corner, the lair's column and the right corner:
///   `(0, 0)`, `(lx, 0)`, `(width - 1, 0)`.
///
/// # Reaching the lair
///
/// As in the article, the lair is walled in by its ring, so no unit can stand next to it.
/// A spawn *reaches the lair* when a ground unit can walk from the spawn tile to a
/// [lair approach tile](Level::lair_approach_tiles): a ground-passable tile, outside the
/// lair and ring, that shares an edge with a ring tile, from where the ring can be attacked.
/// The walk uses edge-sharing steps between ground-passable tiles; since tiles expand to whole
/// blocks of cells, the same walk exists on the crowd map, with 4-neighbour steps or with
/// 8-neighbour steps that never cut corners (docs/behaviour.md, "Integration field"). With
/// [`LevelConfig::guarantee_reachable`] every spawn reaches the lair.
#[derive(Clone, Debug, PartialEq)]
pub struct Level {
    seed: u64,
    config: LevelConfig,
    tile_grid: Grid,
    tiles: Vec<Terrain>,
    map: Map,
    layout: Layout,
    targets: [usize; LevelWeights::KINDS.len()],
    seeds_placed: [usize; LevelWeights::KINDS.len()],
    carved: Vec<Cell>,
}

impl Level {
    /// The seed the level was generated from.
    #[must_use]
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// The config the level was generated with.
    #[must_use]
    pub fn config(&self) -> &LevelConfig {
        &self.config
    }

    /// Tile columns.
    #[must_use]
    pub fn tiles_width(&self) -> u32 {
        self.tile_grid.width()
    }

    /// Tile rows.
    #[must_use]
    pub fn tiles_height(&self) -> u32 {
        self.tile_grid.height()
    }

    /// The tile grid. Its cell size is `cells_per_tile * cell_size` and its origin the crowd
    /// map's, so [`Grid::cell_centre`] and [`Grid::cell_at`] give tile positions in world units.
    #[must_use]
    pub fn tile_grid(&self) -> &Grid {
        &self.tile_grid
    }

    /// Row-major terrain of every tile.
    #[must_use]
    pub fn tiles(&self) -> &[Terrain] {
        &self.tiles
    }

    /// Terrain of `tile` (must be inside the tile grid).
    #[must_use]
    pub fn tile(&self, tile: Cell) -> Terrain {
        self.tiles[self.tile_grid.index(tile)]
    }

    /// Number of tiles of `kind`.
    #[must_use]
    pub fn count(&self, kind: Terrain) -> usize {
        self.tiles.iter().filter(|&&t| t == kind).count()
    }

    /// The crowd map: every tile expanded to `cells_per_tile x cells_per_tile` cells, with the
    /// default [`CostTable`](crate::CostTable).
    #[must_use]
    pub fn map(&self) -> &Map {
        &self.map
    }

    /// The crowd map, by value.
    #[must_use]
    pub fn into_map(self) -> Map {
        self.map
    }

    /// Crowd cells per tile side.
    #[must_use]
    pub fn cells_per_tile(&self) -> u32 {
        self.config.cells_per_tile
    }

    /// The crowd cells of `tile`, row by row.
    pub fn tile_cells(&self, tile: Cell) -> impl Iterator<Item = Cell> + use<> {
        let cpt = self.config.cells_per_tile;
        let (x0, y0) = (tile.x * cpt, tile.y * cpt);
        (y0..y0 + cpt).flat_map(move |y| (x0..x0 + cpt).map(move |x| Cell::new(x, y)))
    }

    /// The tile that holds crowd cell `cell`.
    #[must_use]
    pub fn tile_of_cell(&self, cell: Cell) -> Cell {
        let cpt = self.config.cells_per_tile;
        Cell::new(cell.x / cpt, cell.y / cpt)
    }

    /// World position of the centre of `tile`.
    #[must_use]
    pub fn tile_centre(&self, tile: Cell) -> Vec2 {
        self.tile_grid.cell_centre(tile)
    }

    /// The lair tile.
    #[must_use]
    pub fn lair_tile(&self) -> Cell {
        self.layout.lair
    }

    /// The crowd cells of the lair tile.
    #[must_use]
    pub fn lair_cells(&self) -> Vec<Cell> {
        self.tile_cells(self.layout.lair).collect()
    }

    /// World position of the centre of the lair.
    #[must_use]
    pub fn lair_centre(&self) -> Vec2 {
        self.tile_centre(self.layout.lair)
    }

    /// The five brick tiles around the lair (left, above-left, above, right, above-right
    /// neighbours; the lair sits on the bottom row).
    #[must_use]
    pub fn lair_ring_tiles(&self) -> &[Cell] {
        &self.layout.ring
    }

    /// The tiles that share an edge with the lair's ring, outside the lair and ring, in
    /// row-major order (7 on any valid size). A spawn *reaches the lair* when a ground unit can
    /// walk, by edge-sharing steps over ground-passable tiles, from it to one of these tiles
    /// that is itself ground-passable.
    #[must_use]
    pub fn lair_approach_tiles(&self) -> Vec<Cell> {
        self.layout.approach_tiles(&self.tile_grid)
    }

    /// The ground-passable crowd cells of the lair approach tiles: a goal set for a flow field
    /// that sends units to attack the lair.
    #[must_use]
    pub fn lair_approach_cells(&self) -> Vec<Cell> {
        let mut cells: Vec<Cell> = self
            .lair_approach_tiles()
            .into_iter()
            .filter(|&t| !self.tile(t).props().blocks_ground)
            .flat_map(|t| self.tile_cells(t))
            .collect();
        cells.sort_by_key(|c| (c.y, c.x));
        cells
    }

    /// The player spawn tiles (left, right).
    #[must_use]
    pub fn player_spawn_tiles(&self) -> &[Cell] {
        &self.layout.players
    }

    /// The enemy spawn tiles (left corner, centre, right corner of the top row).
    #[must_use]
    pub fn enemy_spawn_tiles(&self) -> &[Cell] {
        &self.layout.enemies
    }

    /// World centres of the player spawns, in [`Level::player_spawn_tiles`] order.
    #[must_use]
    pub fn player_spawn_centres(&self) -> Vec<Vec2> {
        self.layout
            .players
            .iter()
            .map(|&t| self.tile_centre(t))
            .collect()
    }

    /// World centres of the enemy spawns, in [`Level::enemy_spawn_tiles`] order.
    #[must_use]
    pub fn enemy_spawn_centres(&self) -> Vec<Vec2> {
        self.layout
            .enemies
            .iter()
            .map(|&t| self.tile_centre(t))
            .collect()
    }

    /// Every exclusion zone tile: the lair, its ring, the player spawns, the enemy spawns.
    /// Nothing grows on them; they are [`Terrain::Empty`] except the lair and its ring.
    #[must_use]
    pub fn exclusion_zone_tiles(&self) -> Vec<Cell> {
        self.layout.zone_tiles().collect()
    }

    /// The growth target of `kind` (`0` for a kind that is not grown):
    /// `max(4, floor((tiles - zone tiles - reserved_empty) * weight / sum * fill))`.
    ///
    /// As in the article a kind's count starts at its number of seeds and growth stops once it
    /// reaches the target, so the grown tiles of a kind number at most
    /// `max(target, seeds)`; the border pass and the reachability carving only remove tiles,
    /// and the lair's ring adds five bricks on top (they are not grown).
    #[must_use]
    pub fn target_count(&self, kind: Terrain) -> usize {
        kind_index(kind).map_or(0, |k| self.targets[k])
    }

    /// How many seeds of `kind` were placed (at most `max(1, weight / 5)`).
    #[must_use]
    pub fn seed_count(&self, kind: Terrain) -> usize {
        kind_index(kind).map_or(0, |k| self.seeds_placed[k])
    }

    /// The tiles cleared to [`Terrain::Empty`] by the reachability guarantee, in clearing
    /// order (empty when the guarantee is off or nothing was in the way).
    #[must_use]
    pub fn carved_tiles(&self) -> &[Cell] {
        &self.carved
    }

    /// The tile terrain as text: one line per tile row, top row first, each tile as
    /// [`Terrain::to_char`], every line ending in `\n`.
    #[must_use]
    pub fn to_ascii(&self) -> String {
        let w = self.tile_grid.width() as usize;
        let mut text = String::with_capacity((w + 1) * self.tile_grid.height() as usize);
        for row in self.tiles.chunks_exact(w) {
            text.extend(row.iter().map(|t| t.to_char()));
            text.push('\n');
        }
        text
    }
}

fn kind_index(kind: Terrain) -> Option<usize> {
    LevelWeights::KINDS.iter().position(|&k| k == kind)
}
