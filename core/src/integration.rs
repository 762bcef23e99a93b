//! [`IntegrationField`]: the cost of walking from every cell to the nearest goal.
//!
//! A multi-source, 8-neighbour Dijkstra over a [`CostField`]. Moving from a cell into a
//! neighbour costs the *entered* cell's cost times [`ORTHO_STEP`] or [`DIAG_STEP`]; diagonal
//! moves never cut a corner (see [`CostField`]'s move mask). Values are `u32` and saturate at
//! [`UNREACHABLE`], which also marks walls and cells with no path.
//!
//! # Algorithm
//!
//! A bucket queue whose buckets are [`ORTHO_STEP`] wide. The cheapest possible step is one
//! orthogonal move into a cost-1 cell, which is exactly one bucket wide, so relaxing any cell
//! of bucket `k` only ever pushes into buckets `> k`: every cell in a bucket is final when the
//! bucket is reached, in whatever order its cells are taken. That makes the queue exact (equal
//! to a binary-heap Dijkstra, which the tests check cell for cell) and lets it work through a
//! bucket as a plain array. The largest step (cost 254, diagonal) spans 360 buckets, so a ring
//! of 512 buckets never wraps onto the one being drained.

use std::ops::Range;

mod parallel;

pub use parallel::DeltaStepping;

use crate::cost_field::CostField;
use crate::direction::{DIAG_STEP, ORTHO_STEP};
use crate::grid::Cell;
use crate::terrain::WALL;

/// Value of walls and of cells from which no goal can be reached.
pub const UNREACHABLE: u32 = u32::MAX;

const RING: usize = 512;
const _: () = assert!((WALL as u32 - 1) * DIAG_STEP / ORTHO_STEP + 1 < RING as u32);

/// A field could not be built.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FieldError {
    /// A goal cell lies outside the grid.
    #[error("goal {cell} lies outside the {width}x{height} grid")]
    GoalOutside {
        /// The goal.
        cell: Cell,
        /// Grid width.
        width: u32,
        /// Grid height.
        height: u32,
    },
    /// An edited cell lies outside the grid.
    #[error("edited cell {cell} lies outside the {width}x{height} grid")]
    EditOutside {
        /// The cell.
        cell: Cell,
        /// Grid width.
        width: u32,
        /// Grid height.
        height: u32,
    },
    /// A paused search (see [`IntegrationField::rebuild_for`]) was asked to go on over costs
    /// that changed since it started: rebuild instead.
    #[error("the field's search started on cost version {searched}, the costs are now at {now}")]
    CostsChanged {
        /// Cost version the search started on.
        searched: u64,
        /// Cost version passed now.
        now: u64,
    },
    /// The field and the cost field have different sizes.
    #[error("field is {field:?} but the cost field is {cost:?}")]
    SizeMismatch {
        /// Size of the field.
        field: (u32, u32),
        /// Size of the cost field.
        cost: (u32, u32),
    },
}

/// The ring of buckets used by [`IntegrationField`], and the repair's scratch; kept between
/// builds to reuse memory.
#[derive(Clone, Debug, Default)]
struct BucketQueue {
    buckets: Vec<Vec<u32>>,
    spare: Vec<u32>,
    marks: Vec<bool>,
    marked: Vec<u32>,
    stack: Vec<u32>,
    seeds: Vec<u32>,
    /// Where a paused search goes on: the next bucket, and how many entries are queued.
    current: u32,
    pending: usize,
    /// Cells a search must settle before it may pause (one bit per padded index), and how
    /// many of them are still unsettled.
    wanted: Vec<u64>,
    wanted_left: usize,
}

impl BucketQueue {
    fn reset(&mut self) {
        if self.buckets.len() != RING {
            self.buckets = vec![Vec::new(); RING];
        }
        for b in &mut self.buckets {
            b.clear();
        }
        self.current = 0;
        self.pending = 0;
    }
}

/// Where [`propagate`] may stop before the queue runs dry.
#[derive(Clone, Copy, Debug)]
enum Stop {
    /// Never: every value ends final.
    Never,
    /// Once the value at this padded index is final.
    Settled(usize),
    /// Once every cell marked in the queue's `wanted` bits is settled.
    Wanted,
    /// Once about this many cells have been taken from the queue (whole buckets at a time).
    Budget(usize),
}

