//! Filling a goal area (docs/behaviour.md, "Bodies and crowds"): where the units of a group that
//! reach a goal of more than one cell go inside it, so that the area fills from its inside out
//! instead of only at the edge where they came in.
//!
//! - Each open goal cell has a *depth*: its distance in steps (4-connected, through open goal
//!   cells) from the area's edge, the goal cells next to an open cell that is not a goal
//!   (where units come in). An area closed all round by walls counts its cells next to a
//!   wall as the edge.
//! - A goal cell is *taken* when it holds as many units resting in it (as the frame began)
//!   as fit in it side by side: `floor(cell size / diameter)²`, at least one, for the
//!   radius of each (so each one fills that share of it); a unit wider than a cell takes
//!   every cell whose centre lies within half a cell of its disc. Other cells are *free*.
//! - The *targets* are, in each piece of free cells (4-connected), its deepest cells. A unit in
//!   the area walks down [`GoalFill::to_target`] (steps through free cells to the nearest
//!   target) and rests on reaching a target; a unit with no free cell in reach (all taken
//!   around it) rests where it stands. So the area fills level by level from its deepest
//!   cells out to its edge, and the units still coming walk over free cells only.
//!
//! All of it is integer steps over cells and the same every run.

use glam::Vec2;

use crate::{Cell, CostField, GoalSet, Grid, WALL};

/// How much of a cell a unit of `radius` fills: one over the number of its size that fit
/// in a cell of `cell_size` side by side (at least one).
#[must_use]
pub fn cell_share(radius: f32, cell_size: f32) -> f32 {
    let across = (cell_size / (2.0 * radius)).floor().clamp(1.0, 64.0);
    1.0 / (across * across)
}

/// A cell is taken once the shares of its resting units reach this (one, less rounding).
const TAKEN: f32 = 1.0 - 1e-3;

/// What a unit in a goal area does ([`GoalFill::way`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum FillWay {
    /// Its cell is not an open cell of the area.
    Outside,
    /// It stands on a target, or no free cell is in reach: it rests.
    Rest,
    /// Towards this point (the centre of the next cell on the way to a target).
    Toward(Vec2),
}

/// How a goal area fills (see the module docs): its cells' depths, built once per goal and
/// terrain, and each frame's steps to the free cells to fill next.
#[derive(Clone, Debug, PartialEq)]
pub struct GoalFill {
    cost_version: u64,
    /// The goal's bounding box: its first cell and size.
    min: Cell,
    width: u32,
    height: u32,
    /// Per box cell: depth + 1 for open goal cells, 0 for the rest.
    depth: Vec<u32>,
    /// Per box cell: the shares of its resting units, this frame ([`cell_share`]).
    covered: Vec<f32>,
    /// Per box cell: steps to the nearest target through free cells (`u32::MAX`: none).
    to_target: Vec<u32>,
    /// Scratch for the searches.
    queue: Vec<u32>,
    /// The box cells `covered` counts units in this frame.
    touched: Vec<u32>,
    /// The taken cells (sorted) when `to_target` was last searched (`None`: never).
    searched: Option<Vec<u32>>,
    /// The targets of that search.
    targets: Vec<u32>,
    /// The open goal cells at the area's edge (depth 1: where units come in), and how many
    /// of them are taken this frame.
    edge_cells: usize,
    taken_edge_cells: usize,
    /// Per box cell: taken in that search.
    is_taken: Vec<bool>,
}

impl GoalFill {
    /// The fill of `goal` over `cost`'s open cells; `None` for a goal of one cell (units rest
    /// at it, no filling needed).
    #[must_use]
    pub fn new(goal: &GoalSet, cost: &CostField) -> Option<Self> {
        let (lo, width, height) = Self::bounding_box(goal)?;
        let size = width as usize * height as usize;
        let mut fill = Self {
            cost_version: cost.version(),
            min: lo,
            width,
            height,
            depth: vec![0; size],
            covered: vec![0.0; size],
            to_target: vec![u32::MAX; size],
            queue: Vec::with_capacity(goal.cells().len()),
            touched: Vec::new(),
            searched: None,
            targets: Vec::new(),
            is_taken: Vec::new(),
            edge_cells: 0,
            taken_edge_cells: 0,
        };
        fill.build_depths(goal, cost);
        fill.edge_cells = fill.depth.iter().filter(|&&d| d == 1).count();
        Some(fill)
    }

