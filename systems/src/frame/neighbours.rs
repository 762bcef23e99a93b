//! The neighbour snapshot `bucket_units` takes every frame ([`Neighbours`]): every unit's
//! position, radius and state, sorted by bucket of a spatial grid, so a unit's neighbours
//! are the units of the 3x3 buckets around it, read from contiguous memory. Steering walks
//! it and lists each unit's neighbours (`neighbour_lists.rs`) for the body limits of
//! `apply_knockback` and the contacts; the goal fills and the sleep checks read it too.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::frame::neighbour_lists::{Asker, NeighbourLists};
use crate::frame::streams::Streams;
use crate::job_graph::StageContext;
use glam::Vec2;
use horde_core::SpatialGrid;

/// Consecutive units (in storage order) whose bucket rows are more than this many rows apart
/// count as a far jump ([`Neighbours::far_jumps`]): the second one's per-cell data is nowhere
/// near the first's.
pub(crate) const FAR_ROWS: u32 = 8;

/// What steering needs to know about a neighbour, as it was at the start of the frame.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct NeighbourInfo {
    /// Centre.
    pub pos: Vec2,
    /// Radius.
    pub radius: f32,
    /// The unit's [`UnitId`].
    pub id: u32,
    /// The unit's army: the lowest index of the groups sharing its group's goal
    /// ([`crate::Groups::army`]). Resting units of one army are friends.
    pub army: u16,
    /// Whether it was at rest (arrived or settled) when the frame began.
    pub at_rest: bool,
    /// Whether it was calm when the frame began: asleep, or still long enough to fall
    /// asleep ([`horde_core::Steering::is_calm`]). A unit falls asleep only among calm
    /// neighbours.
    pub calm: bool,
    /// Whether it was asleep when the frame began: it does not move this frame, and a
    /// unit that is not at rest and touches it wakes it.
    pub asleep: bool,
    /// Whether and why it gave way in the frame before ([`horde_core::Steering::yielding`]):
    /// units with the right of way are not held by it and push it aside.
    pub yields: horde_core::GiveWay,
    /// Its heading as the frame began, each axis times 127 ([`NeighbourInfo::heading`]):
    /// whether it comes toward a unit it meets.
    pub heading: [i8; 2],
}

impl NeighbourInfo {
    /// `heading` (a unit vector or zero) as [`Self::heading`] stores it.
    #[must_use]
    pub fn pack_heading(heading: Vec2) -> [i8; 2] {
        let axis = |v: f32| (v.clamp(-1.0, 1.0) * 127.0).round() as i8;
        if heading.is_finite() {
            [axis(heading.x), axis(heading.y)]
        } else {
            [0, 0]
        }
    }

    /// Its heading, to within 1/127 on each axis.
    #[must_use]
    pub fn heading(&self) -> Vec2 {
        Vec2::new(f32::from(self.heading[0]), f32::from(self.heading[1])) / 127.0
    }
}

/// The spatial grid and the units sorted by bucket (`units[k]` is the unit at position `k`
/// of the grid's order; bucket `b` holds `units[cell_start[b]..cell_start[b + 1]]`).
#[derive(Clone, Debug)]
pub struct Neighbours {
    /// Buckets over the map.
    pub grid: SpatialGrid,
    /// Units sorted by bucket.
    pub units: Vec<NeighbourInfo>,
    /// How many units, in the world's storage order, stand more than a few bucket rows from
    /// the unit before them: a measure of how scattered the storage is (see
    /// `Horde::step`, which sorts the units when it is high).
    pub far_jumps: usize,
    /// The units at rest as the frame began (army, position, radius), in storage order:
    /// what `fill_goals` counts.
    pub resting: Vec<(u16, Vec2, f32)>,
    /// Units too big for [`Self::grid`]'s buckets, in coarser buckets of their own (`None`
    /// while there are none).
    pub large: Option<LargeUnits>,
    /// How many units need at most half a bucket of [`Self::grid`] ([`bucket_side`]): the
    /// buckets are at least twice as wide as they need.
    pub small: usize,
    /// How many units were asleep as the frame began.
    pub asleep: usize,
    /// The armies with a settled unit as the frame began (at rest outside their goal: the
    /// goal does not hold them). Their arrived units do not fall asleep.
    pub settling: Vec<u16>,
    /// Per army (by its first group's index): how many of its units were not at rest as the
    /// frame began (armies past the end have none).
    pub coming: Vec<u32>,
    /// Which world buckets hold one small unit and which more, while the grid folds its
    /// rows (see [`Occupancy`]).
    pub occupancy: Occupancy,
    /// From how many table buckets on the occupancy bits are kept (tests lower it).
    pub(crate) occupancy_from: u32,
    /// The smallest and largest radius in the snapshot (`(inf, 0)` when empty).
    pub radii: (f32, f32),
    /// The highest top speed in the snapshot.
    pub fastest: f32,
    /// Where armies stream, while two or more are on their way (see [`Streams`]).
    pub streams: Streams,
    /// The snapshot in the world's storage order (before the sort).
    pub(super) scratch: Vec<NeighbourInfo>,
    pub(super) buckets: Vec<u32>,
}

