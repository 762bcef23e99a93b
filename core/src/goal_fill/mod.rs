//! How an army comes to rest around its goal (docs/behaviour.md, "Coming to rest"): the
//! order in which the cells around a goal fill, which cells its resting units hold, and where
//! a unit of the army walks to rest next.
//!
//! - **The rest order.** Each cell of a box around the goal has a *rank*. The goal's open
//!   cells come first, a goal area from its deepest cells (farthest in 4-connected steps,
//!   through goal cells, from the goal cells next to an open cell that is not a goal: where
//!   units come in; an area closed all round by walls counts its cells next to a wall as
//!   that edge) out to its edge. Then the cells outside the goal, by their path distance from
//!   it on the fill's costs: ring `k` holds the cells `k - 1` to `k` cells of distance away.
//!   The box reaches [`GoalFill::reach`] cells past the goal's bounding box and grows when the
//!   resting army nears its edge.
//! - A cell is *taken* when it holds as many resting units (as the frame began) as fit in it
//!   side by side ([`cell_share`]); a unit wider than a cell takes every cell whose centre
//!   lies within half a cell of its disc. Other armies' resting units count toward taking a
//!   cell too (not toward holding it). Other cells are *free*. A cell holding any resting
//!   unit is *occupied*; the occupied cells joined to the goal's occupied cells through
//!   occupied cells (8 neighbours) are *supported*.
//! - The *targets* are, in each piece of free cells (4-connected), its cells of the lowest
//!   rank. [`GoalFill::way`] walks a unit down the steps through free cells to the nearest
//!   target and rests it there; a resting unit stays while its cell is supported, and on a
//!   cell that lost its support until free room nearer the goal opens beside it.
//! - An army that has stood *whole on its goal* since it was sent there (every unit still
//!   coming on a goal cell and no resting unit outside the goal, in every update: nobody
//!   needs to pass anyone, as in a garrison spawned inside its goal) rests where it stands:
//!   a unit on a free goal cell rests there. The first update that finds it otherwise ends
//!   this for good, and the order above holds.
//! - The *rest area* is the goal's cells and the ranks up to [`REST_MARGIN`] past the farther
//!   of the lowest target and the farthest supported cell: outside it a unit follows its
//!   field ([`FillWay::Outside`]) and does not rest.
//! - While the goal's open cells hold the whole army and part of it rests outside the goal
//!   (*stranded*: cut off from the goal's free cells by its own blob), the blob flows: a
//!   resting unit steps onto a free goal cell beside it that lies farther, through the goal's
//!   cells, from the army's resting cells outside, until none of it rests outside.
//! - Once the army has stopped arriving (*settling*), a settled unit on the blob's far rim,
//!   beyond the ring by which the open cells in order hold the army, walks round to free
//!   room nearer the goal; on its way it follows the steps outside the rest area too, but
//!   it rests only inside it.
//!
//! All of it is integer steps over cells and the same every run.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use glam::Vec2;

use crate::{Cell, CostField, GoalSet, Grid, ORTHO_STEP, WALL};

#[cfg(test)]
mod tests;
mod update;
mod way;

/// How much of a cell a unit of `radius` fills: one over the number of its size that fit
/// in a cell of `cell_size` side by side (at least one).
#[must_use]
pub fn cell_share(radius: f32, cell_size: f32) -> f32 {
    let across = (cell_size / (2.0 * radius)).floor().clamp(1.0, 64.0);
    1.0 / (across * across)
}

/// Whether a resting body of `radius` covers a share of its own cell ([`cell_share`]):
/// at most half a cell across (or a radius that is not a number). A bigger one takes every
/// cell whose centre lies within half a cell of it (`GoalFill::cells_under`).
fn covers_a_share(radius: f32, cell_size: f32) -> bool {
    radius <= 0.5 * cell_size || !radius.is_finite()
}

/// A cell is taken once the shares of its resting units reach this (one, less rounding).
const TAKEN: f32 = 1.0 - 1e-3;

/// Rings of the rest order past the farther of the lowest target and the farthest supported
/// cell that still belong to the rest area: a unit that far out walks round the resting blob
/// to free room instead of following its field into the blob's back.
pub const REST_MARGIN: u32 = 3;

