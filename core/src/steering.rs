//! Steering maths (docs/behaviour.md, "Steering"; article 004 steps 1-7): ray probes against the
//! cost grid, the 120-degree fan, wall sliding, separation, blending and bounded turning.
//!
//! Pure functions of one unit and what it sees; the steering stage calls them for every unit.
//! Angles go through `libm` rather than the platform's maths library so results are the same
//! on every machine (lockstep), and nothing here uses fused multiply-add.

use glam::Vec2;

use crate::config::SteeringConfig;
use crate::cost_field::CostField;
use crate::grid::Grid;
use crate::terrain::WALL;

/// The largest [`SteeringConfig::separation_range`]: with [`crate::MAX_RADIUS`] it keeps a
/// unit's reach (`2 * radius * separation_range`), and the neighbour buckets sized by it,
/// finite.
pub const MAX_SEPARATION_RANGE: f32 = 1000.0;

/// Where a ray met a wall.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RayHit {
    /// Distance from the ray's origin (world units).
    pub distance: f32,
    /// Unit normal of the wall face that was hit, pointing back toward the ray.
    pub normal: Vec2,
}

/// `x.floor() as i64` without a call into the maths library (targets without SSE4.1 have no
/// rounding instruction, and `floorf` showed up in profiles). NaN gives 0; values beyond
/// the `i64` range saturate.
#[must_use]
pub fn floor(x: f32) -> i64 {
    let t = x as i64;
    if (t as f32) > x {
        t.saturating_sub(1)
    } else {
        t
    }
}

/// Casts a ray from `origin` along unit vector `dir` for `length` world units through the
/// cells of `cost` (a grid walk, Amanatides-Woo). Returns the first wall cell's face hit, or
/// `None` when the ray stays in passable cells. Leaving the map counts as hitting a wall.
#[must_use]
pub fn cast_ray(
    cost: &CostField,
    grid: &Grid,
    origin: Vec2,
    dir: Vec2,
    length: f32,
) -> Option<RayHit> {
    let size = grid.cell_size();
    let local = (origin - grid.origin()) / size;
    let (mut cx, mut cy) = (floor(local.x), floor(local.y));
    if cost.get_or_wall(cx, cy) == WALL {
        return Some(RayHit {
            distance: 0.0,
            normal: -dir,
        });
    }
    let max_t = length / size;
    let step_x: i64 = if dir.x > 0.0 { 1 } else { -1 };
    let step_y: i64 = if dir.y > 0.0 { 1 } else { -1 };
    let delta_x = if dir.x != 0.0 {
        (1.0 / dir.x).abs()
    } else {
        f32::INFINITY
    };
    let delta_y = if dir.y != 0.0 {
        (1.0 / dir.y).abs()
    } else {
        f32::INFINITY
    };
    let next_x = if dir.x > 0.0 {
        cx as f32 + 1.0 - local.x
    } else {
        local.x - cx as f32
    };
    let next_y = if dir.y > 0.0 {
        cy as f32 + 1.0 - local.y
    } else {
        local.y - cy as f32
    };
    let mut t_x = if dir.x != 0.0 {
        next_x * delta_x
    } else {
        f32::INFINITY
    };
    let mut t_y = if dir.y != 0.0 {
        next_y * delta_y
    } else {
        f32::INFINITY
    };
    loop {
        let (t, normal) = if t_x < t_y {
            cx += step_x;
            let t = t_x;
            t_x += delta_x;
            (t, Vec2::new(-step_x as f32, 0.0))
        } else {
            cy += step_y;
            let t = t_y;
            t_y += delta_y;
            (t, Vec2::new(0.0, -step_y as f32))
        };
        if t > max_t {
            return None;
        }
        if cost.get_or_wall(cx, cy) == WALL {
            return Some(RayHit {
                distance: t * size,
                normal,
            });
        }
    }
}