    /// Whether this fill was built over `cost` as it is now (the terrain did not change).
    #[must_use]
    pub fn is_current(&self, cost: &CostField) -> bool {
        self.cost_version == cost.version()
    }

    fn build_depths(&mut self, goal: &GoalSet, cost: &CostField) {
        const UNSEEN: u32 = u32::MAX;
        let mut steps = vec![UNSEEN; self.depth.len()];
        // The goal's open cells, by box index.
        let mut open_goal = vec![false; self.depth.len()];
        for c in goal.cells().iter().filter(|&&c| cost.get(c) != WALL) {
            open_goal[((c.y - self.min.y) * self.width + (c.x - self.min.x)) as usize] = true;
        }
        let (w, h) = (self.width as i64, self.height as i64);
        let mut edge_by_wall = Vec::new();
        self.queue.clear();
        for (i, &open) in open_goal.iter().enumerate() {
            if !open {
                continue;
            }
            let (x, y) = ((i as i64) % w, (i as i64) / w);
            let mut entry = false;
            let mut walled = false;
            for (dx, dy) in [(1, 0), (-1, 0), (0, 1), (0, -1)] {
                let (nx, ny) = (x + dx, y + dy);
                let inside = (0..w).contains(&nx) && (0..h).contains(&ny);
                if inside && open_goal[(ny * w + nx) as usize] {
                    continue;
                }
                let (gx, gy) = (i64::from(self.min.x) + nx, i64::from(self.min.y) + ny);
                if cost.get_or_wall(gx, gy) == WALL {
                    walled = true;
                } else {
                    entry = true;
                }
            }
            if entry {
                steps[i] = 0;
                self.queue.push(i as u32);
            } else if walled {
                edge_by_wall.push(i as u32);
            }
        }
        if self.queue.is_empty() {
            for &i in &edge_by_wall {
                steps[i as usize] = 0;
            }
            self.queue.extend(edge_by_wall);
        }
        bfs(&mut self.queue, &mut steps, self.width, self.height, |i| {
            open_goal[i]
        });
        for (d, s) in self.depth.iter_mut().zip(&steps) {
            *d = if *s == UNSEEN { 0 } else { s + 1 };
        }
    }

    fn cell(&self, i: usize) -> Cell {
        let w = self.width as usize;
        Cell::new(self.min.x + (i % w) as u32, self.min.y + (i / w) as u32)
    }

    fn index_of(&self, grid: &Grid, pos: Vec2) -> Option<usize> {
        let cell = grid.cell_at(pos)?;
        let (x, y) = (
            cell.x.checked_sub(self.min.x)?,
            cell.y.checked_sub(self.min.y)?,
        );
        (x < self.width && y < self.height).then(|| (y * self.width + x) as usize)
    }