/// Cost-to-goal of every cell, in units of [`ORTHO_STEP`] per cost-1 orthogonal step.
///
/// Stored in the same padded layout as [`CostField`] (a border slot around the grid) so the
/// flow field reads neighbours without bounds checks.
///
/// A field is *complete* (every value final) after [`Self::rebuild`]. [`Self::rebuild_for`]
/// builds a *partial* one: the search pauses as soon as the cells asked for are final, so a
/// goal that moves every frame costs only the region its followers stand in. A partial
/// field's final values are exactly the complete field's; [`Self::is_final`] says which
/// they are, [`Self::settle`] and [`Self::advance`] resume the paused search.
#[derive(Clone, Debug)]
pub struct IntegrationField {
    width: u32,
    height: u32,
    values: Vec<u32>,
    queue: BucketQueue,
    /// `None` when complete; else values below this are final and the search is paused.
    frontier: Option<u32>,
    /// Cost version the paused search started on.
    searched: u64,
    /// Padded indices `start..end` outside which every value is [`UNREACHABLE`]: a new
    /// search resets only these (a partial field for a goal that moves every frame touches
    /// a small part of the map).
    span: (usize, usize),
}

impl PartialEq for IntegrationField {
    fn eq(&self, other: &Self) -> bool {
        self.width == other.width
            && self.height == other.height
            && if self.values.len() == other.values.len() {
                self.values == other.values
            } else {
                // One of them was never built (no memory yet): all UNREACHABLE.
                self.to_values() == other.to_values()
            }
    }
}

impl Eq for IntegrationField {}

impl IntegrationField {
    /// A field of `cost`'s size in which every cell is [`UNREACHABLE`]. It takes no memory
    /// until it is first built (a flat field that hierarchical navigation never builds costs
    /// nothing).
    #[must_use]
    pub fn unreachable(cost: &CostField) -> Self {
        Self {
            width: cost.width(),
            height: cost.height(),
            values: Vec::new(),
            queue: BucketQueue::default(),
            frontier: None,
            searched: cost.version(),
            span: (0, 0),
        }
    }

    /// Builds the field toward `goals` (all start at 0). Goal cells that are walls for this
    /// cost field are skipped; with no usable goal every cell is [`UNREACHABLE`].
    pub fn build(cost: &CostField, goals: &[Cell]) -> Result<Self, FieldError> {
        let mut field = Self::unreachable(cost);
        field.rebuild(cost, goals)?;
        Ok(field)
    }

    /// Rebuilds in place (reusing memory) toward `goals`.
    pub fn rebuild(&mut self, cost: &CostField, goals: &[Cell]) -> Result<(), FieldError> {
        self.rebuild_until(cost, goals, None)
    }

    /// Like [`Self::rebuild`], but may stop as soon as `target`'s value is final: the value of
    /// `target` (and of every cell closer to the goals) is exact, farther cells may be left
    /// too high ([`Self::is_final`] says which). Used to check point-to-point distances
    /// quickly.
    pub fn rebuild_until(
        &mut self,
        cost: &CostField,
        goals: &[Cell],
        target: Option<Cell>,
    ) -> Result<(), FieldError> {
        match target {
            None => {
                let pending = self.start(cost, goals)?;
                self.run(cost, pending, Stop::Never);
            }
            Some(t) => {
                self.check(cost, &[t])?;
                let pending = self.start(cost, goals)?;
                self.run(cost, pending, Stop::Settled(cost.padded_index(t)));
            }
        }
        Ok(())
    }

    /// Starts a partial field toward `goals`: searches only until every cell of `demand` is
    /// final (their values, and the flow directions read from them, are then exactly the
    /// complete field's), and pauses there. Cells farther from the goals are left
    /// [`UNREACHABLE`] or too high; [`Self::settle`] extends the search to more cells,
    /// [`Self::advance`] completes it a slice at a time.
    pub fn rebuild_for(
        &mut self,
        cost: &CostField,
        goals: &[Cell],
        demand: &[Cell],
    ) -> Result<(), FieldError> {
        self.check(cost, demand)?;
        let pending = self.start(cost, goals)?;
        // Pause at once; `settle` then runs exactly as far as `demand` needs.
        self.run(cost, pending, Stop::Budget(0));
        self.settle(cost, demand).map(|_| ())
    }

    /// Resumes a paused search (see [`Self::rebuild_for`]) until every cell of `demand` is
    /// final. Returns whether it had to search. A complete field has nothing to do. Walls
    /// need no search (they are never reachable); a demanded cell with no path to the goals
    /// makes the search run to the end, which proves it.
    pub fn settle(&mut self, cost: &CostField, demand: &[Cell]) -> Result<bool, FieldError> {
        self.check(cost, demand)?;
        let Some(frontier) = self.frontier else {
            return Ok(false);
        };
        self.check_version(cost)?;
        let costs = cost.padded_costs();
        let q = &mut self.queue;
        let words = self.values.len().div_ceil(64);
        if q.wanted.len() != words {
            q.wanted = vec![0; words];
        }
        q.wanted_left = 0;
        for &c in demand {
            let i = cost.padded_index(c);
            let (word, bit) = (i / 64, 1u64 << (i % 64));
            if self.values[i] >= frontier && costs[i] != WALL && q.wanted[word] & bit == 0 {
                q.wanted[word] |= bit;
                q.wanted_left += 1;
            }
        }
        if q.wanted_left == 0 {
            return Ok(false);
        }
        let pending = q.pending;
        self.run(cost, pending, Stop::Wanted);
        // Bits of cells the search never reached (it ran dry: they have no path).
        for &c in demand {
            let i = cost.padded_index(c);
            self.queue.wanted[i / 64] &= !(1u64 << (i % 64));
        }
        Ok(true)
    }

