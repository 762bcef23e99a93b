//! Dijkstra inside one sector: the building block of the portal graph's edges, the coarse
//! route's start and the sector fields.

use crate::cost_field::CostField;
use crate::direction::{DIAG_STEP, Direction, ORTHO_STEP};
use crate::flow::NO_DIRECTION;
use crate::integration::UNREACHABLE;
use crate::terrain::WALL;

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
    /// The bucket queue: a ring of [`RING`] buckets [`ORTHO_STEP`] wide, of
    /// `(value, local index)`.
    buckets: Vec<Vec<(u32, u32)>>,
    /// The seeds that improved their cell, `(value, local index)` in value order: each
    /// enters the queue when the search reaches its bucket, so the ring never has to span
    /// the seeds' spread (a sector field's seeds can differ by thousands of buckets).
    seeds: Vec<(u32, u32)>,
    /// The sector's costs (row-major, sector-local).
    costs: Vec<u8>,
    /// The sector's move masks without the moves that leave it.
    moves: Vec<u8>,
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
        self.seeds.clear();
        for &(local, value, dir) in seeds {
            if value < self.values[local] {
                self.values[local] = value;
                self.dirs[local] = dir;
                self.seeds.push((value, local as u32));
            }
        }
        // Stable: seeds of equal value enter in the order given.
        self.seeds.sort_by_key(|&(value, _)| value);
        // The sector's costs and move masks, copied row by row, with the moves that leave
        // the sector cleared: the loop below then needs no coordinates and no bounds tests.
        let costs = cost.padded_costs();
        let moves = cost.padded_moves();
        let stride = cost.stride();
        let base = (bounds.y0 as usize + 1) * stride + bounds.x0 as usize + 1;
        self.costs.clear();
        self.moves.clear();
        for y in 0..h {
            let row = base + y * stride;
            self.costs.extend_from_slice(&costs[row..row + w]);
            let keep_row = match (y == 0, y + 1 == h) {
                (true, true) => !(NORTH | SOUTH),
                (true, false) => !NORTH,
                (false, true) => !SOUTH,
                (false, false) => 0xFF,
            };
            self.moves
                .extend(moves[row..row + w].iter().enumerate().map(|(x, &m)| {
                    let keep_col = match (x == 0, x + 1 == w) {
                        (true, true) => !(WEST | EAST),
                        (true, false) => !WEST,
                        (false, true) => !EAST,
                        (false, false) => 0xFF,
                    };
                    m & keep_row & keep_col
                }));
        }
        let wi = w as isize;
        let offsets: [isize; 8] = Direction::OFFSETS.map(|(dx, dy)| dy as isize * wi + dx as isize);
        if self.buckets.len() != RING {
            self.buckets = vec![Vec::new(); RING];
        }
        let Some(&(first, _)) = self.seeds.first() else {
            return;
        };
        let mut current = first / ORTHO_STEP;
        let mut next_seed = 0;
        let mut queued = 0usize;
        loop {
            while let Some(&(value, local)) = self.seeds.get(next_seed) {
                if value / ORTHO_STEP > current {
                    break;
                }
                next_seed += 1;
                // A later, cheaper seed of the same cell replaced this one.
                if self.values[local as usize] == value {
                    self.buckets[current as usize % RING].push((value, local));
                    queued += 1;
                }
            }
            let slot = current as usize % RING;
            // Every step costs at least one bucket, so nothing is pushed into the bucket
            // being drained: take it whole, and its entries are final in any order.
            let bucket = std::mem::take(&mut self.buckets[slot]);
            queued -= bucket.len();
            for &(d, u) in &bucket {
                let u = u as usize;
                if d != self.values[u] {
                    continue;
                }
                let c = u32::from(self.costs[u]);
                let steps = [
                    d.saturating_add(c * ORTHO_STEP),
                    d.saturating_add(c * DIAG_STEP),
                ];
                let mut m = u32::from(self.moves[u]);
                while m != 0 {
                    let dir = m.trailing_zeros() as usize;
                    m &= m - 1;
                    let v = u.wrapping_add_signed(offsets[dir]);
                    let nd = steps[dir & 1];
                    if nd < self.values[v] {
                        self.values[v] = nd;
                        self.dirs[v] = ((dir + 4) & 7) as u8;
                        self.buckets[(nd / ORTHO_STEP) as usize % RING].push((nd, v as u32));
                        queued += 1;
                    }
                }
            }
            let mut bucket = bucket;
            bucket.clear();
            self.buckets[slot] = bucket;
            if queued > 0 {
                current += 1;
            } else if let Some(&(value, _)) = self.seeds.get(next_seed) {
                current = value / ORTHO_STEP;
            } else {
                return;
            }
        }
    }
}

