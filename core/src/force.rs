//! Force fields (docs/behaviour.md, "Force fields"; the article's `ForceData` / `ForceManager`) and
//! the per-unit knock-back rules that turn their force into external velocity and stun.
//!
//! - A [`ForceField`] is an explosion, an attractor (black hole), a fixed-direction push or a
//!   vortex with a radius, a strength, a lifetime and a distance falloff.
//! - A [`ForceManager`] owns the active fields, ages them with [`ForceManager::advance`] and
//!   sums their force at a point with [`ForceManager::force_at`] (forces superpose linearly).
//! - [`apply_impulse`] turns a unit's total force into external velocity and stun;
//!   [`decay_external`] applies drag and counts the stun down. Both are pure functions of one
//!   unit's state and [`KnockbackParams`].
//!
//! Everything here is plain `f32`/`f64` arithmetic (`+ - * /`, `sqrt`, comparisons): no
//! `exp`/`powf` (their results differ between C libraries), no fused multiply-add, so the same
//! inputs give bit-identical results on every platform (docs/behaviour.md, "Determinism").

use glam::Vec2;

/// What a [`ForceField`] does to the units in its radius.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ForceKind {
    /// Pushes away from the centre (a blast).
    Explosion,
    /// Pulls toward the centre (a black hole).
    Attractor,
    /// Pushes along a fixed direction, wherever the unit is in the radius (a shock wave, wind).
    /// [`ForceField::new`] normalises `direction`, which must be finite and non-zero.
    Push {
        /// Direction of the push (any length; stored normalised).
        direction: Vec2,
    },
    /// Pushes along the circle around the centre (a whirlpool).
    Vortex {
        /// Turn clockwise as seen on screen, where world `+y` points down (docs/behaviour.md,
        /// "Grid, terrain and coordinates"): a unit right of the centre is pushed toward `+y`.
        /// `false` turns the other way.
        clockwise: bool,
    },
}

/// Why a [`ForceField`] could not be made.
#[derive(Clone, Copy, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ForceFieldError {
    /// The centre has a NaN or infinite coordinate.
    #[error("force field position {0} must be finite")]
    BadPosition(Vec2),
    /// The radius is not a finite number greater than zero.
    #[error("force field radius {0} must be finite and > 0")]
    BadRadius(f32),
    /// The strength is NaN, negative or above [`ForceField::MAX_STRENGTH`].
    #[error("force field strength {0} must be in 0..={max}", max = ForceField::MAX_STRENGTH)]
    BadStrength(f32),
    /// The duration is NaN or negative.
    #[error("force field duration {0} must be >= 0 (0 = one-frame impulse, inf = until removed)")]
    BadDuration(f32),
    /// The time decay is not a finite number `>= 0`.
    #[error("force field time decay {0} must be finite and >= 0")]
    BadTimeDecay(f32),
    /// A [`ForceKind::Push`] direction is zero or not finite.
    #[error("push direction {0} must be finite and non-zero")]
    BadDirection(Vec2),
    /// The elapsed time is not a finite number `>= 0`.
    #[error("force field elapsed time {0} must be finite and >= 0")]
    BadElapsed(f32),
}

/// One force field: a centre, a [`ForceKind`], a radius, a strength and a lifetime.
///
/// Made by [`ForceField::new`] and the `with_*` builders, which validate every value, so a
/// field always holds finite numbers. Defaults of the builder-set values:
///
/// - [`duration`](Self::duration) `0.0`: seconds the field lasts; `0` = one-frame impulse,
///   [`FOREVER`](Self::FOREVER) = until removed.
/// - [`falloff`](Self::falloff) `1`: distance falloff exponent (`0` constant, `1` linear,
///   `2` quadratic, ...).
/// - [`time_decay`](Self::time_decay) `0.0`: per second; the force fades linearly as
///   `1 - time_decay * elapsed`.
/// - [`affects_controllable`](Self::affects_controllable) `true`: whether player-controlled
///   units feel it.
///
/// # Force
///
/// For a unit at distance `d` from the centre ([`ForceField::force_at`]):
///
/// ```text
/// d >= radius:  0
/// otherwise:    magnitude = strength * (1 - d / radius)^falloff * max(0, 1 - time_decay * elapsed)
///               force     = magnitude * direction
/// ```
///
/// where `direction` is the unit vector away from the centre (explosion), toward it
/// (attractor), the push direction (push), or the tangent (vortex). At the exact centre an
/// explosion, attractor or vortex has no direction and gives zero; a push gives its full force.
///
/// The falloff exponent is an integer (computed by repeated multiplication) and the time decay
/// linear, so that no `powf`/`exp` breaks cross-platform determinism. For a field that fades
/// out exactly when it ends, set `time_decay = 1 / duration`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ForceField {
    position: Vec2,
    kind: ForceKind,
    radius: f32,
    strength: f32,
    duration: f32,
    elapsed: f32,
    falloff: u32,
    time_decay: f32,
    affects_controllable: bool,
}

impl ForceField {
    /// The largest strength a field may have: keeps the sum of any realistic number of fields
    /// finite.
    pub const MAX_STRENGTH: f32 = 1.0e9;

    /// A duration that never runs out: the field lasts until it is removed.
    pub const FOREVER: f32 = f32::INFINITY;

