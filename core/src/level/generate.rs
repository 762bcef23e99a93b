//! The generator itself: seeding, targets, interleaved growth, border pass, lair, and the
//! optional carving that makes every spawn reach the lair.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use glam::Vec2;
use rand_core::{RngCore, SeedableRng};
use rand_pcg::Pcg64;

use super::config::{LevelConfig, LevelError, LevelWeights};
use super::{Layout, Level};
use crate::grid::{Cell, Grid};
use crate::map::Map;
use crate::terrain::{CostTable, Terrain};

const KINDS: usize = LevelWeights::KINDS.len();

/// Generates a level from `seed` and `config`.
///
/// Deterministic: the same `(seed, config)` gives the same [`Level`] on every machine (the
/// random numbers come from a [`Pcg64`] seeded with `seed_from_u64(seed)`, ranges are drawn by
/// integer rejection sampling, and nothing iterates a hash container). The steps, after the
/// TankBattle article (see [`Level`] for the coordinates and the zones):
///
/// 1. **Exclusion zones**: the lair, its ring of five bricks, the player and enemy spawns
///    ([`Level::exclusion_zone_tiles`]). Nothing grows there.
/// 2. **Seeding**: for each kind in [`LevelWeights::KINDS`] order with a weight above zero,
///    `max(1, weight / 5)` seeds; each seed tries up to `seed_attempts` random tiles
///    (column then row) and takes the first that is empty and neither in nor next to
///    (8-neighbourhood) an exclusion zone. Seeding a kind stops early once no such tile is left.
/// 3. **Targets**: `max(4, floor((tiles - zone tiles - reserved_empty) * (weight / sum) * fill))`
///    per kind (`0` for a kind of weight `0`); see [`Level::target_count`].
/// 4. **Interleaved growth**: each kind's count starts at its number of seeds. In every round
///    each kind in turn (unless it has reached its target or has no seeds queued) pops its
///    oldest queued tile and visits its 8 neighbours; an empty, in-bounds, non-zone neighbour
///    becomes that kind with `cluster_percent` chance and is queued. Growth stops after
///    `max_growth_rounds` rounds or after a round in which no kind grew.
/// 5. **Border pass**: every water or steel tile on the map border becomes empty with
///    `border_clear_percent` chance (corners are visited twice, as in the article).
/// 6. **Lair**: the lair tile becomes [`Terrain::Lair`] and its ring [`Terrain::BrickWall`].
/// 7. **Reachability** (only with `guarantee_reachable`, not in the article): for each spawn
///    (players, then enemies) a deterministic Dijkstra over the 4-neighbour tile graph finds
///    the path to a lair approach tile that crosses the fewest ground-blocking tiles (then the
///    shortest, then the lowest tile indices); those tiles become [`Terrain::Empty`]. The lair
///    and its ring are never carved. See [`Level::lair_approach_tiles`].
///
/// Finally every tile is expanded to `cells_per_tile x cells_per_tile` crowd cells; the tile
/// level itself does not depend on `cells_per_tile` or `cell_size`. The article draws from
/// .NET's `System.Random`, so a seed gives a different level here than in the C# original;
/// the rules are the same.
///
/// # Errors
///
/// [`LevelError`] when the config is invalid (see [`LevelConfig::validate`]); a valid config
/// always gives a level.
pub fn generate_level(seed: u64, config: &LevelConfig) -> Result<Level, LevelError> {
    config.validate()?;
    let (w, h, cpt) = (config.width, config.height, config.cells_per_tile);
    let tile_grid = Grid::new(w, h)?.with_placement(config.cell_size * cpt as f32, Vec2::ZERO)?;
    let crowd_grid = Grid::new(w * cpt, h * cpt)?.with_placement(config.cell_size, Vec2::ZERO)?;
    let layout = Layout::new(w, h);

    let mut generator = Generator::new(seed, config, tile_grid, &layout);
    generator.seed_kinds();
    let targets = generator.targets(layout.zone_tiles().count());
    generator.grow(&targets);
    generator.border_pass();
    for &cell in &layout.ring {
        generator.set(cell, Terrain::BrickWall);
    }
    generator.set(layout.lair, Terrain::Lair);
    let carved = if config.guarantee_reachable {
        generator.carve_paths(&layout)
    } else {
        Vec::new()
    };

    let tiles = generator.tiles;
    let terrain: Vec<Terrain> = (0..crowd_grid.len())
        .map(|i| {
            let c = crowd_grid.cell(i);
            tiles[tile_grid.index(Cell::new(c.x / cpt, c.y / cpt))]
        })
        .collect();
    let map = Map::from_terrain(crowd_grid, terrain, CostTable::default())
        .expect("the expanded terrain has one entry per crowd cell");
    Ok(Level {
        seed,
        config: *config,
        tile_grid,
        tiles,
        map,
        layout,
        targets,
        seeds_placed: generator.seeds_placed,
        carved,
    })
}

