//! The frame benchmark's level and crowd, one definition for the criterion benches, the
//! examples and `horde bench`: a map with its open cells and a goal near its middle
//! ([`BenchLevel`], by default the generated 1024x1024 level of clustered obstacles), and a
//! crowd on it ([`Crowd`]: units of radius 0.45 spread over the open cells, or packed one per
//! cell, heading for the goal, with 8 long-lived force fields). The first frame (the field
//! build) runs before the simulation is handed over.

use glam::Vec2;
use horde_core::{
    Cell, ForceField, ForceFieldError, ForceKind, GoalSet, Layer, LevelConfig, LevelError,
    MAX_SIZE_CLASSES, Map, UnitSpec, WALL, generate_level,
};
use rand_core::{RngCore, SeedableRng};
use rand_pcg::Pcg64;

use crate::{SimConfig, SimError, Simulation};

/// Why a benchmark level or crowd could not be made.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BenchError {
    /// The level generator refused the settings.
    #[error(transparent)]
    Level(#[from] LevelError),
    /// The map has no open ground cell.
    #[error("the level has no open cell")]
    NoOpenCell,
    /// The simulation refused a setting, a group or a unit.
    #[error(transparent)]
    Sim(#[from] SimError),
    /// A force field was refused.
    #[error(transparent)]
    Force(#[from] ForceFieldError),
}

/// Seconds per frame of the frame benchmark.
pub const BENCH_DT: f32 = 1.0 / 60.0;

/// How a crowd is placed on a level.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// Every k-th open cell, over the whole map: at benchmark sizes units rarely meet.
    Spread,
    /// One unit per open cell, the first open cells row by row: a packed army that meets
    /// its neighbours from the first frame.
    Dense,
}

impl Layout {
    /// `spread` or `dense`.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Spread => "spread",
            Self::Dense => "dense",
        }
    }
}

/// How the crowd is made beyond its size (`Crowd::default()` is the plain benchmark).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Crowd {
    /// Where the units stand.
    pub layout: Layout,
    /// Spawn the units in a random order rather than row by row, as units arriving in waves
    /// all over the map would be: the first frame then finds the storage scattered and
    /// sorts it.
    pub shuffled: bool,
    /// Make the unit in the middle of the crowd a giant of radius 3.
    pub giant: bool,
    /// Long-lived force fields: 8 at fixed places (the default), any more spread over the
    /// map, as in a battle with many explosions at once.
    pub force_fields: usize,
    /// Radius of every unit (but the giant and the first); default 0.45.
    pub radius: f32,
    /// Radius of the first unit spawned, when it differs (`None`: `radius`): the first unit
    /// sizes the neighbour buckets until the frame finds them unfit for the crowd.
    pub first: Option<f32>,
    /// Groups, each with its own goal (the first near the middle, the others spread over the
    /// map); units take turns joining them, so every neighbourhood mixes all groups.
    pub groups: usize,
    /// Radius of every other unit, when it differs (`None`: `radius`): a crowd mixing two
    /// sizes, so, where their size classes differ, two fields per group.
    pub mixed: Option<f32>,
    /// The simulation's size classes ([`SimConfig::size_classes`]; default 4).
    pub size_classes: u8,
}

impl Default for Crowd {
    fn default() -> Self {
        Self {
            layout: Layout::Spread,
            shuffled: false,
            giant: false,
            force_fields: 8,
            radius: 0.45,
            first: None,
            groups: 1,
            mixed: None,
            size_classes: MAX_SIZE_CLASSES,
        }
    }
}

/// A map with its open ground cells and a goal near its middle.
#[derive(Clone, Debug)]
pub struct BenchLevel {
    /// Shown in reports.
    pub name: String,
    /// The map.
    pub map: Map,
    /// Every open ground cell, row-major.
    pub open: Vec<Cell>,
    /// The open cell nearest the middle (Manhattan distance, first in row-major order).
    pub goal: Cell,
}

impl BenchLevel {
    /// Wraps `map`; `None` when it has no open ground cell.
    #[must_use]
    pub fn new(name: impl Into<String>, map: Map) -> Option<Self> {
        let cost = map.cost_field(Layer::Ground);
        let open: Vec<Cell> = (0..map.grid().len())
            .map(|i| map.grid().cell(i))
            .filter(|&c| cost.get(c) != WALL)
            .collect();
        let (cx, cy) = (i64::from(map.width() / 2), i64::from(map.height() / 2));
        let goal = *open
            .iter()
            .min_by_key(|c| (i64::from(c.x) - cx).abs() + (i64::from(c.y) - cy).abs())?;
        Some(Self {
            name: name.into(),
            map,
            open,
            goal,
        })
    }