/// The three-ray probe of step 2: one ray from the centre and one from each edge point
/// (`radius * probe_inflate` to the sides), each `radius + probe_length` long. Returns the
/// nearest hit.
#[must_use]
pub fn probe(
    cost: &CostField,
    grid: &Grid,
    pos: Vec2,
    dir: Vec2,
    radius: f32,
    config: &SteeringConfig,
) -> Option<RayHit> {
    let side = dir.perp() * (radius * config.probe_inflate);
    let length = radius + config.probe_length;
    let centre = cast_ray(cost, grid, pos, dir, length);
    // An edge point inside a wall (a unit hugging it, or in a corridor narrower than the
    // inflated body) says nothing about the way ahead: only rays starting in open cells count.
    let edges = [pos + side, pos - side].into_iter().filter_map(|o| {
        let local = (o - grid.origin()) / grid.cell_size();
        if cost.get_or_wall(floor(local.x), floor(local.y)) == WALL {
            None
        } else {
            cast_ray(cost, grid, o, dir, length)
        }
    });
    centre
        .into_iter()
        .chain(edges)
        .min_by(|a, b| a.distance.total_cmp(&b.distance))
}

/// Rotates `v` by `angle` radians (positive = from `+x` toward `+y`).
#[must_use]
pub fn rotate(v: Vec2, angle: f32) -> Vec2 {
    let (s, c) = (libm::sinf(angle), libm::cosf(angle));
    Vec2::new(v.x * c - v.y * s, v.x * s + v.y * c)
}

/// The fan's rotations (sine and cosine of `k * fan_step` for `k = 1..=fan_steps`), computed
/// once from a [`SteeringConfig`] rather than per unit.
#[derive(Clone, Debug, PartialEq)]
pub struct Fan {
    config: SteeringConfig,
    steps: Vec<(f32, f32)>,
}

impl Fan {
    /// The fan of `config`.
    #[must_use]
    pub fn new(config: &SteeringConfig) -> Self {
        let steps = (1..=config.fan_steps)
            .map(|k| {
                let a = k as f32 * config.fan_step;
                (libm::sinf(a), libm::cosf(a))
            })
            .collect();
        Self {
            config: *config,
            steps,
        }
    }

    /// The configuration the fan was made from.
    #[must_use]
    pub fn config(&self) -> &SteeringConfig {
        &self.config
    }
}

/// Steps 2-4: keeps `ideal` when the probe is clear; otherwise tries the fan at
/// `fan_step` increments, alternating sides and starting on `side` (the remembered one),
/// and takes the first clear direction; when the whole fan is blocked, slides along the
/// wall (drops the part of `ideal` that goes into the nearest hit's normal), or keeps
/// `ideal` when it hits the wall head-on. Returns the direction and the side to remember.
#[must_use]
pub fn avoid_walls(
    cost: &CostField,
    grid: &Grid,
    pos: Vec2,
    ideal: Vec2,
    radius: f32,
    side: i8,
    fan: &Fan,
) -> (Vec2, i8) {
    let config = &fan.config;
    let Some(hit) = probe(cost, grid, pos, ideal, radius, config) else {
        return (ideal, side);
    };
    let first = if side < 0 { -1i8 } else { 1 };
    for &(sin, cos) in &fan.steps {
        for s in [first, -first] {
            let sin = f32::from(s) * sin;
            let dir = Vec2::new(ideal.x * cos - ideal.y * sin, ideal.x * sin + ideal.y * cos);
            if probe(cost, grid, pos, dir, radius, config).is_none() {
                return (dir, s);
            }
        }
    }
    // Slide: drop the part of `ideal` that goes into the wall. Head-on there is nothing
    // left to slide along; then keep the flow direction, which is a legal path through the
    // cells, and let the collision step keep the centre out of the wall.
    let into_wall = ideal.dot(hit.normal).min(0.0);
    let along = ideal - hit.normal * into_wall;
    // Nearly head-on, what is left along the wall is rounding, not a direction: normalised
    // it would send the unit sideways into whatever is there (seen: a unit pressed for ever
    // into the wall beside a one-cell gap it was heading through).
    let slide = if along.length_squared() > HEAD_ON * HEAD_ON * ideal.length_squared() {
        along.normalize_or(ideal)
    } else {
        ideal
    };
    (slide, first)
}

/// A wall slide keeps the way itself when less than this share of it runs along the wall
/// ([`avoid_walls`]): the hit is head-on.
const HEAD_ON: f32 = 0.2;

/// Cells (Chebyshev) around a unit's own within which [`lane_near`] looks for a one-cell
/// lane ahead of it.
pub const LANE_REACH: i64 = 2;

/// The cosine of the largest angle between a unit's way and a lane cell it enters next
/// ([`lane_near`]): 60 degrees. A lane beside the unit, across its way, is not on it (a
/// unit leaving a dead-end alcove sideways took the alcove's mouth for the lane ahead and
/// gave way to the units inside, which were waiting for it to leave: four units blocked
/// for good).
const LANE_AHEAD_COS: f32 = 0.5;

