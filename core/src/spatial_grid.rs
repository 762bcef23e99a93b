//! [`SpatialGrid`]: a uniform bucket grid that answers "which units are near this point" in
//! O(1) per query, so separation (docs/behaviour.md, "Steering", step 5) is O(N) overall instead of
//! all pairs.

use glam::Vec2;
use parking_lot::Mutex;

use crate::grid::Grid;
use crate::{RunJobs, in_order};

/// Why a [`SpatialGrid`] could not be made or rebuilt.
#[derive(Clone, Copy, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum SpatialGridError {
    /// The bucket size is not a finite number greater than zero.
    #[error("spatial grid cell size {0} must be finite and > 0")]
    BadCellSize(f32),
    /// The world rectangle has a non-finite corner or a negative size.
    #[error("spatial grid rectangle at {origin} of size {size} must be finite and not negative")]
    BadBounds {
        /// Top-left corner.
        origin: Vec2,
        /// Width and height.
        size: Vec2,
    },
    /// The rectangle holds more than [`SpatialGrid::MAX_BUCKETS`] buckets of this size.
    #[error(
        "{columns}x{rows} buckets exceed the limit of {max}: use larger buckets",
        max = SpatialGrid::MAX_BUCKETS
    )]
    TooManyBuckets {
        /// Buckets across (saturated at `u64::MAX`).
        columns: u64,
        /// Buckets down (saturated at `u64::MAX`).
        rows: u64,
    },
    /// More units than a `u32` index can name.
    #[error("{0} units do not fit u32 indices")]
    TooManyUnits(usize),
    /// [`SpatialGrid::rebuild_from_buckets`] got a bucket index that does not exist.
    #[error("unit {unit} is in bucket {bucket}, but there are only {buckets} buckets")]
    BadBucket {
        /// Index of the unit.
        unit: usize,
        /// Its bucket.
        bucket: u32,
        /// Number of buckets.
        buckets: u32,
    },
}

/// Units sorted into square buckets for neighbour queries.
///
/// ```text
///   origin                         bucket b = by * columns + bx
///     +------+------+------+
///     |  0   |  1   |  2   |       cell_start[b] .. cell_start[b + 1]  is the slice of
///     +------+------+------+       `order` holding the units of bucket b, in input order
///     |  3   |  4   |  5   |
///     +------+------+------+       order:      [u2 u7 | u0 u3 u4 | ... ]
///                                  cell_start: [0      2          5 ...  N]
/// ```
///
/// Buckets are squares of side `cell_size` laid over the world rectangle from the same
/// corner as the map's [`Grid`] (a bucket is not a map cell: it is usually several cells).
/// [`SpatialGrid::rebuild`] sorts the unit indices by bucket with a stable counting sort;
/// the caller may instead compute [`SpatialGrid::bucket_of`] for every unit in parallel and
/// pass the result to [`SpatialGrid::rebuild_from_buckets`] (or cut the sort into bands run on
/// threads with [`SpatialGrid::rebuild_from_buckets_in`]). All give the same, deterministic
/// result, and none allocates once the vectors have grown to the unit count. A crowd much
/// smaller than the world folds the table's rows ([`SpatialGrid::fit_to`]), so a rebuild
/// costs in proportion to the units.
///
/// ```
/// use glam::Vec2;
/// use horde_core::{Grid, SpatialGrid};
///
/// let map = Grid::new(64, 64).unwrap();
/// let mut grid = SpatialGrid::new(&map, SpatialGrid::cell_size_for_radius(0.5))?;
/// let positions = [Vec2::new(10.0, 10.0), Vec2::new(10.6, 10.2), Vec2::new(40.0, 3.0)];
/// grid.rebuild(&positions)?;
/// let mut near = Vec::new();
/// grid.for_each_neighbour(positions[0], 1.0, |unit| near.push(unit));
/// near.retain(|&u| positions[u as usize].distance(positions[0]) <= 1.0);
/// assert_eq!(near, [0, 1]);
/// # Ok::<(), horde_core::SpatialGridError>(())
/// ```
///
/// Positions outside the world rectangle are clamped into the border buckets (so they are
/// still found by queries near them), and a position with a NaN coordinate goes to bucket 0.
#[derive(Clone, Debug)]
pub struct SpatialGrid {
    origin: Vec2,
    cell_size: f32,
    columns: u32,
    rows: u32,
    /// `columns - 1` and `rows - 1` as `f32`, the clamp of `axis_index` (converting an
    /// unsigned integer to `f32` costs several instructions, on every lookup).
    last: Vec2,
    /// Rows of buckets the table holds: world row `y` lives in table row `y % table_rows`
    /// (see [`SpatialGrid::fit_to`]).
    table_rows: u32,
    /// First bucket index of each world row: `(y % table_rows) * columns`.
    row_base: Vec<u32>,
    /// Prefix sums: the units of bucket `b` are `order[cell_start[b]..cell_start[b + 1]]`.
    cell_start: Vec<u32>,
    /// Unit indices sorted by bucket, input order within a bucket.
    order: Vec<u32>,
    /// Scratch for [`Self::rebuild`]: the bucket of every unit.
    buckets: Vec<u32>,
    /// Scratch for [`Self::rebuild_from_buckets_in`]: the units partitioned by band.
    partition: Vec<u32>,
}

/// Grids are equal when their layout and their last rebuild are; the scratch vectors are
/// not compared.
impl PartialEq for SpatialGrid {
    fn eq(&self, other: &Self) -> bool {
        self.origin == other.origin
            && self.cell_size == other.cell_size
            && (self.columns, self.rows, self.table_rows)
                == (other.columns, other.rows, other.table_rows)
            && self.last == other.last
            && self.row_base == other.row_base
            && self.cell_start == other.cell_start
            && self.order == other.order
    }
}

impl SpatialGrid {
    /// Most buckets a grid may have (16M: 64 MiB of `cell_start`).
    pub const MAX_BUCKETS: u64 = 1 << 24;

