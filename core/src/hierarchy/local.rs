//! Dijkstra inside one sector: the building block of the portal graph's edges, the coarse
//! route's start and the sector fields.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::cost_field::CostField;
use crate::direction::{DIAG_STEP, Direction, ORTHO_STEP};
use crate::flow::NO_DIRECTION;
use crate::integration::UNREACHABLE;

use super::SectorBounds;

/// A seed of a sector search: local cell index, starting value, and the direction a unit in
/// that cell walks to realise the value ([`NO_DIRECTION`] for a goal).
pub(crate) type Seed = (usize, u32, u8);

/// Scratch and result of a search inside one sector (reused between searches).
#[derive(Clone, Debug, Default)]
pub(crate) struct LocalSearch {
    /// Cost-to-seed of every cell of the sector (row-major, sector-local), same units and
    /// rules as [`crate::IntegrationField`]; [`UNREACHABLE`] for walls and cut-off cells.
    pub values: Vec<u32>,
    /// The first move of a cheapest path from each cell (a [`Direction`] index, or
    /// [`NO_DIRECTION`] at seeds that are goals, walls and cut-off cells).
    pub dirs: Vec<u8>,
    heap: BinaryHeap<Reverse<(u32, u16)>>,
}

impl LocalSearch {
    /// Multi-source Dijkstra restricted to the cells of `bounds`, walking cost of the
    /// *entered* cell times the step weight, no corner cutting (the cost field's move masks).
    /// A cell's value is the cheapest `seed value + path cost` from it to a seed.
    pub fn run(&mut self, cost: &CostField, bounds: SectorBounds, seeds: &[Seed]) {
        let w = bounds.width() as usize;
        let h = bounds.height() as usize;
        let n = w * h;
        self.values.clear();
        self.values.resize(n, UNREACHABLE);
        self.dirs.clear();
        self.dirs.resize(n, NO_DIRECTION);
        self.heap.clear();
        for &(local, value, dir) in seeds {
            if value < self.values[local] {
                self.values[local] = value;
                self.dirs[local] = dir;
                self.heap.push(Reverse((value, local as u16)));
            }
        }
        let costs = cost.padded_costs();
        let moves = cost.padded_moves();
        let stride = cost.stride();
        let base = (bounds.y0 as usize + 1) * stride + bounds.x0 as usize + 1;
        while let Some(Reverse((d, u))) = self.heap.pop() {
            let u = usize::from(u);
            if d > self.values[u] {
                continue;
            }
            let (ux, uy) = (u % w, u / w);
            let pu = base + uy * stride + ux;
            let c = u32::from(costs[pu]);
            let mut m = u32::from(moves[pu]);
            while m != 0 {
                let dir = m.trailing_zeros() as usize;
                m &= m - 1;
                let (dx, dy) = Direction::OFFSETS[dir];
                let (vx, vy) = (ux as i64 + i64::from(dx), uy as i64 + i64::from(dy));
                if vx < 0 || vy < 0 || vx >= w as i64 || vy >= h as i64 {
                    continue;
                }
                let v = vy as usize * w + vx as usize;
                let step = if dir & 1 == 0 { ORTHO_STEP } else { DIAG_STEP };
                let nd = d.saturating_add(c * step);
                if nd < self.values[v] {
                    self.values[v] = nd;
                    self.dirs[v] = ((dir + 4) & 7) as u8;
                    self.heap.push(Reverse((nd, v as u16)));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grid::{Cell, Grid};
    use crate::hierarchy::SectorGrid;
    use crate::reference::dijkstra_binary_heap;
    use crate::terrain::WALL;

    #[test]
    fn a_whole_map_sector_equals_the_reference() {
        let g = Grid::new(13, 9).unwrap();
        let costs: Vec<u8> = (0..g.len() as u32)
            .map(|i| match (i * 7919) % 11 {
                0 | 1 => WALL,
                2 => 9,
                _ => 1,
            })
            .collect();
        let cost = CostField::from_costs(&g, &costs).unwrap();
        let sectors = SectorGrid::new(13, 9, 16).unwrap();
        let b = sectors.bounds(0);
        let goal = Cell::new(6, 4);
        let mut s = LocalSearch::default();
        let seeds = if cost.is_passable(goal) {
            vec![(b.local(goal), 0, NO_DIRECTION)]
        } else {
            vec![]
        };
        s.run(&cost, b, &seeds);
        let expected = dijkstra_binary_heap(&cost, &seeds.iter().map(|_| goal).collect::<Vec<_>>());
        assert_eq!(s.values, expected);
    }
}