    /// A field at `position` (finite) of `kind`, `radius` (finite, `> 0`) and `strength`
    /// (`0..=`[`MAX_STRENGTH`](Self::MAX_STRENGTH), in force units: world units x mass / s²).
    /// The other values take their defaults (see the type's docs): a one-frame impulse with
    /// linear falloff, no time decay, affecting every unit.
    pub fn new(
        position: Vec2,
        kind: ForceKind,
        radius: f32,
        strength: f32,
    ) -> Result<Self, ForceFieldError> {
        if !position.is_finite() {
            return Err(ForceFieldError::BadPosition(position));
        }
        if !(radius.is_finite() && radius > 0.0) {
            return Err(ForceFieldError::BadRadius(radius));
        }
        if !(0.0..=Self::MAX_STRENGTH).contains(&strength) {
            return Err(ForceFieldError::BadStrength(strength));
        }
        let kind = match kind {
            ForceKind::Push { direction } => ForceKind::Push {
                direction: unit_direction(direction)
                    .ok_or(ForceFieldError::BadDirection(direction))?,
            },
            other => other,
        };
        Ok(Self {
            position,
            kind,
            radius,
            strength,
            duration: 0.0,
            elapsed: 0.0,
            falloff: 1,
            time_decay: 0.0,
            affects_controllable: true,
        })
    }

    /// The same field lasting `seconds` (`>= 0`; `0` = one-frame impulse,
    /// [`FOREVER`](Self::FOREVER) = until removed). Default `0.0`.
    pub fn with_duration(mut self, seconds: f32) -> Result<Self, ForceFieldError> {
        if seconds.is_nan() || seconds < 0.0 {
            return Err(ForceFieldError::BadDuration(seconds));
        }
        self.duration = seconds;
        Ok(self)
    }

    /// The same field with distance falloff exponent `exponent` (`0` = constant inside the
    /// radius, `1` = linear, `2` = quadratic, ...). Default `1`.
    #[must_use]
    pub const fn with_falloff(mut self, exponent: u32) -> Self {
        self.falloff = exponent;
        self
    }

    /// The same field fading by `per_second` (finite, `>= 0`): the force is multiplied by
    /// `max(0, 1 - per_second * elapsed)`. Default `0.0` (no fading).
    pub fn with_time_decay(mut self, per_second: f32) -> Result<Self, ForceFieldError> {
        if !(per_second.is_finite() && per_second >= 0.0) {
            return Err(ForceFieldError::BadTimeDecay(per_second));
        }
        self.time_decay = per_second;
        Ok(self)
    }

    /// The same field, felt by player-controlled units or not (then it only moves the others,
    /// e.g. a player's spell that must not throw the player's own army). Default `true`.
    #[must_use]
    pub const fn with_affects_controllable(mut self, affects: bool) -> Self {
        self.affects_controllable = affects;
        self
    }

    /// The same field as if it had already been active for `seconds` (finite, `>= 0`):
    /// how a saved field is restored. Default `0.0`.
    pub fn with_elapsed(mut self, seconds: f32) -> Result<Self, ForceFieldError> {
        if !(seconds.is_finite() && seconds >= 0.0) {
            return Err(ForceFieldError::BadElapsed(seconds));
        }
        self.elapsed = seconds;
        Ok(self)
    }

    /// World position of the centre.
    #[must_use]
    pub const fn position(&self) -> Vec2 {
        self.position
    }

    /// What the field does (a push direction is stored normalised).
    #[must_use]
    pub const fn kind(&self) -> ForceKind {
        self.kind
    }

    /// Radius of influence, world units.
    #[must_use]
    pub const fn radius(&self) -> f32 {
        self.radius
    }

    /// Force at the centre (before falloff and time decay).
    #[must_use]
    pub const fn strength(&self) -> f32 {
        self.strength
    }

    /// Seconds the field lasts; `0` = one-frame impulse. Default `0.0`.
    #[must_use]
    pub const fn duration(&self) -> f32 {
        self.duration
    }

    /// Seconds the field has been active (`0` in its first frame).
    #[must_use]
    pub const fn elapsed(&self) -> f32 {
        self.elapsed
    }

    /// Distance falloff exponent. Default `1` (linear).
    #[must_use]
    pub const fn falloff(&self) -> u32 {
        self.falloff
    }

    /// Linear fade per second. Default `0.0`.
    #[must_use]
    pub const fn time_decay(&self) -> f32 {
        self.time_decay
    }

    /// Whether player-controlled units feel the field. Default `true`.
    #[must_use]
    pub const fn affects_controllable(&self) -> bool {
        self.affects_controllable
    }

    /// Whether a unit that is (`controllable = true`) or is not player-controlled feels it.
    #[must_use]
    pub const fn affects(&self, controllable: bool) -> bool {
        !controllable || self.affects_controllable
    }

    /// The time factor `max(0, 1 - time_decay * elapsed)`, in `0..=1`.
    #[must_use]
    pub fn time_factor(&self) -> f32 {
        (1.0 - self.time_decay * self.elapsed).max(0.0)
    }

    /// The axis-aligned box `(min, max)` around the radius (the broad phase of
    /// [`ForceManager::force_at`]).
    #[must_use]
    pub fn bounds(&self) -> (Vec2, Vec2) {
        (self.position - self.radius, self.position + self.radius)
    }

    /// The force this field exerts on a unit at `pos` (see the type's docs for the formula).
    /// Zero outside the radius (and on its edge), for a NaN `pos`, and at the exact centre of
    /// an explosion, attractor or vortex. Always finite.
    #[must_use]
    pub fn force_at(&self, pos: Vec2) -> Vec2 {
        let offset = pos - self.position;
        let d2 = offset.length_squared();
        // A NaN (or overflowed) distance counts as out of range.
        if d2.is_nan() || d2 >= self.radius * self.radius {
            return Vec2::ZERO;
        }
        let d = d2.sqrt();
        let magnitude =
            self.strength * powi_exact(1.0 - d / self.radius, self.falloff) * self.time_factor();
        let direction = match self.kind {
            ForceKind::Push { direction } => direction,
            _ if d == 0.0 => return Vec2::ZERO,
            ForceKind::Explosion => offset / d,
            ForceKind::Attractor => -offset / d,
            ForceKind::Vortex { clockwise: true } => offset.perp() / d,
            ForceKind::Vortex { clockwise: false } => -offset.perp() / d,
        };
        direction * magnitude
    }
}

