//! The levels and crowds the tables share: the frame benchmark's
//! ([`horde_fixtures::BenchLevel`], one definition with the criterion benches), on the
//! generated clustered-obstacle level or on a Moving AI map.

use std::path::{Path, PathBuf};

use horde::Simulation;
use horde::formats::load_map;
use horde_fixtures::Crowd;
pub use horde_fixtures::{BENCH_DT as DT, BenchLevel as Level, Layout};

use crate::AppError;

/// The radius of the benchmark crowd's units (the criterion benches' [`Crowd`]'s), which the
/// ORCA peer's agents get too.
pub fn radius() -> f32 {
    Crowd::default().radius
}

/// The benchmark crowd on `level`: `units` units of the [`radius`] placed by `layout`, heading
/// for the goal, and (with `forces`) the 8 long-lived force fields, after the first frame.
pub fn simulation(
    level: &Level,
    layout: Layout,
    units: usize,
    threads: usize,
    forces: bool,
) -> Result<Simulation, AppError> {
    let crowd = Crowd {
        layout,
        force_fields: if forces { 8 } else { 0 },
        ..Crowd::default()
    };
    level
        .simulation(units, threads, &crowd)
        .map_err(|e| AppError::Failed(e.to_string()))
}

/// The criterion frame benchmark's level: 1024x1024, clustered obstacles.
pub fn clustered() -> Result<Level, AppError> {
    Level::clustered().map_err(|e| AppError::Failed(e.to_string()))
}

/// A generated level of `tiles`x`tiles` tiles of 4x4 cells.
pub fn generated(seed: u64, tiles: u32) -> Result<Level, AppError> {
    Level::generated(seed, tiles).map_err(|e| AppError::Failed(e.to_string()))
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
    Level::new("Cauldron.map", map)
}
