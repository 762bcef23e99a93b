//! Grid geometry: cells, their indices and the mapping between cells and world positions.
//!
//! ```text
//!            x (column) ->
//!        origin
//!          +------+------+------+
//!   y   0  | 0,0  | 1,0  | 2,0  |   row 0 is the first line of a map file
//!  (row)   +------+------+------+
//!   |   1  | 0,1  | 1,1  | 2,1  |
//!   v      +------+------+------+
//! ```
//!
//! Cell `(x, y)` covers the world square `origin + [x, x+1) * cell_size` by
//! `origin + [y, y+1) * cell_size`; its centre is `origin + (x + 0.5, y + 0.5) * cell_size`.
//! World `+y` therefore points "down the file", the Moving AI convention.

use glam::Vec2;

/// The largest width or height a grid may have (cells). Keeps every index inside `u32`
/// with room for the one-cell padding border that the field algorithms use.
pub const MAX_GRID_SIDE: u32 = 1 << 15;

/// A cell of the grid: `x` is the column, `y` the row (row 0 = first line of a map file).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Cell {
    /// Column, counted from the left.
    pub x: u32,
    /// Row, counted from the top (first line of a map file).
    pub y: u32,
}

impl Cell {
    /// The cell at column `x`, row `y`.
    #[must_use]
    pub const fn new(x: u32, y: u32) -> Self {
        Self { x, y }
    }
}

impl std::fmt::Display for Cell {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "({}, {})", self.x, self.y)
    }
}

/// Why a grid could not be made.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum GridError {
    /// Width or height is zero or larger than [`MAX_GRID_SIDE`].
    #[error("grid size {width}x{height} is out of range (each side must be 1..={MAX_GRID_SIDE})")]
    BadSize {
        /// Requested width.
        width: u32,
        /// Requested height.
        height: u32,
    },
    /// The cell size is not a finite number greater than zero.
    #[error("cell size {0} must be finite and > 0")]
    BadCellSize(f32),
    /// The origin has a NaN or infinite coordinate.
    #[error("origin {0} must be finite")]
    BadOrigin(Vec2),
}

/// The shape of a map: `width x height` square cells of side `cell_size` placed at `origin`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Grid {
    width: u32,
    height: u32,
    cell_size: f32,
    /// `1 / cell_size`: world -> cell conversions multiply instead of dividing.
    inv_cell_size: f32,
    origin: Vec2,
}

impl Grid {
    /// A grid of `width x height` cells of side 1.0 with its origin at `(0, 0)`.
    pub fn new(width: u32, height: u32) -> Result<Self, GridError> {
        if width == 0 || height == 0 || width > MAX_GRID_SIDE || height > MAX_GRID_SIDE {
            return Err(GridError::BadSize { width, height });
        }
        Ok(Self {
            width,
            height,
            cell_size: 1.0,
            inv_cell_size: 1.0,
            origin: Vec2::ZERO,
        })
    }

    /// The same grid with another cell size and origin (world units).
    pub fn with_placement(self, cell_size: f32, origin: Vec2) -> Result<Self, GridError> {
        if !(cell_size.is_finite() && cell_size > 0.0) {
            return Err(GridError::BadCellSize(cell_size));
        }
        if !origin.is_finite() {
            return Err(GridError::BadOrigin(origin));
        }
        Ok(Self {
            cell_size,
            inv_cell_size: 1.0 / cell_size,
            origin,
            ..self
        })
    }

    /// Number of columns.
    #[must_use]
    pub fn width(&self) -> u32 {
        self.width
    }

    /// Number of rows.
    #[must_use]
    pub fn height(&self) -> u32 {
        self.height
    }

    /// Side of a cell in world units (default 1.0).
    #[must_use]
    pub fn cell_size(&self) -> f32 {
        self.cell_size
    }

    /// World position of the top-left corner of cell `(0, 0)` (default `(0, 0)`).
    #[must_use]
    pub fn origin(&self) -> Vec2 {
        self.origin
    }

    /// Number of cells.
    #[must_use]
    pub fn len(&self) -> usize {
        self.width as usize * self.height as usize
    }

    /// Always false: a grid has at least one cell.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Whether `(x, y)` (possibly negative) names a cell of this grid.
    #[must_use]
    pub fn contains(&self, x: i64, y: i64) -> bool {
        x >= 0 && y >= 0 && x < i64::from(self.width) && y < i64::from(self.height)
    }