    /// Resumes a paused search for about `budget` more cells (at least one bucket of the
    /// queue), so a partial field can be completed over several frames. Returns whether the
    /// field is complete.
    pub fn advance(&mut self, cost: &CostField, budget: usize) -> Result<bool, FieldError> {
        self.check(cost, &[])?;
        if self.frontier.is_none() {
            return Ok(true);
        }
        self.check_version(cost)?;
        let pending = self.queue.pending;
        self.run(cost, pending, Stop::Budget(budget.max(1)));
        Ok(self.frontier.is_none())
    }

    /// Whether every value is final (see [`Self::rebuild_for`] for partial fields).
    #[must_use]
    pub fn is_complete(&self) -> bool {
        self.frontier.is_none()
    }

    /// Whether the value at `cell` (inside the grid) is final: always in a complete field;
    /// in a partial one, for the cells the search has settled (a wall's value is always
    /// [`UNREACHABLE`], but a partial field reports it final only once complete).
    #[must_use]
    #[inline]
    pub fn is_final(&self, cell: Cell) -> bool {
        self.frontier.is_none_or(|f| self.get(cell) < f)
    }

    /// Checks the size and the goals, resets every value and queues the passable goals at 0.
    /// Returns how many were queued.
    fn start(&mut self, cost: &CostField, goals: &[Cell]) -> Result<usize, FieldError> {
        self.check(cost, goals)?;
        self.allocate();
        let (low, high) = std::mem::replace(&mut self.span, (usize::MAX, 0));
        if low < high {
            self.values[low..high].fill(UNREACHABLE);
        }
        self.queue.reset();
        self.searched = cost.version();
        let costs = cost.padded_costs();
        let mut pending = 0usize;
        for &goal in goals {
            let i = cost.padded_index(goal);
            if costs[i] != WALL && self.values[i] != 0 {
                self.values[i] = 0;
                self.queue.buckets[0].push(i as u32);
                pending += 1;
                self.span = (self.span.0.min(i), self.span.1.max(i + 1));
            }
        }
        if self.span.0 >= self.span.1 {
            self.span = (0, 0);
        }
        Ok(pending)
    }

    /// Runs (or resumes) the search until `stop`, and records where it paused.
    fn run(&mut self, cost: &CostField, pending: usize, stop: Stop) {
        let start = self.queue.current;
        // A complete search may reach anywhere: tracking its extent would only slow it.
        let mut touched = match stop {
            Stop::Never => None,
            _ if self.span.0 < self.span.1 => Some((self.span.0, self.span.1 - 1)),
            _ => Some((usize::MAX, 0)),
        };
        let complete = propagate(
            &mut self.values,
            cost.padded_costs(),
            cost.padded_moves(),
            cost.neighbour_offsets(),
            &mut self.queue,
            pending,
            &[],
            start,
            stop,
            &mut touched,
        );
        self.span = match touched {
            Some((low, high)) if low <= high => (low, high + 1),
            Some(_) => (0, 0),
            None => (0, self.values.len()),
        };
        self.frontier = (!complete).then(|| self.queue.current.saturating_mul(ORTHO_STEP));
    }

    /// Allocates the values (all [`UNREACHABLE`]) of a field never built.
    fn allocate(&mut self) {
        if self.values.is_empty() {
            self.values = vec![UNREACHABLE; (self.width as usize + 2) * (self.height as usize + 2)];
        }
    }

    /// A paused search may only go on over the costs it started on.
    fn check_version(&self, cost: &CostField) -> Result<(), FieldError> {
        if cost.version() == self.searched {
            Ok(())
        } else {
            Err(FieldError::CostsChanged {
                searched: self.searched,
                now: cost.version(),
            })
        }
    }