/// A one-cell lane near a unit ([`lane_near`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Lane {
    /// Where the unit aims: the lane cell's centre, or inside the lane the next cell's
    /// along it.
    pub aim: Vec2,
    /// Whether the unit already stands in the lane.
    pub inside: bool,
}

/// Whether `(x, y)` is a *lane* cell of `cost`: open, with walls on both sides along an
/// axis, such as a door in a wall one cell thick or a corridor one cell wide (for a size
/// class's costs: a gap just wide enough for its bodies). Returns the axis the lane runs
/// along, `(1, 0)` or `(0, 1)`.
fn lane_axis(cost: &CostField, x: i64, y: i64) -> Option<(i64, i64)> {
    let wall = |x: i64, y: i64| cost.get_or_wall(x, y) == WALL;
    if wall(x, y) {
        None
    } else if wall(x, y - 1) && wall(x, y + 1) {
        Some((1, 0))
    } else if wall(x - 1, y) && wall(x + 1, y) {
        Some((0, 1))
    } else {
        None
    }
}

/// The one-cell lane a unit at `pos` bound along `way` enters next, if one is within
/// [`LANE_REACH`] cells: its own cell, or else the nearest lane cell ahead of it (the
/// offset to it within 60 degrees of `way`, `LANE_AHEAD_COS`) that it sees (no wall on
/// the straight line between the cells).
///
/// A body as wide as a lane fits it only on its centre line, so a unit aims there instead
/// of along its field: at the lane cell's centre, or, standing in the lane, at the centre of
/// the next cell along it (docs/behaviour.md, "Steering").
#[must_use]
pub fn lane_near(cost: &CostField, grid: &Grid, pos: Vec2, way: Vec2) -> Option<Lane> {
    let cell = grid.cell_at(pos)?;
    if way == Vec2::ZERO || !way.is_finite() {
        return None;
    }
    let (x, y) = (i64::from(cell.x), i64::from(cell.y));
    let centre = |x: i64, y: i64| grid.cell_centre(crate::Cell::new(x as u32, y as u32));
    if let Some((ax, ay)) = lane_axis(cost, x, y) {
        // Along the lane, in the direction of the way.
        let forward = if (ax as f32) * way.x + (ay as f32) * way.y >= 0.0 {
            1
        } else {
            -1
        };
        let (nx, ny) = (x + ax * forward, y + ay * forward);
        if cost.get_or_wall(nx, ny) == WALL {
            return None;
        }
        return Some(Lane {
            aim: centre(nx, ny),
            inside: true,
        });
    }
    let mut best: Option<(f32, Vec2)> = None;
    for cy in y - LANE_REACH..=y + LANE_REACH {
        for cx in x - LANE_REACH..=x + LANE_REACH {
            if lane_axis(cost, cx, cy).is_none() {
                continue;
            }
            let c = centre(cx, cy);
            let to = c - pos;
            let d = to.length_squared();
            // Only a lane it sees: not one beyond a wall beside it.
            let seen =
                || crate::segment_is_clear(cost, cell, crate::Cell::new(cx as u32, cy as u32));
            let ahead = to.dot(way) > LANE_AHEAD_COS * d.sqrt() * way.length();
            if ahead && best.is_none_or(|(b, _)| d < b) && seen() {
                best = Some((d, c));
            }
        }
    }
    best.map(|(_, aim)| Lane { aim, inside: false })
}

/// Step 5 for one neighbour: the push on a unit from a neighbour at offset `away` (from the
/// neighbour to the unit) of length `d`, where `touch` is the sum of their radii. It points
/// along `away`; its strength grows linearly from 0 at `touch * separation_range` to 1 where
/// the bodies touch, and keeps growing as they overlap (toward `range / (range - touch)` as
/// the centres meet), so overlapping bodies push much harder than merely close ones.
///
/// The caller tests the range first (`away.length_squared() < range * range`, no square
/// root outside it) and passes `d = away.length()` with `d > 1e-6`: two units on the same
/// spot have no direction apart, and the caller picks one (the frame's `steer_units` uses
/// a direction fixed per unit). This is the frame's own computation, bit for bit.
#[must_use]
#[inline]
pub fn separation_push(away: Vec2, d: f32, touch: f32, config: &SteeringConfig) -> Vec2 {
    let range = touch * config.separation_range;
    // The strength, divided by `d` to make `away` a unit vector.
    let ramp = touch * (config.separation_range - 1.0).max(0.05);
    away * ((range - d) / (ramp * d))
}

