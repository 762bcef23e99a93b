//! The per-unit knock-back rules: a unit's total force into external velocity and stun
//! ([`apply_impulse`]), drag and the stun's count-down ([`decay_external`]).

use glam::Vec2;

use super::finite_non_negative;
use crate::config::KnockbackParams;

impl KnockbackParams {
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