    /// Buckets per unit below which [`fit_to`](Self::fit_to) folds the table's rows.
    pub const BUCKETS_PER_UNIT: u64 = 8;

    /// A bucket for [`rebuild_from_buckets`](Self::rebuild_from_buckets) that leaves the unit
    /// out of the grid (a unit with no valid position): it is in no bucket and not in
    /// [`order`](Self::order).
    pub const UNPLACED: u32 = u32::MAX;

    /// Bucket side used when no unit radius is known: `1.0` world unit.
    pub const DEFAULT_CELL_SIZE: f32 = 1.0;

    /// The default bucket side for units of radius at most `max_unit_radius`: twice it (a
    /// bucket as wide as the largest unit, so touching units are at most one bucket apart),
    /// or [`DEFAULT_CELL_SIZE`](Self::DEFAULT_CELL_SIZE) when the radius is not a finite
    /// number `> 0`.
    #[must_use]
    pub fn cell_size_for_radius(max_unit_radius: f32) -> f32 {
        let size = 2.0 * max_unit_radius;
        if size.is_finite() && size > 0.0 {
            size
        } else {
            Self::DEFAULT_CELL_SIZE
        }
    }

    /// An empty grid of `cell_size` buckets over the world rectangle of `map`.
    pub fn new(map: &Grid, cell_size: f32) -> Result<Self, SpatialGridError> {
        Self::from_rect(map.origin(), map.world_size(), cell_size)
    }

    /// An empty grid of `cell_size` buckets over the rectangle `origin .. origin + size`
    /// (world units). The last column and row may stick out past the rectangle; a zero size
    /// gives a single bucket.
    pub fn from_rect(origin: Vec2, size: Vec2, cell_size: f32) -> Result<Self, SpatialGridError> {
        if !(cell_size.is_finite() && cell_size > 0.0) {
            return Err(SpatialGridError::BadCellSize(cell_size));
        }
        if !(origin.is_finite() && size.is_finite() && size.x >= 0.0 && size.y >= 0.0) {
            return Err(SpatialGridError::BadBounds { origin, size });
        }
        let count = |extent: f32| (f64::from(extent) / f64::from(cell_size)).ceil().max(1.0);
        let (columns, rows) = (count(size.x), count(size.y));
        // f64 -> u64 saturates; the product of two saturated values is checked too.
        let (c, r) = (columns as u64, rows as u64);
        if c.checked_mul(r).is_none_or(|n| n > Self::MAX_BUCKETS) {
            return Err(SpatialGridError::TooManyBuckets {
                columns: c,
                rows: r,
            });
        }
        let (columns, rows) = (c as u32, r as u32);
        Ok(Self {
            origin,
            cell_size,
            columns,
            rows,
            last: Vec2::new((columns - 1) as f32, (rows - 1) as f32),
            table_rows: rows,
            row_base: (0..rows).map(|y| y * columns).collect(),
            cell_start: vec![0; columns as usize * rows as usize + 1],
            order: Vec::new(),
            buckets: Vec::new(),
            partition: Vec::new(),
        })
    }

    /// Sizes the bucket table for `units` units (emptying the grid when its size changes).
    /// With fewer units than buckets / [`BUCKETS_PER_UNIT`](Self::BUCKETS_PER_UNIT), the table
    /// keeps only `units * BUCKETS_PER_UNIT / columns` rows (at least 3) and world row `y`
    /// shares table row `y % table_rows` with the rows a multiple of `table_rows` away:
    /// clearing and summing the table every rebuild then costs in proportion to the units,
    /// not to the world. Queries are unchanged (units from the sharing rows are far away and
    /// fail the caller's distance test, and the units of each bucket keep their order), so
    /// results are the same with or without folding. [`rebuild`](Self::rebuild) calls this
    /// itself; callers of [`rebuild_from_buckets`](Self::rebuild_from_buckets) call it before
    /// [`bucket_of`](Self::bucket_of).
    pub fn fit_to(&mut self, units: usize) {
        let wanted = (units as u64)
            .saturating_mul(Self::BUCKETS_PER_UNIT)
            .div_ceil(u64::from(self.columns));
        let table_rows = wanted.clamp(u64::from(self.rows.min(3)), u64::from(self.rows)) as u32;
        if table_rows != self.table_rows {
            self.table_rows = table_rows;
            let columns = self.columns;
            for (y, base) in (0..).zip(&mut self.row_base) {
                *base = (y % table_rows) * columns;
            }
            self.order.clear();
            self.cell_start.clear();
            self.cell_start.resize(self.bucket_count() as usize + 1, 0);
        }
    }

    /// Rows of the bucket table: [`rows`](Self::rows), or fewer after
    /// [`fit_to`](Self::fit_to) a small crowd.
    #[must_use]
    pub fn table_rows(&self) -> u32 {
        self.table_rows
    }

    /// World position of the top-left corner of bucket 0.
    #[must_use]
    pub fn origin(&self) -> Vec2 {
        self.origin
    }

    /// Side of a bucket, world units.
    #[must_use]
    pub fn cell_size(&self) -> f32 {
        self.cell_size
    }

    /// Buckets across.
    #[must_use]
    pub fn columns(&self) -> u32 {
        self.columns
    }

    /// Buckets down.
    #[must_use]
    pub fn rows(&self) -> u32 {
        self.rows
    }

    /// Number of buckets in the table (`columns * table_rows`).
    #[must_use]
    pub fn bucket_count(&self) -> u32 {
        self.columns * self.table_rows
    }

    /// Number of units of the last rebuild.
    #[must_use]
    pub fn len(&self) -> usize {
        self.order.len()
    }

