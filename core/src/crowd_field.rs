//! [`CrowdField`]: an army's way to its goal with the crowd in the costs (docs/behaviour.md,
//! "Crowds in the costs"). Within a box round the army's walking units and its goal, each cell
//! costs its class cost plus a term for how much of the ground round it units on their way
//! cover; the integration field over those costs sends units round dense ground where a way
//! round is not much longer, and spreads a stream across the width of a passage.
//!
//! The density a field is built from is a value per box cell (`0..=255`, the share of the
//! cell units cover, times 255); the same densities give the same field bit for bit.

use glam::Vec2;

use crate::{Cell, CostField, Direction, Grid, IntegrationField, UNREACHABLE, WALL};

/// The cost a fully covered cell adds to its class cost (a cell of cost 1 costs `1 + this`).
pub const CROWD_WEIGHT: u32 = 4;

/// An army's field with the crowd in its costs, over a box of the map.
#[derive(Clone, Debug)]
pub struct CrowdField {
    /// The box's first cell and size.
    min: Cell,
    width: u32,
    height: u32,
    /// Over the box's cells.
    cost: CostField,
    field: IntegrationField,
    /// Per box cell: whether its cost carries a crowd term.
    crowded: Vec<bool>,
}

impl CrowdField {
    /// The field toward `goal` over the box from `min` of `width x height` cells of `cost`
    /// (the class's costs on the map), each box cell's cost raised by its `density`
    /// (`width * height` values, row by row, averaged over the 3x3 cells round it);
    /// `None` when the box is empty or holds no open goal cell.
    #[must_use]
    pub fn build(
        cost: &CostField,
        goal: &[Cell],
        (min, width, height): (Cell, u32, u32),
        density: &[u8],
    ) -> Option<Self> {
        let grid = Grid::new(width, height).ok()?;
        if density.len() != width as usize * height as usize {
            return None;
        }
        // Each cell's 3x3 sum of densities: the sums along rows of three, then of three
        // such row sums down the columns (a cell past the box's edge adds nothing).
        let (w, h) = (width as usize, height as usize);
        let mut rows = vec![0u32; w * h];
        for (y, row) in density.chunks_exact(w).enumerate() {
            for x in 0..w {
                let left = if x > 0 { row[x - 1] } else { 0 };
                let right = if x + 1 < w { row[x + 1] } else { 0 };
                rows[y * w + x] = u32::from(left) + u32::from(row[x]) + u32::from(right);
            }
        }
        let mut costs = Vec::with_capacity(density.len());
        let mut crowded = Vec::with_capacity(density.len());
        for y in 0..h {
            let up = y.checked_sub(1).map(|u| &rows[u * w..(u + 1) * w]);
            let down = (y + 1 < h).then(|| &rows[(y + 1) * w..(y + 2) * w]);
            let here = &rows[y * w..(y + 1) * w];
            for x in 0..w {
                let map_cell = Cell::new(min.x + x as u32, min.y + y as u32);
                let base = cost.get(map_cell);
                let sum = here[x] + up.map_or(0, |r| r[x]) + down.map_or(0, |r| r[x]);
                costs.push(if base == WALL {
                    WALL
                } else {
                    // The 3x3 sum over 9 cells of 255 each is at most 2295.
                    let crowd = (sum * CROWD_WEIGHT).div_ceil(9 * 255);
                    (u32::from(base) + crowd).min(u32::from(WALL) - 1) as u8
                });
                crowded.push(base != WALL && sum > 0);
            }
        }
        let cost = CostField::from_costs(&grid, &costs).ok()?;
        let goals: Vec<Cell> = goal
            .iter()
            .filter_map(|c| {
                let (x, y) = (c.x.checked_sub(min.x)?, c.y.checked_sub(min.y)?);
                (x < width && y < height).then(|| Cell::new(x, y))
            })
            .collect();
        if goals.iter().all(|&g| cost.get(g) == WALL) {
            return None;
        }
        let field = IntegrationField::build(&cost, &goals).ok()?;
        Some(Self {
            min,
            width,
            height,
            cost,
            field,
            crowded,
        })
    }

    /// The way from map cell `cell` (a unit vector along the legal step to the neighbour
    /// with the lowest value), or `None` outside the box, away from the crowd (no unit on
    /// its way within a cell of it: there the plain field's way serves), on a goal cell, or
    /// where the field does not reach.
    #[must_use]
    pub fn way(&self, cell: Cell) -> Option<Vec2> {
        let (x, y) = (
            cell.x.checked_sub(self.min.x)?,
            cell.y.checked_sub(self.min.y)?,
        );
        if x >= self.width || y >= self.height || !self.crowded[(y * self.width + x) as usize] {
            return None;
        }
        let here = Cell::new(x, y);
        let own = self.field.get(here);
        if own == UNREACHABLE || own == 0 {
            return None;
        }
        let moves = self.cost.moves(here);
        let mut best: Option<(u32, Direction)> = None;
        for d in Direction::ALL {
            if moves & (1 << d as u8) == 0 {
                continue;
            }
            let (dx, dy) = Direction::OFFSETS[d as usize];
            let n = Cell::new(x.wrapping_add_signed(dx), y.wrapping_add_signed(dy));
            let v = self.field.get(n);
            if v < own && best.is_none_or(|(b, _)| v < b) {
                best = Some((v, d));
            }
        }
        best.map(|(_, d)| {
            let (dx, dy) = Direction::OFFSETS[d as usize];
            Vec2::new(dx as f32, dy as f32).normalize()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dense_ground_is_walked_round() {
        // 21x11 open cells, the goal at the east end's middle.
        let grid = Grid::new(21, 11).unwrap();
        let cost = CostField::filled(&grid, 1);
        let goal = [Cell::new(20, 5)];
        let empty = vec![0u8; 21 * 11];
        let field = CrowdField::build(&cost, &goal, (Cell::new(0, 0), 21, 11), &empty).unwrap();
        // Away from any crowd: no way of its own.
        assert_eq!(field.way(Cell::new(5, 5)), None);
        // A packed block on the middle row ahead: a unit behind it turns off the row.
        let mut dense = empty.clone();
        for y in 4..=6 {
            for x in 8..=14 {
                dense[y * 21 + x] = 255;
            }
        }
        let field = CrowdField::build(&cost, &goal, (Cell::new(0, 0), 21, 11), &dense).unwrap();
        // A unit beside it on the middle row turns off the row; one far from it has no way
        // of its own; with nobody in front of it, one in its last column walks straight on.
        assert_eq!(field.way(Cell::new(3, 1)), None);
        assert_eq!(field.way(Cell::new(14, 5)), Some(Vec2::X));
        let way = field.way(Cell::new(7, 5)).unwrap();
        assert!(way.y != 0.0, "{way:?}");
        // Outside the box: no way.
        assert_eq!(field.way(Cell::new(25, 5)), None);
    }
}
