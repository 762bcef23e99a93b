//! [`LevelConfig`], [`LevelWeights`] and the [`LevelError`] a bad configuration gives.

use crate::grid::{GridError, MAX_GRID_SIDE};
use crate::terrain::Terrain;

/// How often each grown terrain kind appears, relative to the others (TankBattle's
/// `BlockWeights`). A weight of `0` switches the kind off: it gets no seeds and no target
/// (the article always grows all five kinds; with every weight above zero the rules are the
/// article's).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LevelWeights {
    /// Weight of [`Terrain::BrickWall`]. Default `40`.
    pub brick_wall: u32,
    /// Weight of [`Terrain::SteelPlate`]. Default `15`.
    pub steel_plate: u32,
    /// Weight of [`Terrain::Forest`]. Default `15`.
    pub forest: u32,
    /// Weight of [`Terrain::Water`]. Default `10`.
    pub water: u32,
    /// Weight of [`Terrain::Snow`]. Default `5`.
    pub snow: u32,
}

impl Default for LevelWeights {
    fn default() -> Self {
        Self {
            brick_wall: 40,
            steel_plate: 15,
            forest: 15,
            water: 10,
            snow: 5,
        }
    }
}

impl LevelWeights {
    /// The kinds the generator grows, in the order it seeds and grows them (the article's order).
    pub const KINDS: [Terrain; 5] = [
        Terrain::BrickWall,
        Terrain::SteelPlate,
        Terrain::Forest,
        Terrain::Water,
        Terrain::Snow,
    ];

    /// The weight of `kind`; `0` for a kind the generator does not grow.
    #[must_use]
    pub const fn get(&self, kind: Terrain) -> u32 {
        match kind {
            Terrain::BrickWall => self.brick_wall,
            Terrain::SteelPlate => self.steel_plate,
            Terrain::Forest => self.forest,
            Terrain::Water => self.water,
            Terrain::Snow => self.snow,
            _ => 0,
        }
    }

    /// Sum of all weights (as `u64`, so it never overflows).
    #[must_use]
    pub fn sum(&self) -> u64 {
        Self::KINDS.iter().map(|&k| u64::from(self.get(k))).sum()
    }

    /// The same weights with [`LevelWeights::brick_wall`] replaced.
    #[must_use]
    pub const fn with_brick_wall(mut self, weight: u32) -> Self {
        self.brick_wall = weight;
        self
    }

    /// The same weights with [`LevelWeights::steel_plate`] replaced.
    #[must_use]
    pub const fn with_steel_plate(mut self, weight: u32) -> Self {
        self.steel_plate = weight;
        self
    }

    /// The same weights with [`LevelWeights::forest`] replaced.
    #[must_use]
    pub const fn with_forest(mut self, weight: u32) -> Self {
        self.forest = weight;
        self
    }

    /// The same weights with [`LevelWeights::water`] replaced.
    #[must_use]
    pub const fn with_water(mut self, weight: u32) -> Self {
        self.water = weight;
        self
    }

    /// The same weights with [`LevelWeights::snow`] replaced.
    #[must_use]
    pub const fn with_snow(mut self, weight: u32) -> Self {
        self.snow = weight;
        self
    }
}