    /// Whether the last rebuild had no units.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.order.is_empty()
    }

    /// Prefix sums of the bucket sizes: `bucket_count() + 1` entries, the first `0`, the last
    /// the unit count.
    #[must_use]
    pub fn cell_start(&self) -> &[u32] {
        &self.cell_start
    }

    /// Unit indices sorted by bucket (input order within a bucket).
    #[must_use]
    pub fn order(&self) -> &[u32] {
        &self.order
    }

    /// The bucket holding world position `pos`: outside positions are clamped into the border
    /// buckets; a position with a NaN coordinate gives bucket 0. Pure, so callers may compute
    /// it for many units in parallel and pass the result to
    /// [`rebuild_from_buckets`](Self::rebuild_from_buckets).
    #[must_use]
    #[inline]
    pub fn bucket_of(&self, pos: Vec2) -> u32 {
        if pos.is_nan() {
            return 0;
        }
        let x = self.column_of(pos.x);
        let y = self.row_of(pos.y);
        self.row_base[y as usize] + x
    }

    /// The bucket at column `column` and world row `row` (as from
    /// [`coords_of`](Self::coords_of)): the same as [`bucket_of`](Self::bucket_of) for a
    /// position in it.
    ///
    /// # Panics
    /// If `row >= rows()`.
    #[must_use]
    #[inline]
    pub fn bucket_at(&self, column: u32, row: u32) -> u32 {
        self.row_base[row as usize] + column
    }

    /// Where in [`order`](Self::order) the units of world row `row`, columns `first..=last`,
    /// lie (with those of the rows sharing its table row). `row < rows()` and
    /// `first <= last < columns()` (as from [`coords_of`](Self::coords_of)).
    ///
    /// # Panics
    /// If the row or the columns are out of range.
    #[must_use]
    #[inline]
    pub fn row_span(&self, row: u32, first: u32, last: u32) -> std::ops::Range<usize> {
        let base = self.row_base[row as usize] as usize;
        self.cell_start[base + first as usize] as usize
            ..self.cell_start[base + last as usize + 1] as usize
    }

    /// Where in [`order`](Self::order) the units of the buckets meeting the world rectangle
    /// `min..=max` lie (with those of the rows sharing their table rows): one range per table
    /// row, each unit in at most one of them. Every unit whose position lies in the rectangle
    /// is in one; the caller tests the positions of the others.
    pub fn spans_in(&self, min: Vec2, max: Vec2) -> impl Iterator<Item = std::ops::Range<usize>> {
        let (first, top) = self.coords_of(min);
        let (last, bottom) = self.coords_of(max);
        // Float rounding may put a position on the rectangle's edge one bucket over.
        let (first, top) = (first.saturating_sub(1), top.saturating_sub(1));
        let (last, bottom) = (
            (last + 1).min(self.columns - 1),
            (bottom + 1).min(self.rows - 1),
        );
        // Rows a whole table apart share a table row: visit each table row once.
        let rows = if bottom < top {
            0..0
        } else if bottom - top + 1 >= self.table_rows {
            0..self.table_rows
        } else {
            top..bottom + 1
        };
        let empty = last < first;
        rows.filter(move |_| !empty)
            .map(move |row| self.row_span(row, first, last))
    }

    /// Column and row of the bucket holding `pos` (clamped like [`Self::bucket_of`]; NaN gives
    /// `(0, 0)`), without the division that [`Self::bucket_coords`] needs.
    #[must_use]
    #[inline]
    pub fn coords_of(&self, pos: Vec2) -> (u32, u32) {
        if pos.is_nan() {
            return (0, 0);
        }
        (self.column_of(pos.x), self.row_of(pos.y))
    }

    /// Column and table row of bucket `bucket` (the world row, or the first of the rows
    /// sharing it after [`fit_to`](Self::fit_to)), or `None` if there is no such bucket.
    #[must_use]
    pub fn bucket_coords(&self, bucket: u32) -> Option<(u32, u32)> {
        (bucket < self.bucket_count()).then(|| (bucket % self.columns, bucket / self.columns))
    }

    /// Sorts the units at `positions` (unit `i` at `positions[i]`) into their buckets.
    /// On error the grid is left empty.
    pub fn rebuild(&mut self, positions: &[Vec2]) -> Result<(), SpatialGridError> {
        self.fit_to(positions.len());
        let mut buckets = std::mem::take(&mut self.buckets);
        buckets.clear();
        buckets.extend(positions.iter().map(|&p| self.bucket_of(p)));
        let result = self.rebuild_from_buckets(&buckets);
        self.buckets = buckets;
        result
    }

    /// Sorts the units into the given buckets (unit `i` in `buckets[i]`, for instance from
    /// [`bucket_of`](Self::bucket_of), or [`UNPLACED`](Self::UNPLACED) to leave it out) with a
    /// stable counting sort: count per bucket, prefix sums, then place the units from last to
    /// first. On error (a bucket that does not exist, too many units) the grid is left empty.
    pub fn rebuild_from_buckets(&mut self, buckets: &[u32]) -> Result<(), SpatialGridError> {
        self.rebuild_from_buckets_in(buckets, 1, in_order)
    }

    /// [`rebuild_from_buckets`](Self::rebuild_from_buckets) cut into jobs for a caller that
    /// has threads: `run(jobs, job)` must call `job(i)` once for every `i` in `0..jobs`, in any
    /// order, on any threads (it is called several times, one phase after another).
    ///
    /// The buckets are cut into `bands` bands of consecutive buckets; each band sorts its
    /// units into its own buckets and its own part of the order. With fewer than 8 bands each
    /// band reads all the units. With more, the units are first partitioned by band, in
    /// chunks of units (count per chunk and band, then each chunk copies its unit indices to
    /// its part of the partition), so that no job reads all the units. The result is the same
    /// for any number of bands.
    pub fn rebuild_from_buckets_in<R>(
        &mut self,
        buckets: &[u32],
        bands: usize,
        run: R,
    ) -> Result<(), SpatialGridError>
    where
        R: RunJobs,
    {
        let slots = self.bucket_count() as usize;
        self.cell_start.resize(slots + 1, 0);
        self.order.clear();
        if u32::try_from(buckets.len()).is_err() {
            self.cell_start.fill(0);
            return Err(SpatialGridError::TooManyUnits(buckets.len()));
        }
        let band_len = slots.div_ceil(bands.clamp(1, slots));
        let bands = slots.div_ceil(band_len);
        let mut partition = std::mem::take(&mut self.partition);
        // With fewer bands the partition's two extra passes and waits cost more than they save
        // (measured on 16 cores: `git show 33beac9:CHANGELOG.md`, "Session 7").
        let result = if bands < PARTITION_BANDS {
            self.sort_bands(buckets, None, band_len, &run)
        } else {
            match partition_by_band(buckets, slots, band_len, bands, &mut partition, &run) {
                Ok(ends) => self.sort_bands(buckets, Some((&partition, &ends)), band_len, &run),
                Err(e) => Err(e),
            }
        };
        self.partition = partition;
        if result.is_err() {
            self.cell_start.fill(0);
            self.order.clear();
        }
        result
    }

    /// The counting sort of [`rebuild_from_buckets_in`](Self::rebuild_from_buckets_in), one
    /// job per band of `band_len` buckets, run twice. A band's units are
    /// `partition[ends[b - 1]..ends[b]]`, or, without a partition, every unit whose bucket
    /// lies in the band (each band then reads all of `buckets`). Counting: each band counts
    /// its units per bucket and makes the counts prefix sums. Placing: each band places its
    /// units from last to first into its own run of the order, so the units of a bucket keep
    /// their input order; afterwards each count is its bucket's start.
    fn sort_bands<R>(
        &mut self,
        buckets: &[u32],
        partition: Option<(&[u32], &[usize])>,
        band_len: usize,
        run: &R,
    ) -> Result<(), SpatialGridError>
    where
        R: RunJobs,
    {
        let slots = self.cell_start.len() - 1;
        let units_of = |band: usize| -> BandUnits<'_> {
            match partition {
                None => BandUnits::All(0..buckets.len() as u32),
                Some((units, ends)) => {
                    let start = if band == 0 { 0 } else { ends[band - 1] };
                    BandUnits::Listed(units[start..ends[band]].iter().copied())
                }
            }
        };
        let (table, end) = self.cell_start.split_at_mut(slots);
        let parts: Vec<Mutex<(&mut [u32], u32)>> = table
            .chunks_mut(band_len)
            .map(|part| Mutex::new((part, 0)))
            .collect();
        run(parts.len(), &|band| {
            let mut guard = parts[band].lock();
            let (part, total) = &mut *guard;
            let first = (band * band_len) as u32;
            part.fill(0);
            for unit in units_of(band) {
                let bucket = buckets[unit as usize];
                if let Some(count) = part.get_mut(bucket.wrapping_sub(first) as usize) {
                    *count += 1;
                }
            }
            *total = prefix_sums(part);
        });
        let parts: Vec<(&mut [u32], u32)> = parts.into_iter().map(Mutex::into_inner).collect();
        let placed = parts.iter().map(|(_, total)| *total).sum::<u32>();
        if placed as usize != buckets.len() && partition.is_none() {
            // Units left out, or some bucket does not exist: name the first such unit.
            let count = slots as u32;
            if let Some((unit, &bucket)) = buckets
                .iter()
                .enumerate()
                .find(|&(_, &b)| b >= count && b != Self::UNPLACED)
            {
                return Err(SpatialGridError::BadBucket {
                    unit,
                    bucket,
                    buckets: count,
                });
            }
        }
        end[0] = placed;
        self.order.resize(placed as usize, 0);
        let mut rest = self.order.as_mut_slice();
        let mut jobs = Vec::with_capacity(parts.len());
        let mut base = 0;
        for (part, total) in parts {
            let (mine, tail) = rest.split_at_mut(total as usize);
            rest = tail;
            jobs.push(Mutex::new((part, mine, base)));
            base += total;
        }
        run(jobs.len(), &|band| {
            let mut guard = jobs[band].lock();
            let (part, order, base) = &mut *guard;
            let first = (band * band_len) as u32;
            for unit in units_of(band).rev() {
                let bucket = buckets[unit as usize];
                if let Some(slot) = part.get_mut(bucket.wrapping_sub(first) as usize) {
                    *slot -= 1;
                    order[*slot as usize] = unit;
                }
            }
            if *base > 0 {
                part.iter_mut().for_each(|slot| *slot += *base);
            }
        });
        Ok(())
    }

    /// The units in `bucket`, in input order; empty for a bucket that does not exist.
    #[must_use]
    pub fn bucket_range(&self, bucket: u32) -> &[u32] {
        if bucket >= self.bucket_count() {
            return &[];
        }
        let b = bucket as usize;
        &self.order[self.cell_start[b] as usize..self.cell_start[b + 1] as usize]
    }

    /// Calls `visit` with every unit in the buckets that overlap the square of half-side
    /// `radius` around `pos` (clamped to the grid, like the positions were). That is every
    /// unit within `radius` of `pos`, each once, plus some further away: filter by distance.
    /// With `radius <= cell_size` these are at most the 3x3 buckets around `pos`. Buckets are
    /// visited row by row, units in bucket order, so the order is deterministic. A NaN `pos`
    /// or a NaN or negative `radius` visits nothing.
    pub fn for_each_neighbour(&self, pos: Vec2, radius: f32, mut visit: impl FnMut(u32)) {
        if pos.is_nan() || radius.is_nan() || radius < 0.0 {
            return;
        }
        let (x0, x1) = (
            self.column_of(pos.x - radius),
            self.column_of(pos.x + radius),
        );
        let (y0, y1) = (self.row_of(pos.y - radius), self.row_of(pos.y + radius));
        // Past `table_rows` rows the table's rows repeat: each is visited once.
        for y in y0..=y1.min(y0 + self.table_rows - 1) {
            // The buckets x0..=x1 of one row are contiguous in `order`.
            for &unit in &self.order[self.row_span(y, x0, x1)] {
                visit(unit);
            }
        }
    }

    /// The clamped column of world x coordinate `x` (NaN gives 0).
    #[inline]
    fn column_of(&self, x: f32) -> u32 {
        axis_index((x - self.origin.x) / self.cell_size, self.last.x)
    }

    /// The clamped row of world y coordinate `y` (NaN gives 0).
    #[inline]
    fn row_of(&self, y: f32) -> u32 {
        axis_index((y - self.origin.y) / self.cell_size, self.last.y)
    }
}