/// `base^exponent` by repeated squaring: only multiplications, so bit-identical everywhere
/// (unlike `powf`/`powi`, whose precision is unspecified). `base` is in `0..=1` here.
fn powi_exact(mut base: f32, mut exponent: u32) -> f32 {
    let mut result = 1.0;
    while exponent > 0 {
        if exponent & 1 == 1 {
            result *= base;
        }
        base *= base;
        exponent >>= 1;
    }
    result
}

/// `v` scaled to length 1, or `None` for a zero or non-finite vector. Divides by the largest
/// component first so that huge and tiny vectors normalise too.
fn unit_direction(v: Vec2) -> Option<Vec2> {
    if !v.is_finite() {
        return None;
    }
    let largest = v.x.abs().max(v.y.abs());
    if largest == 0.0 {
        return None;
    }
    let scaled = v / largest;
    Some(scaled / scaled.length())
}

/// Names a field held by a [`ForceManager`]. Ids grow with every [`ForceManager::add`] and
/// are never reused, so an id stays valid (or dangles harmlessly) after other fields go.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ForceFieldId(u64);

impl ForceFieldId {
    /// The id as a number (the count of fields added before this one).
    #[must_use]
    pub const fn get(self) -> u64 {
        self.0
    }
}

/// One field held by the manager, with its broad-phase box.
#[derive(Clone, Copy, Debug)]
struct Entry {
    id: ForceFieldId,
    field: ForceField,
    /// `false` from [`ForceManager::add`] until the next [`ForceManager::advance`].
    live: bool,
    min: Vec2,
    max: Vec2,
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
    entries: Vec<Entry>,
    next_id: u64,
    /// Union of the live fields' boxes, `None` when no field is live.
    live_bounds: Option<(Vec2, Vec2)>,
    /// The live fields by area, so a unit tests only the fields near it.
    index: FieldIndex,
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
struct FieldIndex {
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
    fields: Vec<Listed>,
}

/// A field listed in a cell of the [`FieldIndex`]: its entry index and its box.
#[derive(Clone, Copy, Debug, Default)]
struct Listed {
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
fn inside(pos: Vec2, min: Vec2, max: Vec2) -> bool {
    pos.x >= min.x && pos.x <= max.x && pos.y >= min.y && pos.y <= max.y
}

/// `x` if it is finite and positive, else `0.0`.
fn finite_non_negative(x: f32) -> f32 {
    if x.is_finite() && x > 0.0 { x } else { 0.0 }
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

/// A knock-back parameter that is NaN, infinite or negative.
#[derive(Clone, Copy, Debug, PartialEq, thiserror::Error)]
#[error("knock-back parameter {name} = {value} must be finite, >= 0 and <= {max}")]
pub struct KnockbackParamsError {
    /// Name of the field of [`KnockbackParams`].
    pub name: &'static str,
    /// Its value.
    pub value: f32,
    /// The largest value allowed.
    pub max: f32,
}

/// How force turns into external velocity and stun ([`apply_impulse`]) and how both wear off
/// ([`decay_external`]). Every value must be finite and `>= 0` ([`KnockbackParams::validate`]);
/// the functions read an invalid value as `0.0` rather than fail.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct KnockbackParams {
    /// Largest external speed, world units per second. Default `20.0`.
    pub max_external_speed: f32,
    /// A hit whose speed change `|force| * dt / mass` (world units per second, before
    /// clamping) exceeds this stuns the unit. Default `4.0`.
    pub stun_threshold: f32,
    /// Seconds of stun per world unit per second of speed change above
    /// [`stun_threshold`](Self::stun_threshold). Default `0.1`.
    pub stun_per_impulse: f32,
    /// Longest stun one hit gives, seconds. Default `2.0`.
    pub max_stun: f32,
    /// Drag on normal terrain, per second (see [`decay_external`]). Default `4.0`.
    pub drag: f32,
    /// Drag on slippery terrain (snow), per second. Default `1.0`.
    pub slippery_drag: f32,
    /// External speeds below this (world units per second) snap to exactly zero.
    /// Default `0.05`.
    pub snap_speed: f32,
}

impl Default for KnockbackParams {
    fn default() -> Self {
        Self {
            max_external_speed: 20.0,
            stun_threshold: 4.0,
            stun_per_impulse: 0.1,
            max_stun: 2.0,
            drag: 4.0,
            slippery_drag: 1.0,
            snap_speed: 0.05,
        }
    }
}

impl KnockbackParams {
    /// `Ok` when every value is finite and `>= 0`, else the first bad one.
    pub fn validate(&self) -> Result<(), KnockbackParamsError> {
        // Upper bounds: speeds past MAX_SPEED cross the map in a frame, and stun or drag
        // beyond them are no longer numbers a game means.
        let values = [
            (
                "max_external_speed",
                self.max_external_speed,
                crate::MAX_SPEED,
            ),
            ("stun_threshold", self.stun_threshold, crate::MAX_SPEED),
            ("stun_per_impulse", self.stun_per_impulse, 1.0e6),
            ("max_stun", self.max_stun, 1.0e6),
            ("drag", self.drag, 1.0e6),
            ("slippery_drag", self.slippery_drag, 1.0e6),
            ("snap_speed", self.snap_speed, crate::MAX_SPEED),
        ];
        for (name, value, max) in values {
            if !(value.is_finite() && (0.0..=max).contains(&value)) {
                return Err(KnockbackParamsError { name, value, max });
            }
        }
        Ok(())
    }

    /// The same parameters with another [`max_external_speed`](Self::max_external_speed).
    #[must_use]
    pub const fn with_max_external_speed(mut self, speed: f32) -> Self {
        self.max_external_speed = speed;
        self
    }