    /// This frame's targets and steps from the units resting in the area as the frame began
    /// (`resting`: each one's position and radius).
    pub fn update(&mut self, grid: &Grid, resting: impl IntoIterator<Item = (Vec2, f32)>) {
        for &i in &self.touched {
            self.covered[i as usize] = 0.0;
        }
        self.touched.clear();
        let size = grid.cell_size();
        for (pos, radius) in resting {
            let Some(i) = self.index_of(grid, pos) else {
                continue;
            };
            if radius <= 0.5 * size || !radius.is_finite() {
                self.cover(i, cell_share(radius, size));
                continue;
            }
            // A body wider than a cell takes every cell whose centre lies within half a
            // cell of its disc: no other body fits there beside it.
            let w = self.width as usize;
            let (cx, cy) = ((i % w) as i64, (i / w) as i64);
            let around = radius + 0.5 * size;
            let reach = (around / size).ceil().min(f32::from(u16::MAX)) as i64;
            for y in (cy - reach).max(0)..=(cy + reach).min(i64::from(self.height) - 1) {
                for x in (cx - reach).max(0)..=(cx + reach).min(i64::from(self.width) - 1) {
                    let j = (y as usize) * w + x as usize;
                    let centre = grid.cell_centre(self.cell(j));
                    if j == i || centre.distance_squared(pos) <= around * around {
                        self.cover(j, 1.0);
                    }
                }
            }
        }
        let mut taken: Vec<u32> = self
            .touched
            .iter()
            .copied()
            .filter(|&i| self.covered[i as usize] >= TAKEN)
            .collect();
        taken.sort_unstable();
        self.taken_edge_cells = taken
            .iter()
            .filter(|&&i| self.depth[i as usize] == 1)
            .count();
        // The steps are searched again only when the taken cells changed: when one was
        // freed, or a quarter of the targets (at least one) were taken since the last
        // search, or there were no targets left: between
        // searches a unit walks to a target that is still free, or rests next to the ones
        // that were taken (see `way`). Measured on a 300x600-cell area filled by 100k
        // units: searching every frame cost 5 ms a frame.
        if self.searched.as_ref() == Some(&taken) {
            return;
        }
        let targets_taken = self
            .targets
            .iter()
            .filter(|&&i| self.covered[i as usize] >= TAKEN)
            .count();
        let only_added = self
            .searched
            .as_ref()
            .is_some_and(|before| is_subset(before, &taken));
        if only_added
            && !self.targets.is_empty()
            && targets_taken < self.targets.len().div_ceil(4).max(1)
        {
            return;
        }
        self.search(taken);
    }

    fn cover(&mut self, i: usize, share: f32) {
        if self.covered[i] == 0.0 {
            self.touched.push(i as u32);
        }
        self.covered[i] += share;
    }

    /// Whether some cell at the area's edge is not taken this frame: units of the group
    /// outside the area then walk on into it rather than settle behind resting friends.
    /// The area fills from its deepest cells out, so its edge is the last to fill; a free
    /// cell left deep inside a full edge (a resting unit pushed out of it) is no way in, and
    /// units outside settle rather than press against the edge for ever.
    #[must_use]
    pub fn has_room(&self) -> bool {
        self.taken_edge_cells < self.edge_cells
    }

    /// The taken cells (box indices, sorted) the steps were last searched with (`None`:
    /// never): what a snapshot saves, so that a restored run searches as the saved one did.
    #[must_use]
    pub fn searched(&self) -> Option<&[u32]> {
        self.searched.as_deref()
    }

    /// The box a fill of `goal` covers: its first cell, width and height (`None` for a goal
    /// of one cell, which has no fill).
    fn bounding_box(goal: &GoalSet) -> Option<(Cell, u32, u32)> {
        let cells = goal.cells();
        if cells.len() < 2 {
            return None;
        }
        let (mut lo, mut hi) = (cells[0], cells[0]);
        for c in cells {
            lo = Cell::new(lo.x.min(c.x), lo.y.min(c.y));
            hi = Cell::new(hi.x.max(c.x), hi.y.max(c.y));
        }
        Some((lo, hi.x - lo.x + 1, hi.y - lo.y + 1))
    }

    /// Whether `taken` could be the taken cells of a fill of `goal` (what
    /// [`Self::search_with`] accepts), without building the fill: `Err` says why not (a
    /// goal of one cell, an index outside the goal's box, indices out of order).
    pub fn check_taken(goal: &GoalSet, taken: &[u32]) -> Result<(), String> {
        let (_, width, height) =
            Self::bounding_box(goal).ok_or("a fill is saved for a one-cell goal")?;
        Self::check_taken_in(width as usize * height as usize, taken)
    }

