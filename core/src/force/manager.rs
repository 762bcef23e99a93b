//! [`ForceManager`]: the active fields, their ages and the index that finds the fields
//! around a point.

use glam::Vec2;

use super::{ForceField, ForceFieldId, finite_non_negative};

/// One field held by the manager, with its broad-phase box.
#[derive(Clone, Copy, Debug)]
pub(super) struct Entry {
    id: ForceFieldId,
    pub(super) field: ForceField,
    /// `false` from [`ForceManager::add`] until the next [`ForceManager::advance`].
    pub(super) live: bool,
    pub(super) min: Vec2,
    pub(super) max: Vec2,
}

/// The active force fields of a scene, in insertion order (the article's `ForceManager`).
///
/// # Lifecycle
///
/// [`add`](Self::add) makes a field *pending*: it exerts no force until the next
/// [`advance`](Self::advance), which starts a frame. `advance(dt)`:
///
/// 1. adds `dt` to the `elapsed` time of every field that was live in the previous frame;
/// 2. drops the fields whose time is up: an impulse (`duration == 0`) after its one live frame
///    whatever `dt` is, a timed field once `elapsed >= duration`;
/// 3. makes the pending fields live with `elapsed = 0`.
///
/// So a field added between frames acts in exactly `max(1, ceil(duration / dt))` frames (an
/// impulse in exactly one), whether the frame queries forces before or after it advances.
///
/// Fields are summed in insertion order, so [`force_at`](Self::force_at) is deterministic.
///
/// ```
/// use glam::Vec2;
/// use horde_core::{ForceField, ForceKind, ForceManager, KnockbackParams, apply_impulse};
///
/// let mut forces = ForceManager::new();
/// // A one-frame explosion of radius 4 at the origin.
/// let blast = ForceField::new(Vec2::ZERO, ForceKind::Explosion, 4.0, 600.0)?;
/// forces.add(blast);
/// forces.advance(1.0 / 60.0); // the frame in which the blast acts
/// let force = forces.force_at(Vec2::new(1.0, 0.0), false);
/// assert!(force.x > 0.0 && force.y == 0.0); // pushed away from the centre
/// // A unit of mass 1 at rest: dv = 450 N * (1/60 s) / 1 = 7.5 > 4, so it is stunned too.
/// let params = KnockbackParams::default();
/// let (external, stun) = apply_impulse(Vec2::ZERO, 0.0, force, 1.0, 1.0 / 60.0, &params);
/// assert!(external.x > 0.0 && stun > 0.0);
/// forces.advance(1.0 / 60.0); // next frame: the impulse is gone
/// assert!(forces.is_empty());
/// # Ok::<(), horde_core::ForceFieldError>(())
/// ```
#[derive(Clone, Debug, Default)]
pub struct ForceManager {
    pub(super) entries: Vec<Entry>,
    next_id: u64,
    /// Union of the live fields' boxes, `None` when no field is live.
    live_bounds: Option<(Vec2, Vec2)>,
    /// The live fields by area, so a unit tests only the fields near it.
    pub(super) index: FieldIndex,
}

/// The live fields by area: [`ForceManager`]'s live bounds cut into
/// [`FieldIndex::SIDE`] x [`FieldIndex::SIDE`] square cells (level 0), and coarser levels
/// of that grid, each with cells twice as wide as the one below, up to one cell for the
/// whole box (a pyramid of [`FieldIndex::LEVELS`] grids). A field is listed on the finest
/// level where its box overlaps at most 2 x 2 cells, in those cells only: building the
/// index costs at most four entries a field whatever its size (a field as wide as the
/// bounds used to be listed in all 4,096 cells). A point's fields are the lists of the one
/// cell holding it on each level that has fields, merged in insertion order, so a sum over
/// them adds the same fields in the same order as a sum over every field: bit for bit the
/// same force. A battle with hundreds of explosions then costs each unit the few near it,
/// not all of them.
#[derive(Clone, Debug, Default)]
pub(super) struct FieldIndex {
    origin: Vec2,
    /// 1 / cell side on level 0.
    scale: f32,
    /// Bit `k`: level `k` lists some field.
    levels: u8,
    /// The fields of cell `c` (numbered across the levels, level 0 first) are
    /// `fields[start[c]..start[c + 1]]`.
    start: Vec<u32>,
    /// Entry indices with their boxes (so that a field whose box misses is rejected
    /// without reading its entry).
    pub(super) fields: Vec<Listed>,
}

