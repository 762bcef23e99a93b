//! [`Plan`]: a simulation ready to run, with the events that happen at given frames. Built
//! from the built-in demo or a scenario file; run by `horde run` and drawn by `horde render`.

use std::path::Path;

use horde_core::{Cell, ForceField, GoalSet, GroupId, Terrain};
use horde_systems::{SimError, Simulation};

use crate::AppError;
use crate::demo::{self, RunArgs};
use crate::scenario::{Overrides, load_scenario_with};

/// Something that happens at the start of a frame.
#[derive(Clone, Debug)]
pub enum Event {
    /// A force field appears.
    Force(ForceField),
    /// A group gets a new goal.
    Goal {
        /// The group.
        group: GroupId,
        /// Its new goal.
        goal: GoalSet,
    },
    /// Cells change terrain (a wall placed or destroyed).
    Terrain {
        /// The cells.
        cells: Vec<Cell>,
        /// Their new terrain.
        terrain: Terrain,
    },
}

/// An event and the frame at whose start it happens.
#[derive(Clone, Debug)]
pub struct TimedEvent {
    /// Frame number (0 = before the first frame).
    pub frame: u32,
    /// What happens.
    pub event: Event,
}

/// A simulation with its run parameters and timed events.
#[derive(Debug)]
pub struct Plan {
    /// Name shown in reports.
    pub name: String,
    /// The simulation, units spawned.
    pub sim: Simulation,
    /// Frames to run.
    pub frames: u32,
    /// Seconds per frame.
    pub dt: f32,
    /// Events, sorted by frame (stable: same-frame events keep their order).
    pub events: Vec<TimedEvent>,
}

impl Plan {
    /// Applies the events of `frame`.
    pub fn apply_events(&mut self, frame: u32) -> Result<(), SimError> {
        for e in self.events.iter().filter(|e| e.frame == frame) {
            match &e.event {
                Event::Force(f) => {
                    self.sim.add_force(*f);
                }
                Event::Goal { group, goal } => self.sim.set_group_goal(*group, goal.clone())?,
                Event::Terrain { cells, terrain } => {
                    for &c in cells {
                        self.sim.set_terrain(c, *terrain)?;
                    }
                }
            }
        }
        Ok(())
    }
}

/// The plan of `horde run` and `horde render`: the scenario file at `scenario`, or the
/// built-in demo (the only one `units` applies to). Bad scenario files are bad input.
pub fn load_plan(
    scenario: Option<&Path>,
    overrides: &Overrides,
    units: Option<u32>,
    threads: usize,
) -> Result<Plan, AppError> {
    match scenario {
        Some(path) => {
            if units.is_some() {
                return Err(AppError::BadInput(
                    "--units applies to the built-in demo only: set the counts in the scenario"
                        .into(),
                ));
            }
            load_scenario_with(path, overrides).map_err(|e| {
                if e.is_bad_input() {
                    AppError::BadInput(e.to_string())
                } else {
                    AppError::Failed(e.to_string())
                }
            })
        }
        None => {
            let args = RunArgs {
                units,
                seed: overrides.seed,
                frames: overrides.frames,
                threads: Some(threads),
                ..RunArgs::default()
            };
            demo::build(&args, threads)
        }
    }
}

/// The thread count of `--threads`: every core when absent; 0 is bad input.
pub fn resolve_threads(threads: Option<usize>) -> Result<usize, AppError> {
    match threads {
        Some(0) => Err(AppError::BadInput("--threads must be at least 1".into())),
        Some(n) => Ok(n),
        None => Ok(std::thread::available_parallelism().map_or(1, |n| n.get())),
    }
}