    /// The frame benchmark's level: 1024x1024, clustered obstacles (256x256 tiles of 4x4
    /// cells), seed 21, every open cell reachable.
    ///
    /// # Errors
    /// None in practice (the generator's error, should its settings become invalid).
    pub fn clustered() -> Result<Self, BenchError> {
        Self::generated(21, 256)
    }

    /// A generated level of `tiles`x`tiles` tiles of 4x4 cells, every open cell reachable.
    ///
    /// # Errors
    /// The generator's refusal of the size.
    pub fn generated(seed: u64, tiles: u32) -> Result<Self, BenchError> {
        let config = LevelConfig::default()
            .with_size(tiles, tiles)
            .with_cells_per_tile(4)
            .with_guarantee_reachable(true);
        let map = generate_level(seed, &config)?.into_map();
        let side = tiles * 4;
        Self::new(format!("generated {side}x{side}"), map).ok_or(BenchError::NoOpenCell)
    }

    /// Start positions of `units` units at open cell centres, placed by `layout` (fewer when
    /// the map has fewer open cells).
    #[must_use]
    pub fn positions(&self, units: usize, layout: Layout) -> Vec<Vec2> {
        let step = match layout {
            Layout::Spread => (self.open.len() / units.max(1)).max(1),
            Layout::Dense => 1,
        };
        self.open
            .iter()
            .step_by(step)
            .take(units)
            .map(|c| Vec2::new(c.x as f32 + 0.5, c.y as f32 + 0.5))
            .collect()
    }

    /// `units` units made as `crowd` says, on `threads` threads, after their first frame.
    ///
    /// # Errors
    /// What the simulation refuses (0 threads, say), or a force field it cannot hold.
    pub fn simulation(
        &self,
        units: usize,
        threads: usize,
        crowd: &Crowd,
    ) -> Result<Simulation, BenchError> {
        let config =
            (SimConfig::default().with_threads(threads)).with_size_classes(crowd.size_classes);
        let mut sim = Simulation::new(self.map.clone(), config)?;
        let mut groups = vec![sim.add_group(GoalSet::single(self.goal))?];
        let mut rng = Pcg64::seed_from_u64(13);
        while groups.len() < crowd.groups {
            let other = self.open[(rng.next_u64() % self.open.len() as u64) as usize];
            groups.push(sim.add_group(GoalSet::single(other))?);
        }
        let mut positions = self.positions(units, crowd.layout);
        if crowd.shuffled {
            let mut rng = Pcg64::seed_from_u64(3);
            for i in (1..positions.len()).rev() {
                positions.swap(i, (rng.next_u64() % (i as u64 + 1)) as usize);
            }
        }
        let giant = positions.len() / 2;
        for (i, &pos) in positions.iter().enumerate() {
            let radius = match crowd.first {
                Some(first) if i == 0 => first,
                _ if crowd.giant && i == giant => 3.0,
                _ => match crowd.mixed {
                    Some(other) if i % 2 == 1 => other,
                    _ => crowd.radius,
                },
            };
            let group = groups[i % groups.len()];
            sim.spawn(UnitSpec::at(pos).with_radius(radius).with_group(group))?;
        }
        let kinds = [
            ForceKind::Explosion,
            ForceKind::Attractor,
            ForceKind::Vortex { clockwise: true },
            ForceKind::Push { direction: Vec2::X },
        ];
        // Places are given on a 1024-cell side and scaled to the map.
        let scale = self.map.width() as f32 / 1024.0;
        let mut rng = Pcg64::seed_from_u64(8);
        for i in 0..crowd.force_fields {
            let at = if i < 8 {
                Vec2::new(128.0 + 100.0 * i as f32, 200.0 + 80.0 * (i % 3) as f32)
            } else {
                let mut coordinate = || 12.0 + (rng.next_u32() % 1000) as f32;
                Vec2::new(coordinate(), coordinate())
            };
            let field = ForceField::new(at * scale, kinds[i % 4], 24.0, 30.0)
                .and_then(|f| f.with_duration(ForceField::FOREVER))?;
            sim.add_force(field);
        }
        sim.step(BENCH_DT)?;
        Ok(sim)
    }
}