/// A uniform integer in `0..n` (`n > 0`) by Lemire's multiply-and-reject: exact and portable.
fn below(rng: &mut Pcg64, n: u32) -> u32 {
    debug_assert!(n > 0);
    let threshold = n.wrapping_neg() % n;
    loop {
        let m = u64::from(rng.next_u32()) * u64::from(n);
        if (m as u32) >= threshold {
            return (m >> 32) as u32;
        }
    }
}

/// True with `percent` chance (the article's `IsTriggerProbability`): one draw in `0..100`.
fn chance(rng: &mut Pcg64, percent: u8) -> bool {
    below(rng, 100) < u32::from(percent)
}

struct Generator<'a> {
    config: &'a LevelConfig,
    grid: Grid,
    rng: Pcg64,
    tiles: Vec<Terrain>,
    zone: Vec<bool>,
    /// In or 8-adjacent to an exclusion zone: no seed goes there.
    near_zone: Vec<bool>,
    queues: [VecDeque<usize>; KINDS],
    seeds_placed: [usize; KINDS],
}

impl<'a> Generator<'a> {
    fn new(seed: u64, config: &'a LevelConfig, grid: Grid, layout: &Layout) -> Self {
        let mut zone = vec![false; grid.len()];
        let mut near_zone = vec![false; grid.len()];
        for cell in layout.zone_tiles() {
            zone[grid.index(cell)] = true;
            for (dx, dy) in NEIGHBOURS_8.iter().copied().chain([(0, 0)]) {
                if let Some(n) = offset(&grid, cell, dx, dy) {
                    near_zone[grid.index(n)] = true;
                }
            }
        }
        Self {
            config,
            grid,
            rng: Pcg64::seed_from_u64(seed),
            tiles: vec![Terrain::Empty; grid.len()],
            zone,
            near_zone,
            queues: Default::default(),
            seeds_placed: [0; KINDS],
        }
    }

    fn set(&mut self, cell: Cell, terrain: Terrain) {
        let i = self.grid.index(cell);
        self.tiles[i] = terrain;
    }

    fn seed_kinds(&mut self) {
        let (w, h) = (self.grid.width(), self.grid.height());
        let mut seedable = self.near_zone.iter().filter(|&&near| !near).count();
        for (k, kind) in LevelWeights::KINDS.into_iter().enumerate() {
            let weight = self.config.weights.get(kind);
            if weight == 0 {
                continue;
            }
            for _ in 0..(weight / 5).max(1) {
                if seedable == 0 {
                    break;
                }
                for _ in 0..self.config.seed_attempts {
                    let x = below(&mut self.rng, w);
                    let y = below(&mut self.rng, h);
                    let i = self.grid.index(Cell::new(x, y));
                    if self.tiles[i] != Terrain::Empty || self.near_zone[i] {
                        continue;
                    }
                    self.tiles[i] = kind;
                    self.queues[k].push_back(i);
                    self.seeds_placed[k] += 1;
                    seedable -= 1;
                    break;
                }
            }
        }
    }

    fn targets(&self, zone_tiles: usize) -> [usize; KINDS] {
        let weights = &self.config.weights;
        let free =
            self.grid.len() as i64 - zone_tiles as i64 - i64::from(self.config.reserved_empty);
        let sum = weights.sum() as f64;
        LevelWeights::KINDS.map(|kind| {
            let weight = weights.get(kind);
            if weight == 0 {
                return 0;
            }
            // Same operation order as the article: total * (weight / sum) * fill, truncated.
            let target = (free as f64 * (f64::from(weight) / sum) * self.config.fill) as i64;
            target.max(4) as usize
        })
    }

    fn grow(&mut self, targets: &[usize; KINDS]) {
        let mut current = self.seeds_placed;
        for _ in 0..self.config.max_growth_rounds {
            let mut any = false;
            for k in 0..KINDS {
                any |= self.grow_once(k, &mut current[k], targets[k]);
            }
            if !any {
                break;
            }
        }
    }

    /// One growth step of kind `k` (the article's `SeedGrowth`).
    fn grow_once(&mut self, k: usize, current: &mut usize, target: usize) -> bool {
        if *current >= target {
            return false;
        }
        let Some(i) = self.queues[k].pop_front() else {
            return false;
        };
        let kind = LevelWeights::KINDS[k];
        let cell = self.grid.cell(i);
        let mut grew = false;
        for (dx, dy) in NEIGHBOURS_8 {
            if *current >= target {
                break;
            }
            let Some(n) = offset(&self.grid, cell, dx, dy) else {
                continue;
            };
            let j = self.grid.index(n);
            if self.tiles[j] != Terrain::Empty || self.zone[j] {
                continue;
            }
            if chance(&mut self.rng, self.config.cluster_percent) {
                self.tiles[j] = kind;
                *current += 1;
                self.queues[k].push_back(j);
                grew = true;
            }
        }
        grew
    }