    /// The same parameters with another stun rule: threshold, seconds per unit above it, cap.
    #[must_use]
    pub const fn with_stun(mut self, threshold: f32, per_impulse: f32, max_stun: f32) -> Self {
        self.stun_threshold = threshold;
        self.stun_per_impulse = per_impulse;
        self.max_stun = max_stun;
        self
    }

    /// The same parameters with other drags (normal and slippery terrain, per second).
    #[must_use]
    pub const fn with_drag(mut self, drag: f32, slippery_drag: f32) -> Self {
        self.drag = drag;
        self.slippery_drag = slippery_drag;
        self
    }

    /// The same parameters with another [`snap_speed`](Self::snap_speed).
    #[must_use]
    pub const fn with_snap_speed(mut self, speed: f32) -> Self {
        self.snap_speed = speed;
        self
    }
}

/// Applies one frame of `force` to a unit of `mass` with external velocity
/// `external_velocity` and `stun` seconds of stun left; returns the new external velocity and
/// stun (step 1 and 2 of the article's per-unit rules; the force stage calls this, then
/// [`decay_external`]).
///
/// ```text
/// dv    = force * dt / mass                       (the hit's speed change)
/// v     = external_velocity + dv, scaled down to length max_external_speed if longer
/// hit   = min(max_stun, stun_per_impulse * (|dv| - stun_threshold))   if |dv| > stun_threshold
///         0                                                           otherwise
/// stun' = max(stun, hit)                          (hits do not stack)
/// ```
///
/// So the same force moves and stuns a light unit more than a heavy one. The arithmetic runs
/// in `f64`, so any finite input gives a finite result. Inputs outside their domain are read
/// leniently instead of failing: a non-finite `external_velocity` or `force` as zero, a NaN,
/// negative or infinite `dt` or `stun` as `0`, a mass that is NaN or `<= 0` as the lightest
/// positive `f32` (an infinite mass does not move).
#[must_use]
pub fn apply_impulse(
    external_velocity: Vec2,
    stun: f32,
    force: Vec2,
    mass: f32,
    dt: f32,
    params: &KnockbackParams,
) -> (Vec2, f32) {
    let external = finite_or_zero(external_velocity);
    let force = finite_or_zero(force);
    let stun = finite_non_negative(stun);
    let mass = if mass > 0.0 {
        f64::from(mass)
    } else {
        f64::from(f32::MIN_POSITIVE)
    };
    // At most f32::MAX / f32::MIN_POSITIVE ~ 3e76 and the force at most 3.4e38: dv < 1e116,
    // squares < 1e232, all well inside f64.
    let scale = f64::from(finite_non_negative(dt)) / mass;
    let (dx, dy) = (f64::from(force.x) * scale, f64::from(force.y) * scale);
    let dv = (dx * dx + dy * dy).sqrt();
    let (mut vx, mut vy) = (f64::from(external.x) + dx, f64::from(external.y) + dy);
    let speed = (vx * vx + vy * vy).sqrt();
    let max_speed = f64::from(finite_non_negative(params.max_external_speed));
    if speed > max_speed {
        let k = max_speed / speed;
        vx *= k;
        vy *= k;
    }
    let threshold = f64::from(finite_non_negative(params.stun_threshold));
    let hit = if dv > threshold {
        let per = f64::from(finite_non_negative(params.stun_per_impulse));
        (per * (dv - threshold)).min(f64::from(finite_non_negative(params.max_stun)))
    } else {
        0.0
    };
    (Vec2::new(vx as f32, vy as f32), stun.max(hit as f32))
}

/// One frame of drag and stun countdown (step 3 of the article's per-unit rules):
///
/// ```text
/// drag  = slippery ? slippery_drag : drag
/// v     = external_velocity / (1 + drag * dt)     (implicit Euler: never overshoots, any dt)
/// v     = 0 exactly if |v| < snap_speed
/// stun' = max(0, stun - dt)
/// ```
///
/// `slippery` is the terrain under the unit ([`TerrainProps::slippery`](crate::TerrainProps)).
/// `1 / (1 + drag * dt)` follows `exp(-drag * dt)` closely for small steps without calling
/// `exp`. Inputs are read as in [`apply_impulse`]; the result is always finite.
#[must_use]
#[inline]
pub fn decay_external(
    external_velocity: Vec2,
    stun: f32,
    slippery: bool,
    dt: f32,
    params: &KnockbackParams,
) -> (Vec2, f32) {
    let external = finite_or_zero(external_velocity);
    let dt = finite_non_negative(dt);
    let drag = if slippery {
        params.slippery_drag
    } else {
        params.drag
    };
    let v = external * drag_factor(drag, dt);
    let (x, y) = (f64::from(v.x), f64::from(v.y));
    let snap = f64::from(finite_non_negative(params.snap_speed));
    let v = if x * x + y * y < snap * snap {
        Vec2::ZERO
    } else {
        v
    };
    (v, (finite_non_negative(stun) - dt).max(0.0))
}

/// How much of an external velocity one frame of `drag` keeps in [`decay_external`]. Read as
/// there: a drag or time step that is not a finite number >= 0 counts as 0.
#[inline]
fn drag_factor(drag: f32, dt: f32) -> f32 {
    // drag * dt may overflow to inf: the factor is then 0.
    1.0 / (1.0 + finite_non_negative(drag) * finite_non_negative(dt))
}

/// A speed below which [`decay_external`] ends an external velocity at exactly zero this
/// frame on any terrain, whatever shortened it first: the snap speed over the factor of the
/// least drag, less a margin for rounding. A stage may skip work that only shortens such a
/// velocity (walls, bodies) and set it to zero.
#[must_use]
pub fn always_snaps_below(dt: f32, params: &KnockbackParams) -> f32 {
    let slowest = drag_factor(params.drag.min(params.slippery_drag), dt);
    finite_non_negative(params.snap_speed) * 0.999 / slowest
}

/// `v` if both coordinates are finite, else zero.
fn finite_or_zero(v: Vec2) -> Vec2 {
    if v.is_finite() { v } else { Vec2::ZERO }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Below `always_snaps_below`, drag ends a velocity at zero on either terrain, for any
    /// direction and any shortening of it.
    #[test]
    fn velocities_below_the_snap_bound_always_end_at_rest() {
        let params = KnockbackParams::default();
        for dt in [1.0 / 60.0, 1.0 / 30.0, 0.5] {
            let below = always_snaps_below(dt, &params);
            assert!(below > 0.0, "{below}");
            for i in 0..64 {
                let angle = i as f32 * 0.1;
                let v = Vec2::new(angle.cos(), angle.sin()) * below * (1.0 - 1e-6);
                for shortened in [v, v * 0.5, Vec2::new(v.x, 0.0)] {
                    for slippery in [false, true] {
                        let (after, _) = decay_external(shortened, 0.0, slippery, dt, &params);
                        assert_eq!(after, Vec2::ZERO, "dt {dt}, {shortened}, {slippery}");
                    }
                }
            }
        }
    }

    /// The force without the index: every live field, in insertion order.
    fn force_over_every_field(m: &ForceManager, pos: Vec2, controllable: bool) -> Vec2 {
        let mut total = Vec2::ZERO;
        for e in &m.entries {
            if e.live && e.field.affects(controllable) && inside(pos, e.min, e.max) {
                total += e.field.force_at(pos);
            }
        }
        total
    }

    proptest::proptest! {
        /// The index changes which fields are looked at, never the force: bit for bit the
        /// sum over every live field, through adds, removals (pending fields too) and
        /// expiries.
        #[test]
        fn the_index_gives_the_force_of_every_field(
            fields in proptest::collection::vec(
                (0.0f32..300.0, 0.0f32..300.0, 0.5f32..60.0, 0u8..4, 0u8..3, proptest::bool::ANY),
                1..60,
            ),
            removals in proptest::collection::vec(0usize..80, 0..10),
            probes in proptest::collection::vec((-20.0f32..320.0, -20.0f32..320.0), 50),
        ) {
            let mut m = ForceManager::new();
            let mut ids = Vec::new();
            for (round, chunk) in fields.chunks(7).enumerate() {
                for &(x, y, radius, kind, life, hits_players) in chunk {
                    let kind = match kind {
                        0 => ForceKind::Explosion,
                        1 => ForceKind::Attractor,
                        2 => ForceKind::Vortex { clockwise: true },
                        _ => ForceKind::Push { direction: Vec2::new(0.6, -0.8) },
                    };
                    let field = ForceField::new(Vec2::new(x, y), kind, radius, 50.0)
                        .unwrap()
                        .with_duration(f32::from(life) * 0.05)
                        .unwrap()
                        .with_affects_controllable(hits_players);
                    ids.push(m.add(field));
                }
                if let Some(&r) = removals.get(round) {
                    // Pending or live, whichever `r` names.
                    let id = ids[r % ids.len()];
                    m.remove(id);
                }
                if round % 2 == 0 {
                    m.advance(0.05);
                }
                for &(x, y) in &probes {
                    let pos = Vec2::new(x, y);
                    for controllable in [false, true] {
                        let expected = force_over_every_field(&m, pos, controllable);
                        let got = m.force_at(pos, controllable);
                        proptest::prop_assert_eq!(got.x.to_bits(), expected.x.to_bits());
                        proptest::prop_assert_eq!(got.y.to_bits(), expected.y.to_bits());
                    }
                }
            }
        }
    }

    const DT: f32 = 1.0 / 60.0;

    fn field(kind: ForceKind) -> ForceField {
        ForceField::new(Vec2::new(2.0, 3.0), kind, 5.0, 100.0).unwrap()
    }

    fn close(a: Vec2, b: Vec2) -> bool {
        (a - b).length() <= 1e-4 * (1.0 + a.length().max(b.length()))
    }

    fn live(fields: &[ForceField]) -> ForceManager {
        let mut m = ForceManager::new();
        for &f in fields {
            m.add(f.with_duration(1.0).unwrap());
        }
        m.advance(DT);
        m
    }

    #[test]
    fn superposition_sums_each_field() {
        let a = field(ForceKind::Explosion);
        let b = ForceField::new(Vec2::new(4.0, 1.0), ForceKind::Attractor, 6.0, 70.0)
            .unwrap()
            .with_falloff(2);
        let c = field(ForceKind::Vortex { clockwise: false });
        let both = live(&[a, b, c]);
        for i in 0..50 {
            let p = Vec2::new(i as f32 * 0.21 - 1.0, 6.0 - i as f32 * 0.17);
            let sum = live(&[a]).force_at(p, false)
                + live(&[b]).force_at(p, false)
                + live(&[c]).force_at(p, false);
            assert_eq!(both.force_at(p, false), sum, "at {p}");
            assert_eq!(sum, a.force_at(p) + b.force_at(p) + c.force_at(p));
        }
    }

    #[test]
    fn falloff_decreases_with_distance() {
        for falloff in [0, 1, 2, 3, 7] {
            let f = field(ForceKind::Explosion).with_falloff(falloff);
            let mut last = f32::INFINITY;
            for i in 1..=60 {
                let d = i as f32 * 0.1;
                let m = f.force_at(f.position() + Vec2::new(d, 0.0)).length();
                assert!(m <= last, "falloff {falloff} at {d}: {m} > {last}");
                if falloff > 0 && d < 5.0 {
                    assert!(m < last, "falloff {falloff} at {d} not strictly decreasing");
                }
                last = m;
            }
        }
        let linear = field(ForceKind::Explosion);
        let half = linear.force_at(linear.position() + Vec2::new(2.5, 0.0));
        assert!(close(half, Vec2::new(50.0, 0.0)), "{half}");
        let quad = linear.with_falloff(2);
        let quarter = quad.force_at(quad.position() + Vec2::new(0.0, -2.5));
        assert!(close(quarter, Vec2::new(0.0, -25.0)), "{quarter}");
    }

    #[test]
    fn outside_the_radius_is_zero() {
        for kind in [
            ForceKind::Explosion,
            ForceKind::Attractor,
            ForceKind::Push { direction: Vec2::X },
            ForceKind::Vortex { clockwise: true },
        ] {
            let f = field(kind).with_falloff(0);
            let c = f.position();
            assert_eq!(f.force_at(c + Vec2::new(5.0, 0.0)), Vec2::ZERO);
            assert_eq!(f.force_at(c + Vec2::new(4.0, 3.01)), Vec2::ZERO);
            assert_eq!(f.force_at(c + Vec2::new(-1e30, 1e30)), Vec2::ZERO);
            assert_eq!(f.force_at(Vec2::new(f32::MAX, -f32::MAX)), Vec2::ZERO);
            assert_eq!(f.force_at(Vec2::NAN), Vec2::ZERO);
            assert_eq!(f.force_at(Vec2::new(f32::INFINITY, 0.0)), Vec2::ZERO);
            assert_ne!(f.force_at(c + Vec2::new(4.9, 0.0)), Vec2::ZERO);
            let m = live(&[f]);
            assert_eq!(m.force_at(c + Vec2::new(0.0, 5.5), false), Vec2::ZERO);
            assert_eq!(m.force_at(Vec2::NAN, false), Vec2::ZERO);
        }
    }

    #[test]
    fn explosion_pushes_outward_and_light_units_further() {
        let f = field(ForceKind::Explosion);
        let force = f.force_at(f.position() + Vec2::new(1.0, 1.0));
        assert!(force.x > 0.0 && force.y > 0.0 && (force.x - force.y).abs() < 1e-4);
        let params = KnockbackParams::default().with_max_external_speed(1e6);
        let (light, light_stun) = apply_impulse(Vec2::ZERO, 0.0, force, 1.0, DT, &params);
        let (heavy, heavy_stun) = apply_impulse(Vec2::ZERO, 0.0, force, 5.0, DT, &params);
        assert!(light.length() > heavy.length());
        assert!(close(light, heavy * 5.0));
        assert!(light_stun >= heavy_stun);
        assert_eq!(
            f.force_at(f.position()),
            Vec2::ZERO,
            "no direction at the centre"
        );
    }

    #[test]
    fn attractor_points_inward() {
        let f = field(ForceKind::Attractor);
        for offset in [
            Vec2::new(1.0, 0.0),
            Vec2::new(-2.0, 3.0),
            Vec2::new(0.5, -0.5),
        ] {
            let force = f.force_at(f.position() + offset);
            assert!(force.dot(offset) < 0.0);
            assert!(force.perp_dot(offset).abs() < 1e-3 * force.length());
        }
        assert_eq!(f.force_at(f.position()), Vec2::ZERO);
    }

    #[test]
    fn vortex_is_tangential() {
        for clockwise in [true, false] {
            let f = field(ForceKind::Vortex { clockwise });
            for offset in [
                Vec2::new(1.0, 0.0),
                Vec2::new(-2.0, 3.0),
                Vec2::new(0.3, -4.0),
            ] {
                let force = f.force_at(f.position() + offset);
                assert!(force.length() > 0.0);
                assert!(force.dot(offset).abs() < 1e-4 * force.length() * offset.length());
            }
            // Right of the centre, clockwise on screen (+y down) pushes toward +y.
            let right = f.force_at(f.position() + Vec2::X);
            assert_eq!(right.y > 0.0, clockwise);
            assert_eq!(f.force_at(f.position()), Vec2::ZERO);
        }
    }

    #[test]
    fn push_follows_its_direction() {
        let f = field(ForceKind::Push {
            direction: Vec2::new(3.0, -4.0),
        });
        assert_eq!(
            f.kind(),
            ForceKind::Push {
                direction: Vec2::new(0.6, -0.8)
            }
        );
        for offset in [Vec2::ZERO, Vec2::new(1.0, 2.0), Vec2::new(-3.0, 0.5)] {
            let force = f.force_at(f.position() + offset);
            assert!(force.length() > 0.0);
            assert!(close(force.normalize(), Vec2::new(0.6, -0.8)));
        }
        assert!(close(f.force_at(f.position()), Vec2::new(60.0, -80.0)));
        let huge = ForceField::new(
            Vec2::ZERO,
            ForceKind::Push {
                direction: Vec2::new(f32::MAX, f32::MAX),
            },
            1.0,
            1.0,
        )
        .unwrap();
        let ForceKind::Push { direction } = huge.kind() else {
            unreachable!()
        };
        assert!(close(
            direction,
            Vec2::splat(std::f32::consts::FRAC_1_SQRT_2)
        ));
    }

    #[test]
    fn impulses_last_one_frame_and_timed_fields_expire() {
        let mut m = ForceManager::new();
        let p = Vec2::new(3.0, 3.0);
        let impulse = m.add(field(ForceKind::Explosion));
        let timed = m.add(field(ForceKind::Attractor).with_duration(0.1).unwrap());
        assert_eq!(
            m.force_at(p, false),
            Vec2::ZERO,
            "pending fields do not act"
        );
        assert!(!m.is_live(impulse));
        let mut frames = [0u32; 2];
        for _ in 0..20 {
            m.advance(0.025);
            let forces = [
                m.get(impulse).map(|f| f.force_at(p)),
                m.get(timed).map(|f| f.force_at(p)),
            ];
            for (count, force) in frames.iter_mut().zip(forces) {
                if let Some(force) = force {
                    assert_ne!(force, Vec2::ZERO);
                    *count += 1;
                }
            }
        }
        // 0.1 s at 0.025 s a frame: elapsed 0, .025, .05, .075 (float sums may add one).
        assert_eq!(frames[0], 1);
        assert!((4..=5).contains(&frames[1]), "{frames:?}");
        assert!(m.is_empty());
        assert!(m.get(timed).is_none() && m.remove(timed).is_none());

        // An impulse lasts one frame even when time stands still.
        let id = m.add(field(ForceKind::Explosion));
        m.advance(0.0);
        assert!(m.is_live(id));
        m.advance(f32::NAN);
        assert!(m.get(id).is_none());
        // A forever field stays until removed; ids are not reused.
        let forever = m.add(
            field(ForceKind::Attractor)
                .with_duration(ForceField::FOREVER)
                .unwrap(),
        );
        assert!(forever > id);
        for _ in 0..100 {
            m.advance(1e6);
        }
        assert_ne!(m.force_at(p, true), Vec2::ZERO);
        assert!(m.remove(forever).is_some());
        assert_eq!(m.force_at(p, true), Vec2::ZERO);
    }

    #[test]
    fn time_decay_fades_linearly() {
        let mut m = ForceManager::new();
        let id = m.add(
            field(ForceKind::Explosion)
                .with_duration(10.0)
                .unwrap()
                .with_time_decay(0.5)
                .unwrap(),
        );
        let p = Vec2::new(3.0, 3.0);
        m.advance(1.0);
        let full = m.force_at(p, false);
        m.advance(1.0);
        assert!(close(m.force_at(p, false), full * 0.5));
        m.advance(1.0);
        assert_eq!(m.force_at(p, false), Vec2::ZERO);
        assert_eq!(m.get(id).unwrap().time_factor(), 0.0);
    }

    #[test]
    fn controllable_units_skip_fields_that_spare_them() {
        let spare = field(ForceKind::Explosion).with_affects_controllable(false);
        let hit = field(ForceKind::Attractor);
        let m = live(&[spare, hit]);
        let p = Vec2::new(3.0, 3.5);
        assert_eq!(m.force_at(p, true), hit.force_at(p));
        assert_eq!(m.force_at(p, false), spare.force_at(p) + hit.force_at(p));
        assert!(!spare.affects(true) && spare.affects(false) && hit.affects(true));
    }

    /// `apply_knockback` skips units at rest on the strength of this: decaying `(+0, +0)` gives
    /// `(+0, +0)` bit for bit, whatever the settings.
    #[test]
    fn decay_keeps_a_unit_at_rest_exactly() {
        for (drag, snap) in [(4.0, 0.05), (0.0, 0.0), (f32::MAX, 0.0), (1.0, 1e30)] {
            let params = KnockbackParams {
                drag,
                slippery_drag: drag,
                snap_speed: snap,
                ..KnockbackParams::default()
            };
            for dt in [0.0, DT, 1.0, f32::MAX] {
                for slippery in [false, true] {
                    let (v, s) = decay_external(Vec2::ZERO, 0.0, slippery, dt, &params);
                    assert_eq!((v.x.to_bits(), v.y.to_bits(), s.to_bits()), (0, 0, 0));
                }
            }
        }
    }

    #[test]
    fn decay_reaches_exactly_zero_and_stun_counts_down() {
        let params = KnockbackParams::default();
        let (mut v, mut stun) = (Vec2::new(15.0, -7.0), 1.0);
        let mut frames = 0;
        while v != Vec2::ZERO {
            let (nv, ns) = decay_external(v, stun, false, DT, &params);
            assert!(nv.length() < v.length());
            assert!(ns <= stun && ns >= 0.0);
            (v, stun) = (nv, ns);
            frames += 1;
            assert!(frames < 10_000, "never reached zero");
        }
        assert_eq!(stun, 0.0);
        assert_eq!(v, Vec2::ZERO);
        let (_, s) = decay_external(Vec2::ZERO, 0.5, false, 0.2, &params);
        assert!((s - 0.3).abs() < 1e-6);
        let (_, s) = decay_external(Vec2::ZERO, 0.1, false, 0.2, &params);
        assert_eq!(s, 0.0);
    }

    #[test]
    fn slippery_terrain_decays_slower() {
        let params = KnockbackParams::default();
        let v = Vec2::new(10.0, 0.0);
        let (normal, _) = decay_external(v, 0.0, false, DT, &params);
        let (slippery, _) = decay_external(v, 0.0, true, DT, &params);
        assert!(slippery.x > normal.x && normal.x < v.x);
        assert!(close(normal, v / (1.0 + 4.0 * DT)));
    }

    #[test]
    fn impulse_clamps_speed_and_stuns_big_hits() {
        let params = KnockbackParams::default();
        // dv = 120 * 0.05 / 1 = 6: above the threshold 4 by 2 -> 0.2 s, speed under the cap.
        let (v, stun) = apply_impulse(Vec2::ZERO, 0.0, Vec2::new(120.0, 0.0), 1.0, 0.05, &params);
        assert!(close(v, Vec2::new(6.0, 0.0)));
        assert!((stun - 0.2).abs() < 1e-5, "{stun}");
        // A small push neither stuns nor shortens a running stun.
        let (_, stun) = apply_impulse(v, 0.7, Vec2::new(1.0, 0.0), 1.0, 0.05, &params);
        assert_eq!(stun, 0.7);
        // A huge one is capped in speed and stun.
        let (v, stun) = apply_impulse(Vec2::ZERO, 0.0, Vec2::new(0.0, -1e6), 1.0, 0.05, &params);
        assert!(close(v, Vec2::new(0.0, -20.0)));
        assert_eq!(stun, 2.0);
    }

    #[test]
    fn extreme_inputs_stay_finite() {
        let values = [
            0.0,
            -0.0,
            f32::MIN_POSITIVE,
            1e-30,
            1.0,
            1e30,
            f32::MAX,
            -f32::MAX,
            -1.0,
        ];
        let weird = [f32::NAN, f32::INFINITY, f32::NEG_INFINITY];
        let params = [
            KnockbackParams::default(),
            KnockbackParams::default()
                .with_max_external_speed(f32::MAX)
                .with_stun(0.0, f32::MAX, f32::MAX)
                .with_drag(f32::MAX, 0.0)
                .with_snap_speed(f32::MAX),
            KnockbackParams::default().with_drag(f32::NAN, f32::INFINITY),
        ];
        for p in &params {
            for &a in values.iter().chain(&weird) {
                for &b in &values {
                    let v = Vec2::new(a, b);
                    for &s in values.iter().chain(&weird) {
                        let (e, st) = apply_impulse(v, s, Vec2::new(b, a), s, a, p);
                        assert!(e.is_finite() && st.is_finite() && st >= 0.0, "{v} {s}");
                        for slippery in [false, true] {
                            let (e, st) = decay_external(v, s, slippery, b, p);
                            assert!(e.is_finite() && st.is_finite() && st >= 0.0, "{v} {s}");
                        }
                    }
                }
            }
        }
        let f = ForceField::new(
            Vec2::ZERO,
            ForceKind::Explosion,
            f32::MAX,
            ForceField::MAX_STRENGTH,
        )
        .unwrap()
        .with_falloff(u32::MAX);
        for &a in &values {
            for &b in &values {
                assert!(f.force_at(Vec2::new(a, b)).is_finite());
            }
        }
    }

    #[test]
    fn bad_parameters_are_errors() {
        let k = ForceKind::Explosion;
        let o = Vec2::ZERO;
        assert!(matches!(
            ForceField::new(Vec2::new(f32::NAN, 0.0), k, 1.0, 1.0),
            Err(ForceFieldError::BadPosition(_))
        ));
        assert!(matches!(
            ForceField::new(Vec2::new(0.0, f32::INFINITY), k, 1.0, 1.0),
            Err(ForceFieldError::BadPosition(_))
        ));
        for r in [0.0, -1.0, f32::NAN, f32::INFINITY] {
            assert!(matches!(
                ForceField::new(o, k, r, 1.0),
                Err(ForceFieldError::BadRadius(_))
            ));
        }
        for s in [-1.0, f32::NAN, f32::INFINITY, 2e9] {
            assert!(matches!(
                ForceField::new(o, k, 1.0, s),
                Err(ForceFieldError::BadStrength(_))
            ));
        }
        for d in [Vec2::ZERO, Vec2::NAN, Vec2::new(f32::INFINITY, 1.0)] {
            assert!(matches!(
                ForceField::new(o, ForceKind::Push { direction: d }, 1.0, 1.0),
                Err(ForceFieldError::BadDirection(_))
            ));
        }
        let f = ForceField::new(o, k, 1.0, 1.0).unwrap();
        assert_eq!(
            f.with_duration(-1.0),
            Err(ForceFieldError::BadDuration(-1.0))
        );
        assert!(f.with_duration(f32::NAN).is_err());
        assert_eq!(
            f.with_time_decay(-0.5),
            Err(ForceFieldError::BadTimeDecay(-0.5))
        );
        assert!(f.with_time_decay(f32::INFINITY).is_err());
        assert!(KnockbackParams::default().validate().is_ok());
        // A restored counter with no room left is refused: ids never wrap.
        assert!(ForceManager::restore([], u64::MAX).is_err());
        assert!(ForceManager::restore([], ForceManager::MAX_NEXT_ID).is_ok());
        assert_eq!(
            KnockbackParams::default().with_drag(1.0, -2.0).validate(),
            Err(KnockbackParamsError {
                name: "slippery_drag",
                value: -2.0,
                max: 1.0e6
            })
        );
        // Finite but past its bound: the error names the bound.
        let fast = KnockbackParams::default().with_max_external_speed(3e38);
        assert_eq!(fast.validate().map_err(|e| e.max), Err(crate::MAX_SPEED));
        assert!(
            KnockbackParams::default()
                .with_max_external_speed(f32::NAN)
                .validate()
                .is_err()
        );
    }
}

#[cfg(test)]
mod index_cost {
    use super::*;

