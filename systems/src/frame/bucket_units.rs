//! Stage `bucket_units`: sorts a snapshot of every unit into the spatial grid, so steering
//! finds neighbours in the 3x3 buckets around it and reads them from contiguous memory.

use glam::Vec2;
use horde_core::{Agent, Position, SpatialGrid, Steering, UnitId};
use parking_lot::Mutex;

use crate::frame::FrameData;
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
    /// The unit's group.
    pub group: u16,
    /// Whether it had arrived.
    pub arrived: bool,
}

/// The spatial grid and the units sorted by bucket (`units[k]` is the unit at position `k`
/// of the grid's order; bucket `b` holds `units[cell_start[b]..cell_start[b + 1]]`).
#[derive(Clone, Debug)]
pub struct Neighbours {
    /// Buckets over the map.
    pub grid: SpatialGrid,
    /// Units sorted by bucket.
    pub units: Vec<NeighbourInfo>,
    /// Per group, how many units had arrived at the start of the frame.
    pub arrived_per_group: Vec<u32>,
    /// How many units, in the world's storage order, stand more than a few bucket rows from
    /// the unit before them: a measure of how scattered the storage is (see
    /// `Horde::step`, which sorts the units when it is high).
    pub far_jumps: usize,
    scratch: Vec<NeighbourInfo>,
    buckets: Vec<u32>,
}

impl Neighbours {
    /// An empty snapshot over `grid`.
    #[must_use]
    pub fn new(grid: SpatialGrid) -> Self {
        Self {
            grid,
            units: Vec::new(),
            arrived_per_group: Vec::new(),
            far_jumps: 0,
            scratch: Vec::new(),
            buckets: Vec::new(),
        }
    }

    /// The units in the 3x3 buckets around `pos`, as three slices (one per bucket row: the
    /// buckets of a row are adjacent in the sorted order). Rows past the grid's edge are
    /// empty slices.
    #[must_use]
    pub fn near(&self, pos: Vec2) -> [&[NeighbourInfo]; 3] {
        self.near_spans(pos).map(|span| self.span(span))
    }

    /// [`Self::near`] as three `(start, end)` spans of [`Self::units`] (see [`Self::span`]):
    /// smaller to keep for a chunk of units than the slices. Called once per unit per frame.
    #[must_use]
    #[inline]
    pub fn near_spans(&self, pos: Vec2) -> [(u32, u32); 3] {
        let mut spans = [(0, 0); 3];
        if self.units.is_empty() {
            return spans;
        }
        let grid = &self.grid;
        let (bx, by) = grid.coords_of(pos);
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
    n.scratch.resize(total, NeighbourInfo::default());
    n.buckets.resize(total, 0);
    let mut jobs = Vec::with_capacity(lengths.len());
    let (mut scratch, mut buckets) = (n.scratch.as_mut_slice(), n.buckets.as_mut_slice());
    for (batch, &len) in query.iter_batched(batch_size).zip(&lengths) {
        let (units, rest) = scratch.split_at_mut(len);
        scratch = rest;
        let (unit_buckets, rest) = buckets.split_at_mut(len);
        buckets = rest;
        jobs.push(Mutex::new(Some((batch, units, unit_buckets))));
    }
    let grid = &n.grid;
    let arrived: Vec<Mutex<(Vec<u32>, usize)>> =
        jobs.iter().map(|_| Mutex::new((Vec::new(), 0))).collect();
    ctx.for_each_batch(jobs.len(), 1, |i, _| {
        let Some((batch, units, unit_buckets)) = jobs[i].lock().take() else {
            return;
        };
        let mut counts = Vec::new();
        let (mut far, mut previous_row) = (0, None);
        for (((id, pos, agent, steering), unit), bucket) in batch.zip(units).zip(unit_buckets) {
            *unit = NeighbourInfo {
                pos: pos.0,
                radius: agent.radius,
                id: id.0,
                group: agent.group.0,
                arrived: steering.arrived,
            };
            // A unit whose position is not finite (it will be quarantined this frame) is
            // nobody's neighbour: its NaN must not spread through separation.
            if !pos.0.is_finite() {
                *bucket = SpatialGrid::UNPLACED;
                continue;
            }
            let (x, y) = grid.coords_of(pos.0);
            *bucket = grid.bucket_at(x, y);
            far += usize::from(previous_row.is_some_and(|r: u32| r.abs_diff(y) > FAR_ROWS));
            previous_row = Some(y);
            if steering.arrived {
                let g = usize::from(agent.group.0);
                if counts.len() <= g {
                    counts.resize(g + 1, 0);
                }
                counts[g] += 1;
            }
        }
        *arrived[i].lock() = (counts, far);
    });
    drop(jobs);
    drop(query);
    n.arrived_per_group.clear();
    n.far_jumps = 0;
    for counts in arrived {
        let (counts, far) = counts.into_inner();
        n.far_jumps += far;
        if n.arrived_per_group.len() < counts.len() {
            n.arrived_per_group.resize(counts.len(), 0);
        }
        for (sum, c) in n.arrived_per_group.iter_mut().zip(counts) {
            *sum += c;
        }
    }
    // The sort's result does not depend on how many bands it is cut into, so one band per
    // thread is safe here (unlike a split of floating-point work).
    let bands = ctx.threads();
    let sorted = n
        .grid
        .rebuild_from_buckets_in(&n.buckets, bands, |jobs, job| {
            ctx.for_each_batch(jobs, 1, |i, _| job(i));
        });
    if let Err(e) = sorted {
        data.errors.lock().push(format!("bucketing failed: {e}"));
        n.units.clear();
        return;
    }
    let chunk = data.config.batch_size.max(1) * 4;
    n.units
        .resize(n.grid.order().len(), NeighbourInfo::default());
    let (order, scratch) = (n.grid.order(), &n.scratch);
    ctx.for_each_chunk_mut(&mut n.units, chunk, |_, range, out| {
        for (unit, &i) in out.iter_mut().zip(&order[range]) {
            *unit = scratch[i as usize];
        }
    });
}