/// The largest turn of one frame, with its sine and cosine computed once (every unit with
/// the same turn rate shares one).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TurnLimit {
    angle: f32,
    sin: f32,
    cos: f32,
}

impl TurnLimit {
    /// A limit of `angle` radians (negative or NaN counts as 0).
    #[must_use]
    pub fn new(angle: f32) -> Self {
        let angle = if angle > 0.0 { angle } else { 0.0 };
        Self {
            angle,
            sin: libm::sinf(angle),
            cos: libm::cosf(angle),
        }
    }

    /// The angle in radians.
    #[must_use]
    pub fn angle(&self) -> f32 {
        self.angle
    }
}

/// Step 6: blends the avoidance direction and the separation push, turns `heading` toward
/// the result by at most `limit`, then adds `jitter` radians (a small angle:
/// `|jitter| <= 0.1`). Returns the new unit heading (unchanged when there is nowhere to go).
#[must_use]
#[inline]
pub fn blend_and_turn(
    heading: Vec2,
    avoid: Vec2,
    separation: Vec2,
    limit: &TurnLimit,
    jitter: f32,
    config: &SteeringConfig,
) -> Vec2 {
    let desired = avoid * config.avoid_weight + separation * config.separation_weight;
    let Some(desired) = desired.try_normalize() else {
        return heading;
    };
    let turned = if heading == Vec2::ZERO {
        desired
    } else {
        let (sin_max, cos_max) = (limit.sin, limit.cos);
        if limit.angle >= std::f32::consts::PI || heading.dot(desired) >= cos_max {
            desired
        } else {
            // Turn by exactly `max_turn` toward the side `desired` lies on.
            let s = if heading.perp_dot(desired) >= 0.0 {
                sin_max
            } else {
                -sin_max
            };
            Vec2::new(
                heading.x * cos_max - heading.y * s,
                heading.x * s + heading.y * cos_max,
            )
        }
    };
    // Small-angle rotation by Taylor terms (error below a^5/120 = 1e-7 for |a| <= 0.1): plain
    // arithmetic, so it costs nothing and is the same everywhere.
    let a2 = jitter * jitter;
    let (s, c) = (jitter * (1.0 - a2 / 6.0), 1.0 - a2 * (0.5 - a2 / 24.0));
    let h = Vec2::new(turned.x * c - turned.y * s, turned.x * s + turned.y * c);
    // `h` is a unit vector up to rounding: one Newton step for 1/|h| keeps it there without
    // the square root and division of a full normalisation (this function is on the hot path).
    h * (1.5 - 0.5 * h.length_squared())
}