/// Buckets in [`LocalSearch`]'s ring: more than the largest step spans (cost 254,
/// diagonal: 360 buckets), so a push never wraps onto the bucket being drained.
const RING: usize = 512;
const _: () = assert!((WALL as u32 - 1) * DIAG_STEP / ORTHO_STEP + 1 < RING as u32);

/// Move bits that leave a sector through its top row (N, NE, NW).
const NORTH: u8 = 1 << 0 | 1 << 1 | 1 << 7;
/// Move bits that leave through the bottom row (SE, S, SW).
const SOUTH: u8 = 1 << 3 | 1 << 4 | 1 << 5;
/// Move bits that leave through the left column (SW, W, NW).
const WEST: u8 = 1 << 5 | 1 << 6 | 1 << 7;
/// Move bits that leave through the right column (NE, E, SE).
const EAST: u8 = 1 << 1 | 1 << 2 | 1 << 3;

#[derive(Clone, Debug)]
pub(crate) struct RadixHeap {
    /// 33 buckets: bucket `b > 0` holds keys whose highest bit differing from `last` is
    /// bit `b - 1`; bucket 0 holds keys equal to `last`.
    buckets: Vec<Vec<(u32, u32)>>,
    last: u32,
    len: usize,
}

impl Default for RadixHeap {
    fn default() -> Self {
        Self {
            buckets: vec![Vec::new(); 33],
            last: 0,
            len: 0,
        }
    }
}

impl RadixHeap {
    fn bucket(&self, key: u32) -> usize {
        (32 - (key ^ self.last).leading_zeros()) as usize
    }

    /// Queues `item` with `key` (`key` must be at least the last popped key).
    pub fn push(&mut self, key: u32, item: u32) {
        debug_assert!(key >= self.last);
        let b = self.bucket(key);
        self.buckets[b].push((key, item));
        self.len += 1;
    }

    /// The entry with the smallest key (ties in no particular but fixed order).
    pub fn pop(&mut self) -> Option<(u32, u32)> {
        if self.len == 0 {
            return None;
        }
        if self.buckets[0].is_empty() {
            let i = self.buckets.iter().position(|b| !b.is_empty())?;
            let moving = std::mem::take(&mut self.buckets[i]);
            self.last = moving.iter().map(|&(k, _)| k).min()?;
            for &(k, v) in &moving {
                let b = self.bucket(k);
                self.buckets[b].push((k, v));
            }
            // Keep the allocation.
            let mut moving = moving;
            moving.clear();
            self.buckets[i] = moving;
        }
        self.len -= 1;
        self.buckets[0].pop()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grid::{Cell, Grid};
    use crate::hierarchy::SectorGrid;
    use crate::reference::{dijkstra_binary_heap, dijkstra_seeded};

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

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(200))]

        /// Seeds far apart in value (a sector field's border seeds can differ by far more
        /// than the ring's 512 buckets), several on one cell, in any order: every value is
        /// the reference's.
        #[test]
        fn spread_seeds_give_the_reference_values(
            (w, h) in (1u32..12, 1u32..12),
            costs in proptest::collection::vec(
                proptest::prop_oneof![6 => proptest::strategy::Just(1u8), 2 => 2u8..255, 1 => proptest::strategy::Just(WALL)],
                144,
            ),
            seeds in proptest::collection::vec((0u32..144, 0u32..5_000_000), 0..6),
        ) {
            let g = Grid::new(w, h).unwrap();
            let costs = &costs[..g.len()];
            let cost = CostField::from_costs(&g, costs).unwrap();
            let b = SectorGrid::new(w, h, 16).unwrap().bounds(0);
            let seeds: Vec<(Cell, u32)> = seeds
                .iter()
                .map(|&(i, v)| (g.cell(i as usize % g.len()), v))
                .filter(|&(c, _)| cost.is_passable(c))
                .collect();
            let local: Vec<Seed> = seeds.iter().map(|&(c, v)| (b.local(c), v, NO_DIRECTION)).collect();
            let mut search = LocalSearch::default();
            search.run(&cost, b, &local);
            proptest::prop_assert_eq!(&search.values, &dijkstra_seeded(&cost, &seeds));
        }
    }

    #[test]
    fn radix_heap_pops_in_key_order() {
        let mut heap = RadixHeap::default();
        let mut x = 12345u32;
        let mut popped = Vec::new();
        for round in 0..200u32 {
            for _ in 0..5 {
                x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
                heap.push(heap.last + (x >> 8) % (1000 * (round % 7 + 1)), round);
            }
            popped.push(heap.pop().unwrap().0);
        }
        while let Some((k, _)) = heap.pop() {
            popped.push(k);
        }
        assert_eq!(popped.len(), 1000);
        assert!(popped.windows(2).all(|w| w[0] <= w[1]));
    }
}
