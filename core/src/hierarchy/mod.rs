//! Hierarchical navigation for big and changing maps (docs/behaviour.md, "Large and changing
//! maps").
//!
//! The map is cut into square *sectors* ([`SectorGrid`], default 32x32 cells). Where two
//! side-by-side sectors share a maximal run of border cells passable on both sides there is a
//! *portal*, with one graph node on each side at the middle of the run. The [`PortalGraph`]
//! links the two nodes of a portal (one orthogonal step) and every pair of nodes in one
//! sector (the exact cost of walking between them inside the sector, same weights and rules
//! as [`crate::IntegrationField`]). [`PortalGraph::update`] redoes only the sectors that cost
//! edits touched and the neighbours whose portals they can change.
//!
//! A path request ([`HierarchicalField::new`]) searches the portal graph from the goals: the
//! *coarse route*, a distance-to-goal for every node. Every unit has a direction at once
//! ([`HierarchicalField::guide`], the one question "which way from here": toward the best
//! node of its sector while that sector has no field). Sector fields are built lazily ([`HierarchicalField::ensure_sector`]): a Dijkstra
//! inside the sector seeded just outside its border with the coarse distance of the
//! neighbouring sector's cells, so following them is close to optimal and never loops (see
//! `fields.rs`). They live in a cache with a byte budget that drops the least recently used
//! fields not used this frame.

mod fields;
mod graph;
mod local;
mod route;
#[cfg(test)]
mod tests;

pub use fields::{EXACT_DISTANCE, HierarchicalField, HierarchyStats, SectorCache};
pub use graph::PortalGraph;
pub use route::CoarseRoute;

use crate::grid::Cell;

/// Default side of a sector in cells.
pub const DEFAULT_SECTOR_SIZE: u32 = 32;

/// The largest sector side: local indices of a sector's cells must fit in `u16`.
pub const MAX_SECTOR_SIZE: u32 = 255;

/// Something the hierarchy was asked to do does not fit the map or the graph.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum HierarchyError {
    /// The sector side is outside `2..=MAX_SECTOR_SIZE`.
    #[error("sector size {0} is out of range (2..={MAX_SECTOR_SIZE})")]
    BadSectorSize(u32),
    /// A goal or edited cell lies outside the map.
    #[error("cell {cell} lies outside the {width}x{height} map")]
    CellOutside {
        /// The cell.
        cell: Cell,
        /// Map width.
        width: u32,
        /// Map height.
        height: u32,
    },
    /// The cost field does not have the graph's size.
    #[error("graph is {graph:?} but the cost field is {cost:?}")]
    SizeMismatch {
        /// Size the graph was built for.
        graph: (u32, u32),
        /// Size of the cost field.
        cost: (u32, u32),
    },
    /// The graph or cost field changed since the route was searched: search again.
    #[error("the portal graph changed since this route was searched (version {route} vs {graph})")]
    Stale {
        /// Cost version the route was searched on.
        route: u64,
        /// Cost version of the graph now.
        graph: u64,
    },
    /// A sector index beyond the map's sectors.
    #[error("sector {sector} does not exist (the map has {count})")]
    NoSuchSector {
        /// The index asked for.
        sector: usize,
        /// Number of sectors.
        count: usize,
    },
    /// No goal cell is passable.
    #[error("no goal cell is passable")]
    NoPassableGoal,
    /// A saved sector cache does not fit the map (wrong size or an impossible move).
    #[error("the saved field of sector {sector} does not fit the map")]
    BadCache {
        /// The sector.
        sector: usize,
    },
    /// A goal set with no cell.
    #[error("a path request needs at least one goal cell")]
    NoGoal,
}

/// How a map is cut into sectors: `sector_size x sector_size` cells each, the last column
/// and row of sectors smaller when the map's side is not a multiple of it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SectorGrid {
    width: u32,
    height: u32,
    size: u32,
    /// `log2(size)` when `size` is a power of two (the default), else 0: [`Self::sector_of`]
    /// shifts instead of dividing, once per unit and frame.
    shift: u32,
    columns: u32,
    rows: u32,
}

