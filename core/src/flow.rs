//! [`FlowField`]: one byte per cell, the direction a unit in that cell should walk.

use std::ops::Range;

use glam::Vec2;

use crate::config::FlowConfig;
use crate::cost_field::CostField;
use crate::direction::Direction;
use crate::grid::{Cell, Grid};
use crate::integration::{IntegrationField, UNREACHABLE};
use crate::terrain::WALL;

/// Low bits of a flow byte that mean "no direction" (goal, wall or unreachable cell).
pub const NO_DIRECTION: u8 = 8;
/// Bit of a flow byte set when the cell sees the goal in a straight line.
pub const LINE_OF_SIGHT: u8 = 0x80;

/// The direction to walk from every cell: toward the neighbour with the lowest integration
/// value (legal moves only: no corner cutting), or none for goals, walls and unreachable
/// cells. One byte per cell: bits 0-3 hold a [`Direction`] or [`NO_DIRECTION`], bit 7
/// ([`LINE_OF_SIGHT`]) marks cells that see the goal.
#[derive(Clone, Debug)]
pub struct FlowField {
    width: u32,
    height: u32,
    cells: Vec<u8>,
    /// The goal cell that line-of-sight cells steer at (single-cell goals only).
    sight_goal: Option<Cell>,
    /// Rows outside which every byte is [`NO_DIRECTION`] (what [`Self::rebuild_cells`]
    /// clears).
    written: Range<u32>,
}

impl PartialEq for FlowField {
    fn eq(&self, other: &Self) -> bool {
        let no_direction = |cells: &[u8]| cells.iter().all(|&b| b == NO_DIRECTION);
        (self.width, self.height, self.sight_goal) == (other.width, other.height, other.sight_goal)
            && match (self.cells.is_empty(), other.cells.is_empty()) {
                // A field never written holds no bytes: no direction anywhere.
                (true, true) => true,
                (true, false) => no_direction(&other.cells),
                (false, true) => no_direction(&self.cells),
                (false, false) => self.cells == other.cells,
            }
    }
}

impl Eq for FlowField {}

impl FlowField {
    /// A field of the given size with no direction anywhere. It takes no memory until it is
    /// first written.
    #[must_use]
    pub fn empty(width: u32, height: u32) -> Self {
        Self {
            width,
            height,
            cells: Vec::new(),
            sight_goal: None,
            written: 0..0,
        }
    }

    /// Builds the flow from a finished integration field (made from `cost` toward `goals`).
    #[must_use]
    pub fn build(
        cost: &CostField,
        integration: &IntegrationField,
        goals: &[Cell],
        config: &FlowConfig,
    ) -> Self {
        let mut field = Self::empty(cost.width(), cost.height());
        field.rebuild(cost, integration, goals, config);
        field
    }

    /// Rebuilds in place; see [`Self::build`].
    pub fn rebuild(
        &mut self,
        cost: &CostField,
        integration: &IntegrationField,
        goals: &[Cell],
        config: &FlowConfig,
    ) {
        self.resize(cost.width(), cost.height());
        self.allocate();
        let height = self.height;
        fill_direction_rows(cost, integration, 0..height, &mut self.cells);
        self.written = 0..height;
        self.mark_line_of_sight(cost, integration, goals, config);
    }

    /// Widens `written` to cover `rows`.
    fn mark_written(&mut self, rows: Range<u32>) {
        self.written = if self.written.is_empty() {
            rows
        } else {
            self.written.start.min(rows.start)..self.written.end.max(rows.end)
        };
    }

    /// Allocates the bytes (all [`NO_DIRECTION`]) of a field never written.
    fn allocate(&mut self) {
        if self.cells.is_empty() {
            self.cells = vec![NO_DIRECTION; self.width as usize * self.height as usize];
        }
    }

    /// Resizes to `width x height` (clearing the field when the size changes).
    pub fn resize(&mut self, width: u32, height: u32) {
        if (self.width, self.height) != (width, height) {
            *self = Self::empty(width, height);
        }
    }