/// The fewest buckets a folded table needs for [`Occupancy`] to be kept. A smaller table
/// stays in the core's cache, and there the bits cost more than they save (10k units on the
/// 1024x1024 level, bits forced on: the bucketing 12% slower, steering unchanged). On the
/// 4096x4096 map with 100k units (a table of 800k buckets), one thread, steering went from
/// 39.0 and 34.7 ms to 20.4 and 21.6 ms a frame.
pub const OCCUPANCY_FROM: u32 = 1 << 18;

/// Two bits per bucket of the *world* (unfolded) grid: some small unit stands in it, more
/// than one does. Kept only while [`SpatialGrid::fit_to`] folds the table's rows, which it
/// does when the crowd is sparse for the map, and the table has at least
/// [`OCCUPANCY_FROM`] buckets: then a unit's 3x3 table buckets are three scattered rows of
/// a table bigger than the core's cache, plus units of far rows that share them, and most
/// units have nobody near. Asking these bits first ([`Neighbours::near_spans`]) costs three
/// reads of a small array, mostly cached, where those rows cost a cache miss each. A unit
/// found alone gets no spans: every unit of them would have failed the distance test, so
/// the result is bit for bit the same.
#[derive(Debug, Default)]
pub struct Occupancy {
    /// Columns of the world grid; 0 while off.
    pub(super) columns: u32,
    /// Rows of the world grid.
    pub(super) rows: u32,
    pub(super) any: Vec<AtomicU64>,
    pub(super) many: Vec<AtomicU64>,
}

impl Clone for Occupancy {
    fn clone(&self) -> Self {
        let copy = |bits: &[AtomicU64]| {
            bits.iter()
                .map(|b| AtomicU64::new(b.load(Ordering::Relaxed)))
                .collect()
        };
        Self {
            columns: self.columns,
            rows: self.rows,
            any: copy(&self.any),
            many: copy(&self.many),
        }
    }
}

impl Occupancy {
    /// Clears the bits for a `columns x rows` world grid, or turns them off.
    pub(super) fn reset(&mut self, on: bool, columns: u32, rows: u32, ctx: &StageContext<'_>) {
        if !on {
            *self = Self::default();
            return;
        }
        let words = (columns as usize * rows as usize).div_ceil(64);
        (self.columns, self.rows) = (columns, rows);
        for bits in [&mut self.any, &mut self.many] {
            bits.resize_with(words, AtomicU64::default);
            ctx.for_each_chunk_mut(bits, 1 << 14, |_, _, part| {
                for word in part {
                    *word.get_mut() = 0;
                }
            });
        }
    }

    /// Whether the bits are kept.
    #[must_use]
    pub fn is_on(&self) -> bool {
        self.columns != 0
    }

    /// Records a small unit in world bucket `(x, y)`; from any thread.
    pub(super) fn mark(&self, x: u32, y: u32) {
        let at = y as usize * self.columns as usize + x as usize;
        let bit = 1u64 << (at % 64);
        if self.any[at / 64].fetch_or(bit, Ordering::Relaxed) & bit != 0 {
            self.many[at / 64].fetch_or(bit, Ordering::Relaxed);
        }
    }

    pub(super) fn test(bits: &[AtomicU64], at: usize) -> bool {
        bits[at / 64].load(Ordering::Relaxed) & (1u64 << (at % 64)) != 0
    }

    /// Whether a small unit in world bucket `(x, y)` is the only small unit in the 3x3
    /// buckets around it: its own bucket holds no second one, and no other holds any. Once
    /// per unit and frame on a big map, so each row of the 3x3 is one or two word reads.
    #[must_use]
    #[inline]
    pub fn alone(&self, x: u32, y: u32) -> bool {
        let columns = self.columns as usize;
        if Self::test(&self.many, y as usize * columns + x as usize) {
            return false;
        }
        let (x0, x1) = (x.saturating_sub(1), (x + 1).min(self.columns - 1));
        let (y0, y1) = (y.saturating_sub(1), (y + 1).min(self.rows - 1));
        let mut others = 0;
        for by in y0..=y1 {
            let mut row = Self::run(&self.any, by as usize * columns + x0 as usize, x1 - x0 + 1);
            if by == y {
                row &= !(1 << (x - x0));
            }
            others |= row;
        }
        others == 0
    }