    fn check_taken_in(size: usize, taken: &[u32]) -> Result<(), String> {
        if let Some(&bad) = taken.iter().find(|&&i| i as usize >= size) {
            return Err(format!(
                "taken cell {bad} is outside the goal's {size} cells"
            ));
        }
        if !taken.windows(2).all(|w| w[0] < w[1]) {
            return Err("taken cells are not in increasing order".into());
        }
        Ok(())
    }

    /// Searches the steps as if `taken` (box indices, as [`Self::searched`] gives them) were
    /// the taken cells: a restored fill then continues exactly. `Err` names an index
    /// outside the box or out of order (see [`Self::check_taken`]).
    pub fn search_with(&mut self, taken: Vec<u32>) -> Result<(), String> {
        Self::check_taken_in(self.depth.len(), &taken)?;
        self.search(taken);
        Ok(())
    }

    /// The targets and steps with `taken` (sorted box indices) taken.
    fn search(&mut self, taken: Vec<u32>) {
        self.is_taken.clear();
        self.is_taken.resize(self.depth.len(), false);
        for &i in &taken {
            self.is_taken[i as usize] = true;
        }
        self.searched = Some(taken);
        let free = |i: usize, depth: &[u32], is_taken: &[bool]| depth[i] > 0 && !is_taken[i];
        // The free cells in pieces (4-connected): each piece's targets are its deepest
        // cells, so a free hole left deep inside a filled part does not draw every unit.
        let (w, h) = (self.width, self.height);
        let (depth, is_taken) = (&self.depth, &self.is_taken);
        self.to_target.fill(u32::MAX);
        let mut seeds = Vec::new();
        for start in 0..depth.len() {
            if self.to_target[start] != u32::MAX || !free(start, depth, is_taken) {
                continue;
            }
            // Mark the piece (steps 0 for now), and find its deepest level.
            self.queue.clear();
            self.queue.push(start as u32);
            self.to_target[start] = 0;
            bfs_keep(&mut self.queue, &mut self.to_target, w, h, 0, |i| {
                free(i, depth, is_taken)
            });
            let level = self.queue.iter().map(|&i| depth[i as usize]).max();
            seeds.extend(
                self.queue
                    .iter()
                    .copied()
                    .filter(|&i| Some(depth[i as usize]) == level),
            );
            for &i in &self.queue {
                self.to_target[i as usize] = u32::MAX - 1;
            }
        }
        // Steps from the seeds through the free cells.
        for t in self.to_target.iter_mut() {
            if *t == u32::MAX - 1 {
                *t = u32::MAX;
            }
        }
        self.queue.clear();
        for &i in &seeds {
            self.to_target[i as usize] = 0;
            self.queue.push(i);
        }
        self.targets = seeds;
        bfs(&mut self.queue, &mut self.to_target, w, h, |i| {
            free(i, depth, is_taken)
        });
    }

    /// Steps from the cell of `pos` to the nearest target (see the module docs).
    #[must_use]
    pub fn to_target(&self, grid: &Grid, pos: Vec2) -> Option<u32> {
        let i = self.index_of(grid, pos)?;
        (self.to_target[i] != u32::MAX).then_some(self.to_target[i])
    }

