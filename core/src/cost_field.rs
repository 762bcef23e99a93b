//! [`CostField`]: one byte per cell saying how expensive a cell is to enter on one layer.

use crate::direction::Direction;
use crate::grid::{Cell, Grid};
use crate::terrain::WALL;

/// A cost field was given data that does not fit it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CostFieldError {
    /// The number of costs is not `width * height`.
    #[error("expected {expected} costs for the grid, got {got}")]
    WrongLength {
        /// `width * height`.
        expected: usize,
        /// What was given.
        got: usize,
    },
    /// A cost of zero: costs are `1..=255`.
    #[error("cost 0 at cell {0}: costs are 1 (open) ..= 255 (wall)")]
    ZeroCost(Cell),
}

/// Costs of entering each cell on one movement layer: `1` open, `2..=254` rough, `255` wall.
///
/// Stored with a one-cell border of walls around the grid so that the field algorithms never
/// test bounds, together with a *move mask* per cell: bit `d` is set when the move in
/// [`Direction`] `d` from that cell is legal (both cells passable and, for a diagonal, both
/// side cells passable: no corner cutting). The mask is kept up to date by every edit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CostField {
    width: u32,
    height: u32,
    costs: Vec<u8>,
    moves: Vec<u8>,
    version: u64,
}

impl CostField {
    /// A field of `grid`'s size with every cell at `cost` (`0` is treated as `1`).
    #[must_use]
    pub fn filled(grid: &Grid, cost: u8) -> Self {
        let (w, h) = (grid.width(), grid.height());
        let stride = w as usize + 2;
        let mut costs = vec![WALL; stride * (h as usize + 2)];
        for y in 0..h as usize {
            let row = (y + 1) * stride + 1;
            costs[row..row + w as usize].fill(cost.max(1));
        }
        let mut field = Self {
            width: w,
            height: h,
            moves: vec![0; costs.len()],
            costs,
            version: 0,
        };
        field.recompute_moves(0, 0, w, h);
        field
    }

    /// A field from row-major costs (`width * height` of them, each `1..=255`).
    pub fn from_costs(grid: &Grid, costs: &[u8]) -> Result<Self, CostFieldError> {
        if costs.len() != grid.len() {
            return Err(CostFieldError::WrongLength {
                expected: grid.len(),
                got: costs.len(),
            });
        }
        if let Some(i) = costs.iter().position(|&c| c == 0) {
            return Err(CostFieldError::ZeroCost(grid.cell(i)));
        }
        let (w, h) = (grid.width(), grid.height());
        let stride = w as usize + 2;
        let mut padded = vec![WALL; stride * (h as usize + 2)];
        for (y, row) in costs.chunks_exact(w as usize).enumerate() {
            let start = (y + 1) * stride + 1;
            padded[start..start + w as usize].copy_from_slice(row);
        }
        let mut field = Self {
            width: w,
            height: h,
            moves: vec![0; padded.len()],
            costs: padded,
            version: 0,
        };
        field.recompute_moves(0, 0, w, h);
        Ok(field)
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

    /// Distance in the padded arrays between a cell and the one below it (`width + 2`).
    #[must_use]
    pub fn stride(&self) -> usize {
        self.width as usize + 2
    }

    /// Index of `cell` in the padded arrays ([`Self::padded_costs`], [`Self::padded_moves`]).
    #[must_use]
    pub fn padded_index(&self, cell: Cell) -> usize {
        (cell.y as usize + 1) * self.stride() + cell.x as usize + 1
    }

    /// The cell at padded index `index`, or `None` for a border slot.
    #[must_use]
    pub fn cell_of_padded(&self, index: usize) -> Option<Cell> {
        let (x, y) = (index % self.stride(), index / self.stride());
        (x >= 1 && y >= 1 && x <= self.width as usize && y <= self.height as usize)
            .then(|| Cell::new(x as u32 - 1, y as u32 - 1))
    }

    /// Padded-index offsets of the eight neighbours, indexed by [`Direction`].
    #[must_use]
    pub fn neighbour_offsets(&self) -> [isize; 8] {
        let s = self.stride() as isize;
        Direction::OFFSETS.map(|(dx, dy)| dy as isize * s + dx as isize)
    }

    /// The padded cost array (border slots hold [`WALL`]).
    #[must_use]
    pub fn padded_costs(&self) -> &[u8] {
        &self.costs
    }

    /// The padded move masks (border slots hold 0).
    #[must_use]
    pub fn padded_moves(&self) -> &[u8] {
        &self.moves
    }

    /// Cost of entering `cell`. The cell must be inside the grid.
    #[must_use]
    #[inline]
    pub fn get(&self, cell: Cell) -> u8 {
        self.costs[self.padded_index(cell)]
    }

    /// Cost at `(x, y)`, or [`WALL`] outside the grid.
    #[must_use]
    #[inline]
    pub fn get_or_wall(&self, x: i64, y: i64) -> u8 {
        if x < -1 || y < -1 || x > i64::from(self.width) || y > i64::from(self.height) {
            return WALL;
        }
        self.costs[(y + 1) as usize * self.stride() + (x + 1) as usize]
    }

    /// Whether `cell` can be entered.
    #[must_use]
    pub fn is_passable(&self, cell: Cell) -> bool {
        self.get(cell) != WALL
    }

    /// The legal moves out of `cell`, as a bit mask indexed by [`Direction`].
    #[must_use]
    pub fn moves(&self, cell: Cell) -> u8 {
        self.moves[self.padded_index(cell)]
    }

    /// The steps a search from the goals takes out of `cell`: each legal move (no corner
    /// cutting; none out of a wall) to a neighbour, weighted by `cell`'s cost times the
    /// step's length ([`Direction::step`]), which is what a unit in that neighbour pays to
    /// enter `cell`. An integration field's value of a cell is the cheapest sum of these
    /// weights from a goal to it: this is the graph horde's fields search, for a search of
    /// one's own (a peer's Dijkstra or A* over horde's costs gives the same distances).
    pub fn steps_from(&self, cell: Cell) -> impl Iterator<Item = (Cell, u32)> + '_ {
        let moves = self.moves(cell);
        let cost = u32::from(self.get(cell));
        Direction::ALL
            .into_iter()
            .filter(move |&d| moves & (1 << d as u8) != 0)
            .map(move |d| {
                let (dx, dy) = d.offset();
                let to = Cell::new(
                    cell.x.wrapping_add_signed(dx),
                    cell.y.wrapping_add_signed(dy),
                );
                (to, cost * d.step())
            })
    }

