//! Stage `bucket_units`: sorts a snapshot of every unit into the spatial grid, so steering
//! finds neighbours in the 3x3 buckets around it and reads them from contiguous memory.

use std::sync::atomic::{AtomicU64, Ordering};

use glam::Vec2;
use horde_core::{Agent, Position, SpatialGrid, SpatialGridError, Steering, UnitId};
use parking_lot::Mutex;

use crate::frame::{FrameData, StageError};
use crate::job_graph::StageContext;
use crate::sort_units::FAR_ROWS;

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
    /// Which world buckets hold one small unit and which more, while the grid folds its
    /// rows (see [`Occupancy`]).
    pub occupancy: Occupancy,
    /// From how many table buckets on the occupancy bits are kept (tests lower it).
    pub(crate) occupancy_from: u32,
    scratch: Vec<NeighbourInfo>,
    buckets: Vec<u32>,
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
    columns: u32,
    /// Rows of the world grid.
    rows: u32,
    any: Vec<AtomicU64>,
    many: Vec<AtomicU64>,
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
    fn reset(&mut self, on: bool, columns: u32, rows: u32, ctx: &StageContext<'_>) {
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
    fn mark(&self, x: u32, y: u32) {
        let at = y as usize * self.columns as usize + x as usize;
        let bit = 1u64 << (at % 64);
        if self.any[at / 64].fetch_or(bit, Ordering::Relaxed) & bit != 0 {
            self.many[at / 64].fetch_or(bit, Ordering::Relaxed);
        }
    }

    fn test(bits: &[AtomicU64], at: usize) -> bool {
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
    near_box: (Vec2, Vec2),
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

    /// The units of a span from [`Self::near_spans`].
    #[must_use]
    pub fn span(&self, (start, end): (u32, u32)) -> &[NeighbourInfo] {
        &self.units[start as usize..end as usize]
    }
}

/// Whether a unit of `radius` reaches past a bucket of side `bucket` (see
/// [`Neighbours::is_large`]).
#[inline]
fn reaches_past(radius: f32, separation_range: f32, bucket: f32) -> bool {
    2.0 * radius * separation_range > bucket
}

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
            occupancy: Occupancy::default(),
            occupancy_from: OCCUPANCY_FROM,
            scratch: Vec::new(),
            buckets: Vec::new(),
        }
    }

    /// The units in the 3x3 buckets around `pos`, as three `(start, end)` spans of
    /// [`Self::units`] (see [`Self::span`]), one per bucket row (the buckets of a row are
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
        let fine = self.units.len() as u32;
        self.for_each_candidate_slots(pos, radius, separation_range, near, |(start, end)| {
            if start < fine {
                visit(self.span((start, end)));
            } else if let Some(large) = &self.large {
                visit(large.span((start - fine, end - fine)));
            }
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

    /// The units of a span from [`Self::near_spans`].
    #[must_use]
    pub fn span(&self, (start, end): (u32, u32)) -> &[NeighbourInfo] {
        &self.units[start as usize..end as usize]
    }
}

/// Snapshots every unit and sorts the snapshot by bucket.
pub(crate) fn bucket_units(data: &FrameData, ctx: &StageContext<'_>) {
    let mut guard = data.neighbours.write();
    let n = &mut *guard;
    let groups = data.groups.read();
    let batch_size = data.config.batch_size.clamp(1, u32::MAX as usize) as u32;
    let mut query = data
        .world
        .query::<(&UnitId, &Position, &Agent, &Steering)>();
    // Each batch's length first (walking a batch reads no component), so every batch can
    // write its part of the snapshot on any thread.
    let lengths: Vec<usize> = query
        .iter_batched(batch_size)
        .map(Iterator::count)
        .collect();
    let total = lengths.iter().sum();
    n.grid.fit_to(total);
    let sparse = n.grid.table_rows() < n.grid.rows() && n.grid.bucket_count() >= n.occupancy_from;
    let (columns, rows) = (n.grid.columns(), n.grid.rows());
    n.occupancy.reset(sparse, columns, rows, ctx);
    n.scratch.resize(total, NeighbourInfo::default());
    n.buckets.resize(total, 0);
    let mut jobs = Vec::with_capacity(lengths.len());
    let (mut scratch, mut buckets) = (n.scratch.as_mut_slice(), n.buckets.as_mut_slice());
    let mut offset = 0u32;
    for (batch, &len) in query.iter_batched(batch_size).zip(&lengths) {
        let (units, rest) = scratch.split_at_mut(len);
        scratch = rest;
        let (unit_buckets, rest) = buckets.split_at_mut(len);
        buckets = rest;
        jobs.push(Mutex::new(Some((batch, units, unit_buckets, offset))));
        offset += len as u32;
    }
    let grid = &n.grid;
    let occupancy = n.occupancy.is_on().then_some(&n.occupancy);
    let separation_range = data.config.steering.separation_range;
    // Units that need at most half a bucket (see `Neighbours::refit_side`).
    let half_bucket = grid.cell_size() * 0.5;
    // Per batch: the units at rest, far jumps, small units, and the large units (in batch
    // order) with their storage indices.
    type BatchTally = (
        Vec<(u16, Vec2, f32)>,
        usize,
        usize,
        Vec<(NeighbourInfo, u32)>,
    );
    let tallies: Vec<Mutex<BatchTally>> = jobs
        .iter()
        .map(|_| Mutex::new((Vec::new(), 0, 0, Vec::new())))
        .collect();
    ctx.for_each_batch(jobs.len(), 1, |i, _| {
        let Some((batch, units, unit_buckets, offset)) = jobs[i].lock().take() else {
            return;
        };
        let (mut resting, mut large) = (Vec::new(), Vec::new());
        let (mut far, mut small, mut previous_row) = (0, 0, None);
        let items = batch.zip(units).zip(unit_buckets).zip(offset..);
        for ((((id, pos, agent, steering), unit), bucket), storage) in items {
            *unit = NeighbourInfo {
                pos: pos.0,
                radius: agent.radius,
                id: id.0,
                army: groups.army(agent.group.0),
                at_rest: steering.arrived || steering.settled,
            };
            // A unit whose position is not finite (it will be quarantined this frame) is
            // nobody's neighbour: its NaN must not spread through separation.
            if !pos.0.is_finite() {
                *bucket = SpatialGrid::UNPLACED;
                continue;
            }
            let (x, y) = grid.coords_of(pos.0);
            if reaches_past(agent.radius, separation_range, grid.cell_size()) {
                *bucket = SpatialGrid::UNPLACED;
                large.push((*unit, storage));
            } else {
                *bucket = grid.bucket_at(x, y);
                if let Some(occupancy) = occupancy {
                    occupancy.mark(x, y);
                }
                small += usize::from(bucket_side(agent.radius, separation_range) <= half_bucket);
            }
            if unit.at_rest {
                resting.push((unit.army, unit.pos, unit.radius));
            }
            far += usize::from(previous_row.is_some_and(|r: u32| r.abs_diff(y) > FAR_ROWS));
            previous_row = Some(y);
        }
        *tallies[i].lock() = (resting, far, small, large);
    });
    drop(jobs);
    drop(query);
    n.far_jumps = 0;
    n.resting.clear();
    n.small = 0;
    let mut large = Vec::new();
    for tally in tallies {
        let (batch_resting, far, small, batch_large) = tally.into_inner();
        n.resting.extend(batch_resting);
        n.far_jumps += far;
        n.small += small;
        large.extend(batch_large);
    }
    let chunk = data.config.batch_size.max(1) * 4;
    let (large, storage): (Vec<_>, Vec<_>) = large.into_iter().unzip();
    if let Err(e) = bucket_large(n, large, &storage, separation_range, chunk, ctx) {
        data.errors.lock().push(StageError::LargeBuckets(e));
        n.units.clear();
        n.large = None;
        return;
    }
    if let Err(e) = sort_by_bucket(
        &mut n.grid,
        &n.buckets,
        &n.scratch,
        &mut n.units,
        chunk,
        ctx,
    ) {
        data.errors.lock().push(StageError::Buckets(e));
        n.units.clear();
    }
}

/// Sorts `units` (whose buckets of `grid` are `buckets`) into `sorted`, on the pool: the
/// counting sort in bands of buckets, then the copy in chunks of `chunk` units.
fn sort_by_bucket(
    grid: &mut SpatialGrid,
    buckets: &[u32],
    units: &[NeighbourInfo],
    sorted: &mut Vec<NeighbourInfo>,
    chunk: usize,
    ctx: &StageContext<'_>,
) -> Result<(), SpatialGridError> {
    // The sort's result does not depend on how many bands it is cut into, so one band per
    // thread is safe here (unlike a split of floating-point work).
    grid.rebuild_from_buckets_in(buckets, ctx.threads(), |jobs, job| {
        ctx.for_each_batch(jobs, 1, |i, _| job(i));
    })?;
    let order = grid.order();
    sorted.resize(order.len(), NeighbourInfo::default());
    ctx.for_each_chunk_mut(sorted, chunk, |_, range, out| {
        for (unit, &i) in out.iter_mut().zip(&order[range]) {
            *unit = units[i as usize];
        }
    });
    Ok(())
}

/// Sorts the large units (in world order) into their own grid, whose buckets are as wide as
/// the largest one's reach; `None` when there are no large units.
fn bucket_large(
    n: &mut Neighbours,
    large: Vec<NeighbourInfo>,
    storage: &[u32],
    separation_range: f32,
    chunk: usize,
    ctx: &StageContext<'_>,
) -> Result<(), SpatialGridError> {
    let Some(widest) = large.iter().map(|u| u.radius).reduce(f32::max) else {
        n.large = None;
        return Ok(());
    };
    let size = (2.0 * widest * separation_range).max(n.grid.cell_size());
    let (mut grid, mut units) = match n.large.take() {
        Some(old) if old.grid.cell_size() == size => (old.grid, old.units),
        _ => {
            // Over the same rectangle as the fine grid.
            let fine = &n.grid;
            let extent = Vec2::new(fine.columns() as f32, fine.rows() as f32) * fine.cell_size();
            (
                SpatialGrid::from_rect(fine.origin(), extent, size)?,
                Vec::new(),
            )
        }
    };
    grid.fit_to(large.len());
    let mut buckets = vec![0; large.len()];
    ctx.for_each_chunk_mut(&mut buckets, chunk, |_, range, out| {
        for (bucket, unit) in out.iter_mut().zip(&large[range]) {
            *bucket = grid.bucket_of(unit.pos);
        }
    });
    sort_by_bucket(&mut grid, &buckets, &large, &mut units, chunk, ctx)?;
    let (low, high) = large.iter().fold(
        (Vec2::splat(f32::INFINITY), Vec2::splat(f32::NEG_INFINITY)),
        |(low, high), u| (low.min(u.pos), high.max(u.pos)),
    );
    let near_box = (low - size, high + size);
    let storage = grid.order().iter().map(|&i| storage[i as usize]).collect();
    n.large = Some(LargeUnits {
        grid,
        units,
        storage,
        near_box,
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicU64, Ordering};

    use glam::Vec2;
    use hecs::World;
    use horde_core::{Cell, GoalSet, Grid, Map, Position, UnitSpec};

    use super::{Occupancy, bucket_side};
    use crate::{Horde, SimConfig};

    /// A crowd of mixed sizes, bucketed by one frame of zero length (nobody moves); with
    /// `bits`, the occupancy bits are kept whenever the table folds.
    fn bucketed(seed: u32, radii: &[f32], units: usize, bits: bool) -> (Horde, World) {
        let map = Map::new(Grid::new(64, 64).unwrap());
        // Without contacts, so the world's positions stay those the snapshot holds.
        let mut config = SimConfig::default();
        config.contacts.passes = 0;
        let mut horde = Horde::new(map, config).unwrap();
        if bits {
            horde.data.neighbours.write().occupancy_from = 0;
        }
        let group = horde.add_group(GoalSet::single(Cell::new(60, 60))).unwrap();
        let mut world = World::new();
        let mut state = seed;
        let mut next = || {
            state = state.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            (state >> 8) as f32 / (1 << 24) as f32
        };
        for i in 0..units {
            let radius = radii[i % radii.len()];
            // Clustered, so that units touch and big ones sit among small ones.
            let pos = Vec2::new(20.0 + next() * 16.0, 20.0 + next() * 16.0);
            let spec = UnitSpec::at(pos).with_radius(radius).with_group(group);
            horde.spawn(&mut world, spec).unwrap();
        }
        horde.step(&mut world, 0.0).unwrap();
        (horde, world)
    }

    #[test]
    fn every_touching_pair_is_a_candidate_exactly_once() {
        let separation_range = SimConfig::default().steering.separation_range;
        // The last crowd is small enough for the fine bucket table to fold its rows (a few
        // table rows serve the whole map), which a big unit's window must not visit twice.
        for (seed, radii, count) in [
            (1, &[0.45, 0.45, 0.45, 3.0][..], 600),
            (2, &[0.3, 0.5, 1.2, 0.45, 2.0, 0.45][..], 600),
            (3, &[0.45][..], 600),
            (4, &[1.5, 0.45, 6.0][..], 600),
            (5, &[0.45, 0.45, 4.0][..], 30),
            (6, &[0.45][..], 40),
        ] {
            for bits in [false, true] {
                let (horde, world) = bucketed(seed, radii, count, bits);
                let n = horde.data.neighbours.read();
                // The folded crowds keep the bits (and some of their units stand alone).
                let folded = n.grid.table_rows() < n.grid.rows();
                assert_eq!(n.occupancy.is_on(), bits && folded, "seed {seed}");
                assert_eq!(folded, count < 100, "seed {seed}");
                assert!(n.is_large(3.0, separation_range));
                let large = n.large.as_ref().map_or(0, |l| l.units.len());
                let expected_large = radii
                    .iter()
                    .filter(|&&r| n.is_large(r, separation_range))
                    .count();
                assert_eq!(large > 0, expected_large > 0, "seed {seed}");
                assert_eq!(n.units.len() + large, count);
                let units: Vec<(u32, Vec2, f32)> = world
                    .query::<(&horde_core::UnitId, &Position, &horde_core::Agent)>()
                    .iter()
                    .map(|(id, p, a)| (id.0, p.0, a.radius))
                    .collect();
                let mut alone = 0;
                for &(id, pos, radius) in &units {
                    let mut seen: Vec<u32> = Vec::new();
                    n.for_each_candidate(pos, radius, separation_range, n.near_spans(pos), |run| {
                        seen.extend(run.iter().map(|u| u.id));
                    });
                    let mut sorted = seen.clone();
                    sorted.sort_unstable();
                    sorted.dedup();
                    assert_eq!(
                        sorted.len(),
                        seen.len(),
                        "seed {seed}: unit {id} sees a unit twice"
                    );
                    for &(other, other_pos, other_radius) in &units {
                        let reach = (radius + other_radius) * separation_range;
                        // The unit itself may be left out (when it stands alone).
                        if other != id && pos.distance(other_pos) < reach {
                            assert!(
                                sorted.binary_search(&other).is_ok(),
                                "seed {seed}: unit {id} (radius {radius}) misses unit {other} \
                             (radius {other_radius}) {} away, reach {reach}",
                                pos.distance(other_pos)
                            );
                        }
                    }
                    alone += usize::from(n.near_spans(pos) == [(0, 0); 3]);
                }
                if n.occupancy.is_on() {
                    assert!(alone > 0, "seed {seed}: no unit was found alone");
                }
            }
        }
    }

    #[test]
    fn alone_reads_the_same_bits_as_nine_tests() {
        // Grids whose rows cross word boundaries anywhere, edges included, against the
        // plain definition: no second unit in its own bucket, none in the eight around.
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for (columns, rows) in [
            (1u32, 1u32),
            (1, 5),
            (3, 1),
            (63, 4),
            (64, 3),
            (67, 5),
            (130, 3),
        ] {
            for density in [1, 4, 16] {
                let words = (columns * rows).div_ceil(64) as usize;
                let mut bits = |density: u64| -> Vec<AtomicU64> {
                    (0..words)
                        .map(|_| {
                            // Each bit set with chance 1 / (2 * density).
                            let mut w = next();
                            for _ in 0..density.trailing_zeros() {
                                w &= next();
                            }
                            AtomicU64::new(w)
                        })
                        .collect()
                };
                let any = bits(density);
                let many: Vec<AtomicU64> = bits(density * 4)
                    .into_iter()
                    .zip(&any)
                    .map(|(m, a)| AtomicU64::new(m.into_inner() & a.load(Ordering::Relaxed)))
                    .collect();
                let occupancy = Occupancy {
                    columns,
                    rows,
                    any,
                    many,
                };
                for y in 0..rows {
                    for x in 0..columns {
                        let at = |bx: u32, by: u32| (by * columns + bx) as usize;
                        let mut plain = !Occupancy::test(&occupancy.many, at(x, y));
                        for by in y.saturating_sub(1)..=(y + 1).min(rows - 1) {
                            for bx in x.saturating_sub(1)..=(x + 1).min(columns - 1) {
                                if (bx, by) != (x, y) {
                                    plain &= !Occupancy::test(&occupancy.any, at(bx, by));
                                }
                            }
                        }
                        assert_eq!(
                            occupancy.alone(x, y),
                            plain,
                            "{columns}x{rows} at ({x}, {y})"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn occupancy_bits_find_who_stands_alone() {
        // Two units in one bucket, two in buckets side by side, two in buckets one above
        // the other, one far from everybody; folded table, bits kept.
        let positions = [
            Vec2::new(30.1, 30.1),
            Vec2::new(30.5, 30.4),
            Vec2::new(50.2, 50.2),
            Vec2::new(51.3, 50.2),
            Vec2::new(40.3, 12.2),
            Vec2::new(40.3, 13.1),
            Vec2::new(10.0, 50.0),
        ];
        let map = Map::new(Grid::new(64, 64).unwrap());
        let mut horde = Horde::new(map, SimConfig::default()).unwrap();
        horde.data.neighbours.write().occupancy_from = 0;
        let group = horde.add_group(GoalSet::single(Cell::new(60, 60))).unwrap();
        let mut world = World::new();
        for pos in positions {
            let spec = UnitSpec::at(pos).with_radius(0.45).with_group(group);
            horde.spawn(&mut world, spec).unwrap();
        }
        horde.step(&mut world, 0.0).unwrap();
        let n = horde.data.neighbours.read();
        assert!(n.occupancy.is_on());
        let sees = |pos: Vec2| {
            let mut seen = 0;
            n.for_each_candidate(pos, 0.45, 1.2, n.near_spans(pos), |run| {
                seen += run.iter().filter(|u| u.pos != pos).count();
            });
            seen
        };
        for pair in positions[..6].chunks(2) {
            assert_eq!(sees(pair[0]), 1, "{pair:?}");
            assert_eq!(sees(pair[1]), 1, "{pair:?}");
        }
        assert_eq!(n.near_spans(positions[6]), [(0, 0); 3]);
    }

    /// A crowd led by a first unit of radius `first`, then `count` units of radius `rest`,
    /// clustered so that they touch; `threads` threads.
    fn led_crowd(first: f32, rest: f32, count: usize, threads: usize) -> crate::Simulation {
        let map = Map::new(Grid::new(64, 64).unwrap());
        let config = SimConfig::default().with_seed(3).with_threads(threads);
        let mut sim = crate::Simulation::new(map, config).unwrap();
        let group = sim.add_group(GoalSet::single(Cell::new(60, 60))).unwrap();
        for i in 0..=count {
            let radius = if i == 0 { first } else { rest };
            let (x, y) = ((i * 7) % 40, (i * 13) % 40);
            let pos = Vec2::new(10.0 + x as f32, 10.0 + y as f32);
            sim.spawn(UnitSpec::at(pos).with_radius(radius).with_group(group))
                .unwrap();
        }
        sim
    }

    fn bucket(sim: &crate::Simulation) -> f32 {
        sim.horde().data.neighbours.read().grid.cell_size()
    }

    #[test]
    fn buckets_are_refitted_to_a_crowd_unlike_its_first_unit() {
        let range = SimConfig::default().steering.separation_range;
        // (the first unit's radius, the others')
        for (first, rest) in [(0.45, 1.2), (3.0, 0.45), (0.45, 0.45), (2.0, 2.0)] {
            let mut sim = led_crowd(first, rest, 400, 1);
            assert_eq!(
                bucket(&sim),
                bucket_side(first, range),
                "sized by the first unit"
            );
            sim.step(1.0 / 60.0).unwrap();
            assert_eq!(
                bucket(&sim),
                bucket_side(rest, range),
                "{first} then {rest}"
            );
            // Refitted for the median unit: the next frames keep the buckets, every unit of
            // the crowd's size is in the fine grid and only the odd first unit may be large.
            for _ in 0..3 {
                sim.step(1.0 / 60.0).unwrap();
                assert_eq!(bucket(&sim), bucket_side(rest, range));
            }
            let n = sim.horde().data.neighbours.read();
            let large = n.large.as_ref().map_or(0, |l| l.units.len());
            assert_eq!(large, usize::from(n.is_large(first, range)));
            assert_eq!(n.len(), 401);
        }
    }

    #[test]
    fn a_refit_is_the_same_on_every_thread_count_and_after_a_restore() {
        let run = |threads: usize, restore_at: Option<u64>| {
            let mut sim = led_crowd(0.45, 1.2, 400, threads);
            for frame in 0..30 {
                if restore_at == Some(frame) {
                    sim = crate::Simulation::from_snapshot(&sim.snapshot(), threads).unwrap();
                }
                sim.step(1.0 / 60.0).unwrap();
            }
            (sim.state_hash(), bucket(&sim))
        };
        let reference = run(1, None);
        // Restored before the refit (frame 0) and after it (frame 5).
        for (threads, restore_at) in [(2, None), (3, None), (1, Some(0)), (3, Some(5))] {
            assert_eq!(run(threads, restore_at), reference, "{threads} threads");
        }
    }
}