    /// Brings the field up to date after cost edits, touching only what the edits can
    /// change, and leaves exactly what [`Self::rebuild`] toward `goals` on `cost` would.
    ///
    /// `cost` is the cost field *after* the edits; `edits` lists every cell whose cost changed
    /// since the field was last built or repaired, with its cost *before* (for a cell edited
    /// several times, its first entry wins, so a log of edits in order can be passed as is).
    ///
    /// How: every cell whose shortest path may have used a changed step is found by walking
    /// the old shortest-path tree backwards from the edited cells and their neighbours; those
    /// cells are reset and re-seeded from their untouched neighbours; then the bucket queue
    /// runs from the seeds, which also carries any improvement (a wall removed) outwards.
    /// Returns the rows whose values may have changed, for repairing the flow field.
    pub fn repair(
        &mut self,
        cost: &CostField,
        goals: &[Cell],
        edits: &[(Cell, u8)],
    ) -> Result<Option<Range<u32>>, FieldError> {
        self.check(cost, goals)?;
        for &(cell, _) in edits {
            if cell.x >= self.width || cell.y >= self.height {
                return Err(FieldError::EditOutside {
                    cell,
                    width: self.width,
                    height: self.height,
                });
            }
        }
        self.allocate();
        if !self.is_complete() {
            // A partial field's unsettled values are not a shortest-path tree to repair.
            self.rebuild(cost, goals)?;
            return Ok(Some(0..self.height));
        }
        if edits.is_empty() {
            return Ok(None);
        }
        let costs = cost.padded_costs();
        let moves = cost.padded_moves();
        let offsets = cost.neighbour_offsets();
        let stride = cost.stride();
        let (w, h) = (self.width as usize, self.height as usize);
        let inside = |i: usize| {
            let (x, y) = (i % stride, i / stride);
            x >= 1 && y >= 1 && x <= w && y <= h
        };
        // Costs before the edits: the first entry of each edited cell.
        let mut before: Vec<(usize, u8)> = edits
            .iter()
            .map(|&(c, old)| (cost.padded_index(c), old))
            .collect();
        before.sort_by_key(|&(i, _)| i);
        before.dedup_by_key(|&mut (i, _)| i);
        let old_cost = |i: usize| match before.binary_search_by_key(&i, |&(j, _)| j) {
            Ok(k) => before[k].1,
            Err(_) => costs[i],
        };

        let q = &mut self.queue;
        if q.marks.len() != self.values.len() {
            q.marks = vec![false; self.values.len()];
        }
        q.marked.clear();
        q.stack.clear();
        // The edited cells and their neighbours: every step whose cost or legality changed
        // starts or ends among them.
        for &(i, _) in &before {
            for off in std::iter::once(0).chain(offsets) {
                let v = i.wrapping_add_signed(off);
                if inside(v) && !q.marks[v] {
                    q.marks[v] = true;
                    q.marked.push(v as u32);
                    q.stack.push(v as u32);
                }
            }
        }
        // Everything whose old shortest path ran through a marked cell.
        while let Some(u) = q.stack.pop() {
            let u = u as usize;
            let du = self.values[u];
            if du == UNREACHABLE {
                continue;
            }
            let c = u32::from(old_cost(u));
            for (dir, &off) in offsets.iter().enumerate() {
                let v = u.wrapping_add_signed(off);
                if q.marks[v] || !inside(v) {
                    continue;
                }
                let step = if dir & 1 == 0 { ORTHO_STEP } else { DIAG_STEP };
                let back = (dir + 4) & 7; // the move from v to u
                if moves[v] & (1 << back) != 0 && self.values[v] == du.saturating_add(c * step) {
                    q.marks[v] = true;
                    q.marked.push(v as u32);
                    q.stack.push(v as u32);
                }
            }
        }
        for &i in &q.marked {
            self.values[i as usize] = UNREACHABLE;
        }
        for &g in goals {
            let i = cost.padded_index(g);
            if costs[i] != WALL {
                self.values[i] = 0;
            }
        }
        // Seed the reset cells from their untouched neighbours (and goals at 0).
        q.seeds.clear();
        let (mut low, mut high) = (usize::MAX, 0);
        for &i in &q.marked {
            let i = i as usize;
            q.marks[i] = false;
            low = low.min(i);
            high = high.max(i);
            if costs[i] == WALL {
                continue;
            }
            let mut best = self.values[i];
            let m = moves[i];
            for (dir, &off) in offsets.iter().enumerate() {
                if m & (1 << dir) != 0 {
                    let u = i.wrapping_add_signed(off);
                    let step = if dir & 1 == 0 { ORTHO_STEP } else { DIAG_STEP };
                    best = best.min(self.values[u].saturating_add(u32::from(costs[u]) * step));
                }
            }
            if best != UNREACHABLE {
                self.values[i] = best;
                q.seeds.push(i as u32);
            }
        }
        let values = &self.values;
        q.seeds.sort_unstable_by_key(|&i| (values[i as usize], i));
        let seeds = std::mem::take(&mut q.seeds);
        let mut touched = Some((low, high));
        propagate(
            &mut self.values,
            costs,
            moves,
            offsets,
            &mut self.queue,
            0,
            &seeds,
            0,
            Stop::Never,
            &mut touched,
        );
        self.queue.seeds = seeds;
        self.span = (0, self.values.len());
        Ok(touched.map(|(low, high)| {
            let first = (low / stride).saturating_sub(1) as u32;
            let last = ((high / stride).saturating_sub(1) as u32).min(self.height - 1);
            first..last + 1
        }))
    }