/// Settings of [`generate_level`](crate::generate_level). `LevelConfig::default()` reproduces
/// the rules of the TankBattle article (13x13 tiles) and expands every tile to 4x4 crowd cells.
///
/// Fields are public; the `with_*` builders change one at a time. [`LevelConfig::validate`]
/// (called by the generator) turns a bad combination into a [`LevelError`].
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub struct LevelConfig {
    /// Tile columns. Default `13` (the article's `Cols`). At least [`LevelConfig::MIN_SIDE`].
    pub width: u32,
    /// Tile rows. Default `13` (the article's `Rows`). At least [`LevelConfig::MIN_SIDE`].
    pub height: u32,
    /// Relative amount of each grown kind. Default [`LevelWeights::default`]
    /// (brick 40, steel 15, forest 15, water 10, snow 5).
    pub weights: LevelWeights,
    /// Chance, in percent, that a growing tile spreads to each empty neighbour (the article's
    /// `ClusterFactor`; 40..80 looks good, higher means bigger clumps). Default `65`. `0..=100`.
    pub cluster_percent: u8,
    /// Share of the free tiles the kinds aim to cover together (the article's `fillRatio`).
    /// Default `0.55`. Finite, `0.0..=1.0`.
    pub fill: f64,
    /// Tiles kept free of growth when the targets are computed (the article's "reserve 10
    /// blanks"). Default `10`.
    pub reserved_empty: u32,
    /// Most growth rounds (one round lets every kind spread once). Default `2000`.
    pub max_growth_rounds: u32,
    /// Random placement attempts per seed. Default `200`.
    pub seed_attempts: u32,
    /// Chance, in percent, that a water or steel tile on the map border is cleared to empty.
    /// Default `40`. `0..=100`.
    pub border_clear_percent: u8,
    /// Crowd cells per tile side: each tile becomes `cells_per_tile x cells_per_tile` cells of
    /// the crowd [`Map`](crate::Map). Default `4`. At least `1`, and the crowd grid must fit
    /// [`MAX_GRID_SIDE`].
    pub cells_per_tile: u32,
    /// Side of a crowd cell in world units; the crowd map's origin is `(0, 0)`. Default `1.0`.
    pub cell_size: f32,
    /// Carve paths so that every spawn can reach the lair on foot (see
    /// [`Level::lair_approach_tiles`](crate::Level::lair_approach_tiles)). Default `false`
    /// (the article has no such step).
    pub guarantee_reachable: bool,
}

impl Default for LevelConfig {
    fn default() -> Self {
        Self {
            width: 13,
            height: 13,
            weights: LevelWeights::default(),
            cluster_percent: 65,
            fill: 0.55,
            reserved_empty: 10,
            max_growth_rounds: 2000,
            seed_attempts: 200,
            border_clear_percent: 40,
            cells_per_tile: 4,
            cell_size: 1.0,
            guarantee_reachable: false,
        }
    }
}

impl LevelConfig {
    /// Smallest width and height (tiles): room for the lair, its ring and the spawns.
    pub const MIN_SIDE: u32 = 5;

    /// The same config with another tile size.
    #[must_use]
    pub const fn with_size(mut self, width: u32, height: u32) -> Self {
        self.width = width;
        self.height = height;
        self
    }

    /// The same config with other weights.
    #[must_use]
    pub const fn with_weights(mut self, weights: LevelWeights) -> Self {
        self.weights = weights;
        self
    }

    /// The same config with another cluster factor (percent).
    #[must_use]
    pub const fn with_cluster_percent(mut self, percent: u8) -> Self {
        self.cluster_percent = percent;
        self
    }

    /// The same config with another fill ratio.
    #[must_use]
    pub const fn with_fill(mut self, fill: f64) -> Self {
        self.fill = fill;
        self
    }

    /// The same config with another number of reserved empty tiles.
    #[must_use]
    pub const fn with_reserved_empty(mut self, tiles: u32) -> Self {
        self.reserved_empty = tiles;
        self
    }

    /// The same config with another growth round limit.
    #[must_use]
    pub const fn with_max_growth_rounds(mut self, rounds: u32) -> Self {
        self.max_growth_rounds = rounds;
        self
    }

    /// The same config with another number of placement attempts per seed.
    #[must_use]
    pub const fn with_seed_attempts(mut self, attempts: u32) -> Self {
        self.seed_attempts = attempts;
        self
    }

    /// The same config with another border clearing chance (percent).
    #[must_use]
    pub const fn with_border_clear_percent(mut self, percent: u8) -> Self {
        self.border_clear_percent = percent;
        self
    }

    /// The same config with another number of crowd cells per tile side.
    #[must_use]
    pub const fn with_cells_per_tile(mut self, cells: u32) -> Self {
        self.cells_per_tile = cells;
        self
    }

    /// The same config with another crowd cell size (world units).
    #[must_use]
    pub const fn with_cell_size(mut self, cell_size: f32) -> Self {
        self.cell_size = cell_size;
        self
    }