    /// What a unit at `pos` does (see the module docs); `resting`: it rested as the frame
    /// began (a resting unit in a taken cell stays: it is one of those who took it).
    #[must_use]
    pub fn way(&self, grid: &Grid, pos: Vec2, resting: bool) -> FillWay {
        let Some(i) = self.index_of(grid, pos).filter(|&i| self.depth[i] > 0) else {
            return FillWay::Outside;
        };
        let free = |j: usize| self.covered[j] < TAKEN;
        if (resting && !free(i)) || (self.to_target[i] == 0 && free(i)) {
            return FillWay::Rest;
        }
        // The free neighbour (8-connected, inside the box) with the fewest steps; ties go to
        // the first in a fixed order. A target taken since the last search is no target.
        let (w, h) = (i64::from(self.width), i64::from(self.height));
        let (x, y) = ((i as i64) % w, (i as i64) / w);
        let mut best: Option<(u32, usize)> = None;
        for (dx, dy) in [
            (1, 0),
            (-1, 0),
            (0, 1),
            (0, -1),
            (1, 1),
            (-1, 1),
            (1, -1),
            (-1, -1),
        ] {
            let (nx, ny) = (x + dx, y + dy);
            if !((0..w).contains(&nx) && (0..h).contains(&ny)) {
                continue;
            }
            let j = (ny * w + nx) as usize;
            // A diagonal step needs both cells beside it open goal cells.
            if dx != 0 && dy != 0 {
                let (a, b) = ((y * w + nx) as usize, (ny * w + x) as usize);
                if self.depth[a] == 0 || self.depth[b] == 0 {
                    continue;
                }
            }
            let steps = self.to_target[j];
            if steps != u32::MAX && free(j) && best.is_none_or(|(s, _)| steps < s) {
                best = Some((steps, j));
            }
        }
        let stale = self.to_target[i] == 0;
        match best {
            Some((steps, j)) if steps < self.to_target[i] || (stale && steps == 0) => {
                FillWay::Toward(grid.cell_centre(self.cell(j)))
            }
            _ => FillWay::Rest,
        }
    }
}

/// Whether every element of sorted `small` is in sorted `big`.
fn is_subset(small: &[u32], big: &[u32]) -> bool {
    let mut rest = big.iter();
    small.iter().all(|x| rest.any(|y| y == x))
}

/// Breadth-first steps (4-connected) over a `width` x `height` box from the indices in
/// `queue` (already at their steps), through the indices `passable` allows.
fn bfs(
    queue: &mut Vec<u32>,
    steps: &mut [u32],
    width: u32,
    height: u32,
    passable: impl Fn(usize) -> bool,
) {
    walk(queue, steps, width, height, None, passable);
    queue.clear();
}

/// [`bfs`] that marks every cell it reaches `mark` instead of its steps, and leaves them all
/// in `queue` (the piece of passable cells around the first).
fn bfs_keep(
    queue: &mut Vec<u32>,
    steps: &mut [u32],
    width: u32,
    height: u32,
    mark: u32,
    passable: impl Fn(usize) -> bool,
) {
    walk(queue, steps, width, height, Some(mark), passable);
}