    /// The `len` bits (at most 3) from bit `start` on, as the low bits of a word.
    #[inline]
    fn run(bits: &[AtomicU64], start: usize, len: u32) -> u64 {
        let (word, shift) = (start / 64, start % 64);
        let mut run = bits[word].load(Ordering::Relaxed) >> shift;
        if shift + len as usize > 64 {
            run |= bits[word + 1].load(Ordering::Relaxed) << (64 - shift);
        }
        run & ((1 << len) - 1)
    }
}

/// The units whose reach is wider than a bucket of [`Neighbours::grid`] (see
/// [`Neighbours::is_large`]): a few big units must not widen everyone's buckets, or every
/// unit would test dozens of neighbours. They sit in a grid of buckets as wide as the
/// largest one's reach; every unit looks at the 3x3 of those buckets around it too, and a
/// large unit looks at as many of the fine buckets around it as its reach covers.
#[derive(Clone, Debug)]
pub struct LargeUnits {
    /// Buckets as wide as the largest unit's reach (`2 * radius * separation_range`).
    pub grid: SpatialGrid,
    /// The large units, sorted by bucket of [`Self::grid`].
    pub units: Vec<NeighbourInfo>,
    /// Where each of [`Self::units`] stands in the world's storage order (the order of the
    /// frame's unit queries), for stages that map the snapshot back to the world.
    pub storage: Vec<u32>,
    /// Corners of the box within one bucket of every large unit: a unit outside it has no
    /// large neighbour, and skips the lookup (most units, when a few big ones stand apart).
    pub(super) near_box: (Vec2, Vec2),
}

impl LargeUnits {
    /// [`Neighbours::near_spans`] in the large units' grid: spans of [`Self::units`] (all
    /// empty for a position away from every large unit).
    #[must_use]
    #[inline]
    pub fn near_spans(&self, pos: Vec2) -> [(u32, u32); 3] {
        let (low, high) = self.near_box;
        if pos.cmplt(low).any() || pos.cmpgt(high).any() {
            return [(0, 0); 3];
        }
        spans_around(&self.grid, self.grid.coords_of(pos))
    }
}

/// Whether a unit of `radius` reaches past a bucket of side `bucket` (see
/// [`Neighbours::is_large`]).
#[inline]
pub(super) fn reaches_past(radius: f32, separation_range: f32, bucket: f32) -> bool {
    2.0 * radius * separation_range > bucket
}

/// Bodies closer than this many times the sum of their radii touch: steering counts them
/// as blockers, knock-back lets them shove each other (exactly touching: any slack held
/// packed crowds back at their goal, 97.9% instead of 98% arriving in `tests/arrival.rs`).
pub(crate) const TOUCHING: f32 = 1.0;

/// The bucket side a crowd of units of `radius` wants: every pair within separation range
/// lies in the 3x3 buckets around each of them. At least the side for radius 0.5, and 1.
#[must_use]
pub fn bucket_side(radius: f32, separation_range: f32) -> f32 {
    (2.0 * radius.max(0.5) * separation_range).max(1.0)
}

/// The 3x3 buckets of `grid` around `pos` as three spans of the sorted units, one per bucket
/// row (the buckets of a row are adjacent in the sorted order); rows past the grid's edge
/// are empty spans.
#[inline(always)]
fn spans_around(grid: &SpatialGrid, (bx, by): (u32, u32)) -> [(u32, u32); 3] {
    let mut spans = [(0, 0); 3];
    let first = bx.saturating_sub(1);
    let last = (bx + 1).min(grid.columns() - 1);
    let row = |y: u32| {
        let r = grid.row_span(y, first, last);
        (r.start as u32, r.end as u32)
    };
    if by > 0 {
        spans[0] = row(by - 1);
    }
    spans[1] = row(by);
    if by + 1 < grid.rows() {
        spans[2] = row(by + 1);
    }
    spans
}

impl Neighbours {
    /// An empty snapshot over `grid`.
    #[must_use]
    pub fn new(grid: SpatialGrid) -> Self {
        Self {
            grid,
            units: Vec::new(),
            far_jumps: 0,
            resting: Vec::new(),
            large: None,
            small: 0,
            asleep: 0,
            settling: Vec::new(),
            coming: Vec::new(),
            occupancy: Occupancy::default(),
            occupancy_from: OCCUPANCY_FROM,
            radii: (f32::INFINITY, 0.0),
            fastest: 0.0,
            streams: Streams::default(),
            scratch: Vec::new(),
            buckets: Vec::new(),
        }
    }

