//! The frame benchmark's scenario (`horde_fixtures::BenchLevel` on the clustered level), as
//! the criterion benches call it.

use horde::Simulation;
use horde_fixtures::BenchLevel;
pub use horde_fixtures::Crowd;

/// The plain benchmark: `units` units spread over the 1024x1024 clustered level, one goal
/// near the middle, 8 long-lived force fields, after the first frame.
#[allow(dead_code)] // each bench target that includes this file uses part of it
pub fn scenario(units: usize, threads: usize) -> Simulation {
    scenario_with(units, threads, Crowd::default())
}

/// [`scenario`] with the crowd made as `crowd` says.
#[allow(dead_code)] // each bench target that includes this file uses part of it
pub fn scenario_with(units: usize, threads: usize, crowd: Crowd) -> Simulation {
    BenchLevel::clustered()
        .expect("the clustered level generates")
        .simulation(units, threads, &crowd)
        .expect("the benchmark crowd spawns")
}
