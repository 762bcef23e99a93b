//! [`BodyStats`]: how solid the crowd's bodies are at one moment (docs/behaviour.md, "Bodies and
//! crowds"), measured the same way by `horde run`, the tests and the benches.

use glam::Vec2;
use hecs::World;
use horde_core::{Agent, Map, Position, SpatialGrid, WALL_TOLERANCE, wall_depth};

/// Overlap between units and between units and walls, over every unit of a world.
///
/// A *touching pair* is two units whose discs overlap (`distance < r_a + r_b`). Its
/// *overlap* is the penetration `r_a + r_b - distance` as a fraction of the pair's mean
/// radius (0 just touching, 2 for two equal units on one point). A unit's *wall depth* is how
/// far its disc reaches into cells its layer cannot enter, as a fraction of its radius (at
/// least 1 when its centre is in one).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct BodyStats {
    /// Units measured (quarantined units are not).
    pub units: usize,
    /// Touching pairs.
    pub touching_pairs: u64,
    /// Sum of the touching pairs' overlaps.
    pub overlap_sum: f64,
    /// The largest overlap of a pair (0 with no pair).
    pub overlap_max: f32,
    /// The deepest wall depth of a unit (0 when no disc reaches a wall).
    pub wall_depth_max: f32,
    /// Units whose wall depth exceeds [`WALL_TOLERANCE`].
    pub in_walls: usize,
}

impl BodyStats {
    /// Mean overlap of the touching pairs (0 with no pair).
    #[must_use]
    pub fn overlap_mean(&self) -> f64 {
        if self.touching_pairs == 0 {
            0.0
        } else {
            self.overlap_sum / self.touching_pairs as f64
        }
    }

    /// Measures every unit of `world` on `map`; `pair` is called with each touching pair's
    /// overlap (for percentiles).
    pub fn measure(world: &World, map: &Map, mut pair: impl FnMut(f32)) -> Self {
        let mut query = world.query::<(&Position, &Agent)>();
        let units: Vec<(Vec2, f32, horde_core::Layer)> = query
            .iter()
            .filter(|(p, _)| p.0.is_finite())
            .map(|(p, a)| (p.0, a.radius, a.layer))
            .collect();
        drop(query);
        let mut stats = Self {
            units: units.len(),
            ..Self::default()
        };
        let grid = map.grid();
        for &(pos, radius, layer) in &units {
            let depth = wall_depth(map.cost_field(layer), grid, pos, radius);
            stats.wall_depth_max = stats.wall_depth_max.max(depth);
            stats.in_walls += usize::from(depth > WALL_TOLERANCE);
        }
        let Some(max_radius) = units.iter().map(|u| u.1).reduce(f32::max) else {
            return stats;
        };
        let Ok(mut buckets) = SpatialGrid::new(grid, (2.0 * max_radius).max(0.5)) else {
            return stats;
        };
        let positions: Vec<Vec2> = units.iter().map(|u| u.0).collect();
        if buckets.rebuild(&positions).is_err() {
            return stats;
        }
        for (i, &(a, ra, _)) in units.iter().enumerate() {
            buckets.for_each_neighbour(a, 2.0 * max_radius, |j| {
                let j = j as usize;
                if j <= i {
                    return;
                }
                let (b, rb, _) = units[j];
                let touch = ra + rb;
                let d = a.distance(b);
                if d < touch {
                    let overlap = (touch - d) / (0.5 * touch);
                    stats.touching_pairs += 1;
                    stats.overlap_sum += f64::from(overlap);
                    stats.overlap_max = stats.overlap_max.max(overlap);
                    pair(overlap);
                }
            });
        }
        stats
    }
}