    /// The units in the 3x3 buckets around `pos`, as three `(start, end)` spans of
    /// [`Self::units`] (see [`Self::run`]), one per bucket row (the buckets of a row are
    /// adjacent in the sorted order; rows past the grid's edge are empty). Called once per
    /// unit per frame. All empty for a unit that [`Occupancy`] finds alone.
    #[must_use]
    #[inline(always)]
    pub fn near_spans(&self, pos: Vec2) -> [(u32, u32); 3] {
        if self.units.is_empty() {
            return [(0, 0); 3];
        }
        let at = self.grid.coords_of(pos);
        if self.occupancy.is_on() && pos.is_finite() && self.occupancy.alone(at.0, at.1) {
            return [(0, 0); 3];
        }
        spans_around(&self.grid, at)
    }

    /// Whether a unit of `radius` is too big for the buckets of [`Self::grid`]: its reach
    /// (`2 * radius * separation_range`, against a neighbour as big as itself) is wider than
    /// a bucket. Such a unit goes into [`Self::large`].
    #[must_use]
    #[inline]
    pub fn is_large(&self, radius: f32, separation_range: f32) -> bool {
        reaches_past(radius, separation_range, self.grid.cell_size())
    }

    /// How many units the snapshot holds, large ones included.
    #[must_use]
    pub fn len(&self) -> usize {
        self.units.len() + self.large.as_ref().map_or(0, |l| l.units.len())
    }

    /// The bucket side that fits the crowd, when [`Self::grid`]'s does not: more than half
    /// the units are large (each goes through the large units' coarser buckets), or more
    /// than half need at most half a bucket (each tests about four times the area it
    /// needs). The first unit spawned sizes the buckets, so both happen when it is unlike
    /// the crowd: a small scout leading big units, a giant spawned first. On 100k units
    /// either doubled the frame.
    ///
    /// The side fits the median unit's radius ([`bucket_side`]): then at least half the
    /// units need a full bucket and at most half are large, so a refitted grid is not
    /// refitted again while the crowd stays the same. `None` while the buckets fit. It
    /// depends only on the units' state, never on the thread count.
    #[must_use]
    pub fn refit_side(&self, separation_range: f32) -> Option<f32> {
        let total = self.len();
        let large = self.large.as_ref().map_or(0, |l| l.units.len());
        if total == 0 || (2 * large <= total && 2 * self.small <= total) {
            return None;
        }
        let large_units = self.large.iter().flat_map(|l| &l.units);
        let mut radii: Vec<f32> = self
            .units
            .iter()
            .chain(large_units)
            .map(|u| u.radius)
            .collect();
        let middle = radii.len() / 2;
        let (_, &mut median, _) = radii.select_nth_unstable_by(middle, f32::total_cmp);
        let side = bucket_side(median, separation_range);
        (side.is_finite() && side != self.grid.cell_size()).then_some(side)
    }

    /// Calls `visit` with every run of units that may touch a unit at `pos` of `radius`:
    /// every other unit within `(radius + its radius) * separation_range` is in exactly one
    /// run (others farther away may be as well, and the unit itself unless [`Occupancy`]
    /// finds it alone: the caller tests the distance and the id).
    /// `near` is [`Self::near_spans`] at `pos` (fetched early by the steering stage). Runs
    /// come in a fixed order: the fine buckets' rows, then the large units'.
    #[inline(always)]
    pub fn for_each_candidate(
        &self,
        pos: Vec2,
        radius: f32,
        separation_range: f32,
        near: [(u32, u32); 3],
        mut visit: impl FnMut(&[NeighbourInfo]),
    ) {
        self.for_each_candidate_slots(pos, radius, separation_range, near, |span| {
            visit(self.run(span));
        });
    }

    /// [`Self::for_each_candidate`]'s runs as non-empty spans of *slots*: the snapshot's
    /// fine units ([`Self::units`]) are slots `0..units.len()`, the large ones follow (slot
    /// `units.len() + k` is `large.units[k]`).
    #[inline(always)]
    pub fn for_each_candidate_slots(
        &self,
        pos: Vec2,
        radius: f32,
        separation_range: f32,
        near: [(u32, u32); 3],
        mut visit: impl FnMut((u32, u32)),
    ) {
        let mut fine_span = |(start, end): (u32, u32)| {
            if start < end {
                visit((start, end));
            }
        };
        if self.is_large(radius, separation_range) {
            // A large unit reaches past the 3x3 fine buckets: as far as its radius and the
            // biggest small unit's (half a fine bucket's reach) add up to.
            let reach = radius * separation_range + self.grid.cell_size() * 0.5;
            for span in self.spans_within(pos, reach) {
                fine_span(span);
            }
        } else {
            for span in near {
                fine_span(span);
            }
        }
        if let Some(large) = &self.large {
            let fine = self.units.len() as u32;
            for (start, end) in large.near_spans(pos) {
                if start < end {
                    visit((fine + start, fine + end));
                }
            }
        }
    }