/// A deterministic number in `[-1, 1)` from (seed, unit, frame): the per-unit randomness
/// (docs/behaviour.md, "Determinism"), the same on every thread count and machine.
#[must_use]
#[inline]
pub fn unit_noise(seed: u64, unit: u32, frame: u64) -> f32 {
    // SplitMix64 finaliser over the three inputs.
    let mut z = seed
        ^ (u64::from(unit).wrapping_mul(0x9E37_79B9_7F4A_7C15))
        ^ frame.wrapping_mul(0xD1B5_4A32_D192_ED03);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    ((z >> 40) as f32 / (1u64 << 23) as f32) - 1.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grid::Cell;

    #[test]
    fn separation_range_is_refused_above_its_limit() {
        let with = |separation_range| {
            let mut c = crate::SimConfig::default();
            c.steering.separation_range = separation_range;
            c
        };
        assert_eq!(with(MAX_SEPARATION_RANGE).validate(), Ok(()));
        for bad in [MAX_SEPARATION_RANGE * 1.01, 1e30, f32::INFINITY, 0.0, -1.0] {
            let err = with(bad).validate().expect_err("out of range");
            assert_eq!(err.name, "separation_range", "{bad}");
            // The message names the limit the check uses.
            assert!(
                err.expected.contains(&MAX_SEPARATION_RANGE.to_string()),
                "{err:?}"
            );
        }
    }

    #[test]
    fn floor_matches_the_library_and_saturates() {
        for x in [-2.5f32, -2.0, -0.5, -0.0, 0.0, 0.5, 1.0, 7.99, -1e-7, 3e9] {
            assert_eq!(floor(x), x.floor() as i64, "{x}");
        }
        // Found by the snapshot fuzz run: this used to overflow.
        assert_eq!(floor(-1e30), i64::MIN);
        assert_eq!(floor(1e30), i64::MAX);
        assert_eq!(floor(f32::NAN), 0);
    }

    fn walled(rows: &[&str]) -> (Grid, CostField) {
        let grid = Grid::new(rows[0].len() as u32, rows.len() as u32).unwrap();
        let costs: Vec<u8> = rows
            .iter()
            .flat_map(|r| r.bytes().map(|b| if b == b'#' { WALL } else { 1 }))
            .collect();
        (grid, CostField::from_costs(&grid, &costs).unwrap())
    }

    #[test]
    fn rays_hit_the_first_wall_face() {
        let (grid, cost) = walled(&["......", "....#.", "......"]);
        let hit = cast_ray(&cost, &grid, Vec2::new(0.5, 1.5), Vec2::X, 10.0).unwrap();
        assert!((hit.distance - 3.5).abs() < 1e-5);
        assert_eq!(hit.normal, Vec2::new(-1.0, 0.0));
        assert!(cast_ray(&cost, &grid, Vec2::new(0.5, 1.5), Vec2::X, 3.0).is_none());
        // Leaving the map is a wall too.
        let up = cast_ray(&cost, &grid, Vec2::new(0.5, 1.5), -Vec2::Y, 5.0).unwrap();
        assert!((up.distance - 1.5).abs() < 1e-5);
        assert_eq!(up.normal, Vec2::Y);
        assert!(
            cast_ray(&cost, &grid, Vec2::new(4.5, 1.5), Vec2::X, 1.0)
                .unwrap()
                .distance
                == 0.0
        );
        let _ = Cell::new(0, 0);
    }

    #[test]
    fn fan_turns_to_the_remembered_side_first_and_slides_when_boxed_in() {
        let (grid, cost) = walled(&[
            "..........",
            "..........",
            "......#...",
            "......#...",
            "......#...",
            "..........",
            "..........",
        ]);
        let config = SteeringConfig::default();
        let fan = Fan::new(&config);
        let pos = Vec2::new(4.5, 3.5);
        let (dir, side) = avoid_walls(&cost, &grid, pos, Vec2::X, 0.3, 1, &fan);
        assert_eq!(side, 1);
        assert!(dir.y > 0.0, "turned toward +y first: {dir}");
        let (dir, side) = avoid_walls(&cost, &grid, pos, Vec2::X, 0.3, -1, &fan);
        assert_eq!(side, -1);
        assert!(dir.y < 0.0);
        // Clear way ahead: unchanged.
        let (dir, _) = avoid_walls(&cost, &grid, Vec2::new(1.5, 0.5), Vec2::X, 0.3, 1, &fan);
        assert_eq!(dir, Vec2::X);
        // In a dead-end pocket the fan is blocked: slide along the wall.
        let (grid, cost) = walled(&["#####", "#...#", "#.#.#"]);
        let (dir, _) = avoid_walls(
            &cost,
            &grid,
            Vec2::new(2.5, 1.5),
            Vec2::new(0.6, -0.8),
            0.4,
            1,
            &fan,
        );
        assert!(dir.y.abs() < 1e-6 && dir.x > 0.99, "{dir}");
    }

    #[test]
    fn separation_and_turning() {
        let c = SteeringConfig::default();
        // Unit radii 0.5: touching at 1, out of range at 1.2.
        let p = separation_push(Vec2::new(-0.5, 0.0), 0.5, 1.0, &c);
        assert!(p.x < 0.0 && p.y == 0.0);
        let edge = separation_push(Vec2::new(-1.2, 0.0), 1.2, 1.0, &c);
        assert_eq!(edge, Vec2::ZERO);
        let touching = separation_push(Vec2::new(-1.0, 0.0), 1.0, 1.0, &c);
        assert!((touching.x + 1.0).abs() < 1e-5, "{touching}");
        let close = separation_push(Vec2::new(0.0, 1e-3), 1e-3, 1.0, &c);
        assert!((close - Vec2::Y * 6.0).length() < 1e-2, "{close}");
        // The turn is bounded.
        let h = blend_and_turn(Vec2::X, Vec2::Y, Vec2::ZERO, &TurnLimit::new(0.1), 0.0, &c);
        assert!((libm::atan2f(h.y, h.x) - 0.1).abs() < 1e-5);
        let h = blend_and_turn(Vec2::X, -Vec2::Y, Vec2::ZERO, &TurnLimit::new(0.1), 0.0, &c);
        assert!((libm::atan2f(h.y, h.x) + 0.1).abs() < 1e-5);
        let j = blend_and_turn(Vec2::X, Vec2::X, Vec2::ZERO, &TurnLimit::new(0.1), 0.05, &c);
        assert!((libm::atan2f(j.y, j.x) - 0.05).abs() < 1e-5);
        for x in [-2.5f32, -2.0, -0.1, 0.0, 0.3, 7.0, 1e6] {
            assert_eq!(floor(x), x.floor() as i64);
        }
        let h = blend_and_turn(Vec2::X, Vec2::Y, Vec2::ZERO, &TurnLimit::new(4.0), 0.0, &c);
        assert!((h - Vec2::Y).length() < 1e-5);
        assert_eq!(
            blend_and_turn(
                Vec2::X,
                Vec2::ZERO,
                Vec2::ZERO,
                &TurnLimit::new(1.0),
                0.0,
                &c
            ),
            Vec2::X
        );
    }

    #[test]
    fn noise_is_deterministic_and_spread() {
        let a: Vec<f32> = (0..1000).map(|u| unit_noise(7, u, 3)).collect();
        let b: Vec<f32> = (0..1000).map(|u| unit_noise(7, u, 3)).collect();
        assert_eq!(a, b);
        assert!(a.iter().all(|v| (-1.0..1.0).contains(v)));
        let mean = a.iter().sum::<f32>() / 1000.0;
        assert!(mean.abs() < 0.1);
        assert_ne!(unit_noise(7, 1, 3), unit_noise(7, 1, 4));
    }

    #[test]
    fn a_lane_is_aimed_at_only_where_the_unit_sees_it() {
        // A wall along x = 10 with a one-cell door at (10, 5).
        let grid = Grid::new(20, 11).unwrap();
        let mut cost = CostField::filled(&grid, 1);
        for y in 0..11 {
            if y != 5 {
                cost.set(crate::Cell::new(10, y), WALL);
            }
        }
        let centre = |x: u32, y: u32| grid.cell_centre(crate::Cell::new(x, y));
        // Approaching the door from the west, off its centre line: aim at its centre.
        let lane = lane_near(&cost, &grid, Vec2::new(8.5, 4.2), Vec2::X).unwrap();
        assert_eq!(
            lane,
            Lane {
                aim: centre(10, 5),
                inside: false
            }
        );
        // In the door: aim at the next cell along it, the way the unit goes.
        let lane = lane_near(&cost, &grid, centre(10, 5), Vec2::X).unwrap();
        assert_eq!(
            lane,
            Lane {
                aim: centre(11, 5),
                inside: true
            }
        );
        // Bound away from it (behind the unit): none.
        assert!(lane_near(&cost, &grid, Vec2::new(8.5, 5.5), -Vec2::X).is_none());
        // Beside the wall on the far side of another wall piece: not through the wall.
        let mut walled = cost.clone();
        walled.set(crate::Cell::new(9, 4), WALL);
        walled.set(crate::Cell::new(9, 5), WALL);
        walled.set(crate::Cell::new(9, 6), WALL);
        assert!(lane_near(&walled, &grid, Vec2::new(8.5, 5.5), Vec2::X).is_none());
    }

    #[test]
    fn a_head_on_slide_keeps_the_way() {
        // A unit heading straight at a wall ahead, with a tiny sideways part: the slide does
        // not turn the rounding into a sideways direction.
        let grid = Grid::new(10, 10).unwrap();
        let mut cost = CostField::filled(&grid, 1);
        cost.set(crate::Cell::new(5, 3), WALL);
        let way = Vec2::new(-0.001, -1.0).normalize();
        let config = SteeringConfig {
            fan_steps: 0,
            ..SteeringConfig::default()
        };
        let (dir, _) = avoid_walls(
            &cost,
            &grid,
            Vec2::new(5.5, 4.5),
            way,
            0.5,
            1,
            &Fan::new(&config),
        );
        assert!(dir.dot(way) > 0.99, "{dir}");
    }
}
