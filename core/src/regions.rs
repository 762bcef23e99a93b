//! [`Regions`]: the connected parts of a layer's open cells, to tell which units can reach a
//! goal at all.
//!
//! Two cells are in one region when a unit can walk from one to the other by the moves the
//! fields allow ([`CostField`]'s move mask: no corner cutting). Moves are symmetric, so the
//! regions partition the open cells; a unit can reach a goal set exactly when its cell's
//! region holds one of the goal cells. Building the regions is one flood fill over the map;
//! each question after that is a lookup.

use crate::cost_field::CostField;
use crate::grid::Cell;

/// The region label of a wall cell.
const NO_REGION: u32 = u32::MAX;

/// The connected regions of one [`CostField`], built from one version of it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Regions {
    width: u32,
    height: u32,
    /// One label per cell, row by row ([`NO_REGION`] for walls).
    labels: Vec<u32>,
    count: u32,
    version: u64,
}

impl Regions {
    /// Labels the regions of `cost` (one flood fill: time and memory linear in the cells).
    #[must_use]
    pub fn of(cost: &CostField) -> Self {
        let (w, h) = (cost.width(), cost.height());
        let stride = cost.stride();
        let moves = cost.padded_moves();
        let offsets = cost.neighbour_offsets();
        let cells = w as usize * h as usize;
        let mut labels = vec![NO_REGION; cells];
        // Padded index -> plain index: the padding adds a row and a column before each cell.
        let plain = |p: usize| (p / stride - 1) * w as usize + (p % stride - 1);
        let mut count = 0u32;
        let mut stack = Vec::new();
        for start in 0..cells {
            let (x, y) = (start % w as usize, start / w as usize);
            let p = (y + 1) * stride + x + 1;
            if labels[start] != NO_REGION || !cost.is_passable(Cell::new(x as u32, y as u32)) {
                continue;
            }
            labels[start] = count;
            stack.push(p);
            while let Some(p) = stack.pop() {
                let mask = moves[p];
                for (d, &offset) in offsets.iter().enumerate() {
                    if mask & (1 << d) == 0 {
                        continue;
                    }
                    let q = p.wrapping_add_signed(offset);
                    let i = plain(q);
                    if labels[i] == NO_REGION {
                        labels[i] = count;
                        stack.push(q);
                    }
                }
            }
            count += 1;
        }
        Self {
            width: w,
            height: h,
            labels,
            count,
            version: cost.version(),
        }
    }

    /// The [`CostField::version`] these regions were built from.
    #[must_use]
    pub fn version(&self) -> u64 {
        self.version
    }

    /// Whether these regions are those of `cost` as it is now.
    #[must_use]
    pub fn is_current(&self, cost: &CostField) -> bool {
        self.version == cost.version() && (self.width, self.height) == (cost.width(), cost.height())
    }

    /// Number of regions.
    #[must_use]
    pub fn count(&self) -> u32 {
        self.count
    }

    /// The region of `cell`, or `None` for a wall or a cell outside the grid.
    #[must_use]
    pub fn region(&self, cell: Cell) -> Option<u32> {
        if cell.x >= self.width || cell.y >= self.height {
            return None;
        }
        let label = self.labels[cell.y as usize * self.width as usize + cell.x as usize];
        (label != NO_REGION).then_some(label)
    }

    /// Whether `cell` lies in one of `regions` (sorted, as [`Self::regions_of`] gives them).
    #[must_use]
    pub fn in_any(&self, cell: Cell, regions: &[u32]) -> bool {
        self.region(cell)
            .is_some_and(|r| regions.binary_search(&r).is_ok())
    }

    /// The regions of the open cells among `cells`, sorted and without repeats (the regions a
    /// goal set lies in).
    #[must_use]
    pub fn regions_of(&self, cells: &[Cell]) -> Vec<u32> {
        let mut out: Vec<u32> = cells.iter().filter_map(|&c| self.region(c)).collect();
        out.sort_unstable();
        out.dedup();
        out
    }