    /// The size and goal checks every build and repair starts with.
    fn check(&self, cost: &CostField, goals: &[Cell]) -> Result<(), FieldError> {
        if (self.width, self.height) != (cost.width(), cost.height()) {
            return Err(FieldError::SizeMismatch {
                field: (self.width, self.height),
                cost: (cost.width(), cost.height()),
            });
        }
        for &cell in goals {
            if cell.x >= self.width || cell.y >= self.height {
                return Err(FieldError::GoalOutside {
                    cell,
                    width: self.width,
                    height: self.height,
                });
            }
        }
        Ok(())
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

    /// Value at `cell` ([`UNREACHABLE`] for walls and cells with no path).
    #[must_use]
    #[inline]
    pub fn get(&self, cell: Cell) -> u32 {
        let i = (cell.y as usize + 1) * (self.width as usize + 2) + cell.x as usize + 1;
        // A field never built holds no values.
        self.values.get(i).copied().unwrap_or(UNREACHABLE)
    }

    /// Path cost from `cell` to the nearest goal in cost-1 orthogonal steps (a Moving AI
    /// "optimal length" when every cell costs 1), or `None` when there is no path.
    #[must_use]
    #[inline]
    pub fn distance(&self, cell: Cell) -> Option<f64> {
        let v = self.get(cell);
        (v != UNREACHABLE).then(|| f64::from(v) / f64::from(ORTHO_STEP))
    }

    /// The values in the padded layout, for a builder of the crate that computes the whole
    /// field over `cost` itself ([`DeltaStepping`]): it must leave exactly the values
    /// [`Self::rebuild`] would, and the field is then what a rebuild leaves (complete, built
    /// on `cost`'s version, its queue ready for a repair).
    pub(crate) fn padded_values_mut(&mut self, cost: &CostField) -> &mut [u32] {
        self.allocate();
        self.queue.reset();
        self.searched = cost.version();
        self.frontier = None;
        self.span = (0, self.values.len());
        &mut self.values
    }

    /// The values in the padded layout of [`CostField::padded_costs`]; empty for a field
    /// never built (see [`Self::unreachable`]).
    #[must_use]
    pub fn padded_values(&self) -> &[u32] {
        &self.values
    }

    /// The values, row-major, without the border.
    #[must_use]
    pub fn to_values(&self) -> Vec<u32> {
        if self.values.is_empty() {
            return vec![UNREACHABLE; self.width as usize * self.height as usize];
        }
        let s = self.width as usize + 2;
        (0..self.height as usize)
            .flat_map(|y| {
                let row = (y + 1) * s + 1;
                self.values[row..row + self.width as usize].iter().copied()
            })
            .collect()
    }

    /// Bytes of memory per cell held by the values (the padded `u32` array; 0 for a field
    /// never built).
    #[must_use]
    pub fn bytes_per_cell(&self) -> f64 {
        (self.values.len() * 4) as f64 / (self.width as f64 * self.height as f64)
    }
}

/// The relaxation kernel of every integration build (one thread: [`propagate`]; several:
/// [`DeltaStepping`]): the neighbours of padded index `u`, settled at value `d`, that a step
/// into `u` improves, each with its new value, in direction order.
///
/// A step from a neighbour into `u` costs `u`'s cost times [`ORTHO_STEP`] or [`DIAG_STEP`].
/// All eight neighbours are compared first (`value` reads one; walls and the border hold
/// [`UNREACHABLE`] or lose the comparison), without branching, then only the improved ones
/// that a legal move reaches are walked: the comparison outcome is unpredictable, and one
/// data-dependent loop over a bit mask costs far fewer mispredictions than eight `if`s
/// (about twice as fast: `git show 33beac9:CHANGELOG.md`, "Performance history"). `value`
/// is done with before the first improvement comes out, so the caller may then write the
/// values it read.
#[inline(always)]
fn relax(
    u: usize,
    d: u32,
    costs: &[u8],
    moves: &[u8],
    offsets: [isize; 8],
    value: impl Fn(usize) -> u32,
) -> Improved {
    let c = u32::from(costs[u]);
    let steps = [
        d.saturating_add(c * ORTHO_STEP),
        d.saturating_add(c * DIAG_STEP),
    ];
    let mut better = 0u32;
    for (dir, &offset) in offsets.iter().enumerate() {
        let v = u.wrapping_add_signed(offset);
        better |= u32::from(steps[dir & 1] < value(v)) << dir;
    }
    better &= u32::from(moves[u]);
    Improved {
        u,
        better,
        steps,
        offsets,
    }
}

/// The improved neighbours [`relax`] found: `(padded index, new value)`.
struct Improved {
    u: usize,
    /// One bit per direction still to hand out.
    better: u32,
    /// The new value through an orthogonal and a diagonal step.
    steps: [u32; 2],
    offsets: [isize; 8],
}

impl Iterator for Improved {
    type Item = (usize, u32);