/// Cells past the goal's bounding box a new fill's box reaches; it doubles when the resting
/// army comes within [`REST_MARGIN`] rings of the box's edge.
pub const FIRST_REACH: u32 = 16;

/// The largest reach a fill grows to (cells past the goal's bounding box).
pub const MAX_REACH: u32 = 4096;

/// From how many targets on a search waits for a quarter of them to be taken (below, for
/// one): a few targets are taken one by one, and a stale one sends units to rest beside it.
const THROTTLE_FROM: usize = 64;

/// Free cells a piece within the blob needs to be a room that draws the resting units beside
/// it (a smaller piece is a hole left by a pushed unit: the blob does not shift for it).
const PASS_PIECE: usize = 8;

/// Ranks by which a piece's room must come before where newcomers arrive for the resting
/// army to flow into it.
const FLOW_SLACK: u32 = 4;

/// An army with at most one unit still coming for this many of its resting units has
/// stopped arriving: its blob settles (see `MOVE_IN_SLACK`).
const SETTLING_SHARE: u32 = 10;

/// Ranks by which free room next to the resting blob must come before a settled unit's
/// own cell, once the army has stopped arriving, for the unit to get up and walk round to
/// it (the blob ends compact instead of lopsided)...
const MOVE_IN_SLACK: u32 = 3;

/// ...when its cell also lies more than this many rings beyond the rank by which the open
/// cells in order would hold the whole army: the blob's far rim, not its ragged edge.
const FIT_SLACK: u32 = 2;

/// A piece holding at least one in this many of the army's units still coming (and at least
/// one) is where the army arrives.
const ARRIVING_SHARE: u32 = 10;

/// The rank of a cell outside the rest order (a wall, or past the box's reach).
const UNRANKED: u32 = u32::MAX;

/// What a unit does in its army's rest order ([`GoalFill::way`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum FillWay {
    /// Outside the rest area: it follows its field.
    Outside,
    /// It rests where it stands; `in_goal`: on a cell of the goal (arrived) or outside it
    /// (settled).
    Rest {
        /// Whether it stands on a goal cell.
        in_goal: bool,
    },
    /// Towards this point (the centre of the next cell on the way to a target).
    Toward(Vec2),
}