fn walk(
    queue: &mut Vec<u32>,
    steps: &mut [u32],
    width: u32,
    height: u32,
    mark: Option<u32>,
    passable: impl Fn(usize) -> bool,
) {
    let (w, h) = (width as usize, height as usize);
    let mut head = 0;
    while head < queue.len() {
        let i = queue[head] as usize;
        head += 1;
        let next = mark.unwrap_or(steps[i] + 1);
        let (x, y) = (i % w, i / w);
        let mut visit = |j: usize| {
            if steps[j] == u32::MAX && passable(j) {
                steps[j] = next;
                queue.push(j as u32);
            }
        };
        if x + 1 < w {
            visit(i + 1);
        }
        if x > 0 {
            visit(i - 1);
        }
        if y + 1 < h {
            visit(i + w);
        }
        if y > 0 {
            visit(i - w);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn area(w: u32, h: u32, cells: impl Iterator<Item = (u32, u32)>) -> (Grid, CostField, GoalSet) {
        let grid = Grid::new(w, h).unwrap();
        let cost = CostField::filled(&grid, 1);
        let goal = GoalSet::new(cells.map(|(x, y)| Cell::new(x, y))).unwrap();
        (grid, cost, goal)
    }

    #[test]
    fn a_single_cell_needs_no_fill() {
        let (_, cost, _) = area(8, 8, [(1, 1)].into_iter());
        assert!(GoalFill::new(&GoalSet::single(Cell::new(1, 1)), &cost).is_none());
    }

    #[test]
    fn an_area_fills_from_its_middle_out() {
        let (grid, cost, goal) = area(20, 20, (5..10).flat_map(|x| (5..10).map(move |y| (x, y))));
        let mut fill = GoalFill::new(&goal, &cost).unwrap();
        fill.update(&grid, []);
        // The middle cell is the deepest: the only target.
        let middle = grid.cell_centre(Cell::new(7, 7));
        assert_eq!(fill.way(&grid, middle, false), FillWay::Rest);
        let corner = grid.cell_centre(Cell::new(5, 5));
        assert!(matches!(fill.way(&grid, corner, false), FillWay::Toward(_)));
        assert_eq!(
            fill.way(&grid, grid.cell_centre(Cell::new(0, 0)), false),
            FillWay::Outside
        );
        // Once a unit rests in the middle, the ring around it is next.
        fill.update(&grid, [(middle, 0.45)]);
        assert_eq!(fill.way(&grid, middle, true), FillWay::Rest);
        // A unit walking by there is sent on to the ring.
        assert!(matches!(fill.way(&grid, middle, false), FillWay::Toward(_)));
        let ring = grid.cell_centre(Cell::new(6, 7));
        assert_eq!(fill.way(&grid, ring, false), FillWay::Rest);
        assert_eq!(fill.to_target(&grid, corner), Some(2));
    }

    #[test]
    fn taken_cells_are_walked_around_and_a_full_area_rests() {
        let (grid, cost, goal) = area(20, 20, (5..8).flat_map(|x| (5..8).map(move |y| (x, y))));
        let mut fill = GoalFill::new(&goal, &cost).unwrap();
        let all: Vec<(Vec2, f32)> = goal
            .cells()
            .iter()
            .map(|&c| (grid.cell_centre(c), 0.45))
            .collect();
        fill.update(&grid, all.iter().copied());
        for &c in goal.cells() {
            assert_eq!(fill.way(&grid, grid.cell_centre(c), false), FillWay::Rest);
        }
        // Small units: one does not take a cell, four do.
        assert_eq!(cell_share(0.45, 1.0), 1.0);
        assert_eq!(cell_share(0.2, 1.0), 0.25);
        assert_eq!(cell_share(3.0, 1.0), 1.0);
        fill.update(&grid, [(grid.cell_centre(Cell::new(6, 6)), 0.2)]);
        assert_eq!(
            fill.way(&grid, grid.cell_centre(Cell::new(6, 6)), false),
            FillWay::Rest
        );
        assert_eq!(
            fill.to_target(&grid, grid.cell_centre(Cell::new(6, 6))),
            Some(0)
        );
    }

    #[test]
    fn a_search_is_repeated_exactly_from_its_taken_cells() {
        let (grid, cost, goal) = area(30, 30, (3..20).flat_map(|x| (4..15).map(move |y| (x, y))));
        let mut fill = GoalFill::new(&goal, &cost).unwrap();
        let resting: Vec<(Vec2, f32)> = (5..12)
            .map(|x| (grid.cell_centre(Cell::new(x, 9)), 0.45))
            .collect();
        fill.update(&grid, resting.iter().copied());
        let taken = fill.searched().unwrap().to_vec();
        assert_eq!(taken.len(), 7);
        let mut again = GoalFill::new(&goal, &cost).unwrap();
        again.search_with(taken).unwrap();
        assert_eq!(again.to_target, fill.to_target);
        assert_eq!(again.targets, fill.targets);
        assert!(again.search_with(vec![5, 3]).is_err());
        assert!(again.search_with(vec![100_000]).is_err());
    }

    #[test]
    fn terrain_changes_are_noticed() {
        let (_, mut cost, goal) = area(10, 10, (2..5).map(|x| (x, 2)));
        let fill = GoalFill::new(&goal, &cost).unwrap();
        assert!(fill.is_current(&cost));
        cost.set(Cell::new(3, 2), WALL);
        assert!(!fill.is_current(&cost));
    }
}