    /// The raw bytes, row-major, for callers that fill rows in parallel with
    /// [`fill_direction_rows`] before calling [`Self::mark_line_of_sight`].
    pub fn bytes_mut(&mut self) -> &mut [u8] {
        self.allocate();
        self.written = 0..self.height;
        &mut self.cells
    }

    /// The raw bytes, row-major; empty for a field never written (see [`Self::empty`]).
    #[must_use]
    pub fn bytes(&self) -> &[u8] {
        &self.cells
    }

    /// Recomputes the directions of `rows` (widened by one row each way, since a cell's
    /// direction reads its neighbours) and the line-of-sight bits, after the integration
    /// field changed only within `rows` (as [`IntegrationField::repair`] reports).
    pub fn repair_rows(
        &mut self,
        cost: &CostField,
        integration: &IntegrationField,
        goals: &[Cell],
        config: &FlowConfig,
        rows: Range<u32>,
    ) {
        self.resize(cost.width(), cost.height());
        self.allocate();
        let first = rows.start.saturating_sub(1);
        let end = (rows.end + 1).min(self.height);
        if first < end {
            let w = self.width as usize;
            self.written = 0..self.height;
            let out = &mut self.cells[first as usize * w..end as usize * w];
            fill_direction_rows(cost, integration, first..end, out);
        }
        // Walls may have moved in or out of sight anywhere near the goal: redo those bits.
        if let Some(goal) = self.sight_goal {
            let r = config.line_of_sight_radius;
            let (x0, x1, y0, y1) = self.box_around(goal, r);
            for y in y0..=y1 {
                let row = y as usize * self.width as usize;
                for b in &mut self.cells[row + x0 as usize..=row + x1 as usize] {
                    *b &= !LINE_OF_SIGHT;
                }
            }
        }
        self.mark_line_of_sight(cost, integration, goals, config);
    }

    /// Sets the line-of-sight bit on every cell within the configured radius of a
    /// single-cell goal whose centre sees the goal's centre without crossing a wall or
    /// squeezing diagonally between two walls. Other goal sets get no line of sight.
    pub fn mark_line_of_sight(
        &mut self,
        cost: &CostField,
        integration: &IntegrationField,
        goals: &[Cell],
        config: &FlowConfig,
    ) {
        let Some((goal, x0, x1, y0, y1)) = self.sight_box(integration, goals, config) else {
            return;
        };
        self.allocate();
        self.mark_written(y0..y1 + 1);
        for y in y0..=y1 {
            for x in x0..=x1 {
                let cell = Cell::new(x, y);
                if integration.get(cell) != UNREACHABLE && segment_is_clear(cost, cell, goal) {
                    self.cells[y as usize * self.width as usize + x as usize] |= LINE_OF_SIGHT;
                }
            }
        }
    }

    /// The cells within `r` (Chebyshev) of `goal`, clipped to the field: `(x0, x1, y0, y1)`,
    /// inclusive. Saturating, so any radius is safe.
    fn box_around(&self, goal: Cell, r: u32) -> (u32, u32, u32, u32) {
        (
            goal.x.saturating_sub(r),
            goal.x.saturating_add(r).min(self.width - 1),
            goal.y.saturating_sub(r),
            goal.y.saturating_add(r).min(self.height - 1),
        )
    }

    /// Sets [`Self::sight_goal`] for `goals` and returns it with the box of cells that may see
    /// it (`x0, x1, y0, y1`, inclusive), or `None` when the field has no line of sight.
    fn sight_box(
        &mut self,
        integration: &IntegrationField,
        goals: &[Cell],
        config: &FlowConfig,
    ) -> Option<(Cell, u32, u32, u32, u32)> {
        self.sight_goal = None;
        let r = config.line_of_sight_radius;
        let [goal] = goals else { return None };
        if r == 0 || goal.x >= self.width || goal.y >= self.height || integration.get(*goal) != 0 {
            return None;
        }
        self.sight_goal = Some(*goal);
        let (x0, x1, y0, y1) = self.box_around(*goal, r);
        Some((*goal, x0, x1, y0, y1))
    }