/// An army's rest order around its goal and this frame's targets (see the module docs).
#[derive(Clone, Debug, PartialEq)]
pub struct GoalFill {
    cost_version: u64,
    /// The box: its first cell and size.
    min: Cell,
    width: u32,
    height: u32,
    /// Cells past the goal's bounding box the box reaches.
    reach: u32,
    /// The goal's ranks: goal cells have ranks `0..goal_ranks`, the rings outside follow.
    goal_ranks: u32,
    /// Per box cell: its rank ([`UNRANKED`]: walls, cells past the reach).
    rank: Vec<u32>,
    /// Per box cell: the shares of its resting units, this frame ([`cell_share`]).
    covered: Vec<f32>,
    /// The box cells `covered` counts units in this frame.
    touched: Vec<u32>,
    /// Per box cell: steps to the nearest target through free cells (`u32::MAX`: none).
    to_target: Vec<u32>,
    /// Per box cell: occupied and joined to the goal's occupied cells.
    supported: Vec<bool>,
    /// The occupied cells (sorted) `supported` was found for.
    occupied: Vec<u32>,
    /// The farthest supported rank (`None`: no cell is supported).
    far_supported: Option<u32>,
    /// Scratch for the searches.
    queue: Vec<u32>,
    /// The taken cells (sorted) when `to_target` was last searched (`None`: never).
    searched: Option<Vec<u32>>,
    /// The targets of that search, and the lowest rank among them.
    targets: Vec<u32>,
    low_target: Option<u32>,
    /// Per box cell: the piece of free cells it belongs to in that search (`u32::MAX`: none).
    piece: Vec<u32>,
    /// Per piece of that search: its lowest and highest rank and its cells.
    piece_low: Vec<u32>,
    piece_high: Vec<u32>,
    piece_cells: Vec<u32>,
    /// This frame's rooms (sorted; see `find_rooms`).
    rooms: Vec<u32>,
    /// This frame, while the goal's open cells hold the whole army yet part of it rests
    /// outside the goal (empty otherwise; see `find_flow`): per box cell, its steps
    /// (4-connected) from the army's supported cells outside the goal, through the goal's
    /// cells (`u32::MAX`: none). The blob flows along them, away from the units outside,
    /// until they are in (see `drawn_to`).
    flow_from_outside: Vec<u32>,
    /// This frame, the army has stopped arriving (at most one unit still coming, anywhere,
    /// for [`SETTLING_SHARE`] resting in the box): the blob settles, and its far rim moves
    /// round to free room nearer the goal (see `drawn_to`).
    settling: bool,
    /// The army's resting units in the box this frame, and the cells they fill (the sum of
    /// their shares; a body wider than a cell, its diameter squared).
    resting_units: u32,
    held: f64,
    /// The most cells past its own cell the rim of one of those units reaches this frame
    /// (0 for bodies at most a cell across): a resting body bigger than a cell covers the
    /// cells beside its own, and looks past them for free room ([`Self::drawn_to`]).
    rim: u32,
    /// The box cells only other armies' resting units cover this frame (sorted).
    foreign_cells: Vec<u32>,
    /// What the last count counted, unit by unit in the order given: each resting unit's box
    /// cell and radius (and, for a body wider than a cell, its centre), while no other
    /// army's unit added to the counts. The same list again gives the same counts, so they
    /// are not taken again ([`Self::update_in`]).
    counted: Vec<u64>,
    /// Per rank: the open cells of the box up to it (ranks in order).
    open_up_to: Vec<u32>,
    /// The rank by which the open cells in order hold the whole army, as its resting units
    /// fill them this frame (`u32::MAX`: not within the box).
    fit_rank: u32,
    /// Per box cell: taken in that search.
    is_taken: Vec<bool>,
    /// The army has stood whole on its goal in every update since the fill (or the fill it
    /// replaced) was built ([`Self::whole_on_goal`]).
    whole: bool,
}

impl GoalFill {
    /// The rest order of `goal` over `cost`'s open cells, its box reaching [`FIRST_REACH`]
    /// cells past the goal; `None` when no goal cell is open on `cost`.
    #[must_use]
    pub fn new(goal: &GoalSet, cost: &CostField) -> Option<Self> {
        Self::with_reach(goal, cost, FIRST_REACH)
    }

    /// [`Self::new`] with a box reaching `reach` cells past the goal (at most [`MAX_REACH`]).
    #[must_use]
    pub fn with_reach(goal: &GoalSet, cost: &CostField, reach: u32) -> Option<Self> {
        let reach = reach.min(MAX_REACH);
        let cells = goal.cells();
        if !cells.iter().any(|&c| cost.get(c) != WALL) {
            return None;
        }
        let first = *cells.first()?;
        let (mut lo, mut hi) = (first, first);
        for c in cells {
            lo = Cell::new(lo.x.min(c.x), lo.y.min(c.y));
            hi = Cell::new(hi.x.max(c.x), hi.y.max(c.y));
        }
        let max_x = cost.width().checked_sub(1)?;
        let max_y = cost.height().checked_sub(1)?;
        let min = Cell::new(lo.x.saturating_sub(reach), lo.y.saturating_sub(reach));
        let max = Cell::new(
            hi.x.saturating_add(reach).min(max_x),
            hi.y.saturating_add(reach).min(max_y),
        );
        let (width, height) = (max.x.checked_sub(min.x)? + 1, max.y.checked_sub(min.y)? + 1);
        let size = width as usize * height as usize;
        let mut fill = Self {
            cost_version: cost.version(),
            min,
            width,
            height,
            reach,
            goal_ranks: 0,
            rank: vec![UNRANKED; size],
            covered: vec![0.0; size],
            touched: Vec::new(),
            to_target: vec![u32::MAX; size],
            supported: vec![false; size],
            occupied: Vec::new(),
            far_supported: None,
            queue: Vec::new(),
            searched: None,
            targets: Vec::new(),
            low_target: None,
            piece: vec![u32::MAX; size],
            piece_low: Vec::new(),
            piece_high: Vec::new(),
            piece_cells: Vec::new(),
            rooms: Vec::new(),
            flow_from_outside: Vec::new(),
            settling: false,
            resting_units: 0,
            held: 0.0,
            rim: 0,
            foreign_cells: Vec::new(),
            counted: Vec::new(),
            open_up_to: Vec::new(),
            fit_rank: u32::MAX,
            is_taken: Vec::new(),
            whole: true,
        };
        if !fill.rank_cells(goal, cost) {
            return None;
        }
        let ranked = fill.rank.iter().filter(|&&r| r != UNRANKED);
        let mut open = vec![0u32; ranked.clone().max().map_or(0, |&r| r as usize + 1)];
        for &r in ranked {
            open[r as usize] += 1;
        }
        fill.open_up_to = open
            .iter()
            .scan(0, |sum, &n| {
                *sum += n;
                Some(*sum)
            })
            .collect();
        Some(fill)
    }