/// `floor(local)` clamped to `0..=last`; NaN gives 0.
#[inline]
fn axis_index(local: f32, last: f32) -> u32 {
    // Written as comparisons rather than `f32::max`/`min` (whose NaN rules cost several
    // instructions each; this is once per axis, unit and frame): `local > 0` is false for
    // NaN, so NaN gives 0. Truncating the clamped non-negative value is floor.
    let low = if local > 0.0 { local } else { 0.0 };
    let clamped = if low < last { low } else { last };
    clamped as u32
}

/// Bands from which [`SpatialGrid::rebuild_from_buckets_in`] partitions the units first.
const PARTITION_BANDS: usize = 8;

/// The units a band of [`SpatialGrid::sort_bands`] reads: all of them (it skips those of
/// other bands), or its part of the partition.
enum BandUnits<'a> {
    All(std::ops::Range<u32>),
    Listed(std::iter::Copied<std::slice::Iter<'a, u32>>),
}

impl Iterator for BandUnits<'_> {
    type Item = u32;

    #[inline]
    fn next(&mut self) -> Option<u32> {
        match self {
            Self::All(units) => units.next(),
            Self::Listed(units) => units.next(),
        }
    }
}

impl DoubleEndedIterator for BandUnits<'_> {
    #[inline]
    fn next_back(&mut self) -> Option<u32> {
        match self {
            Self::All(units) => units.next_back(),
            Self::Listed(units) => units.next_back(),
        }
    }
}

