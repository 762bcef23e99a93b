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

#[cfg(test)]
mod index_cost;
mod knockback;
mod manager;
#[cfg(test)]
mod tests;

pub use knockback::{always_snaps_below, apply_impulse, decay_external};
pub use manager::{ForceManager, ForceRestoreError};

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

/// `x` if it is finite and positive, else `0.0`.
fn finite_non_negative(x: f32) -> f32 {
    if x.is_finite() && x > 0.0 { x } else { 0.0 }
}