    /// Whether this fill was built over `cost` as it is now (the terrain did not change).
    #[must_use]
    pub fn is_current(&self, cost: &CostField) -> bool {
        self.cost_version == cost.version()
    }

    /// How far past the goal's bounding box the fill's box reaches, in cells: what a
    /// snapshot saves ([`Self::with_reach`] builds the same box again).
    #[must_use]
    pub fn reach(&self) -> u32 {
        self.reach
    }

    fn box_index(&self, c: Cell) -> Option<usize> {
        let (x, y) = (c.x.checked_sub(self.min.x)?, c.y.checked_sub(self.min.y)?);
        (x < self.width && y < self.height).then(|| (y * self.width + x) as usize)
    }

    /// Ranks every cell of the box (see the module docs); `false` when no goal cell is open.
    fn rank_cells(&mut self, goal: &GoalSet, cost: &CostField) -> bool {
        let size = self.rank.len();
        let mut open_goal = vec![false; size];
        let mut any = false;
        for &c in goal.cells() {
            if cost.get(c) != WALL
                && let Some(i) = self.box_index(c)
            {
                open_goal[i] = true;
                any = true;
            }
        }
        if !any {
            return false;
        }
        // The goal's depths: 4-connected steps through goal cells from its edge.
        const UNSEEN: u32 = u32::MAX;
        let mut steps = vec![UNSEEN; size];
        let (w, h) = (i64::from(self.width), i64::from(self.height));
        let mut edge_by_wall = Vec::new();
        self.queue.clear();
        for (i, &open) in open_goal.iter().enumerate() {
            if !open {
                continue;
            }
            let (x, y) = ((i as i64) % w, (i as i64) / w);
            let (mut entry, mut walled) = (false, false);
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
        let deepest = steps.iter().filter(|&&s| s != UNSEEN).max().copied();
        self.goal_ranks = deepest.map_or(0, |d| d + 1);
        for (i, &s) in steps.iter().enumerate() {
            if s != UNSEEN {
                self.rank[i] = self.goal_ranks - 1 - s;
            }
        }
        // The rings outside: path distance from the goal's open cells, within the box.
        let mut dist = vec![u32::MAX; size];
        let mut heap = BinaryHeap::new();
        for (i, &open) in open_goal.iter().enumerate() {
            if open {
                dist[i] = 0;
                heap.push(Reverse((0u32, i as u32)));
            }
        }
        let bound = self.reach.saturating_mul(ORTHO_STEP);
        while let Some(Reverse((d, i))) = heap.pop() {
            if d > dist[i as usize] {
                continue;
            }
            let cell = self.cell(i as usize);
            for (to, weight) in cost.steps_from(cell) {
                let Some(j) = self.box_index(to) else {
                    continue;
                };
                let nd = d.saturating_add(weight);
                if nd <= bound && nd < dist[j] {
                    dist[j] = nd;
                    heap.push(Reverse((nd, j as u32)));
                }
            }
        }
        for (i, &d) in dist.iter().enumerate() {
            if d != u32::MAX && !open_goal[i] {
                let ring = d.div_ceil(ORTHO_STEP).max(1);
                self.rank[i] = self.goal_ranks - 1 + ring;
            }
        }
        true
    }

    fn cell(&self, i: usize) -> Cell {
        let w = self.width as usize;
        Cell::new(self.min.x + (i % w) as u32, self.min.y + (i / w) as u32)
    }

    /// The cells of the box a body wider than a cell takes, with its centre at `pos` in cell
    /// `i`: its own cell and every cell whose centre lies within half a cell of its disc (no
    /// other body fits there beside it), row by row. Taking cells and standing on the goal
    /// are both counted this way.
    fn cells_under<'g>(
        &self,
        grid: &'g Grid,
        i: usize,
        pos: Vec2,
        radius: f32,
    ) -> impl Iterator<Item = usize> + use<'g> {
        let (width, height, min) = (self.width, self.height, self.min);
        let w = width as usize;
        let size = grid.cell_size();
        let (cx, cy) = ((i % w) as i64, (i / w) as i64);
        let around = radius + 0.5 * size;
        let reach = (around / size).ceil().min(f32::from(u16::MAX)) as i64;
        let xs = (cx - reach).max(0)..=(cx + reach).min(i64::from(width) - 1);
        let ys = (cy - reach).max(0)..=(cy + reach).min(i64::from(height) - 1);
        ys.flat_map(move |y| xs.clone().map(move |x| (x, y)))
            .filter_map(move |(x, y)| {
                let j = (y as usize) * w + x as usize;
                let cell = Cell::new(min.x + x as u32, min.y + y as u32);
                let inside = grid.cell_centre(cell).distance_squared(pos) <= around * around;
                (j == i || inside).then_some(j)
            })
    }

    /// The world rectangle the box covers (its corners): a unit counted by
    /// [`Self::update`] stands in it.
    #[must_use]
    pub fn world_box(&self, grid: &Grid) -> (Vec2, Vec2) {
        let corner =
            |x: u32, y: u32| grid.origin() + Vec2::new(x as f32, y as f32) * grid.cell_size();
        let (x, y) = (self.min.x, self.min.y);
        (corner(x, y), corner(x + self.width, y + self.height))
    }

    fn index_of(&self, grid: &Grid, pos: Vec2) -> Option<usize> {
        self.box_index(grid.cell_at(pos)?)
    }

    /// [`Self::index_of`] and the row of the box it is in.
    fn index_and_row(&self, grid: &Grid, pos: Vec2) -> Option<(usize, usize)> {
        let c = grid.cell_at(pos)?;
        let (x, y) = (c.x.checked_sub(self.min.x)?, c.y.checked_sub(self.min.y)?);
        (x < self.width && y < self.height).then(|| ((y * self.width + x) as usize, y as usize))
    }

    /// The highest rank of the box: rings past it are not in the order.
    fn last_rank(&self) -> u32 {
        self.goal_ranks - 1 + self.reach
    }

    /// The highest rank of the rest area this frame (the goal's own cells always are).
    fn active(&self) -> u32 {
        let low = self.low_target.unwrap_or(0);
        let far = self.far_supported.unwrap_or(0);
        low.max(far).saturating_add(REST_MARGIN)
    }

    /// Whether the resting army has come so near the box's edge that a fill with a longer
    /// reach should replace this one ([`Self::grown_reach`]).
    #[must_use]
    pub fn wants_more_reach(&self) -> bool {
        self.reach < MAX_REACH && self.active().saturating_add(REST_MARGIN) > self.last_rank()
    }

    /// The reach a fill replacing this one gets.
    #[must_use]
    pub fn grown_reach(&self) -> u32 {
        self.reach.saturating_mul(2).min(MAX_REACH)
    }
}

/// The 8 neighbour offsets, straight ones first.
const NEIGHBOURS: [(i64, i64); 8] = [
    (1, 0),
    (-1, 0),
    (0, 1),
    (0, -1),
    (1, 1),
    (-1, 1),
    (1, -1),
    (-1, -1),
];

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