    /// For a large unit at `pos` whose neighbours may be `reach` world units away: spans of
    /// [`Self::units`] covering every bucket within that distance (a row of buckets per
    /// span; each table row once, even where the table folds rows).
    #[inline(never)]
    pub fn spans_within(&self, pos: Vec2, reach: f32) -> impl Iterator<Item = (u32, u32)> + '_ {
        let grid = &self.grid;
        // Buckets of the fine grid are at least as wide as a small unit's reach, so
        // `ceil(reach / size)` buckets each way cover every neighbour. Nothing for an empty
        // grid or a reach that is not a positive number.
        let k = (!self.units.is_empty() && reach > 0.0).then(|| {
            (reach / grid.cell_size())
                .ceil()
                .min(grid.rows().max(grid.columns()) as f32) as u32
        });
        let (bx, by) = grid.coords_of(pos);
        k.into_iter().flat_map(move |k| {
            let (y0, y1) = (by.saturating_sub(k), (by + k).min(grid.rows() - 1));
            let (first, last) = (bx.saturating_sub(k), (bx + k).min(grid.columns() - 1));
            (y0..=y1.min(y0 + grid.table_rows() - 1)).map(move |y| {
                let r = grid.row_span(y, first, last);
                (r.start as u32, r.end as u32)
            })
        })
    }

    /// The unit at `slot` (see [`Self::run`]).
    #[must_use]
    #[inline(always)]
    pub fn at_slot(&self, slot: u32) -> &NeighbourInfo {
        let (slot, fine) = (slot as usize, self.units.len());
        match &self.large {
            Some(large) if slot >= fine => &large.units[slot - fine],
            _ => &self.units[slot],
        }
    }

    /// The units of a run of slots from [`Self::for_each_candidate_slots`] (all fine or all
    /// large: the snapshot's fine units are slots `0..units.len()`, the large ones follow).
    #[must_use]
    #[inline(always)]
    pub fn run(&self, (first, end): (u32, u32)) -> &[NeighbourInfo] {
        let fine = self.units.len() as u32;
        match &self.large {
            Some(large) if first >= fine => {
                &large.units[(first - fine) as usize..(end - fine) as usize]
            }
            _ => &self.units[first as usize..end as usize],
        }
    }

    /// Calls `visit` with runs of units among which are all the others of `who`'s buckets
    /// within `(radius + r_o) * times + plus` of it, `reach = Some((times, plus))`, or all of
    /// them (`None`). They come from its list in `lists` when the list holds that reach
    /// ([`NeighbourLists::covers`]), else from [`Self::for_each_candidate`]; either way in
    /// the same order, so a sum over them is the same. Others may come too: the caller tests
    /// the distance and the id.
    #[inline(always)]
    pub fn for_each_near(
        &self,
        lists: &NeighbourLists,
        who: Asker,
        separation_range: f32,
        reach: Option<(f32, f32)>,
        mut visit: impl FnMut(&[NeighbourInfo]),
    ) {
        match lists.within(who, reach) {
            // One unit at a time (a slice of one through `run` cost the body limits a sixth
            // more in a packed crowd).
            Some(list) => {
                for &slot in list {
                    visit(std::slice::from_ref(self.at_slot(slot)));
                }
            }
            None => {
                let near = self.near_spans(who.pos);
                self.for_each_candidate(who.pos, who.radius, separation_range, near, visit);
            }
        }
    }

    /// [`Self::for_each_near`] in slots ([`Self::for_each_candidate_slots`]).
    #[inline(always)]
    pub fn for_each_near_slot(
        &self,
        lists: &NeighbourLists,
        who: Asker,
        separation_range: f32,
        reach: Option<(f32, f32)>,
        mut visit: impl FnMut((u32, u32)),
    ) {
        match lists.within(who, reach) {
            Some(list) => {
                for &slot in list {
                    visit((slot, slot + 1));
                }
            }
            None => {
                let near = self.near_spans(who.pos);
                self.for_each_candidate_slots(who.pos, who.radius, separation_range, near, visit);
            }
        }
    }
}
