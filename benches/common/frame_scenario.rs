//! The frame benchmark's scenario, shared by `benches/frame.rs` and
//! `examples/frame_stages.rs`.

use glam::Vec2;
use horde::{
    Cell, ForceField, ForceKind, GoalSet, Layer, SimConfig, Simulation, UnitSpec,
    fields::WALL,
    level::{LevelConfig, generate_level},
};
use rand_core::{RngCore, SeedableRng};
use rand_pcg::Pcg64;

/// How the scenario's crowd is made, beyond its size (`Crowd::default()` is the plain
/// scenario).
#[derive(Clone, Copy, Debug)]
#[allow(dead_code)] // each bench target that includes this file uses part of it
pub struct Crowd {
    /// Spawn the units in a random order rather than row by row, as units that arrive in
    /// waves all over the map would be: the first frame then finds the storage scattered
    /// and sorts it (`Horde::step`).
    pub shuffled: bool,
    /// Make the unit in the middle of the crowd a giant of radius 3 (the others have 0.45):
    /// one big unit must not slow everyone down.
    pub giant: bool,
    /// Long-lived force fields: 8 at fixed places (the default), any more spread over the
    /// map, as in a battle with many explosions at once.
    pub force_fields: usize,
    /// Radius of every unit (but the giant and the first).
    pub radius: f32,
    /// Radius of the first unit spawned, when it differs (`None`: `radius`). The first unit
    /// sizes the neighbour buckets until the frame finds them unfit for the crowd: a giant
    /// spawned first, or a small scout leading big units.
    pub first: Option<f32>,
    /// Groups, each with its own goal (spread over the map); units take turns joining them,
    /// so every neighbourhood mixes all groups.
    pub groups: usize,
}

impl Default for Crowd {
    fn default() -> Self {
        Self {
            shuffled: false,
            giant: false,
            force_fields: 8,
            radius: 0.45,
            first: None,
            groups: 1,
        }
    }
}

/// A 1024x1024 generated level, `units` units spread over its open cells (at most one per
/// cell, spawned row by row), a goal near the centre and 8 long-lived force fields.
#[allow(dead_code)] // each bench target that includes this file uses part of it
pub fn scenario(units: usize, threads: usize) -> Simulation {
    scenario_with(units, threads, Crowd::default())
}

/// [`scenario`] with the crowd made as `crowd` says.
#[allow(dead_code)] // each bench target that includes this file uses part of it
pub fn scenario_with(units: usize, threads: usize, crowd: Crowd) -> Simulation {
    let config = LevelConfig::default()
        .with_size(256, 256)
        .with_cells_per_tile(4)
        .with_guarantee_reachable(true);
    let map = generate_level(21, &config).unwrap().into_map();
    let cost = map.cost_field(Layer::Ground);
    let open: Vec<Cell> = (0..map.grid().len())
        .map(|i| map.grid().cell(i))
        .filter(|&c| cost.get(c) != WALL)
        .collect();
    let goal = *open
        .iter()
        .min_by_key(|c| (c.x as i64 - 512).abs() + (c.y as i64 - 512).abs())
        .unwrap();
    let mut sim = Simulation::new(map, SimConfig::default().with_threads(threads)).unwrap();
    let group = sim.add_group(GoalSet::single(goal)).unwrap();
    let mut groups = vec![group];
    let mut rng = Pcg64::seed_from_u64(13);
    while groups.len() < crowd.groups {
        let other = open[(rng.next_u64() % open.len() as u64) as usize];
        groups.push(sim.add_group(GoalSet::single(other)).unwrap());
    }
    // Every k-th open cell, so the units cover the whole map.
    let step = (open.len() / units).max(1);
    let mut cells: Vec<Cell> = open.iter().copied().step_by(step).take(units).collect();
    if crowd.shuffled {
        let mut rng = Pcg64::seed_from_u64(3);
        for i in (1..cells.len()).rev() {
            cells.swap(i, (rng.next_u64() % (i as u64 + 1)) as usize);
        }
    }
    let giant = cells.len() / 2;
    for (i, c) in cells.iter().enumerate() {
        let pos = Vec2::new(c.x as f32 + 0.5, c.y as f32 + 0.5);
        let radius = match crowd.first {
            Some(first) if i == 0 => first,
            _ if crowd.giant && i == giant => 3.0,
            _ => crowd.radius,
        };
        let group = groups[i % groups.len()];
        sim.spawn(UnitSpec::at(pos).with_radius(radius).with_group(group))
            .unwrap();
    }
    let kinds = [
        ForceKind::Explosion,
        ForceKind::Attractor,
        ForceKind::Vortex { clockwise: true },
        ForceKind::Push { direction: Vec2::X },
    ];
    let mut rng = Pcg64::seed_from_u64(8);
    for i in 0..crowd.force_fields {
        let at = if i < 8 {
            Vec2::new(128.0 + 100.0 * i as f32, 200.0 + 80.0 * (i % 3) as f32)
        } else {
            let mut coordinate = || 12.0 + (rng.next_u32() % 1000) as f32;
            Vec2::new(coordinate(), coordinate())
        };
        let field = ForceField::new(at, kinds[i % 4], 24.0, 30.0)
            .unwrap()
            .with_duration(ForceField::FOREVER)
            .unwrap();
        sim.add_force(field);
    }
    // Build the fields and settle the first frame outside the measurement.
    sim.step(1.0 / 60.0).unwrap();
    sim
}