/// A field listed in a cell of the [`FieldIndex`]: its entry index and its box.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Listed {
    entry: u32,
    min: Vec2,
    max: Vec2,
}

impl FieldIndex {
    /// Cells along a side of level 0.
    const SIDE: u32 = 64;
    /// Levels of the pyramid: sides 64, 32, ..., 1.
    const LEVELS: u32 = Self::SIDE.trailing_zeros() + 1;

    /// The first cell number of level `level`.
    const fn level_start(level: u32) -> usize {
        let mut start = 0;
        let mut k = 0;
        while k < level {
            let side = (Self::SIDE >> k) as usize;
            start += side * side;
            k += 1;
        }
        start
    }

    /// The cell number of level-0 column and row `(x, y)` on level `level`.
    #[inline]
    fn cell_number(level: u32, (x, y): (u32, u32)) -> usize {
        let side = (Self::SIDE >> level) as usize;
        Self::level_start(level) + (y >> level) as usize * side + (x >> level) as usize
    }

    /// The index of the live `entries`, whose boxes together span `bounds`. Costs the live
    /// fields plus the pyramid's cells (5,461), whatever the fields' sizes.
    fn build(entries: &[Entry], bounds: Option<(Vec2, Vec2)>) -> Self {
        let Some((min, max)) = bounds else {
            return Self::default();
        };
        let extent = (max - min).max_element();
        let side = if extent.is_finite() && extent > 0.0 {
            extent / Self::SIDE as f32
        } else {
            1.0
        };
        let mut index = Self {
            origin: min,
            scale: 1.0 / side,
            levels: 0,
            start: Vec::new(),
            fields: Vec::new(),
        };
        let cells = Self::level_start(Self::LEVELS);
        let live = || (0u32..).zip(entries).filter(|(_, e)| e.live);
        // Count, prefix sums, then place (in entry order, so every list is ascending).
        let mut start = vec![0u32; cells + 1];
        for (_, e) in live() {
            index.for_each_cell(e.min, e.max, |c| start[c + 1] += 1);
        }
        for c in 0..cells {
            start[c + 1] += start[c];
        }
        let mut next = start.clone();
        let mut fields = vec![Listed::default(); start[cells] as usize];
        for (i, e) in live() {
            let listed = Listed {
                entry: i,
                min: e.min,
                max: e.max,
            };
            let level = index.for_each_cell(e.min, e.max, |c| {
                fields[next[c] as usize] = listed;
                next[c] += 1;
            });
            index.levels |= 1 << level;
        }
        index.start = start;
        index.fields = fields;
        index
    }

    /// Level-0 column and row of the cell holding `pos` (clamped to the index; `pos` is
    /// within the live bounds when asked for a force). Monotone in each coordinate, so a
    /// box's cells are those between its corners' cells, on every level.
    #[inline]
    fn cell(&self, pos: Vec2) -> (u32, u32) {
        let local = (pos - self.origin) * self.scale;
        // `as` saturates: below the origin (or NaN) is 0.
        let last = Self::SIDE - 1;
        ((local.x as u32).min(last), (local.y as u32).min(last))
    }

    /// Calls `f` with the cells of the level where the box `min..=max` overlaps at most
    /// 2 x 2 cells (the finest such), and returns that level.
    fn for_each_cell(&self, min: Vec2, max: Vec2, mut f: impl FnMut(usize)) -> u32 {
        let ((x0, y0), (x1, y1)) = (self.cell(min), self.cell(max));
        let level = (0..Self::LEVELS)
            .find(|&k| (x1 >> k) - (x0 >> k) <= 1 && (y1 >> k) - (y0 >> k) <= 1)
            .unwrap_or(Self::LEVELS - 1);
        for y in (y0 >> level)..=(y1 >> level) {
            for x in (x0 >> level)..=(x1 >> level) {
                f(Self::cell_number(level, (x << level, y << level)));
            }
        }
        level
    }

