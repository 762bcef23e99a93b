//! The levels and crowds the tables share: the criterion frame benchmark's scenario
//! (`benches/common/frame_scenario.rs`) rebuilt on horde-core / horde-systems, on the
//! generated clustered-obstacle level or on a Moving AI map.

use std::path::{Path, PathBuf};

use glam::Vec2;
use horde_core::{
    Cell, ForceField, ForceKind, GoalSet, Layer, LevelConfig, Map, UnitSpec, WALL, generate_level,
    load_map,
};
use horde_systems::{SimConfig, Simulation};

use crate::AppError;

/// Seconds per frame, as in the criterion frame benchmark.
pub const DT: f32 = 1.0 / 60.0;
/// Unit radius, as in the criterion frame benchmark.
pub const RADIUS: f32 = 0.45;

/// How a crowd is placed on a level.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// Every k-th open cell, over the whole map (the criterion frame benchmark's layout):
    /// at these sizes units rarely meet.
    Spread,
    /// One unit per open cell, the first open cells row by row: a packed army that meets
    /// its neighbours from the first frame.
    Dense,
}

impl Layout {
    /// Shown in the tables.
    pub fn name(self) -> &'static str {
        match self {
            Self::Spread => "spread",
            Self::Dense => "dense",
        }
    }
}

/// A map with its open cells and a goal near its centre.
pub struct Level {
    /// Shown in the tables.
    pub name: String,
    /// The map.
    pub map: Map,
    /// Every open ground cell, row-major.
    pub open: Vec<Cell>,
    /// The open cell nearest the middle.
    pub goal: Cell,
}

impl Level {
    /// Wraps `map`: finds its open cells and the goal.
    pub fn new(name: impl Into<String>, map: Map) -> Result<Self, AppError> {
        let cost = map.cost_field(Layer::Ground);
        let open: Vec<Cell> = (0..map.grid().len())
            .map(|i| map.grid().cell(i))
            .filter(|&c| cost.get(c) != WALL)
            .collect();
        let (cx, cy) = (i64::from(map.width() / 2), i64::from(map.height() / 2));
        let goal = *open
            .iter()
            .min_by_key(|c| (i64::from(c.x) - cx).abs() + (i64::from(c.y) - cy).abs())
            .ok_or_else(|| AppError::Failed("the level has no open cell".into()))?;
        Ok(Self {
            name: name.into(),
            map,
            open,
            goal,
        })
    }

    /// Start positions of `units` units at open cell centres, placed by `layout` (fewer when
    /// the map has fewer open cells).
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

    /// The frame benchmark's crowd on this level: `units` units of radius 0.45 placed by
    /// `layout`, heading for the goal, and (with `forces`) the same 8 long-lived force fields.
    /// The first frame (field build) is run before returning.
    pub fn simulation(
        &self,
        layout: Layout,
        units: usize,
        threads: usize,
        forces: bool,
    ) -> Result<Simulation, AppError> {
        let failed = |e: horde_systems::SimError| AppError::Failed(e.to_string());
        let mut sim = Simulation::new(self.map.clone(), SimConfig::default().with_threads(threads))
            .map_err(failed)?;
        let group = sim.add_group(GoalSet::single(self.goal)).map_err(failed)?;
        for pos in self.positions(units, layout) {
            sim.spawn(UnitSpec::at(pos).with_radius(RADIUS).with_group(group))
                .map_err(failed)?;
        }
        if forces {
            let kinds = [
                ForceKind::Explosion,
                ForceKind::Attractor,
                ForceKind::Vortex { clockwise: true },
                ForceKind::Push { direction: Vec2::X },
            ];
            let scale = self.map.width() as f32 / 1024.0;
            for i in 0..8 {
                let at = Vec2::new(128.0 + 100.0 * i as f32, 200.0 + 80.0 * (i % 3) as f32);
                let field = ForceField::new(at * scale, kinds[i % 4], 24.0, 30.0)
                    .and_then(|f| f.with_duration(ForceField::FOREVER))
                    .map_err(|e| AppError::Failed(e.to_string()))?;
                sim.add_force(field);
            }
        }
        sim.step(DT).map_err(failed)?;
        Ok(sim)
    }
}

/// The criterion frame benchmark's level: 1024x1024, clustered obstacles (256x256 tiles of
/// 4x4 cells), seed 21, every open cell reachable.
pub fn clustered() -> Result<Level, AppError> {
    generated(21, 256)
}

/// A generated level of `tiles`x`tiles` tiles of 4x4 cells.
pub fn generated(seed: u64, tiles: u32) -> Result<Level, AppError> {
    let config = LevelConfig::default()
        .with_size(tiles, tiles)
        .with_cells_per_tile(4)
        .with_guarantee_reachable(true);
    let map = generate_level(seed, &config)
        .map_err(|e| AppError::Failed(e.to_string()))?
        .into_map();
    let side = tiles * 4;
    Level::new(format!("generated {side}x{side}"), map)
}

/// `../shared/data/movingai` next to the repository (found from where the app was built), or
/// relative to the working directory when that does not exist.
pub fn default_movingai_dir() -> PathBuf {
    let built = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/data/movingai");
    if built.is_dir() {
        built
    } else {
        PathBuf::from("../shared/data/movingai")
    }
}

/// `Cauldron.map` (1024x1024) from `dir`, or `None` when it cannot be read.
pub fn cauldron(dir: &Path) -> Option<Level> {
    let map = load_map(dir.join("Cauldron.map")).ok()?;
    Level::new("Cauldron.map", map).ok()
}