    #[inline(always)]
    fn next(&mut self) -> Option<(usize, u32)> {
        if self.better == 0 {
            return None;
        }
        let dir = self.better.trailing_zeros() as usize;
        self.better &= self.better - 1;
        Some((
            self.u.wrapping_add_signed(self.offsets[dir]),
            self.steps[dir & 1],
        ))
    }
}

/// Drains the bucket ring: the Dijkstra proper. `pending` entries are queued, the lowest in
/// bucket `start` (0 for a new search; where a paused one stopped). Returns whether the
/// queue ran dry (every value final); else the bucket to go on from and the entries left
/// are in `queue.current` and `queue.pending`.
///
/// Each settled cell is relaxed by [`relax`].
#[allow(clippy::too_many_arguments)] // the padded arrays travel separately on purpose
fn propagate(
    values: &mut [u32],
    costs: &[u8],
    moves: &[u8],
    offsets: [isize; 8],
    queue: &mut BucketQueue,
    mut pending: usize,
    seeds: &[u32],
    start: u32,
    stop: Stop,
    touched: &mut Option<(usize, usize)>,
) -> bool {
    // `seeds` (sorted by value) enter the ring when the sweep reaches their bucket, so seeds
    // spread over more than the ring's span never wrap onto a live bucket.
    let mut next_seed = 0;
    let mut current: u32 = match (pending, seeds.first()) {
        (0, Some(&s)) => values[s as usize] / ORTHO_STEP,
        _ => start,
    };
    let mut list = std::mem::take(&mut queue.spare);
    let mut budget = match stop {
        Stop::Budget(n) => n,
        _ => usize::MAX,
    };
    let watch = matches!(stop, Stop::Wanted);
    let complete = loop {
        while let Some(&s) = seeds.get(next_seed) {
            let bucket = values[s as usize] / ORTHO_STEP;
            if bucket > current {
                break;
            }
            if bucket == current {
                queue.buckets[current as usize & (RING - 1)].push(s);
                pending += 1;
            }
            next_seed += 1;
        }
        if pending == 0 {
            match seeds.get(next_seed) {
                Some(&s) => {
                    current = values[s as usize] / ORTHO_STEP;
                    continue;
                }
                None => break true,
            }
        }
        let done = match stop {
            Stop::Never => false,
            Stop::Settled(s) => values[s] / ORTHO_STEP < current,
            Stop::Wanted => queue.wanted_left == 0,
            Stop::Budget(_) => budget == 0,
        };
        if done {
            break false;
        }
        let slot = current as usize & (RING - 1);
        std::mem::swap(&mut list, &mut queue.buckets[slot]);
        pending -= list.len();
        budget = budget.saturating_sub(list.len());
        let low = current * ORTHO_STEP;
        for &u in &list {
            let u = u as usize;
            let d = values[u];
            if d.wrapping_sub(low) >= ORTHO_STEP {
                continue; // stale: the cell was settled from an earlier bucket
            }
            if watch {
                let (word, bit) = (u / 64, 1u64 << (u % 64));
                if queue.wanted[word] & bit != 0 {
                    queue.wanted[word] &= !bit;
                    queue.wanted_left -= 1;
                }
            }
            for (v, nd) in relax(u, d, costs, moves, offsets, |v| values[v]) {
                values[v] = nd;
                queue.buckets[(nd / ORTHO_STEP) as usize & (RING - 1)].push(v as u32);
                pending += 1;
                if let Some((low, high)) = touched {
                    *low = (*low).min(v);
                    *high = (*high).max(v);
                }
            }
        }
        list.clear();
        current += 1;
    };
    queue.spare = list;
    queue.current = current;
    queue.pending = pending;
    complete
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::grid::Grid;
    use crate::reference::dijkstra_binary_heap;
    use proptest::prelude::*;

    /// A random cost grid: mostly open, some rough, some walls.
    pub(crate) fn arb_costs() -> impl Strategy<Value = (u32, u32, Vec<u8>, Vec<(u32, u32)>)> {
        (1u32..40, 1u32..40).prop_flat_map(|(w, h)| {
            let n = (w * h) as usize;
            let cost = prop_oneof![
                6 => Just(1u8),
                2 => 2u8..=254,
                2 => Just(WALL),
                1 => Just(254u8),
            ];
            (
                Just(w),
                Just(h),
                proptest::collection::vec(cost, n),
                proptest::collection::vec((0..w, 0..h), 1..5),
            )
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]
        #[test]
        fn equals_binary_heap_dijkstra((w, h, costs, goals) in arb_costs()) {
            let grid = Grid::new(w, h).unwrap();
            let cost = CostField::from_costs(&grid, &costs).unwrap();
            let goals: Vec<Cell> = goals.into_iter().map(|(x, y)| Cell::new(x, y)).collect();
            let field = IntegrationField::build(&cost, &goals).unwrap();
            prop_assert_eq!(field.to_values(), dijkstra_binary_heap(&cost, &goals));
        }

        #[test]
        fn early_stop_is_exact_at_the_target((w, h, costs, goals) in arb_costs(), t in (0u32..40, 0u32..40)) {
            let grid = Grid::new(w, h).unwrap();
            let cost = CostField::from_costs(&grid, &costs).unwrap();
            let goals: Vec<Cell> = goals.into_iter().map(|(x, y)| Cell::new(x, y)).collect();
            let target = Cell::new(t.0 % w, t.1 % h);
            let mut field = IntegrationField::unreachable(&cost);
            field.rebuild_until(&cost, &goals, Some(target)).unwrap();
            let full = dijkstra_binary_heap(&cost, &goals);
            prop_assert_eq!(field.get(target), full[grid.index(target)]);
        }
    }

    #[test]
    fn a_paused_search_refuses_changed_costs_and_repair_rebuilds_it() {
        let grid = Grid::new(30, 30).unwrap();
        let mut cost = CostField::from_costs(&grid, &vec![1; 900]).unwrap();
        let goal = [Cell::new(0, 0)];
        let mut field = IntegrationField::unreachable(&cost);
        field.rebuild_for(&cost, &goal, &[Cell::new(3, 3)]).unwrap();
        assert!(!field.is_complete());
        assert!(field.is_final(Cell::new(3, 3)));
        assert!(!field.is_final(Cell::new(29, 29)));
        assert!(cost.set(Cell::new(10, 10), WALL));
        assert!(matches!(
            field.settle(&cost, &[Cell::new(29, 29)]),
            Err(FieldError::CostsChanged { .. })
        ));
        assert!(matches!(
            field.advance(&cost, 10),
            Err(FieldError::CostsChanged { .. })
        ));
        // A repair of a partial field rebuilds it completely.
        let rows = field
            .repair(&cost, &goal, &[(Cell::new(10, 10), 1)])
            .unwrap();
        assert_eq!(rows, Some(0..30));
        assert!(field == IntegrationField::build(&cost, &goal).unwrap());
        // Cells outside the grid are an error, not a panic.
        assert!(
            field
                .rebuild_for(&cost, &goal, &[Cell::new(30, 0)])
                .is_err()
        );
    }

    /// A random grid, goals, and a sequence of edit batches (cell, new cost) applied one
    /// batch at a time: walls placed and removed, rough cells, edits on goals.
    /// Width, height, costs, goals and batches of `(x, y, new cost)` edits.
    type EditRun = (u32, u32, Vec<u8>, Vec<(u32, u32)>, Vec<Vec<(u32, u32, u8)>>);

    fn arb_edit_run() -> impl Strategy<Value = EditRun> {
        arb_costs().prop_flat_map(|(w, h, costs, goals)| {
            let cost = prop_oneof![3 => Just(WALL), 3 => Just(1u8), 1 => 2u8..=254];
            let edit = (0..w, 0..h, cost);
            // Batches are mostly small (a wall placed), sometimes a block (a building).
            let batch = proptest::collection::vec(edit, 1..6);
            (
                Just(w),
                Just(h),
                Just(costs),
                Just(goals),
                proptest::collection::vec(batch, 1..8),
            )
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]
        #[test]
        fn repair_equals_a_full_rebuild_after_any_edits((w, h, costs, goals, batches) in arb_edit_run()) {
            let grid = Grid::new(w, h).unwrap();
            let mut cost = CostField::from_costs(&grid, &costs).unwrap();
            let goals: Vec<Cell> = goals.into_iter().map(|(x, y)| Cell::new(x, y)).collect();
            let mut field = IntegrationField::build(&cost, &goals).unwrap();
            for batch in batches {
                let mut log = Vec::new();
                for (x, y, c) in batch {
                    let cell = Cell::new(x, y);
                    let old = cost.get(cell);
                    if cost.set(cell, c) {
                        log.push((cell, old));
                    }
                }
                let rows = field.repair(&cost, &goals, &log).unwrap();
                let full = IntegrationField::build(&cost, &goals).unwrap();
                prop_assert_eq!(&field.to_values(), &full.to_values());
                if log.is_empty() {
                    prop_assert!(rows.is_none());
                }
            }
        }
    }

    #[test]
    fn cutting_off_and_reconnecting_a_region() {
        // A wall across the whole map cuts the right half off the goal; removing one brick
        // reconnects it.
        let grid = Grid::new(9, 7).unwrap();
        let mut cost = CostField::filled(&grid, 1);
        let goals = [Cell::new(0, 3)];
        let mut field = IntegrationField::build(&cost, &goals).unwrap();
        let mut log = Vec::new();
        for y in 0..7 {
            log.push((Cell::new(4, y), cost.get(Cell::new(4, y))));
            cost.set(Cell::new(4, y), WALL);
        }
        field.repair(&cost, &goals, &log).unwrap();
        assert_eq!(field.get(Cell::new(8, 3)), UNREACHABLE);
        assert_eq!(field, IntegrationField::build(&cost, &goals).unwrap());
        cost.set(Cell::new(4, 6), 1);
        let rows = field
            .repair(&cost, &goals, &[(Cell::new(4, 6), WALL)])
            .unwrap()
            .unwrap();
        assert_ne!(field.get(Cell::new(8, 3)), UNREACHABLE);
        assert_eq!(field, IntegrationField::build(&cost, &goals).unwrap());
        assert!(rows.start <= 3 && rows.end == 7, "{rows:?}");
        // A wall on the goal itself removes it; taking it away restores it.
        cost.set(Cell::new(0, 3), WALL);
        field
            .repair(&cost, &goals, &[(Cell::new(0, 3), 1)])
            .unwrap();
        assert!(field.to_values().iter().all(|&v| v == UNREACHABLE));
        cost.set(Cell::new(0, 3), 1);
        field
            .repair(&cost, &goals, &[(Cell::new(0, 3), WALL)])
            .unwrap();
        assert_eq!(field, IntegrationField::build(&cost, &goals).unwrap());
        assert!(matches!(
            field.repair(&cost, &goals, &[(Cell::new(9, 0), 1)]),
            Err(FieldError::EditOutside { .. })
        ));
    }

    #[test]
    fn straight_and_diagonal_distances() {
        let grid = Grid::new(10, 10).unwrap();
        let cost = CostField::filled(&grid, 1);
        let f = IntegrationField::build(&cost, &[Cell::new(0, 0)]).unwrap();
        assert_eq!(f.get(Cell::new(9, 0)), 9 * ORTHO_STEP);
        assert_eq!(f.get(Cell::new(9, 9)), 9 * DIAG_STEP);
        assert_eq!(f.get(Cell::new(9, 4)), 4 * DIAG_STEP + 5 * ORTHO_STEP);
        let d = f.distance(Cell::new(3, 3)).unwrap();
        assert!((d - 3.0 * std::f64::consts::SQRT_2).abs() < 1e-3);
    }

    #[test]
    fn walls_rough_cells_and_corners() {
        // S . #
        // # . .
        // . . G
        let grid = Grid::new(3, 3).unwrap();
        let costs = [1, 1, WALL, WALL, 5, 1, 1, 1, 1];
        let cost = CostField::from_costs(&grid, &costs).unwrap();
        let f = IntegrationField::build(&cost, &[Cell::new(2, 2)]).unwrap();
        assert_eq!(f.get(Cell::new(2, 0)), UNREACHABLE);
        // (1,0) cannot step diagonally to (2,1): the wall at (2,0) is a corner. It must enter
        // the rough (1,1) (cost 5) and then step diagonally onto the goal.
        assert_eq!(f.get(Cell::new(1, 0)), 5 * ORTHO_STEP + DIAG_STEP);
        // (0,0) cannot cut past the wall at (0,1) either.
        assert_eq!(f.get(Cell::new(0, 0)), f.get(Cell::new(1, 0)) + ORTHO_STEP);
    }

    #[test]
    fn bad_goals_and_sizes() {
        let grid = Grid::new(4, 4).unwrap();
        let cost = CostField::filled(&grid, 1);
        assert!(matches!(
            IntegrationField::build(&cost, &[Cell::new(4, 0)]),
            Err(FieldError::GoalOutside { .. })
        ));
        let mut small =
            IntegrationField::unreachable(&CostField::filled(&Grid::new(2, 2).unwrap(), 1));
        assert!(matches!(
            small.rebuild(&cost, &[Cell::new(0, 0)]),
            Err(FieldError::SizeMismatch { .. })
        ));
        let walled = CostField::filled(&grid, WALL);
        let f = IntegrationField::build(&walled, &[Cell::new(1, 1)]).unwrap();
        assert!(f.to_values().iter().all(|&v| v == UNREACHABLE));
    }

    #[test]
    fn values_saturate_instead_of_wrapping() {
        // A long corridor of cost-254 cells overflows u32 well before its end.
        let grid = Grid::new(8000, 1).unwrap();
        let cost = CostField::filled(&grid, 254);
        let f = IntegrationField::build(&cost, &[Cell::new(0, 0)]).unwrap();
        let values = f.to_values();
        assert!(values.windows(2).all(|w| w[0] <= w[1]));
        assert_eq!(values[1], 254 * ORTHO_STEP);
        assert_eq!(dijkstra_binary_heap(&cost, &[Cell::new(0, 0)]), values);
    }
}