/// `bucket / band_len` without a division per unit: a multiply by the rounded-down reciprocal,
/// which is at most one too low, and one correction.
struct BandOf {
    len: u64,
    reciprocal: u64,
}

impl BandOf {
    fn new(band_len: usize) -> Self {
        let len = band_len as u64;
        Self {
            len,
            reciprocal: (1 << 32) / len,
        }
    }

    #[inline]
    fn band(&self, bucket: u32) -> usize {
        let bucket = u64::from(bucket);
        let q = (bucket * self.reciprocal) >> 32;
        (q + u64::from((q + 1) * self.len <= bucket)) as usize
    }
}

/// Turns counts into inclusive prefix sums; returns the total.
fn prefix_sums(counts: &mut [u32]) -> u32 {
    let mut sum = 0;
    for count in counts {
        sum += *count;
        *count = sum;
    }
    sum
}

/// Partitions the units by band of `band_len` buckets for
/// [`SpatialGrid::rebuild_from_buckets_in`]: fills `partition` with the placed units' indices,
/// band by band, in input order within a band, and returns where each band's units end. Runs
/// on `run` in chunks of units: each chunk counts its units per band, then (after the prefix
/// sums over bands and chunks) copies them to its own part of each band's run.
fn partition_by_band<R>(
    buckets: &[u32],
    slots: usize,
    band_len: usize,
    bands: usize,
    partition: &mut Vec<u32>,
    run: &R,
) -> Result<Vec<usize>, SpatialGridError>
where
    R: RunJobs,
{
    let band_of = BandOf::new(band_len);
    // Enough chunks to share out, few enough that the table of counts stays small.
    let chunk = buckets.len().div_ceil(bands * 4).max(4096);
    let chunks: Vec<&[u32]> = buckets.chunks(chunk).collect();
    // Per chunk: its units per band, or the first unit with a bucket that does not exist.
    let counts: Vec<Mutex<Result<Vec<usize>, usize>>> =
        chunks.iter().map(|_| Mutex::new(Ok(Vec::new()))).collect();
    run(chunks.len(), &|c| {
        let mut per_band = vec![0; bands];
        for (i, &bucket) in chunks[c].iter().enumerate() {
            if bucket == SpatialGrid::UNPLACED {
                continue;
            }
            if bucket as usize >= slots {
                *counts[c].lock() = Err(c * chunk + i);
                return;
            }
            per_band[band_of.band(bucket)] += 1;
        }
        *counts[c].lock() = Ok(per_band);
    });
    let mut per_chunk = Vec::with_capacity(chunks.len());
    for count in counts {
        match count.into_inner() {
            Ok(per_band) => per_chunk.push(per_band),
            Err(unit) => {
                return Err(SpatialGridError::BadBucket {
                    unit,
                    bucket: buckets[unit],
                    buckets: slots as u32,
                });
            }
        }
    }
    // Band-major layout: band 0's units from chunk 0, chunk 1, ..., then band 1's.
    let mut ends = Vec::with_capacity(bands);
    let mut total = 0;
    for band in 0..bands {
        total += per_chunk.iter().map(|c| c[band]).sum::<usize>();
        ends.push(total);
    }
    partition.clear();
    partition.resize(total, 0);
    let mut parts: Vec<Vec<&mut [u32]>> = per_chunk.iter().map(|_| Vec::new()).collect();
    let mut rest = partition.as_mut_slice();
    for band in 0..bands {
        for (c, per_band) in per_chunk.iter().enumerate() {
            let (mine, tail) = rest.split_at_mut(per_band[band]);
            rest = tail;
            parts[c].push(mine);
        }
    }
    let parts: Vec<Mutex<Vec<&mut [u32]>>> = parts.into_iter().map(Mutex::new).collect();
    run(chunks.len(), &|c| {
        let mut guard = parts[c].lock();
        let mut filled = vec![0; bands];
        let first = (c * chunk) as u32;
        for (unit, &bucket) in (first..).zip(chunks[c]) {
            if bucket != SpatialGrid::UNPLACED {
                let band = band_of.band(bucket);
                guard[band][filled[band]] = unit;
                filled[band] += 1;
            }
        }
    });
    Ok(ends)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use rand_core::{RngCore, SeedableRng};
    use rand_pcg::Pcg32;

    fn grid(width: u32, height: u32, cell: f32) -> SpatialGrid {
        let map = Grid::new(width, height)
            .unwrap()
            .with_placement(1.0, Vec2::new(-3.0, 2.0))
            .unwrap();
        SpatialGrid::new(&map, cell).unwrap()
    }

    fn random_points(rng: &mut Pcg32, n: usize, lo: Vec2, hi: Vec2) -> Vec<Vec2> {
        let mut unit = || (rng.next_u32() >> 8) as f32 / (1u32 << 24) as f32;
        (0..n)
            .map(|_| lo + (hi - lo) * Vec2::new(unit(), unit()))
            .collect()
    }

    fn neighbours(grid: &SpatialGrid, pos: Vec2, radius: f32) -> Vec<u32> {
        let mut out = Vec::new();
        grid.for_each_neighbour(pos, radius, |u| out.push(u));
        out
    }

    /// Every pair within `radius` is found, no unit is visited twice.
    fn check_against_brute_force(grid: &SpatialGrid, points: &[Vec2], radius: f32) {
        for (i, &p) in points.iter().enumerate() {
            let found = neighbours(grid, p, radius);
            let mut seen = vec![false; points.len()];
            for &u in &found {
                assert!(!seen[u as usize], "unit {u} visited twice from {i}");
                seen[u as usize] = true;
            }
            for (j, &q) in points.iter().enumerate() {
                if p.distance(q) <= radius {
                    assert!(seen[j], "unit {j} at {q} is within {radius} of {i} at {p}");
                }
            }
        }
    }

    #[test]
    fn finds_every_pair_that_brute_force_finds() {
        let mut rng = Pcg32::seed_from_u64(7);
        for (cell, radius) in [(1.0, 1.0), (1.5, 0.7), (2.0, 2.0), (0.6, 1.7)] {
            let g0 = grid(40, 30, cell);
            let mut g = g0.clone();
            // Some points outside the map on every side.
            let points =
                random_points(&mut rng, 1500, Vec2::new(-6.0, -1.0), Vec2::new(40.0, 35.0));
            g.rebuild(&points).unwrap();
            check_against_brute_force(&g, &points, radius);
            assert_eq!(g.len(), points.len());
            assert_eq!(*g.cell_start().last().unwrap() as usize, points.len());
            let mut sorted = g.order().to_vec();
            sorted.sort_unstable();
            assert!(sorted.iter().copied().eq(0..points.len() as u32));
        }
    }

    #[test]
    fn small_radius_visits_at_most_three_by_three_buckets() {
        let mut g = grid(20, 20, 1.0);
        let points: Vec<Vec2> = (0..400)
            .map(|i| Vec2::new(-3.0 + (i % 20) as f32 + 0.5, 2.0 + (i / 20) as f32 + 0.5))
            .collect();
        g.rebuild(&points).unwrap();
        assert!(g.cell_start().windows(2).all(|w| w[1] - w[0] == 1));
        assert_eq!(neighbours(&g, points[210], 1.0).len(), 9);
        assert_eq!(neighbours(&g, points[0], 1.0).len(), 4);
        assert_eq!(neighbours(&g, points[210], 0.0).len(), 1);
        assert!(neighbours(&g, Vec2::NAN, 1.0).is_empty());
        assert!(neighbours(&g, points[0], -1.0).is_empty());
        assert_eq!(neighbours(&g, points[0], f32::INFINITY).len(), 400);
    }

    #[test]
    fn rebuild_is_stable_and_deterministic() {
        let mut rng = Pcg32::seed_from_u64(99);
        let mut g = grid(16, 16, 4.0);
        let mut points = random_points(&mut rng, 600, Vec2::new(-3.0, 2.0), Vec2::new(13.0, 18.0));
        points.extend_from_slice(&points.clone()[..50]); // duplicates share a bucket
        g.rebuild(&points).unwrap();
        for b in 0..g.bucket_count() {
            let units = g.bucket_range(b);
            assert!(
                units.windows(2).all(|w| w[0] < w[1]),
                "bucket {b} not in input order"
            );
            assert!(units.iter().all(|&u| g.bucket_of(points[u as usize]) == b));
        }
        let first = g.clone();
        g.rebuild(&points).unwrap();
        assert_eq!(g, first);
        // The split build gives the same result.
        let buckets: Vec<u32> = points.iter().map(|&p| g.bucket_of(p)).collect();
        let mut split = grid(16, 16, 4.0);
        split.rebuild_from_buckets(&buckets).unwrap();
        assert_eq!(split.order(), first.order());
        assert_eq!(split.cell_start(), first.cell_start());
    }

    /// The spans of a rectangle hold every unit standing in it, and no unit twice, in folded
    /// and unfolded tables, for rectangles inside, across and outside the world.
    #[test]
    fn spans_in_a_rectangle_hold_its_units_once() {
        let mut rng = Pcg32::seed_from_u64(5);
        for (n, cell) in [(12, 1.0), (300, 0.7), (5000, 1.0), (40, 3.0)] {
            let mut g = grid(60, 80, cell);
            let points = random_points(&mut rng, n, Vec2::new(-8.0, -2.0), Vec2::new(62.0, 88.0));
            g.rebuild(&points).unwrap();
            for _ in 0..50 {
                let corners =
                    random_points(&mut rng, 2, Vec2::new(-10.0, -5.0), Vec2::new(65.0, 90.0));
                let (min, max) = (corners[0].min(corners[1]), corners[0].max(corners[1]));
                let mut seen: Vec<u32> = g
                    .spans_in(min, max)
                    .flat_map(|span| g.order()[span].iter().copied())
                    .collect();
                let all = seen.len();
                seen.sort_unstable();
                seen.dedup();
                assert_eq!(seen.len(), all, "a unit in two spans");
                for (u, p) in points.iter().enumerate() {
                    let inside = p.cmpge(min).all() && p.cmple(max).all();
                    assert!(
                        !inside || seen.binary_search(&(u as u32)).is_ok(),
                        "unit {u} at {p} is in {min}..{max} but in no span ({n} units)"
                    );
                }
            }
        }
    }

    /// A folded table (few units, many rows) answers every query like brute force, each unit
    /// once, and cutting the sort into bands changes nothing.
    #[test]
    fn folded_tables_and_banded_sorts_agree_with_brute_force() {
        let mut rng = Pcg32::seed_from_u64(11);
        for (n, cell, radius) in [
            (10, 1.0, 1.0),
            (40, 0.7, 0.7),
            (90, 1.0, 3.5),
            (3, 0.5, 20.0),
        ] {
            let mut g = grid(60, 80, cell);
            let points = random_points(&mut rng, n, Vec2::new(-5.0, 0.0), Vec2::new(60.0, 85.0));
            g.rebuild(&points).unwrap();
            assert!(g.table_rows() < g.rows(), "{n} units should fold the table");
            assert_eq!(g.table_rows(), g.table_rows().max(3));
            check_against_brute_force(&g, &points, radius);
            // The same units in an unfolded table: same neighbours, same relative order.
            let mut dense = grid(60, 80, cell);
            dense.fit_to(usize::MAX);
            assert_eq!(dense.table_rows(), dense.rows());
            let buckets: Vec<u32> = points.iter().map(|&p| dense.bucket_of(p)).collect();
            dense.rebuild_from_buckets(&buckets).unwrap();
            for &p in &points {
                let mut folded = neighbours(&g, p, radius);
                folded.retain(|&u| points[u as usize].distance(p) <= radius);
                let mut plain = neighbours(&dense, p, radius);
                plain.retain(|&u| points[u as usize].distance(p) <= radius);
                assert_eq!(folded, plain);
            }
            // Any number of bands sorts the same.
            let buckets: Vec<u32> = points.iter().map(|&p| g.bucket_of(p)).collect();
            for bands in [1, 2, 3, 7, 1000] {
                let mut banded = g.clone();
                banded
                    .rebuild_from_buckets_in(&buckets, bands, |jobs, job| {
                        (0..jobs).rev().for_each(job);
                    })
                    .unwrap();
                assert_eq!(banded, g, "{bands} bands");
            }
        }
    }

    #[test]
    fn band_of_divides_exactly() {
        let mut rng = Pcg32::seed_from_u64(1);
        for len in [1, 2, 3, 7, 1000, 65_537, (1 << 24) - 1, 1 << 24] {
            let band_of = BandOf::new(len);
            let edges = [
                0,
                1,
                len as u32 - 1,
                len as u32,
                len as u32 + 1,
                (1 << 24) - 1,
                u32::MAX - 1,
            ];
            for bucket in edges.into_iter().chain((0..1000).map(|_| rng.next_u32())) {
                assert_eq!(
                    band_of.band(bucket),
                    bucket as usize / len,
                    "{bucket} / {len}"
                );
            }
        }
    }

    /// Enough units for the banded sort to partition them in several chunks: every number of
    /// bands, its jobs run in any order, sorts like one band, and a bucket that does not exist
    /// is reported for the first unit that has one, whichever chunk it is in.
    #[test]
    fn banded_sorts_of_many_units_agree_with_one_band() {
        let mut rng = Pcg32::seed_from_u64(5);
        let mut one = grid(300, 200, 1.0);
        one.fit_to(usize::MAX);
        let count = one.bucket_count();
        // Mostly in row order, as units kept in cell order are, with strays and unplaced units.
        let mut buckets: Vec<u32> = (0..50_000u32)
            .map(|i| match rng.next_u32() % 50 {
                0 => SpatialGrid::UNPLACED,
                1 => rng.next_u32() % count,
                _ => (i + rng.next_u32() % 40) % count,
            })
            .collect();
        one.rebuild_from_buckets(&buckets).unwrap();
        assert!(one.len() < buckets.len());
        for bands in [2, 3, PARTITION_BANDS, 61] {
            let mut banded = grid(300, 200, 1.0);
            banded.fit_to(usize::MAX);
            banded
                .rebuild_from_buckets_in(&buckets, bands, |jobs, job| {
                    (0..jobs).rev().for_each(job);
                })
                .unwrap();
            assert_eq!(banded, one, "{bands} bands");
        }
        buckets[41_000] = count;
        buckets[17_000] = count + 5;
        for bands in [1, 2, PARTITION_BANDS] {
            let mut bad = one.clone();
            assert_eq!(
                bad.rebuild_from_buckets_in(&buckets, bands, |jobs, job| {
                    (0..jobs).for_each(job);
                }),
                Err(SpatialGridError::BadBucket {
                    unit: 17_000,
                    bucket: count + 5,
                    buckets: count
                })
            );
            assert!(bad.is_empty() && bad.cell_start().iter().all(|&s| s == 0));
        }
    }

    #[test]
    fn growing_crowds_unfold_the_table() {
        let mut g = grid(64, 64, 1.0);
        g.fit_to(0);
        assert_eq!(g.table_rows(), 3);
        g.fit_to(64);
        assert_eq!(g.table_rows(), 8);
        g.fit_to(10_000);
        assert_eq!(g.table_rows(), 64);
        assert_eq!(g.cell_start().len(), 64 * 64 + 1);
        // A one-row world never has more table rows than rows.
        let mut thin = SpatialGrid::from_rect(Vec2::ZERO, Vec2::new(10.0, 1.0), 1.0).unwrap();
        thin.rebuild(&[Vec2::new(2.5, 0.5), Vec2::new(3.2, 0.5)])
            .unwrap();
        assert_eq!((thin.rows(), thin.table_rows()), (1, 1));
        assert_eq!(neighbours(&thin, Vec2::new(2.5, 0.5), 1.0), [0, 1]);
    }

    #[test]
    fn outside_positions_clamp_to_the_border_and_nan_to_zero() {
        let g = grid(10, 6, 2.0); // 5x3 buckets over x -3..7, y 2..8
        assert_eq!((g.columns(), g.rows()), (5, 3));
        assert_eq!(g.bucket_of(Vec2::new(-3.0, 2.0)), 0);
        assert_eq!(g.bucket_of(Vec2::new(-100.0, -100.0)), 0);
        assert_eq!(g.bucket_of(Vec2::new(1e30, -5.0)), 4);
        assert_eq!(g.bucket_of(Vec2::new(f32::INFINITY, f32::INFINITY)), 14);
        assert_eq!(g.bucket_of(Vec2::new(f32::NEG_INFINITY, 7.9)), 10);
        assert_eq!(g.bucket_of(Vec2::new(0.5, 100.0)), 11);
        assert_eq!(g.bucket_of(Vec2::new(f32::NAN, 7.0)), 0);
        assert_eq!(g.bucket_of(Vec2::new(6.0, f32::NAN)), 0);
        assert_eq!(g.bucket_coords(11), Some((1, 2)));
        assert_eq!(g.bucket_coords(15), None);
        // A clamped unit is still found by a query near it.
        let mut g = g;
        let points = [Vec2::new(7.3, 8.2), Vec2::new(6.9, 7.9)];
        g.rebuild(&points).unwrap();
        assert_eq!(neighbours(&g, points[0], 0.5), [0, 1]);
        assert_eq!(neighbours(&g, points[1], 0.5), [0, 1]);
    }

    #[test]
    fn empty_input_and_reuse() {
        let mut g = grid(30, 30, 1.5);
        g.rebuild(&[]).unwrap();
        assert!(g.is_empty());
        assert!(g.cell_start().iter().all(|&s| s == 0));
        assert_eq!(g.cell_start().len(), g.bucket_count() as usize + 1);
        assert!(neighbours(&g, Vec2::new(5.0, 5.0), 3.0).is_empty());
        assert!(g.bucket_range(0).is_empty() && g.bucket_range(u32::MAX).is_empty());

        let mut rng = Pcg32::seed_from_u64(3);
        let points = random_points(&mut rng, 500, Vec2::new(-3.0, 2.0), Vec2::new(27.0, 32.0));
        g.rebuild(&points).unwrap();
        let ptrs = (
            g.order().as_ptr(),
            g.cell_start().as_ptr(),
            g.buckets.as_ptr(),
        );
        for n in [500, 120, 0, 499] {
            g.rebuild(&points[..n]).unwrap();
            assert_eq!(g.len(), n);
            let now = (
                g.order().as_ptr(),
                g.cell_start().as_ptr(),
                g.buckets.as_ptr(),
            );
            assert_eq!(now, ptrs, "rebuild of {n} units reallocated");
        }
        check_against_brute_force(&g, &points[..499], 1.5);
    }

    #[test]
    fn bad_input_is_an_error() {
        let map = Grid::new(8, 8).unwrap();
        for cell in [0.0, -1.0, f32::NAN, f32::INFINITY] {
            assert!(matches!(
                SpatialGrid::new(&map, cell),
                Err(SpatialGridError::BadCellSize(_))
            ));
        }
        assert!(matches!(
            SpatialGrid::new(&map, 1e-6),
            Err(SpatialGridError::TooManyBuckets { .. })
        ));
        assert!(matches!(
            SpatialGrid::from_rect(Vec2::ZERO, Vec2::new(f32::MAX, f32::MAX), f32::MIN_POSITIVE),
            Err(SpatialGridError::TooManyBuckets { .. })
        ));
        assert!(matches!(
            SpatialGrid::from_rect(Vec2::ZERO, Vec2::new(-1.0, 4.0), 1.0),
            Err(SpatialGridError::BadBounds { .. })
        ));
        let zero = SpatialGrid::from_rect(Vec2::ZERO, Vec2::ZERO, 1.0).unwrap();
        assert_eq!(zero.bucket_count(), 1);

        let mut g = SpatialGrid::new(&map, 2.0).unwrap();
        g.rebuild(&[Vec2::ONE, Vec2::splat(5.0)]).unwrap();
        assert_eq!(
            g.rebuild_from_buckets(&[0, 3, 16, 2]),
            Err(SpatialGridError::BadBucket {
                unit: 2,
                bucket: 16,
                buckets: 16
            })
        );
        assert!(g.is_empty() && g.cell_start().iter().all(|&s| s == 0));
        assert!(g.rebuild_from_buckets(&[u32::MAX - 1]).is_err());
        // Unplaced units are left out, the others keep their input order within a bucket.
        for bands in [1, 2, 5] {
            g.rebuild_from_buckets_in(
                &[3, SpatialGrid::UNPLACED, 0, 3, SpatialGrid::UNPLACED],
                bands,
                |jobs, job| (0..jobs).for_each(job),
            )
            .unwrap();
            assert_eq!(g.order(), &[2, 0, 3]);
            assert_eq!(g.cell_start()[16], 3);
        }
    }

    #[test]
    fn default_cell_size() {
        assert_eq!(SpatialGrid::cell_size_for_radius(0.75), 1.5);
        assert_eq!(SpatialGrid::cell_size_for_radius(0.0), 1.0);
        assert_eq!(SpatialGrid::cell_size_for_radius(f32::NAN), 1.0);
        assert_eq!(SpatialGrid::cell_size_for_radius(f32::MAX), 1.0);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn neighbour_queries_match_brute_force(
            points in proptest::collection::vec((-8.0f32..20.0, -8.0f32..20.0), 0..80),
            cell in 0.5f32..4.0,
            radius_fraction in 0.0f32..=1.0,
        ) {
            let points: Vec<Vec2> = points.into_iter().map(|(x, y)| Vec2::new(x, y)).collect();
            let mut g = SpatialGrid::from_rect(Vec2::ZERO, Vec2::new(12.0, 9.0), cell).unwrap();
            g.rebuild(&points).unwrap();
            check_against_brute_force(&g, &points, cell * radius_fraction);
        }
    }
}