    /// Bumped by every edit that changes a cost; caches compare it to know they are stale.
    #[must_use]
    pub fn version(&self) -> u64 {
        self.version
    }

    /// Sets the cost of `cell` (`0` is treated as `1`). Returns whether anything changed.
    pub fn set(&mut self, cell: Cell, cost: u8) -> bool {
        let cost = cost.max(1);
        let i = self.padded_index(cell);
        let old = self.costs[i];
        if old == cost {
            return false;
        }
        self.costs[i] = cost;
        self.version += 1;
        if (old == WALL) != (cost == WALL) {
            let x0 = cell.x.saturating_sub(1);
            let y0 = cell.y.saturating_sub(1);
            let x1 = (cell.x + 2).min(self.width);
            let y1 = (cell.y + 2).min(self.height);
            self.recompute_moves(x0, y0, x1, y1);
        }
        true
    }

    /// The row-major costs without the border.
    #[must_use]
    pub fn to_costs(&self) -> Vec<u8> {
        let s = self.stride();
        (0..self.height as usize)
            .flat_map(|y| {
                let row = (y + 1) * s + 1;
                self.costs[row..row + self.width as usize].iter().copied()
            })
            .collect()
    }

    /// Recomputes the move masks of cells `x0..x1` by `y0..y1`.
    fn recompute_moves(&mut self, x0: u32, y0: u32, x1: u32, y1: u32) {
        let offsets = self.neighbour_offsets();
        let s = self.stride();
        for y in y0..y1 {
            for x in x0..x1 {
                let i = (y as usize + 1) * s + x as usize + 1;
                self.moves[i] = move_mask(&self.costs, i, &offsets);
            }
        }
    }
}