    /// Calls `f` with the entry index of every live field whose box holds `pos`, in
    /// ascending order.
    #[inline]
    fn for_each_field_at(&self, pos: Vec2, mut f: impl FnMut(u32)) {
        self.for_each_listed_at(pos, |l| {
            if inside(pos, l.min, l.max) {
                f(l.entry);
            }
        });
    }

    /// Calls `f` with every field listed in a cell holding `pos`, in ascending entry order.
    #[inline]
    fn for_each_listed_at(&self, pos: Vec2, mut f: impl FnMut(&Listed)) {
        if self.levels == 0 {
            return;
        }
        let cell = self.cell(pos);
        let list = |level: u32| {
            let c = Self::cell_number(level, cell);
            &self.fields[self.start[c] as usize..self.start[c + 1] as usize]
        };
        if self.levels.is_power_of_two() {
            list(self.levels.trailing_zeros()).iter().for_each(f);
            return;
        }
        // Several levels: merge their lists (each ascending) into insertion order.
        let mut lists: [&[Listed]; Self::LEVELS as usize] = [&[]; Self::LEVELS as usize];
        let mut n = 0;
        for level in 0..Self::LEVELS {
            if self.levels >> level & 1 == 1 {
                let l = list(level);
                if !l.is_empty() {
                    lists[n] = l;
                    n += 1;
                }
            }
        }
        let lists = &mut lists[..n];
        loop {
            let mut best: Option<usize> = None;
            for (k, l) in lists.iter().enumerate() {
                if let Some(head) = l.first()
                    && best.is_none_or(|b| head.entry < lists[b][0].entry)
                {
                    best = Some(k);
                }
            }
            let Some(b) = best else { return };
            f(&lists[b][0]);
            lists[b] = &lists[b][1..];
        }
    }
}

impl ForceManager {
    /// A manager with no fields.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds `field` (pending until the next [`advance`](Self::advance)) and returns its id.
    pub fn add(&mut self, field: ForceField) -> ForceFieldId {
        let id = ForceFieldId(self.next_id);
        self.next_id += 1;
        let (min, max) = field.bounds();
        self.entries.push(Entry {
            id,
            field,
            live: false,
            min,
            max,
        });
        id
    }

    /// Removes the field `id`, returning it, or `None` if it is gone already.
    pub fn remove(&mut self, id: ForceFieldId) -> Option<ForceField> {
        let index = self.index_of(id)?;
        let entry = self.entries.remove(index);
        // Even a pending field's removal shifts the entries after it: the index must follow.
        self.update_bounds();
        Some(entry.field)
    }

    /// The field `id`, or `None` if it is gone.
    #[must_use]
    pub fn get(&self, id: ForceFieldId) -> Option<&ForceField> {
        self.index_of(id).map(|i| &self.entries[i].field)
    }

    /// Whether the field `id` is live (exerts force this frame); `false` while it is pending
    /// and after it is gone.
    #[must_use]
    pub fn is_live(&self, id: ForceFieldId) -> bool {
        self.index_of(id).is_some_and(|i| self.entries[i].live)
    }

    /// Number of fields held, pending ones included.
    #[must_use]
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether no field is held.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Removes every field (ids are not reused afterwards).
    pub fn clear(&mut self) {
        self.entries.clear();
        self.update_bounds();
    }