    /// Water and steel on the border become empty with `border_clear_percent` chance, in the
    /// article's visiting order: along the bottom and top rows (its first loop over the first
    /// index), then along the left and right columns.
    fn border_pass(&mut self) {
        let (w, h) = (self.grid.width(), self.grid.height());
        let mut order = Vec::with_capacity(2 * (w + h) as usize);
        for x in 0..w {
            order.push(Cell::new(x, h - 1));
            order.push(Cell::new(x, 0));
        }
        for b in 0..h {
            let y = h - 1 - b;
            order.push(Cell::new(0, y));
            order.push(Cell::new(w - 1, y));
        }
        for cell in order {
            let i = self.grid.index(cell);
            if matches!(self.tiles[i], Terrain::Water | Terrain::SteelPlate)
                && chance(&mut self.rng, self.config.border_clear_percent)
            {
                self.tiles[i] = Terrain::Empty;
            }
        }
    }

    /// Makes every spawn reach a lair approach tile (4-connected, ground-passable) by clearing
    /// the fewest blocking tiles. Returns the cleared tiles in the order they were cleared.
    fn carve_paths(&mut self, layout: &Layout) -> Vec<Cell> {
        let n = self.grid.len();
        let mut goal = vec![false; n];
        for cell in layout.approach_tiles(&self.grid) {
            goal[self.grid.index(cell)] = true;
        }
        let mut forbidden = vec![false; n];
        forbidden[self.grid.index(layout.lair)] = true;
        for &cell in &layout.ring {
            forbidden[self.grid.index(cell)] = true;
        }
        // Crossing a blocking tile costs more than any path of open tiles can.
        let penalty = n as u64 + 1;
        let mut carved = Vec::new();
        let mut dist = vec![u64::MAX; n];
        let mut parent = vec![usize::MAX; n];
        for spawn in layout.spawns() {
            dist.fill(u64::MAX);
            parent.fill(usize::MAX);
            let start = self.grid.index(spawn);
            dist[start] = 0;
            let mut heap = BinaryHeap::new();
            heap.push(Reverse((0u64, start)));
            let mut reached = None;
            while let Some(Reverse((d, i))) = heap.pop() {
                if d > dist[i] {
                    continue;
                }
                // The first goal popped is the cheapest; a blocking goal tile is carved with
                // the rest of the path. A spawn that is itself a goal needs nothing.
                if goal[i] {
                    reached = Some(i);
                    break;
                }
                let cell = self.grid.cell(i);
                for (dx, dy) in NEIGHBOURS_4 {
                    let Some(nb) = offset(&self.grid, cell, dx, dy) else {
                        continue;
                    };
                    let j = self.grid.index(nb);
                    if forbidden[j] {
                        continue;
                    }
                    let step = if self.tiles[j].props().blocks_ground {
                        1 + penalty
                    } else {
                        1
                    };
                    let nd = d + step;
                    if nd < dist[j] {
                        dist[j] = nd;
                        parent[j] = i;
                        heap.push(Reverse((nd, j)));
                    }
                }
            }
            let Some(mut i) = reached else {
                // Cannot happen: the grid minus the lair block is connected and holds an
                // approach tile. Leave the level as it is rather than panic.
                continue;
            };
            let mut path = Vec::new();
            while i != usize::MAX {
                path.push(i);
                i = parent[i];
            }
            for &i in path.iter().rev() {
                if self.tiles[i].props().blocks_ground {
                    self.tiles[i] = Terrain::Empty;
                    carved.push(self.grid.cell(i));
                }
            }
        }
        carved
    }
}

/// The 8 neighbours in the article's order: its `(row - 1, col - 1)`, `(row - 1, col)`, ...
/// where its first index is our column and its second our row counted from the bottom.
const NEIGHBOURS_8: [(i64, i64); 8] = [
    (-1, 1),
    (-1, 0),
    (-1, -1),
    (0, 1),
    (0, -1),
    (1, 1),
    (1, 0),
    (1, -1),
];

/// The 4 orthogonal neighbours: up, left, right, down.
const NEIGHBOURS_4: [(i64, i64); 4] = [(0, -1), (-1, 0), (1, 0), (0, 1)];

fn offset(grid: &Grid, cell: Cell, dx: i64, dy: i64) -> Option<Cell> {
    let (x, y) = (i64::from(cell.x) + dx, i64::from(cell.y) + dy);
    grid.contains(x, y).then(|| Cell::new(x as u32, y as u32))
}