    /// The regions a unit standing in `cell` can walk into: its cell's, or, when the cell is
    /// a wall (a unit caught by a terrain edit, which steps out to a neighbour), those of its
    /// open neighbours. Sorted, without repeats; empty when walls surround it.
    #[must_use]
    pub fn regions_around(&self, cell: Cell) -> Vec<u32> {
        if let Some(r) = self.region(cell) {
            return vec![r];
        }
        let mut out = Vec::new();
        for dy in -1i64..=1 {
            for dx in -1i64..=1 {
                let (x, y) = (i64::from(cell.x) + dx, i64::from(cell.y) + dy);
                if let (Ok(x), Ok(y)) = (u32::try_from(x), u32::try_from(y))
                    && let Some(r) = self.region(Cell::new(x, y))
                {
                    out.push(r);
                }
            }
        }
        out.sort_unstable();
        out.dedup();
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grid::Grid;
    use crate::integration::{IntegrationField, UNREACHABLE};
    use crate::terrain::WALL;
    use proptest::prelude::*;

    fn field(w: u32, h: u32, costs: &[u8]) -> CostField {
        CostField::from_costs(&Grid::new(w, h).unwrap(), costs).unwrap()
    }

    #[test]
    fn a_wall_splits_the_map_and_a_corner_does_not_join_it() {
        // Column 2 is wall; (2,1) is open in the wall but its diagonals to (1,0)/(3,2) cut
        // corners, so the halves meet only through it orthogonally.
        #[rustfmt::skip]
        let costs = [
            1, 1, WALL, 1,
            1, 1, WALL, 1,
            1, 1, WALL, 1,
        ];
        let r = Regions::of(&field(4, 3, &costs));
        assert_eq!(r.count(), 2);
        assert_eq!(r.region(Cell::new(2, 0)), None);
        assert_ne!(r.region(Cell::new(0, 0)), r.region(Cell::new(3, 0)));
        assert_eq!(r.region(Cell::new(0, 0)), r.region(Cell::new(1, 2)));
        assert_eq!(r.region(Cell::new(9, 0)), None);
        // Two cells touching only at a corner are apart: no corner cutting.
        #[rustfmt::skip]
        let diagonal = [
            1, WALL,
            WALL, 1,
        ];
        let r = Regions::of(&field(2, 2, &diagonal));
        assert_eq!(r.count(), 2);
        assert_eq!(r.regions_around(Cell::new(1, 0)), vec![0, 1]);
        assert_eq!(r.regions_of(&[Cell::new(0, 0), Cell::new(1, 0)]), vec![0]);
    }

    proptest! {
        /// Two open cells share a region exactly when the integration field from one reaches
        /// the other: the regions agree with the fields units follow.
        #[test]
        fn regions_agree_with_the_integration_field(
            (w, h, costs) in (1u32..12, 1u32..12).prop_flat_map(|(w, h)| {
                let n = (w * h) as usize;
                (Just(w), Just(h), proptest::collection::vec(
                    prop_oneof![3 => Just(1u8), 1 => Just(7u8), 2 => Just(WALL)], n))
            }),
            seed in 0usize..1000,
        ) {
            let cost = field(w, h, &costs);
            let regions = Regions::of(&cost);
            let open: Vec<Cell> = (0..w * h)
                .map(|i| Cell::new(i % w, i / w))
                .filter(|&c| cost.is_passable(c))
                .collect();
            prop_assume!(!open.is_empty());
            let from = open[seed % open.len()];
            let integration = IntegrationField::build(&cost, &[from]).unwrap();
            for &c in &open {
                prop_assert_eq!(
                    regions.region(c) == regions.region(from),
                    integration.get(c) != UNREACHABLE,
                    "cell {:?} from {:?}", c, from
                );
            }
            prop_assert!(regions.is_current(&cost));
        }
    }
}