    /// For a partial integration field ([`IntegrationField::rebuild_for`]): clears every
    /// byte (only the rows earlier fills wrote need it), then fills those of `cells`
    /// (direction and line-of-sight bit), each exactly as a complete build would. Every cell
    /// of `cells` must be final in `integration` ([`IntegrationField::is_final`]); the flow
    /// of a final cell reads only neighbours that are final too or too far to be its way
    /// down, so it is exact.
    pub fn rebuild_cells(
        &mut self,
        cost: &CostField,
        integration: &IntegrationField,
        goals: &[Cell],
        config: &FlowConfig,
        cells: &[Cell],
    ) {
        self.resize(cost.width(), cost.height());
        self.allocate();
        let w = self.width as usize;
        let rows = std::mem::replace(&mut self.written, 0..0);
        self.cells[rows.start as usize * w..rows.end as usize * w].fill(NO_DIRECTION);
        self.fill_cells(cost, integration, goals, config, cells);
    }

    /// The per-cell fill of [`Self::rebuild_cells`], without clearing first: for a partial
    /// field whose search went on to more cells. A cell that already holds a direction
    /// keeps it (it was filled from this same search, whose final values never change), so
    /// serving the same units frame after frame costs one read per unit.
    pub fn fill_cells(
        &mut self,
        cost: &CostField,
        integration: &IntegrationField,
        goals: &[Cell],
        config: &FlowConfig,
        cells: &[Cell],
    ) {
        self.resize(cost.width(), cost.height());
        self.allocate();
        let values = integration.padded_values();
        let sight = self.sight_box(integration, goals, config);
        if values.is_empty() {
            return; // an integration field never built: no direction anywhere
        }
        let moves = cost.padded_moves();
        let offsets = cost.neighbour_offsets();
        for &cell in cells {
            let i = self.index(cell);
            if self.cells[i] != NO_DIRECTION {
                continue;
            }
            let p = cost.padded_index(cell);
            let around = offsets.map(|o| values[p.wrapping_add_signed(o)]);
            let mut byte = direction_byte(moves[p], values[p], around);
            if let Some((goal, x0, x1, y0, y1)) = sight
                && (x0..=x1).contains(&cell.x)
                && (y0..=y1).contains(&cell.y)
                && values[p] != UNREACHABLE
                && segment_is_clear(cost, cell, goal)
            {
                byte |= LINE_OF_SIGHT;
            }
            self.cells[i] = byte;
            if byte != NO_DIRECTION {
                self.mark_written(cell.y..cell.y + 1);
            }
        }
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

    /// The direction to walk from `cell`, or `None` at goals, walls and unreachable cells.
    #[must_use]
    pub fn direction(&self, cell: Cell) -> Option<Direction> {
        let low = self.byte(cell) & 0x0F;
        (low < NO_DIRECTION).then(|| Direction::from_index(low))
    }

    /// Whether `cell` sees the goal in a straight line.
    #[must_use]
    pub fn has_line_of_sight(&self, cell: Cell) -> bool {
        self.byte(cell) & LINE_OF_SIGHT != 0
    }

    /// The goal that line-of-sight cells steer at, if the field has one.
    #[must_use]
    pub fn sight_goal(&self) -> Option<Cell> {
        self.sight_goal
    }

    /// The unit direction to walk from world position `pos` on `grid` (the grid the field
    /// was built on): straight at the goal's centre where the cell sees it, else the cell's
    /// flow direction; zero outside the grid, at goals, in walls and where no path exists.
    #[must_use]
    pub fn sample(&self, grid: &Grid, pos: Vec2) -> Vec2 {
        self.sample_in(grid, grid.cell_at(pos), pos)
    }

    /// [`Self::sample`] for a caller that already has `grid.cell_at(pos)` (the steering stage
    /// looks several fields up in the same cell).
    #[must_use]
    #[inline]
    pub fn sample_in(&self, grid: &Grid, cell: Option<Cell>, pos: Vec2) -> Vec2 {
        let Some(cell) = cell else {
            return Vec2::ZERO;
        };
        self.sample_byte(grid, self.byte(cell), pos)
    }

    /// The byte the field keeps for `cell` ([`NO_DIRECTION`] outside the field): what
    /// [`Self::sample_byte`] turns into the direction at a position in that cell.
    #[must_use]
    #[inline]
    pub fn byte_at(&self, cell: Cell) -> u8 {
        self.byte(cell)
    }

    /// [`Self::sample_in`] for a position `pos` in a cell whose byte ([`Self::byte_at`]) is
    /// `byte` (a caller that remembers the byte of the cell its unit stands in).
    #[must_use]
    #[inline]
    pub fn sample_byte(&self, grid: &Grid, byte: u8, pos: Vec2) -> Vec2 {
        if byte & LINE_OF_SIGHT != 0
            && let Some(goal) = self.sight_goal
        {
            return (grid.cell_centre(goal) - pos).normalize_or_zero();
        }
        let low = byte & 0x0F;
        if low < NO_DIRECTION {
            Direction::from_index(low).unit_vector()
        } else {
            Vec2::ZERO
        }
    }

    /// The byte of `cell` ([`NO_DIRECTION`] in a field never written).
    #[inline]
    fn byte(&self, cell: Cell) -> u8 {
        self.cells
            .get(self.index(cell))
            .copied()
            .unwrap_or(NO_DIRECTION)
    }

    #[inline]
    fn index(&self, cell: Cell) -> usize {
        cell.y as usize * self.width as usize + cell.x as usize
    }
}

/// Fills the direction bytes of `rows` (line-of-sight bits cleared). `out` holds exactly
/// those rows, row-major. Rows are independent, so callers may split a field into row bands
/// and fill them on several threads.
pub fn fill_direction_rows(
    cost: &CostField,
    integration: &IntegrationField,
    rows: Range<u32>,
    out: &mut [u8],
) {
    let w = cost.width() as usize;
    assert_eq!(
        out.len(),
        rows.len() * w,
        "`out` must hold exactly the given rows"
    );
    let values = integration.padded_values();
    if values.is_empty() {
        // An integration field never built: no direction anywhere.
        out.fill(NO_DIRECTION);
        return;
    }
    let moves = cost.padded_moves();
    let stride = cost.stride();
    for (row, y) in out.chunks_exact_mut(w).zip(rows) {
        // Three rows of values, each from one column left of the row to one right of it, so
        // neighbour `x + dx` of cell `x` sits at `x + 1 + dx`.
        let mid = (y as usize + 1) * stride;
        let up = &values[mid - stride..mid - stride + w + 2];
        let here = &values[mid..mid + w + 2];
        let down = &values[mid + stride..mid + stride + w + 2];
        let masks = &moves[mid + 1..mid + 1 + w];
        for (x, (byte, &m)) in row.iter_mut().zip(masks).enumerate() {
            *byte = direction_byte(
                m,
                here[x + 1],
                [
                    up[x + 1],
                    up[x + 2],
                    here[x + 2],
                    down[x + 2],
                    down[x + 1],
                    down[x],
                    here[x],
                    up[x],
                ],
            );
        }
    }
}

/// The direction byte of one cell (line-of-sight bit clear): `m` is its move mask, `centre`
/// its value and `around` its neighbours' values in [`Direction`] order.
#[inline(always)]
fn direction_byte(m: u8, centre: u32, around: [u32; 8]) -> u8 {
    // Walls and cells that cannot move (a third of a typical game map, in long runs, so the
    // branch predicts well) need no neighbour reads.
    if m == 0 || centre == UNREACHABLE {
        return NO_DIRECTION;
    }
    // Branch-free arg-min: pack (value, direction) into one u64 so `min` picks the lowest
    // value and, on ties, the lowest direction index.
    let key = |dir: u8| {
        if m & (1 << dir) != 0 {
            (u64::from(around[dir as usize]) << 4) | u64::from(dir)
        } else {
            u64::MAX
        }
    };
    let best = key(0)
        .min(key(1))
        .min(key(2))
        .min(key(3))
        .min(key(4))
        .min(key(5))
        .min(key(6))
        .min(key(7));
    if (best >> 4) < u64::from(centre) {
        (best & 0x0F) as u8
    } else {
        NO_DIRECTION
    }
}

/// Whether the straight segment between the centres of `from` and `to` crosses only
/// passable cells, and never passes exactly through a corner between two cells of which
/// one is a wall (no corner cutting).
#[must_use]
pub fn segment_is_clear(cost: &CostField, from: Cell, to: Cell) -> bool {
    let passable = |x: i64, y: i64| cost.get_or_wall(x, y) != WALL;
    let (mut x, mut y) = (i64::from(from.x), i64::from(from.y));
    let (tx, ty) = (i64::from(to.x), i64::from(to.y));
    let (dx, dy) = ((tx - x).abs(), (ty - y).abs());
    let (sx, sy) = ((tx - x).signum(), (ty - y).signum());
    if !passable(x, y) {
        return false;
    }
    let (mut ix, mut iy) = (0, 0);
    while ix < dx || iy < dy {
        let decision = (1 + 2 * ix) * dy - (1 + 2 * iy) * dx;
        if decision == 0 {
            if !(passable(x + sx, y) && passable(x, y + sy)) {
                return false;
            }
            x += sx;
            y += sy;
            ix += 1;
            iy += 1;
        } else if decision < 0 {
            x += sx;
            ix += 1;
        } else {
            y += sy;
            iy += 1;
        }
        if !passable(x, y) {
            return false;
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::integration::tests::arb_costs;
    use crate::terrain::OPEN;
    use proptest::prelude::*;

    fn field_from(rows: &[&str]) -> (Grid, CostField) {
        let grid = Grid::new(rows[0].len() as u32, rows.len() as u32).unwrap();
        let costs: Vec<u8> = rows
            .iter()
            .flat_map(|r| r.bytes().map(|b| if b == b'#' { WALL } else { OPEN }))
            .collect();
        let cost = CostField::from_costs(&grid, &costs).unwrap();
        (grid, cost)
    }

    #[test]
    fn every_direction_goes_downhill_to_the_goal() {
        let (grid, cost) = field_from(&[
            "..........",
            "..####....",
            ".....#..#.",
            "..#..#..#.",
            "..#.....#.",
            "..#######.",
            "..........",
        ]);
        let goal = Cell::new(4, 3);
        let integ = IntegrationField::build(&cost, &[goal]).unwrap();
        let flow = FlowField::build(&cost, &integ, &[goal], &FlowConfig::default());
        for i in 0..grid.len() {
            let c = grid.cell(i);
            match flow.direction(c) {
                None => assert!(c == goal || integ.get(c) == UNREACHABLE),
                Some(d) => {
                    assert!(cost.moves(c) & (1 << d as u8) != 0, "illegal move at {c}");
                    let (dx, dy) = d.offset();
                    let n = Cell::new((c.x as i32 + dx) as u32, (c.y as i32 + dy) as u32);
                    assert!(integ.get(n) < integ.get(c));
                }
            }
        }
        // Following the flow from any reachable cell ends at the goal.
        let c = Cell::new(9, 6);
        let mut at = c;
        for _ in 0..100 {
            let Some(d) = flow.direction(at) else { break };
            let (dx, dy) = d.offset();
            at = Cell::new((at.x as i32 + dx) as u32, (at.y as i32 + dy) as u32);
        }
        assert_eq!(at, goal);
    }

    #[test]
    fn line_of_sight_stops_at_walls_and_corners() {
        let (grid, cost) = field_from(&[
            ".....", //
            ".#...", //
            "..G..", //
            "...#.", //
            ".....",
        ]);
        let goal = Cell::new(2, 2);
        let integ = IntegrationField::build(&cost, &[goal]).unwrap();
        let flow = FlowField::build(&cost, &integ, &[goal], &FlowConfig::default());
        assert!(flow.has_line_of_sight(Cell::new(4, 0)));
        assert!(
            !flow.has_line_of_sight(Cell::new(0, 0)),
            "behind the wall at (1,1)"
        );
        assert!(
            !flow.has_line_of_sight(Cell::new(4, 4)),
            "behind the wall at (3,3)"
        );
        assert!(flow.has_line_of_sight(Cell::new(0, 4)));
        assert!(flow.has_line_of_sight(Cell::new(0, 3)));
        assert!(
            !flow.has_line_of_sight(Cell::new(0, 1)),
            "the segment clips the wall at (1,1)"
        );
        // Sampling in a line-of-sight cell points straight at the goal centre.
        let pos = Vec2::new(4.2, 0.3);
        let dir = flow.sample(&grid, pos);
        let want = (grid.cell_centre(goal) - pos).normalize();
        assert!((dir - want).length() < 1e-6);
        // Without line of sight the sample is the cell's flow direction.
        let flat = FlowField::build(
            &cost,
            &integ,
            &[goal],
            &FlowConfig {
                line_of_sight_radius: 0,
            },
        );
        assert_eq!(
            flat.sample(&grid, pos),
            flat.direction(Cell::new(4, 0)).unwrap().unit_vector()
        );
        assert_eq!(flat.sample(&grid, Vec2::new(-1.0, 0.0)), Vec2::ZERO);
        // The largest radius accepted covers the whole map, as the map's own size does
        // (it used to overflow: `goal + radius`).
        let whole = |radius| {
            let config = FlowConfig {
                line_of_sight_radius: radius,
            };
            FlowField::build(&cost, &integ, &[goal], &config)
                .bytes()
                .to_vec()
        };
        assert_eq!(whole(u32::MAX), whole(grid.width().max(grid.height())));
        // Multi-cell goals get no line of sight.
        let two = [goal, Cell::new(0, 0)];
        let integ2 = IntegrationField::build(&cost, &two).unwrap();
        let flow2 = FlowField::build(&cost, &integ2, &two, &FlowConfig::default());
        assert!(flow2.bytes().iter().all(|b| b & LINE_OF_SIGHT == 0));
    }

    #[test]
    fn segment_clearance_is_symmetric() {
        let (grid, cost) = field_from(&[
            "...#....", //
            "........", //
            "..#.....", //
            "......#.", //
            "........",
        ]);
        for a in 0..grid.len() {
            for b in 0..grid.len() {
                let (ca, cb) = (grid.cell(a), grid.cell(b));
                assert_eq!(
                    segment_is_clear(&cost, ca, cb),
                    segment_is_clear(&cost, cb, ca),
                    "{ca} {cb}"
                );
            }
        }
    }

    #[test]
    fn repaired_rows_equal_a_rebuild() {
        let (grid, mut cost) = field_from(&[
            "........", "..#.....", "........", ".###....", "........", "........",
        ]);
        let goal = [Cell::new(3, 2)];
        let config = FlowConfig::default();
        let mut integ = IntegrationField::build(&cost, &goal).unwrap();
        let mut flow = FlowField::build(&cost, &integ, &goal, &config);
        for (x, y, c) in [
            (3u32, 1u32, WALL),
            (5, 4, WALL),
            (3, 1, 1),
            (2, 3, 1),
            (7, 0, WALL),
        ] {
            let cell = Cell::new(x, y);
            let old = cost.get(cell);
            cost.set(cell, c);
            let rows = integ.repair(&cost, &goal, &[(cell, old)]).unwrap().unwrap();
            flow.repair_rows(&cost, &integ, &goal, &config, rows);
            assert_eq!(
                flow,
                FlowField::build(&cost, &integ, &goal, &config),
                "after {cell}"
            );
        }
        let _ = grid;
    }

    #[test]
    fn row_bands_equal_the_whole_field() {
        let (_, cost) = field_from(&["....#...", "..#.....", "........", ".###....", "........"]);
        let goal = [Cell::new(7, 4)];
        let integ = IntegrationField::build(&cost, &goal).unwrap();
        let whole = FlowField::build(
            &cost,
            &integ,
            &goal,
            &FlowConfig {
                line_of_sight_radius: 0,
            },
        );
        let mut banded = vec![0u8; 40];
        let (top, bottom) = banded.split_at_mut(16);
        fill_direction_rows(&cost, &integ, 0..2, top);
        fill_direction_rows(&cost, &integ, 2..5, bottom);
        assert_eq!(banded, whole.bytes());
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]
        /// A partial field (searched only until some cells are final), extended to more
        /// cells, then completed a slice at a time, agrees with the complete field on every
        /// final cell, integration values and flow bytes (line of sight included), and ends
        /// equal to it.
        #[test]
        fn partial_fields_equal_the_complete_one_where_final(
            (w, h, costs, goals) in arb_costs(),
            demand in proptest::collection::vec((0u32..40, 0u32..40), 0..12),
            more in proptest::collection::vec((0u32..40, 0u32..40), 0..12),
            budget in 1usize..300,
        ) {
            let grid = Grid::new(w, h).unwrap();
            let cost = CostField::from_costs(&grid, &costs).unwrap();
            let goals: Vec<Cell> = goals.into_iter().map(|(x, y)| Cell::new(x, y)).collect();
            let cells = |v: &[(u32, u32)]| -> Vec<Cell> {
                v.iter().map(|&(x, y)| Cell::new(x % w, y % h)).collect()
            };
            let (demand, more) = (cells(&demand), cells(&more));
            let config = FlowConfig { line_of_sight_radius: 6 };
            let full = IntegrationField::build(&cost, &goals).unwrap();
            let full_flow = FlowField::build(&cost, &full, &goals, &config);
            // First a partial field toward another goal (the goal moved): the new one must
            // not keep anything of it.
            let before = [Cell::new(w - 1 - goals[0].x, h - 1 - goals[0].y)];
            let mut part = IntegrationField::unreachable(&cost);
            part.rebuild_for(&cost, &before, &more).unwrap();
            let mut flow = FlowField::empty(w, h);
            flow.rebuild_cells(&cost, &part, &before, &config, &more);
            part.rebuild_for(&cost, &goals, &demand).unwrap();
            flow.rebuild_cells(&cost, &part, &goals, &config, &demand);
            let agree = |part: &IntegrationField, flow: &FlowField, served: &[Cell]| {
                for &c in served {
                    // Walls are left out of the search: they are never reachable.
                    prop_assert!(part.is_final(c) || cost.get(c) == WALL, "{c} is not final");
                    let i = grid.index(c);
                    prop_assert_eq!(flow.bytes()[i], full_flow.bytes()[i], "flow at {}", c);
                }
                // Bytes not served are cleared, never left over from an earlier goal.
                for (i, (&b, &f)) in flow.bytes().iter().zip(full_flow.bytes()).enumerate() {
                    prop_assert!(b == NO_DIRECTION || b == f, "stale byte at {}", i);
                }
                for i in 0..grid.len() {
                    let c = grid.cell(i);
                    if part.is_final(c) {
                        prop_assert_eq!(part.get(c), full.get(c), "value at {}", c);
                    }
                }
                Ok(())
            };
            agree(&part, &flow, &demand)?;
            part.settle(&cost, &more).unwrap();
            flow.fill_cells(&cost, &part, &goals, &config, &more);
            agree(&part, &flow, &demand)?;
            agree(&part, &flow, &more)?;
            let mut slices = 0;
            while !part.advance(&cost, budget).unwrap() {
                slices += 1;
                prop_assert!(slices <= grid.len(), "advance makes no progress");
                agree(&part, &flow, &more)?;
            }
            prop_assert!(part == full);
            prop_assert!(part.is_complete());
        }
    }
}