    /// Every field with its id, pending ones included, in insertion order.
    pub fn iter(&self) -> impl Iterator<Item = (ForceFieldId, &ForceField)> + '_ {
        self.entries.iter().map(|e| (e.id, &e.field))
    }

    /// Every field with its id and whether it is live (`false` = pending until the next
    /// [`advance`](Self::advance)), in insertion order: what a snapshot saves.
    pub fn entries(&self) -> impl Iterator<Item = (ForceFieldId, &ForceField, bool)> + '_ {
        self.entries.iter().map(|e| (e.id, &e.field, e.live))
    }

    /// The id the next [`add`](Self::add) will return.
    #[must_use]
    pub const fn next_id(&self) -> ForceFieldId {
        ForceFieldId(self.next_id)
    }

    /// The largest next id a restored manager may have (2^63): room for as many fields
    /// again, so that ids never wrap.
    pub const MAX_NEXT_ID: u64 = 1 << 63;

    /// A manager holding `entries` (`(id, field, live)`, as [`entries`](Self::entries) lists
    /// them) whose next id is `next_id`: how a snapshot is restored. Ids must grow strictly
    /// and stay below `next_id`, and `next_id` at most [`Self::MAX_NEXT_ID`].
    pub fn restore(
        entries: impl IntoIterator<Item = (u64, ForceField, bool)>,
        next_id: u64,
    ) -> Result<Self, ForceRestoreError> {
        let mut manager = Self {
            entries: Vec::new(),
            next_id,
            live_bounds: None,
            index: FieldIndex::default(),
        };
        // Ids never wrap: a counter past MAX_NEXT_ID would run out within any run's reach.
        if next_id > Self::MAX_NEXT_ID {
            return Err(ForceRestoreError {
                id: next_id,
                next_id,
            });
        }
        for (id, field, live) in entries {
            let previous = manager.entries.last().map(|e| e.id.0);
            if id >= next_id || previous.is_some_and(|p| id <= p) {
                return Err(ForceRestoreError { id, next_id });
            }
            let (min, max) = field.bounds();
            manager.entries.push(Entry {
                id: ForceFieldId(id),
                field,
                live,
                min,
                max,
            });
        }
        manager.update_bounds();
        Ok(manager)
    }

    /// Starts a frame of `dt` seconds: ages the live fields by `dt`, drops the expired ones
    /// and makes the pending ones live (see the type's docs). A NaN, negative or infinite
    /// `dt` counts as `0.0` (time stands still; impulses still last one frame).
    ///
    /// The index of the live fields is rebuilt only when a field became live or was
    /// dropped: long-lived fields cost nothing from frame to frame.
    pub fn advance(&mut self, dt: f32) {
        let dt = finite_non_negative(dt);
        let mut changed = false;
        self.entries.retain_mut(|entry| {
            if !entry.live {
                entry.live = true;
                changed = true;
                return true;
            }
            let field = &mut entry.field;
            field.elapsed += dt;
            let keep = !(field.duration == 0.0 || field.elapsed >= field.duration);
            changed |= !keep;
            keep
        });
        if changed {
            self.update_bounds();
        }
    }

    /// The total force on a unit at `pos`: the sum, in insertion order, of
    /// [`ForceField::force_at`] over the live fields, skipping those that do not affect
    /// player-controlled units when `controllable` is true. Only the fields listed for
    /// `pos`'s cell of the index are looked at, and a box test rejects far ones before any
    /// distance is computed. Always finite.
    #[must_use]
    #[inline]
    pub fn force_at(&self, pos: Vec2, controllable: bool) -> Vec2 {
        let Some((min, max)) = self.live_bounds else {
            return Vec2::ZERO;
        };
        if !inside(pos, min, max) {
            return Vec2::ZERO;
        }
        let mut total = Vec2::ZERO;
        self.index.for_each_field_at(pos, |i| {
            let field = &self.entries[i as usize].field;
            if field.affects(controllable) {
                total += field.force_at(pos);
            }
        });
        total
    }

    fn index_of(&self, id: ForceFieldId) -> Option<usize> {
        // Ids grow with insertion and removal keeps the order, so the entries are sorted.
        self.entries.binary_search_by_key(&id, |e| e.id).ok()
    }

    fn update_bounds(&mut self) {
        self.live_bounds = self
            .entries
            .iter()
            .filter(|e| e.live)
            .map(|e| (e.min, e.max))
            .reduce(|(a0, a1), (b0, b1)| (a0.min(b0), a1.max(b1)));
        self.index = FieldIndex::build(&self.entries, self.live_bounds);
    }
}

/// Whether `pos` lies in the closed box `min..=max` (false for NaN).
pub(super) fn inside(pos: Vec2, min: Vec2, max: Vec2) -> bool {
    pos.x >= min.x && pos.x <= max.x && pos.y >= min.y && pos.y <= max.y
}

/// [`ForceManager::restore`] was given ids out of order or not below the next id.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "force field id {id} is out of order or not below the next id {next_id}, or the next id is past 2^63"
)]
pub struct ForceRestoreError {
    /// The offending id.
    pub id: u64,
    /// The next id given.
    pub next_id: u64,
}