/// The cells of one sector: columns `x0..x1`, rows `y0..y1`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SectorBounds {
    /// First column.
    pub x0: u32,
    /// First row.
    pub y0: u32,
    /// One past the last column.
    pub x1: u32,
    /// One past the last row.
    pub y1: u32,
}

impl SectorBounds {
    /// Number of columns.
    #[must_use]
    pub fn width(&self) -> u32 {
        self.x1 - self.x0
    }

    /// Number of rows.
    #[must_use]
    pub fn height(&self) -> u32 {
        self.y1 - self.y0
    }

    /// Number of cells.
    #[must_use]
    pub fn len(&self) -> usize {
        self.width() as usize * self.height() as usize
    }

    /// Always false: a sector has at least one cell.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Whether `(x, y)` (possibly negative) lies in the sector.
    #[must_use]
    pub fn contains(&self, x: i64, y: i64) -> bool {
        x >= i64::from(self.x0)
            && y >= i64::from(self.y0)
            && x < i64::from(self.x1)
            && y < i64::from(self.y1)
    }

    /// Row-major index of `cell` inside the sector. The cell must lie in the sector.
    #[must_use]
    pub fn local(&self, cell: Cell) -> usize {
        (cell.y - self.y0) as usize * self.width() as usize + (cell.x - self.x0) as usize
    }

    /// The cell with sector-local index `local`.
    #[must_use]
    pub fn cell(&self, local: usize) -> Cell {
        let w = self.width() as usize;
        Cell::new(self.x0 + (local % w) as u32, self.y0 + (local / w) as u32)
    }
}

impl SectorGrid {
    /// Sectors of `size x size` cells over a `width x height` map.
    pub fn new(width: u32, height: u32, size: u32) -> Result<Self, HierarchyError> {
        if !(2..=MAX_SECTOR_SIZE).contains(&size) {
            return Err(HierarchyError::BadSectorSize(size));
        }
        Ok(Self {
            width,
            height,
            size,
            shift: if size.is_power_of_two() {
                size.trailing_zeros()
            } else {
                0
            },
            columns: width.div_ceil(size),
            rows: height.div_ceil(size),
        })
    }

    /// Side of a full sector in cells.
    #[must_use]
    pub fn size(&self) -> u32 {
        self.size
    }

    /// Number of sector columns.
    #[must_use]
    pub fn columns(&self) -> u32 {
        self.columns
    }

    /// Number of sector rows.
    #[must_use]
    pub fn rows(&self) -> u32 {
        self.rows
    }

    /// Number of sectors.
    #[must_use]
    pub fn len(&self) -> usize {
        self.columns as usize * self.rows as usize
    }

    /// Always false: a map has at least one sector.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Index of the sector holding `cell` (row-major over sectors). The cell must be on the map.
    #[must_use]
    pub fn sector_of(&self, cell: Cell) -> usize {
        let (sx, sy) = if self.shift != 0 {
            (cell.x >> self.shift, cell.y >> self.shift)
        } else {
            (cell.x / self.size, cell.y / self.size)
        };
        sy as usize * self.columns as usize + sx as usize
    }

    /// The cells of sector `sector`.
    #[must_use]
    pub fn bounds(&self, sector: usize) -> SectorBounds {
        let (sx, sy) = (
            (sector % self.columns as usize) as u32,
            (sector / self.columns as usize) as u32,
        );
        SectorBounds {
            x0: sx * self.size,
            y0: sy * self.size,
            x1: ((sx + 1) * self.size).min(self.width),
            y1: ((sy + 1) * self.size).min(self.height),
        }
    }

    /// The sectors sharing an edge with `sector` (up to four), in the order N, E, S, W.
    pub fn edge_neighbours(&self, sector: usize) -> impl Iterator<Item = usize> + use<> {
        let c = self.columns as usize;
        let (sx, sy) = (sector % c, sector / c);
        let rows = self.rows as usize;
        [
            (sy > 0).then(|| sector - c),
            (sx + 1 < c).then_some(sector + 1),
            (sy + 1 < rows).then(|| sector + c),
            (sx > 0).then(|| sector - 1),
        ]
        .into_iter()
        .flatten()
    }
}