    /// Row-major index of a cell (`y * width + x`). The cell must be inside the grid.
    #[must_use]
    #[inline]
    pub fn index(&self, cell: Cell) -> usize {
        debug_assert!(cell.x < self.width && cell.y < self.height);
        cell.y as usize * self.width as usize + cell.x as usize
    }

    /// The cell with row-major index `index`.
    #[must_use]
    pub fn cell(&self, index: usize) -> Cell {
        let w = self.width as usize;
        Cell::new((index % w) as u32, (index / w) as u32)
    }

    /// The cell that holds world position `pos`, or `None` outside the grid (or for NaN).
    #[must_use]
    #[inline]
    pub fn cell_at(&self, pos: Vec2) -> Option<Cell> {
        let local = (pos - self.origin) * self.inv_cell_size;
        // Truncation is floor for the non-negative values that pass the test (and is inlined
        // where `floor` may be a library call); NaN fails the test.
        if local.x >= 0.0
            && local.y >= 0.0
            && local.x < self.width as f32
            && local.y < self.height as f32
        {
            Some(Cell::new(
                (local.x as u32).min(self.width - 1),
                (local.y as u32).min(self.height - 1),
            ))
        } else {
            None
        }
    }

    /// `pos` in cell units from the grid's origin (cell `(x, y)` spans `x..x + 1`), by the
    /// same arithmetic as [`Self::cell_at`].
    #[must_use]
    #[inline]
    pub fn local(&self, pos: Vec2) -> Vec2 {
        (pos - self.origin) * self.inv_cell_size
    }

    /// The cell that holds `pos`, clamped to the grid (NaN maps to cell `(0, 0)`).
    #[must_use]
    #[inline]
    pub fn clamped_cell_at(&self, pos: Vec2) -> Cell {
        let local = (pos - self.origin) * self.inv_cell_size;
        // `max` maps NaN to 0; truncation of the clamped non-negative value is floor.
        let cx = local.x.max(0.0).min((self.width - 1) as f32);
        let cy = local.y.max(0.0).min((self.height - 1) as f32);
        // `as` saturates and maps NaN to 0.
        Cell::new(cx as u32, cy as u32)
    }

    /// World position of the centre of `cell`.
    #[must_use]
    #[inline]
    pub fn cell_centre(&self, cell: Cell) -> Vec2 {
        self.origin + (Vec2::new(cell.x as f32, cell.y as f32) + 0.5) * self.cell_size
    }

    /// World size of the whole grid.
    #[must_use]
    pub fn world_size(&self) -> Vec2 {
        Vec2::new(self.width as f32, self.height as f32) * self.cell_size
    }

    /// Whether world position `pos` lies inside the grid.
    #[must_use]
    pub fn contains_point(&self, pos: Vec2) -> bool {
        self.cell_at(pos).is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cell_world_round_trip() {
        let g = Grid::new(10, 5)
            .unwrap()
            .with_placement(2.0, Vec2::new(-4.0, 1.0))
            .unwrap();
        for i in 0..g.len() {
            let c = g.cell(i);
            assert_eq!(g.index(c), i);
            assert_eq!(g.cell_at(g.cell_centre(c)), Some(c));
        }
        assert_eq!(g.cell_centre(Cell::new(0, 0)), Vec2::new(-3.0, 2.0));
        assert_eq!(g.cell_at(Vec2::new(-4.01, 2.0)), None);
        assert_eq!(g.cell_at(Vec2::new(f32::NAN, 2.0)), None);
        assert_eq!(g.clamped_cell_at(Vec2::new(1e9, -1e9)), Cell::new(9, 0));
    }

    #[test]
    fn bad_grids_are_errors() {
        assert!(Grid::new(0, 3).is_err());
        assert!(Grid::new(3, MAX_GRID_SIDE + 1).is_err());
        let g = Grid::new(3, 3).unwrap();
        assert_eq!(
            g.with_placement(0.0, Vec2::ZERO),
            Err(GridError::BadCellSize(0.0))
        );
        assert!(
            g.with_placement(1.0, Vec2::new(f32::INFINITY, 0.0))
                .is_err()
        );
    }
}