    /// The same config with the reachability guarantee on or off.
    #[must_use]
    pub const fn with_guarantee_reachable(mut self, on: bool) -> Self {
        self.guarantee_reachable = on;
        self
    }

    /// Checks the config; [`generate_level`](crate::generate_level) calls this first.
    ///
    /// # Errors
    ///
    /// The first problem found: a side below [`LevelConfig::MIN_SIDE`], zero or too many
    /// cells per tile, a cell size that is not finite and positive (or overflows once
    /// multiplied by `cells_per_tile`), a fill outside `0.0..=1.0` or NaN, all weights zero,
    /// or a percentage above 100.
    pub fn validate(&self) -> Result<(), LevelError> {
        let (width, height) = (self.width, self.height);
        if width < Self::MIN_SIDE || height < Self::MIN_SIDE {
            return Err(LevelError::TooSmall {
                width,
                height,
                min: Self::MIN_SIDE,
            });
        }
        if self.cells_per_tile == 0 {
            return Err(LevelError::ZeroCellsPerTile);
        }
        let cpt = u64::from(self.cells_per_tile);
        let max = u64::from(MAX_GRID_SIDE);
        if u64::from(width) * cpt > max || u64::from(height) * cpt > max {
            return Err(LevelError::TooLarge {
                width,
                height,
                cells_per_tile: self.cells_per_tile,
            });
        }
        if !(self.cell_size.is_finite() && self.cell_size > 0.0) {
            return Err(LevelError::Grid(GridError::BadCellSize(self.cell_size)));
        }
        let tile_size = self.cell_size * self.cells_per_tile as f32;
        if !tile_size.is_finite() {
            return Err(LevelError::Grid(GridError::BadCellSize(tile_size)));
        }
        if !(self.fill.is_finite() && (0.0..=1.0).contains(&self.fill)) {
            return Err(LevelError::BadFill(self.fill));
        }
        if self.weights.sum() == 0 {
            return Err(LevelError::NoWeights);
        }
        for (name, value) in [
            ("cluster_percent", self.cluster_percent),
            ("border_clear_percent", self.border_clear_percent),
        ] {
            if value > 100 {
                return Err(LevelError::BadPercent { name, value });
            }
        }
        Ok(())
    }
}

/// Why a level could not be generated: the [`LevelConfig`] is invalid.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum LevelError {
    /// Width or height is below [`LevelConfig::MIN_SIDE`]: the exclusion zones do not fit.
    #[error("level size {width}x{height} tiles is too small: each side must be at least {min}")]
    TooSmall {
        /// Requested width (tiles).
        width: u32,
        /// Requested height (tiles).
        height: u32,
        /// The smallest allowed side.
        min: u32,
    },
    /// The crowd grid (`size * cells_per_tile`) would exceed [`MAX_GRID_SIDE`].
    #[error(
        "level size {width}x{height} tiles at {cells_per_tile} cells per tile exceeds the \
         largest grid side {MAX_GRID_SIDE}"
    )]
    TooLarge {
        /// Requested width (tiles).
        width: u32,
        /// Requested height (tiles).
        height: u32,
        /// Requested cells per tile side.
        cells_per_tile: u32,
    },
    /// `cells_per_tile` is zero.
    #[error("cells_per_tile must be at least 1")]
    ZeroCellsPerTile,
    /// The fill ratio is NaN, infinite or outside `0.0..=1.0`.
    #[error("fill ratio {0} must be a finite number in 0.0..=1.0")]
    BadFill(f64),
    /// Every weight is zero: nothing to grow.
    #[error("at least one terrain weight must be above zero")]
    NoWeights,
    /// A percentage is above 100.
    #[error("{name} = {value} is not a percentage (0..=100)")]
    BadPercent {
        /// The config field.
        name: &'static str,
        /// Its value.
        value: u8,
    },
    /// The crowd grid could not be made (for example a bad cell size).
    #[error(transparent)]
    Grid(#[from] GridError),
}