    /// The index holds at most four entries a field whatever the fields' sizes (a field as
    /// wide as the live bounds used to be listed in all 4,096 cells), and advancing fields
    /// that neither start nor end keeps it as it is.
    #[test]
    fn the_index_grows_with_the_fields_not_their_area() {
        let mut m = ForceManager::new();
        for i in 0..2_000u16 {
            let position = Vec2::new(f32::from(i % 50), f32::from(i / 50));
            let radius = if i % 2 == 0 { 500.0 } else { 0.7 };
            let field = ForceField::new(position, ForceKind::Attractor, radius, 1.0)
                .and_then(|f| f.with_duration(ForceField::FOREVER))
                .unwrap();
            m.add(field);
        }
        m.advance(0.1);
        assert!(
            m.index.fields.len() <= 4 * m.len(),
            "{}",
            m.index.fields.len()
        );
        let built = m.index.fields.as_ptr();
        m.advance(0.1);
        assert_eq!(m.index.fields.as_ptr(), built, "not rebuilt");
        // Still every field: the force equals the sum over every field, bit for bit.
        for p in [
            Vec2::new(3.3, 7.1),
            Vec2::new(49.0, 39.5),
            Vec2::new(-100.0, 20.0),
        ] {
            let every = m
                .entries
                .iter()
                .filter(|e| e.live)
                .fold(Vec2::ZERO, |t, e| t + e.field.force_at(p));
            assert_eq!(m.force_at(p, false), every);
        }
    }
}
