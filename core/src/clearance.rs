//! [`Clearance`]: per cell, how far the nearest wall is, so steering can skip its ray probes
//! for units in open ground.

use crate::cost_field::CostField;
use crate::terrain::WALL;

/// Chebyshev distance (in cells, capped at 255) from every cell to the nearest wall cell or
/// map edge. A wall cell holds 0; an open cell next to a wall or the edge holds 1.
///
/// Computed by a two-pass distance transform, exact for the Chebyshev metric.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Clearance {
    width: u32,
    height: u32,
    cells: Vec<u8>,
    built_from: u64,
    /// See [`Self::stamp`].
    stamp: u32,
}

impl Clearance {
    /// Clearance of every cell of `cost`.
    #[must_use]
    pub fn build(cost: &CostField) -> Self {
        let (w, h) = (cost.width() as usize, cost.height() as usize);
        let mut d = vec![0u8; w * h];
        let at = |x: usize, y: usize| cost.get_or_wall(x as i64, y as i64) == WALL;
        // Forward pass: distances from walls above and to the left (and the map edge).
        for y in 0..h {
            for x in 0..w {
                d[y * w + x] = if at(x, y) {
                    0
                } else {
                    let mut m = 255u8;
                    let edge = |v: usize| if v == 0 { 0 } else { 255 };
                    m = m.min(edge(x).min(edge(y)));
                    if x > 0 {
                        m = m.min(d[y * w + x - 1]);
                    }
                    if y > 0 {
                        m = m.min(d[(y - 1) * w + x]);
                        if x > 0 {
                            m = m.min(d[(y - 1) * w + x - 1]);
                        }
                        if x + 1 < w {
                            m = m.min(d[(y - 1) * w + x + 1]);
                        }
                    }
                    m.saturating_add(1)
                };
            }
        }
        // Backward pass: walls below and to the right, and the far edges.
        for y in (0..h).rev() {
            for x in (0..w).rev() {
                let i = y * w + x;
                if d[i] == 0 {
                    continue;
                }
                let mut m = d[i].saturating_sub(1);
                if x + 1 == w || y + 1 == h {
                    m = 0;
                }
                if x + 1 < w {
                    m = m.min(d[i + 1]);
                }
                if y + 1 < h {
                    m = m.min(d[i + w]);
                    if x + 1 < w {
                        m = m.min(d[i + w + 1]);
                    }
                    if x > 0 {
                        m = m.min(d[i + w - 1]);
                    }
                }
                d[i] = m.saturating_add(1).min(d[i]);
            }
        }
        Self {
            width: cost.width(),
            height: cost.height(),
            cells: d,
            built_from: cost.version(),
            stamp: crate::stamp::next_stamp(),
        }
    }

    /// A number unique to this build of the clearance among all stamped data of the process
    /// (a clearance never changes once built): a unit can remember the value of its cell
    /// with it ([`crate::CellMemo`]). 0 (which matches nothing) once the process has given
    /// 2^32 - 1 stamps.
    #[must_use]
    #[inline]
    pub fn stamp(&self) -> u32 {
        self.stamp
    }

    /// Clearance at `(x, y)` in cells; 0 outside the grid.
    #[must_use]
    #[inline]
    pub fn get(&self, x: u32, y: u32) -> u8 {
        if x < self.width && y < self.height {
            self.cells[y as usize * self.width as usize + x as usize]
        } else {
            0
        }
    }

    /// Whether this was built from the current version of `cost`.
    #[must_use]
    pub fn is_current(&self, cost: &CostField) -> bool {
        self.built_from == cost.version()
            && (self.width, self.height) == (cost.width(), cost.height())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grid::{Cell, Grid};

    #[test]
    fn equals_brute_force() {
        let grid = Grid::new(23, 17).unwrap();
        let costs: Vec<u8> = (0..grid.len() as u32)
            .map(|i| {
                if i.wrapping_mul(2_654_435_761) >> 28 == 3 {
                    WALL
                } else {
                    1
                }
            })
            .collect();
        let cost = CostField::from_costs(&grid, &costs).unwrap();
        let c = Clearance::build(&cost);
        for i in 0..grid.len() {
            let cell = grid.cell(i);
            let (x, y) = (i64::from(cell.x), i64::from(cell.y));
            // nearest wall cell, with everything outside the grid a wall
            let mut best = i64::MAX;
            for wy in -1..=i64::from(grid.height()) {
                for wx in -1..=i64::from(grid.width()) {
                    if cost.get_or_wall(wx, wy) == WALL {
                        best = best.min((wx - x).abs().max((wy - y).abs()));
                    }
                }
            }
            assert_eq!(i64::from(c.get(cell.x, cell.y)), best.min(255), "{cell}");
        }
        let _ = Cell::new(0, 0);
        assert!(c.is_current(&cost));
    }
}
