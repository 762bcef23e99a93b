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
//!   lies within half a cell of its disc. Other cells are *free*. A cell holding any resting
//!   unit is *occupied*; the occupied cells joined to the goal's occupied cells through
//!   occupied cells (8 neighbours) are *supported*.
//! - The *targets* are, in each piece of free cells (4-connected), its cells of the lowest
//!   rank. [`GoalFill::way`] walks a unit down the steps through free cells to the nearest
//!   target and rests it there; a resting unit stays while its cell is supported.
//! - The *rest area* is the goal's cells and the ranks up to [`REST_MARGIN`] past the farther
//!   of the lowest target and the farthest supported cell: outside it a unit follows its
//!   field ([`FillWay::Outside`]) and does not rest.
//!
//! All of it is integer steps over cells and the same every run.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use glam::Vec2;

use crate::{Cell, CostField, GoalSet, Grid, ORTHO_STEP, WALL};

/// How much of a cell a unit of `radius` fills: one over the number of its size that fit
/// in a cell of `cell_size` side by side (at least one).
#[must_use]
pub fn cell_share(radius: f32, cell_size: f32) -> f32 {
    let across = (cell_size / (2.0 * radius)).floor().clamp(1.0, 64.0);
    1.0 / (across * across)
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
    /// Per piece of that search: its lowest rank and its cells.
    piece_low: Vec<u32>,
    piece_cells: Vec<u32>,
    /// This frame's rooms (sorted; see `find_rooms`).
    rooms: Vec<u32>,
    /// Per box cell: taken in that search.
    is_taken: Vec<bool>,
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
            piece_cells: Vec::new(),
            rooms: Vec::new(),
            is_taken: Vec::new(),
        };
        if !fill.rank_cells(goal, cost) {
            return None;
        }
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

    fn index_of(&self, grid: &Grid, pos: Vec2) -> Option<usize> {
        self.box_index(grid.cell_at(pos)?)
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

    /// This frame's targets, steps, supported cells and rooms from the units of the fill's
    /// army as the frame began: `resting` (each one's position and radius) and `coming`
    /// (the positions of the others).
    pub fn update(
        &mut self,
        grid: &Grid,
        resting: impl IntoIterator<Item = (Vec2, f32)>,
        coming: impl IntoIterator<Item = Vec2>,
    ) {
        self.take_cells(grid, resting);
        self.find_rooms(grid, coming);
    }

    /// The covered, supported and taken cells, and a new search when they call for one.
    fn take_cells(&mut self, grid: &Grid, resting: impl IntoIterator<Item = (Vec2, f32)>) {
        for &i in &self.touched {
            self.covered[i as usize] = 0.0;
        }
        self.touched.clear();
        let size = grid.cell_size();
        // Most units of a crowd share a radius: its share is worked out once.
        let mut share = (f32::NAN, 0.0);
        for (pos, radius) in resting {
            let Some(i) = self.index_of(grid, pos) else {
                continue;
            };
            if radius <= 0.5 * size || !radius.is_finite() {
                if share.0.to_bits() != radius.to_bits() {
                    share = (radius, cell_share(radius, size));
                }
                self.cover(i, share.1);
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
        let mut occupied = std::mem::take(&mut self.touched);
        occupied.sort_unstable();
        if occupied != self.occupied {
            self.find_support(&occupied);
        }
        self.touched = occupied.clone();
        self.occupied = occupied;
        let taken: Vec<u32> = self
            .occupied
            .iter()
            .copied()
            .filter(|&i| self.covered[i as usize] >= TAKEN)
            .collect();
        // The steps are searched again only when the taken cells changed: when one was
        // freed, or a target was taken since the last search (a quarter of the targets
        // once there are more than `THROTTLE_FROM`), or there were no targets left: between
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
        if only_added && !self.targets.is_empty() && targets_taken < self.targets_to_wait_for() {
            return;
        }
        self.search(taken);
    }

    /// How many targets must be taken before the steps are searched again.
    fn targets_to_wait_for(&self) -> usize {
        if self.targets.len() > THROTTLE_FROM {
            self.targets.len().div_ceil(4)
        } else {
            1
        }
    }

    fn cover(&mut self, i: usize, share: f32) {
        if self.covered[i] == 0.0 {
            self.touched.push(i as u32);
        }
        self.covered[i] += share;
    }

    /// Marks the occupied cells joined to the goal's occupied cells (8 neighbours, through
    /// occupied ranked cells).
    fn find_support(&mut self, occupied: &[u32]) {
        for &i in &self.occupied {
            self.supported[i as usize] = false;
        }
        self.far_supported = None;
        self.queue.clear();
        for &i in occupied {
            let rank = self.rank[i as usize];
            if rank < self.goal_ranks {
                self.supported[i as usize] = true;
                self.queue.push(i);
            }
        }
        let (w, h) = (self.width as i64, self.height as i64);
        let mut head = 0;
        while head < self.queue.len() {
            let i = self.queue[head] as usize;
            head += 1;
            let rank = self.rank[i];
            self.far_supported = Some(self.far_supported.map_or(rank, |f| f.max(rank)));
            let (x, y) = ((i as i64) % w, (i as i64) / w);
            for (dx, dy) in NEIGHBOURS {
                let (nx, ny) = (x + dx, y + dy);
                if !((0..w).contains(&nx) && (0..h).contains(&ny)) {
                    continue;
                }
                let j = (ny * w + nx) as usize;
                if !self.supported[j] && self.covered[j] > 0.0 && self.rank[j] != UNRANKED {
                    self.supported[j] = true;
                    self.queue.push(j as u32);
                }
            }
        }
        self.queue.clear();
    }

    /// The taken cells (box indices, sorted) the steps were last searched with (`None`:
    /// never): what a snapshot saves, so that a restored run searches as the saved one did.
    #[must_use]
    pub fn searched(&self) -> Option<&[u32]> {
        self.searched.as_deref()
    }

    /// Whether `taken` could be the taken cells of a fill of `goal` with `reach` over a map
    /// of `width` x `height` cells (what [`Self::search_with`] accepts), without building
    /// the fill: `Err` says why not (an index outside the box, indices out of order).
    pub fn check_taken(
        goal: &GoalSet,
        reach: u32,
        (width, height): (u32, u32),
        taken: &[u32],
    ) -> Result<(), String> {
        if reach > MAX_REACH {
            return Err(format!(
                "a fill reaches {reach} cells, more than {MAX_REACH}"
            ));
        }
        let cells = goal.cells();
        let first = cells.first().ok_or("a fill is saved for an empty goal")?;
        let (mut lo, mut hi) = (*first, *first);
        for c in cells {
            lo = Cell::new(lo.x.min(c.x), lo.y.min(c.y));
            hi = Cell::new(hi.x.max(c.x), hi.y.max(c.y));
        }
        if hi.x >= width || hi.y >= height {
            return Err("the goal is outside the map".into());
        }
        let w = hi.x.saturating_add(reach).min(width - 1) - lo.x.saturating_sub(reach) + 1;
        let h = hi.y.saturating_add(reach).min(height - 1) - lo.y.saturating_sub(reach) + 1;
        Self::check_taken_in(w as usize * h as usize, taken)
    }

    fn check_taken_in(size: usize, taken: &[u32]) -> Result<(), String> {
        if let Some(&bad) = taken.iter().find(|&&i| i as usize >= size) {
            return Err(format!(
                "taken cell {bad} is outside the fill's {size} cells"
            ));
        }
        if !taken.windows(2).all(|w| w[0] < w[1]) {
            return Err("taken cells are not in increasing order".into());
        }
        Ok(())
    }

    /// Searches the steps as if `taken` (box indices, as [`Self::searched`] gives them) were
    /// the taken cells: a restored fill then continues exactly. `Err` names an index
    /// outside the box or out of order.
    pub fn search_with(&mut self, taken: Vec<u32>) -> Result<(), String> {
        Self::check_taken_in(self.rank.len(), &taken)?;
        self.search(taken);
        Ok(())
    }

    /// The targets and steps with `taken` (sorted box indices) taken.
    fn search(&mut self, taken: Vec<u32>) {
        self.is_taken.clear();
        self.is_taken.resize(self.rank.len(), false);
        for &i in &taken {
            self.is_taken[i as usize] = true;
        }
        self.searched = Some(taken);
        let free = |i: usize, rank: &[u32], is_taken: &[bool]| rank[i] != UNRANKED && !is_taken[i];
        // The free cells in pieces (4-connected): each piece's targets are its cells of the
        // lowest rank, so a free hole left deep inside a filled part does not draw every unit.
        let (w, h) = (self.width, self.height);
        let (rank, is_taken) = (&self.rank, &self.is_taken);
        self.to_target.fill(u32::MAX);
        self.piece.fill(u32::MAX);
        // Per piece: its lowest-rank cells and how many cells it has.
        let mut pieces: Vec<(Vec<u32>, usize)> = Vec::new();
        for start in 0..rank.len() {
            if self.to_target[start] != u32::MAX || !free(start, rank, is_taken) {
                continue;
            }
            // Mark the piece (steps 0 for now), and find its lowest rank.
            self.queue.clear();
            self.queue.push(start as u32);
            self.to_target[start] = 0;
            bfs_keep(&mut self.queue, &mut self.to_target, w, h, 0, |i| {
                free(i, rank, is_taken)
            });
            let level = self.queue.iter().map(|&i| rank[i as usize]).min();
            let lowest = (self.queue.iter().copied())
                .filter(|&i| Some(rank[i as usize]) == level)
                .collect();
            let cells = self.queue.len();
            for &i in &self.queue {
                self.to_target[i as usize] = u32::MAX - 1;
                self.piece[i as usize] = pieces.len() as u32;
            }
            pieces.push((lowest, cells));
        }
        for t in self.to_target.iter_mut() {
            if *t == u32::MAX - 1 {
                *t = u32::MAX;
            }
        }
        let mut seeds = Vec::new();
        self.piece_low.clear();
        self.piece_cells.clear();
        for (lowest, cells) in pieces {
            self.piece_low
                .push(lowest.first().map_or(u32::MAX, |&i| self.rank[i as usize]));
            self.piece_cells.push(cells as u32);
            seeds.extend(lowest);
        }
        seeds.sort_unstable();
        self.low_target = seeds.iter().map(|&i| self.rank[i as usize]).min();
        self.queue.clear();
        self.queue.extend(seeds.iter().copied());
        for &i in &seeds {
            self.to_target[i as usize] = 0;
        }
        bfs(&mut self.queue, &mut self.to_target, w, h, |i| {
            free(i, rank, is_taken)
        });
        self.targets = seeds;
    }

    /// Steps from the cell of `pos` to the nearest target (see the module docs).
    #[must_use]
    pub fn to_target(&self, grid: &Grid, pos: Vec2) -> Option<u32> {
        let i = self.index_of(grid, pos)?;
        (self.to_target[i] != u32::MAX).then_some(self.to_target[i])
    }

    /// Whether `pos` stands on a cell of the goal (open on the fill's costs).
    #[must_use]
    pub fn in_goal(&self, grid: &Grid, pos: Vec2) -> bool {
        self.index_of(grid, pos)
            .is_some_and(|i| self.rank[i] < self.goal_ranks)
    }

    /// Whether a disc of `radius` at `pos` stands on the goal: its centre's cell is a goal
    /// cell, or (a body wider than a cell) it takes a goal cell: one whose centre lies
    /// within half a cell of the disc, as [`Self::update`] counts it.
    #[must_use]
    pub fn covers_goal(&self, grid: &Grid, pos: Vec2, radius: f32) -> bool {
        if self.in_goal(grid, pos) {
            return true;
        }
        let size = grid.cell_size();
        if !(radius > 0.5 * size && radius.is_finite()) {
            return false;
        }
        let Some(i) = self.index_of(grid, pos) else {
            return false;
        };
        let w = self.width as usize;
        let (cx, cy) = ((i % w) as i64, (i / w) as i64);
        let around = radius + 0.5 * size;
        let reach = (around / size).ceil().min(f32::from(u16::MAX)) as i64;
        for y in (cy - reach).max(0)..=(cy + reach).min(i64::from(self.height) - 1) {
            for x in (cx - reach).max(0)..=(cx + reach).min(i64::from(self.width) - 1) {
                let j = (y as usize) * w + x as usize;
                if self.rank[j] < self.goal_ranks
                    && grid.cell_centre(self.cell(j)).distance_squared(pos) <= around * around
                {
                    return true;
                }
            }
        }
        false
    }

    /// This frame's rooms. The pieces where the army's units still coming stand (`coming`;
    /// at least one in [`ARRIVING_SHARE`] of those in the box) are where it arrives; the lowest of their
    /// lowest ranks is the edge the blob grows at now (without units coming: the resting
    /// blob's far edge). A piece where the army does not arrive, of at least `PASS_PIECE`
    /// free cells, whose lowest rank comes `FLOW_SLACK` or more before that edge is a
    /// *room*: nearer the goal, but cut off from the units coming by the army's resting
    /// units (a side room whose door the blob reached first, the deep part of a goal area
    /// beyond a door). It draws the resting units beside it in (see `way`), and the blob
    /// flows into it until the way in opens.
    fn find_rooms(&mut self, grid: &Grid, coming: impl IntoIterator<Item = Vec2>) {
        self.rooms.clear();
        if self.piece_low.is_empty() {
            return;
        }
        let mut count = vec![0u32; self.piece_low.len()];
        let mut total = 0u32;
        for pos in coming {
            if let Some(i) = self.index_of(grid, pos) {
                total += 1;
                if let Some(n) = count.get_mut(self.piece[i] as usize) {
                    *n += 1;
                }
            }
        }
        // A few stragglers in a piece do not make it where the army arrives.
        let arriving = (total / ARRIVING_SHARE).max(1);
        let reached: Vec<bool> = count.iter().map(|&n| n >= arriving).collect();
        let arrival = (self.piece_low.iter().zip(&reached))
            .filter(|&(_, &r)| r)
            .map(|(&low, _)| low)
            .min()
            .or_else(|| self.far_supported.map(|f| f.saturating_add(1)));
        let Some(arrival) = arrival else {
            return;
        };
        for (k, ((&low, &cells), &r)) in
            (self.piece_low.iter().zip(&self.piece_cells).zip(&reached)).enumerate()
        {
            if !r && cells as usize >= PASS_PIECE && low.saturating_add(FLOW_SLACK) <= arrival {
                self.rooms.push(k as u32);
            }
        }
    }

    /// Whether the cell of `pos` comes at most `rings` ranks after the lowest target of the
    /// free piece it stands in (of all pieces, on a taken cell): the blob's edge where it
    /// fills now (a unit held there may rest; farther out, or outside a goal area that
    /// still has room, it may not). A hole left inside the blob, too small for a body, is a
    /// piece of its own and does not hold the front back.
    #[must_use]
    pub fn near_frontier(&self, grid: &Grid, pos: Vec2, rings: u32) -> bool {
        self.index_of(grid, pos)
            .is_some_and(|i| match self.piece_low.get(self.piece[i] as usize) {
                Some(&low) => self.rank[i] != UNRANKED && self.rank[i] <= low.saturating_add(rings),
                None => self.at_frontier(i, rings),
            })
    }

    /// Whether no free cell nearer the goal (of a lower rank) than the cell of `pos` lies
    /// within `reach` moves of it (8 neighbours through cells in the order, no corner
    /// cutting) in the free piece it stands in (any piece, from a taken cell): nowhere
    /// nearer to go within its reach.
    #[must_use]
    pub fn nothing_nearer(&self, grid: &Grid, pos: Vec2, reach: u32) -> bool {
        let Some(start) = self.index_of(grid, pos) else {
            return false;
        };
        let mine = self.rank[start];
        // A small search: at most (2 reach + 1)^2 cells, so a list, not a map.
        let mut seen = vec![(start, 0u32)];
        let mut head = 0;
        while head < seen.len() {
            let (i, d) = seen[head];
            head += 1;
            let own_piece = self.piece[start] == u32::MAX || self.piece[i] == self.piece[start];
            if i != start && self.rank[i] < mine && self.covered[i] < TAKEN && own_piece {
                return false;
            }
            if d == reach {
                continue;
            }
            for j in self.neighbours(i) {
                if self.rank[j] == UNRANKED
                    || !self.legal_step(i, j)
                    || seen.iter().any(|&(k, _)| k == j)
                {
                    continue;
                }
                seen.push((j, d + 1));
            }
        }
        true
    }

    fn at_frontier(&self, i: usize, rings: u32) -> bool {
        let low = self.low_target.unwrap_or(0);
        self.rank[i] != UNRANKED && self.rank[i] <= low.saturating_add(rings)
    }

    fn in_area(&self, i: usize) -> bool {
        let rank = self.rank[i];
        rank != UNRANKED && (rank < self.goal_ranks || rank <= self.active())
    }

    /// The centre of the supported cell beside the cell of `pos` (8 neighbours) that comes
    /// first in the order, if one is: where a unit that reached free room walks to close
    /// the gap to the resting blob.
    #[must_use]
    pub fn toward_support(&self, grid: &Grid, pos: Vec2) -> Option<Vec2> {
        let i = self.index_of(grid, pos)?;
        self.neighbours(i)
            .filter(|&j| self.supported[j])
            .min_by_key(|&j| (self.rank[j], j))
            .map(|j| grid.cell_centre(self.cell(j)))
    }

    /// Where a unit resting on box cell `i` walks on to instead of staying: a free cell
    /// beside it (4 neighbours) in a room (see `search`), or a target two ranks
    /// or more before its own cell (the blob closes holes in it, nearest the goal first).
    fn drawn_to(&self, i: usize) -> Option<usize> {
        let (w, h) = (i64::from(self.width), i64::from(self.height));
        let (x, y) = ((i as i64) % w, (i as i64) / w);
        let mut best: Option<(u32, usize)> = None;
        for (dx, dy) in &NEIGHBOURS[..4] {
            let (nx, ny) = (x + dx, y + dy);
            if !((0..w).contains(&nx) && (0..h).contains(&ny)) {
                continue;
            }
            let j = (ny * w + nx) as usize;
            if self.covered[j] >= TAKEN || self.piece[j] == u32::MAX {
                continue;
            }
            let room = self.rooms.binary_search(&self.piece[j]).is_ok();
            let lower = self.to_target[j] == 0 && self.rank[j].saturating_add(2) <= self.rank[i];
            if (room || lower) && best.is_none_or(|(r, _)| self.rank[j] < r) {
                best = Some((self.rank[j], j));
            }
        }
        best.map(|(_, j)| j)
    }

    /// Whether a step from box cell `i` to its neighbour `j` is legal: a diagonal step needs
    /// both cells beside it in the order (no corner cutting).
    fn legal_step(&self, i: usize, j: usize) -> bool {
        let w = self.width as usize;
        let (xi, yi, xj, yj) = (i % w, i / w, j % w, j / w);
        xi == xj
            || yi == yj
            || (self.rank[yi * w + xj] != UNRANKED && self.rank[yj * w + xi] != UNRANKED)
    }

    /// The box cells around box cell `i` (8 neighbours, inside the box).
    fn neighbours(&self, i: usize) -> impl Iterator<Item = usize> + '_ {
        let (w, h) = (i64::from(self.width), i64::from(self.height));
        let (x, y) = ((i as i64) % w, (i as i64) / w);
        NEIGHBOURS.into_iter().filter_map(move |(dx, dy)| {
            let (nx, ny) = (x + dx, y + dy);
            ((0..w).contains(&nx) && (0..h).contains(&ny)).then(|| (ny * w + nx) as usize)
        })
    }

    /// For a unit at `pos` outside the rest area but in the fill's box: the centre of the
    /// free cell beside it nearest a target through free cells, if one is (`None`: no way
    /// to a target from there within the box). A blocked unit takes this way round instead
    /// of its field's way into the back of the jam.
    #[must_use]
    pub fn way_round(&self, grid: &Grid, pos: Vec2) -> Option<Vec2> {
        let i = self.index_of(grid, pos)?;
        let own = self.to_target[i];
        self.neighbours(i)
            .filter(|&j| self.legal_step(i, j))
            .filter(|&j| self.covered[j] < TAKEN && self.to_target[j] != u32::MAX)
            .filter(|&j| own == u32::MAX || self.to_target[j] < own)
            .min_by_key(|&j| (self.to_target[j], j))
            .map(|j| grid.cell_centre(self.cell(j)))
    }

    /// What a unit at `pos` does (see the module docs); `resting`: it rested as the frame
    /// began. It rests on a target; a resting unit on a supported cell stays (it is one of
    /// those who hold it), and a walking unit that reached a supported cell beside a target
    /// (the blob's edge where it fills now) rests there.
    #[must_use]
    pub fn way(&self, grid: &Grid, pos: Vec2, resting: bool) -> FillWay {
        let Some(i) = self.index_of(grid, pos).filter(|&i| self.in_area(i)) else {
            return FillWay::Outside;
        };
        let in_goal = self.rank[i] < self.goal_ranks;
        let free = |j: usize| self.covered[j] < TAKEN && self.rank[j] != UNRANKED;
        if resting && self.supported[i] {
            return match self.drawn_to(i) {
                Some(j) => FillWay::Toward(grid.cell_centre(self.cell(j))),
                None => FillWay::Rest { in_goal },
            };
        }
        if self.to_target[i] == 0 && free(i) {
            return FillWay::Rest { in_goal };
        }
        // The free neighbour (8-connected, inside the box) with the fewest steps; ties go to
        // the first in a fixed order. A target taken since the last search is no target.
        let (w, h) = (i64::from(self.width), i64::from(self.height));
        let (x, y) = ((i as i64) % w, (i as i64) / w);
        let mut best: Option<(u32, usize)> = None;
        for (dx, dy) in NEIGHBOURS {
            let (nx, ny) = (x + dx, y + dy);
            if !((0..w).contains(&nx) && (0..h).contains(&ny)) {
                continue;
            }
            let j = (ny * w + nx) as usize;
            // A diagonal step needs both cells beside it in the order.
            if dx != 0 && dy != 0 {
                let (a, b) = ((y * w + nx) as usize, (ny * w + x) as usize);
                if self.rank[a] == UNRANKED || self.rank[b] == UNRANKED {
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
            Some((0, _)) if self.supported[i] && self.at_frontier(i, 1) => {
                FillWay::Rest { in_goal }
            }
            Some((steps, j)) if steps < self.to_target[i] || (stale && steps == 0) => {
                FillWay::Toward(grid.cell_centre(self.cell(j)))
            }
            // No free cell nearer a target beside it. At the blob's edge where it fills now,
            // touching the blob (or in the goal), it rests.
            _ if self.at_frontier(i, 1)
                && (in_goal
                    || self.supported[i]
                    || self.neighbours(i).any(|j| self.supported[j])) =>
            {
                FillWay::Rest { in_goal }
            }
            // Farther out the steps are stale (cells on its way were taken since the last
            // search): on to the free cell beside it nearest a target, if that comes before
            // its own cell in (steps, rank): a strict order, so two units never send each
            // other back and forth between two cells.
            Some((steps, j)) if (steps, self.rank[j]) < (self.to_target[i], self.rank[i]) => {
                FillWay::Toward(grid.cell_centre(self.cell(j)))
            }
            // Hemmed in by resting units, or nowhere better beside it: in the goal it rests,
            // outside it follows its field (into the blob, where it is held and rests).
            _ if in_goal => FillWay::Rest { in_goal },
            _ => FillWay::Outside,
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn area(w: u32, h: u32, cells: impl Iterator<Item = (u32, u32)>) -> (Grid, CostField, GoalSet) {
        let grid = Grid::new(w, h).unwrap();
        let cost = CostField::filled(&grid, 1);
        let goal = GoalSet::new(cells.map(|(x, y)| Cell::new(x, y))).unwrap();
        (grid, cost, goal)
    }

    fn at(grid: &Grid, x: u32, y: u32) -> Vec2 {
        grid.cell_centre(Cell::new(x, y))
    }

    #[test]
    fn an_area_fills_from_its_middle_out() {
        let (grid, cost, goal) = area(20, 20, (5..10).flat_map(|x| (5..10).map(move |y| (x, y))));
        let mut fill = GoalFill::new(&goal, &cost).unwrap();
        fill.update(&grid, [], []);
        // The middle cell is the deepest: the only target.
        let middle = at(&grid, 7, 7);
        assert_eq!(
            fill.way(&grid, middle, false),
            FillWay::Rest { in_goal: true }
        );
        let corner = at(&grid, 5, 5);
        assert!(matches!(fill.way(&grid, corner, false), FillWay::Toward(_)));
        // Far outside the goal (past the rest area) a unit follows its field.
        assert_eq!(fill.way(&grid, at(&grid, 0, 0), false), FillWay::Outside);
        // Next to the goal it is led in.
        assert!(matches!(
            fill.way(&grid, at(&grid, 4, 7), false),
            FillWay::Toward(_)
        ));
        // Once a unit rests in the middle, the ring around it is next.
        fill.update(&grid, [(middle, 0.45)], []);
        assert_eq!(
            fill.way(&grid, middle, true),
            FillWay::Rest { in_goal: true }
        );
        // A unit that walks onto the resting blob rests there too (it reached the blob).
        assert_eq!(
            fill.way(&grid, middle, false),
            FillWay::Rest { in_goal: true }
        );
        let ring = at(&grid, 6, 7);
        assert_eq!(
            fill.way(&grid, ring, false),
            FillWay::Rest { in_goal: true }
        );
        assert_eq!(fill.to_target(&grid, corner), Some(2));
    }

    #[test]
    fn a_full_area_grows_a_blob_outside_it_ring_by_ring() {
        let (grid, cost, goal) = area(20, 20, (5..8).flat_map(|x| (5..8).map(move |y| (x, y))));
        let mut fill = GoalFill::new(&goal, &cost).unwrap();
        let all: Vec<(Vec2, f32)> = goal
            .cells()
            .iter()
            .map(|&c| (grid.cell_centre(c), 0.45))
            .collect();
        fill.update(&grid, all.iter().copied(), []);
        for &c in goal.cells() {
            assert_eq!(
                fill.way(&grid, grid.cell_centre(c), true),
                FillWay::Rest { in_goal: true }
            );
        }
        // The first ring outside is the target now: a unit there settles, one two rings out
        // walks in to it.
        assert_eq!(
            fill.way(&grid, at(&grid, 8, 6), false),
            FillWay::Rest { in_goal: false }
        );
        assert_eq!(
            fill.way(&grid, at(&grid, 9, 6), false),
            FillWay::Toward(at(&grid, 8, 6))
        );
        assert_eq!(fill.to_target(&grid, at(&grid, 10, 6)), Some(2));
        // Small units: one does not take a cell, four do.
        assert_eq!(cell_share(0.45, 1.0), 1.0);
        assert_eq!(cell_share(0.2, 1.0), 0.25);
        assert_eq!(cell_share(3.0, 1.0), 1.0);
    }

    #[test]
    fn a_one_cell_goal_fills_its_cell_then_the_rings_around_it() {
        let (grid, cost, goal) = area(40, 40, [(20, 20)].into_iter());
        let mut fill = GoalFill::new(&goal, &cost).unwrap();
        fill.update(&grid, [], []);
        let goal_cell = at(&grid, 20, 20);
        assert_eq!(
            fill.way(&grid, goal_cell, false),
            FillWay::Rest { in_goal: true }
        );
        assert_eq!(
            fill.way(&grid, at(&grid, 22, 20), false),
            FillWay::Toward(at(&grid, 21, 20))
        );
        fill.update(&grid, [(goal_cell, 0.5)], []);
        assert_eq!(
            fill.way(&grid, at(&grid, 21, 20), false),
            FillWay::Rest { in_goal: false }
        );
        // The diagonal cells are 1.41 cells away: the second ring.
        assert!(matches!(
            fill.way(&grid, at(&grid, 21, 21), false),
            FillWay::Toward(_)
        ));
        assert_eq!(
            fill.way(&grid, goal_cell, true),
            FillWay::Rest { in_goal: true }
        );
    }

    #[test]
    fn units_behind_a_queue_walk_round_it_and_a_detached_unit_wakes() {
        let (grid, cost, goal) = area(60, 30, [(10, 15)].into_iter());
        let mut fill = GoalFill::new(&goal, &cost).unwrap();
        // A queue from the goal along +x: (10..=16, 15) all resting.
        let queue: Vec<(Vec2, f32)> = (10..=16).map(|x| (at(&grid, x, 15), 0.5)).collect();
        // Units still coming stand farther out.
        let coming = [at(&grid, 22, 15)];
        fill.update(&grid, queue.iter().copied(), coming);
        // The unit behind the queue's end does not rest there: room beside the queue is
        // nearer the goal.
        let behind = at(&grid, 17, 15);
        assert!(
            matches!(fill.way(&grid, behind, false), FillWay::Toward(_)),
            "{:?}",
            fill.way(&grid, behind, false)
        );
        // The queue's tail is supported (it touches the goal through resting units): while
        // units come in it stays.
        assert_eq!(
            fill.way(&grid, at(&grid, 16, 15), true),
            FillWay::Rest { in_goal: false }
        );
        // With nobody coming, the open room beside the queue, nearer the goal than its tail,
        // draws it: the queue flows into a blob.
        fill.update(&grid, queue.iter().copied(), []);
        assert!(matches!(
            fill.way(&grid, at(&grid, 16, 15), true),
            FillWay::Toward(_)
        ));
        // A unit resting away from the blob is not supported: it walks on.
        let mut resting = queue.clone();
        resting.push((at(&grid, 14, 19), 0.5));
        fill.update(&grid, resting.iter().copied(), coming);
        assert!(matches!(
            fill.way(&grid, at(&grid, 14, 19), true),
            FillWay::Toward(_)
        ));
    }

    #[test]
    fn the_box_grows_as_the_army_nears_its_edge() {
        let (grid, cost, goal) = area(200, 200, [(100, 100)].into_iter());
        let mut fill = GoalFill::new(&goal, &cost).unwrap();
        assert_eq!(fill.reach(), FIRST_REACH);
        fill.update(&grid, [], []);
        assert!(!fill.wants_more_reach());
        // A resting disc of 12 cells' radius around the goal.
        let blob: Vec<(Vec2, f32)> = (88..=112)
            .flat_map(|x| (88..=112).map(move |y| (x, y)))
            .filter(|&(x, y)| (x as i32 - 100).pow(2) + (y as i32 - 100).pow(2) <= 144)
            .map(|(x, y)| (at(&grid, x, y), 0.5))
            .collect();
        fill.update(&grid, blob.iter().copied(), []);
        assert!(fill.wants_more_reach());
        let mut bigger = GoalFill::with_reach(&goal, &cost, fill.grown_reach()).unwrap();
        bigger.update(&grid, blob.iter().copied(), []);
        assert!(!bigger.wants_more_reach());
        assert_eq!(
            bigger.way(&grid, at(&grid, 100, 100), true),
            FillWay::Rest { in_goal: true }
        );
    }

    #[test]
    fn a_search_is_repeated_exactly_from_its_taken_cells() {
        let (grid, cost, goal) = area(30, 30, (3..20).flat_map(|x| (4..15).map(move |y| (x, y))));
        let mut fill = GoalFill::new(&goal, &cost).unwrap();
        let resting: Vec<(Vec2, f32)> = (5..12).map(|x| (at(&grid, x, 9), 0.45)).collect();
        fill.update(&grid, resting.iter().copied(), []);
        let taken = fill.searched().unwrap().to_vec();
        assert_eq!(taken.len(), 7);
        GoalFill::check_taken(&goal, fill.reach(), (30, 30), &taken).unwrap();
        let mut again = GoalFill::with_reach(&goal, &cost, fill.reach()).unwrap();
        again.search_with(taken).unwrap();
        assert_eq!(again.to_target, fill.to_target);
        assert_eq!(again.targets, fill.targets);
        assert!(again.search_with(vec![5, 3]).is_err());
        assert!(again.search_with(vec![100_000]).is_err());
        assert!(GoalFill::check_taken(&goal, fill.reach(), (30, 30), &[100_000]).is_err());
        assert!(GoalFill::check_taken(&goal, MAX_REACH + 1, (30, 30), &[]).is_err());
    }

    #[test]
    fn terrain_changes_are_noticed() {
        let (_, mut cost, goal) = area(10, 10, (2..5).map(|x| (x, 2)));
        let fill = GoalFill::new(&goal, &cost).unwrap();
        assert!(fill.is_current(&cost));
        cost.set(Cell::new(3, 2), WALL);
        assert!(!fill.is_current(&cost));
    }

    #[test]
    fn a_goal_with_no_open_cell_has_no_fill() {
        let (_, mut cost, goal) = area(10, 10, [(3, 3)].into_iter());
        cost.set(Cell::new(3, 3), WALL);
        assert!(GoalFill::new(&goal, &cost).is_none());
    }

    #[test]
    fn a_room_cut_off_by_the_blob_draws_the_resting_units_beside_it() {
        // A goal area of two rooms joined by a door at (10, 5); the army came in from the
        // west and holds the west room and the door: the east room is cut off.
        let grid = Grid::new(22, 11).unwrap();
        let mut cost = CostField::filled(&grid, 1);
        for y in 0..11 {
            if y != 5 {
                cost.set(Cell::new(10, y), WALL);
            }
        }
        let goal =
            GoalSet::new((1..21).flat_map(|x| (1..10).map(move |y| Cell::new(x, y)))).unwrap();
        let mut fill = GoalFill::new(&goal, &cost).unwrap();
        let west: Vec<(Vec2, f32)> = (1..11)
            .flat_map(|x| (1..10).map(move |y| (x, y)))
            .filter(|&(x, y)| x < 10 || y == 5)
            .map(|(x, y)| (at(&grid, x, y), 0.5))
            .collect();
        // Units still coming stand west of the goal.
        fill.update(&grid, west.iter().copied(), [at(&grid, 0, 5)]);
        // The unit resting in the door walks on into the east room.
        assert!(
            matches!(fill.way(&grid, at(&grid, 10, 5), true), FillWay::Toward(p) if p.x > 10.5)
        );
        // One deep in the west room stays.
        assert_eq!(
            fill.way(&grid, at(&grid, 3, 3), true),
            FillWay::Rest { in_goal: true }
        );
    }

    #[test]
    fn nothing_nearer_looks_only_where_a_unit_can_step() {
        // A corridor along y = 2, the goal at its west end; the parallel corridor y = 4 is
        // behind a wall and holds free cells of lower rank.
        let grid = Grid::new(12, 7).unwrap();
        let mut cost = CostField::filled(&grid, 1);
        for x in 0..12 {
            for y in [1, 3, 5] {
                cost.set(Cell::new(x, y), WALL);
            }
        }
        cost.set(Cell::new(0, 3), 1);
        let goal = GoalSet::single(Cell::new(0, 2));
        let mut fill = GoalFill::with_reach(&goal, &cost, 16).unwrap();
        let queue: Vec<(Vec2, f32)> = (0..5).map(|x| (at(&grid, x, 2), 0.5)).collect();
        fill.update(&grid, queue.iter().copied(), []);
        // Behind the queue's tail nothing nearer is in reach (the other corridor is behind a
        // wall), though its cells are nearer the goal.
        assert!(fill.nothing_nearer(&grid, at(&grid, 5, 2), 2));
        // Beside an open cell of a lower rank there is.
        assert!(!fill.nothing_nearer(&grid, at(&grid, 1, 4), 1));
    }

    #[test]
    fn the_way_round_does_not_cut_corners() {
        let grid = Grid::new(30, 30).unwrap();
        let mut cost = CostField::filled(&grid, 1);
        cost.set(Cell::new(14, 15), WALL);
        let goal = GoalSet::single(Cell::new(5, 5));
        let mut fill = GoalFill::new(&goal, &cost).unwrap();
        fill.update(&grid, [], []);
        // From (15, 15), the step to (14, 14) would cut the wall's corner.
        let to = fill.way_round(&grid, at(&grid, 15, 15)).unwrap();
        assert_ne!(to, at(&grid, 14, 14));
        assert!(fill.to_target(&grid, to) < fill.to_target(&grid, at(&grid, 15, 15)));
    }

    #[test]
    fn a_big_body_covering_a_goal_cell_stands_on_the_goal() {
        let (grid, cost, _) = area(20, 20, [(10, 10)].into_iter());
        let goal = GoalSet::single(Cell::new(10, 10));
        let fill = GoalFill::new(&goal, &cost).unwrap();
        let beside = at(&grid, 11, 10);
        assert!(!fill.covers_goal(&grid, beside, 0.4));
        assert!(fill.covers_goal(&grid, beside, 1.5));
        assert!(fill.covers_goal(&grid, at(&grid, 10, 10), 0.4));
    }
}