/// The legal moves out of padded index `i` (see [`CostField`]).
fn move_mask(costs: &[u8], i: usize, offsets: &[isize; 8]) -> u8 {
    if costs[i] == WALL {
        return 0;
    }
    let open = |d: usize| costs[i.wrapping_add_signed(offsets[d])] != WALL;
    let mut mask = 0u8;
    for d in (0..8).step_by(2) {
        if open(d) {
            mask |= 1 << d;
        }
    }
    for d in (1..8).step_by(2) {
        let (left, right) = (d - 1, (d + 1) & 7);
        if open(d) && mask & (1 << left) != 0 && mask & (1 << right) != 0 {
            mask |= 1 << d;
        }
    }
    mask
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grid(w: u32, h: u32) -> Grid {
        Grid::new(w, h).unwrap()
    }

    #[test]
    fn corner_cutting_is_forbidden() {
        // . #
        // . .
        let mut f = CostField::filled(&grid(2, 2), 1);
        assert_eq!(
            f.moves(Cell::new(0, 1)) & (1 << Direction::NE as u8),
            1 << 1
        );
        f.set(Cell::new(1, 0), WALL);
        assert_eq!(f.moves(Cell::new(0, 1)) & (1 << Direction::NE as u8), 0);
        // corners of the grid never move outwards
        assert_eq!(f.moves(Cell::new(0, 0)), 1 << Direction::S as u8);
        f.set(Cell::new(1, 0), 1);
        assert_eq!(f, {
            let mut g = CostField::filled(&grid(2, 2), 1);
            g.version = 2;
            g
        });
    }

    #[test]
    fn from_costs_round_trips_and_rejects_bad_input() {
        let g = grid(3, 2);
        let costs = [1, 2, 255, 4, 5, 6];
        let f = CostField::from_costs(&g, &costs).unwrap();
        assert_eq!(f.to_costs(), costs);
        assert_eq!(f.get_or_wall(-1, 0), WALL);
        assert_eq!(f.get_or_wall(1, 1), 5);
        assert!(matches!(
            CostField::from_costs(&g, &costs[..5]),
            Err(CostFieldError::WrongLength { .. })
        ));
        assert_eq!(
            CostField::from_costs(&g, &[1, 1, 1, 1, 0, 1]),
            Err(CostFieldError::ZeroCost(Cell::new(1, 1)))
        );
    }

    #[test]
    fn moves_are_symmetric() {
        let g = grid(7, 6);
        let costs: Vec<u8> = (0..42u32)
            .map(|i| if (i * 7 + 3) % 5 == 0 { WALL } else { 1 })
            .collect();
        let f = CostField::from_costs(&g, &costs).unwrap();
        for i in 0..g.len() {
            let c = g.cell(i);
            for d in Direction::ALL {
                if f.moves(c) & (1 << d as u8) != 0 {
                    let (dx, dy) = d.offset();
                    let n = Cell::new((c.x as i32 + dx) as u32, (c.y as i32 + dy) as u32);
                    assert!(f.moves(n) & (1 << d.opposite() as u8) != 0);
                }
            }
        }
    }

    #[test]
    fn a_search_over_steps_from_finds_the_fields_distances() {
        // A plain Dijkstra over `steps_from` equals the integration field: rough cells,
        // walls, a diagonal squeeze between two walls (no corner cutting).
        let rows = [
            "....#.....",
            ".##.#.333.",
            ".#..#.3.3.",
            "...#......",
            "#.....##..",
        ];
        let (w, h) = (rows[0].len() as u32, rows.len() as u32);
        let costs: Vec<u8> = rows
            .iter()
            .flat_map(|r| {
                r.bytes().map(|b| match b {
                    b'#' => WALL,
                    b'3' => 3,
                    _ => 1,
                })
            })
            .collect();
        let grid = grid(w, h);
        let f = CostField::from_costs(&grid, &costs).unwrap();
        let goal = Cell::new(9, 0);
        let mut dist = vec![u32::MAX; grid.len()];
        let mut heap = std::collections::BinaryHeap::new();
        dist[grid.index(goal)] = 0;
        heap.push(std::cmp::Reverse((0u32, goal)));
        while let Some(std::cmp::Reverse((d, c))) = heap.pop() {
            if d > dist[grid.index(c)] {
                continue;
            }
            for (n, step) in f.steps_from(c) {
                if d + step < dist[grid.index(n)] {
                    dist[grid.index(n)] = d + step;
                    heap.push(std::cmp::Reverse((d + step, n)));
                }
            }
        }
        let field = crate::IntegrationField::build(&f, &[goal]).unwrap();
        assert_eq!(dist, field.to_values());
        assert_eq!(
            f.steps_from(Cell::new(4, 0)).count(),
            0,
            "a wall has no steps"
        );
    }
}
