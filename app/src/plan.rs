//! [`Plan`]: a simulation ready to run, with the events that happen at given frames. Built
//! from the built-in demo or a scenario file; run by `horde run` and drawn by `horde render`.

use std::path::Path;

use horde_core::{Cell, ForceField, GoalSet, GroupId, Terrain};
use horde_systems::{GroupReach, SimConfig, SimError, Simulation};

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
    /// Each group's name in reports, by group index (`group N` where the file gives none).
    pub group_names: Vec<String>,
}

impl Plan {
    /// Applies the events of `frame`; returns, for each goal change among them, which of the
    /// group's units can reach the new goal.
    pub fn apply_events(&mut self, frame: u32) -> Result<Vec<GroupReach>, SimError> {
        let mut reaches = Vec::new();
        for e in self.events.iter().filter(|e| e.frame == frame) {
            match &e.event {
                Event::Force(f) => {
                    self.sim.add_force(*f);
                }
                Event::Goal { group, goal } => {
                    reaches.push(self.sim.set_group_goal(*group, goal.clone())?);
                }
                Event::Terrain { cells, terrain } => {
                    for &c in cells {
                        self.sim.set_terrain(c, *terrain)?;
                    }
                }
            }
        }
        Ok(reaches)
    }

    /// The name of group `group` in reports.
    #[must_use]
    pub fn group_name(&self, group: GroupId) -> String {
        self.group_names
            .get(usize::from(group.0))
            .cloned()
            .unwrap_or_else(|| format!("group {}", group.0))
    }
}

/// The plan of `horde run` and `horde render`: the scenario file at `scenario`, or the
/// built-in demo (the only one `units` applies to). Bad scenario files are bad input.
/// `overrides.threads` replaces the scenario's `threads`; without either, every core is used
/// (the demo has no `threads` of its own). [`Plan::threads`] says what was chosen.
pub fn load_plan(
    scenario: Option<&Path>,
    overrides: &Overrides,
    units: Option<u32>,
) -> Result<Plan, AppError> {
    check_threads(overrides.threads)?;
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
            let threads = overrides.threads.unwrap_or_else(default_threads);
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

impl Plan {
    /// The worker threads the plan's simulation runs on.
    #[must_use]
    pub fn threads(&self) -> usize {
        self.sim.horde().config().threads
    }
}

/// Every core, at most [`SimConfig::MAX_THREADS`].
#[must_use]
pub fn default_threads() -> usize {
    std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(SimConfig::MAX_THREADS)
}

/// `--threads` checked: `None` stays `None` (the scenario's or every core); a count outside
/// `1..=`[`SimConfig::MAX_THREADS`] is bad input (exit code 2), for every command and plan.
pub fn check_threads(threads: Option<usize>) -> Result<Option<usize>, AppError> {
    match threads {
        Some(n) if !(1..=SimConfig::MAX_THREADS).contains(&n) => Err(AppError::BadInput(format!(
            "--threads {n}: expected a thread count in 1..={}",
            SimConfig::MAX_THREADS
        ))),
        t => Ok(t),
    }
}

/// The thread count of `--threads` where no scenario gives one: every core when absent;
/// out of range is bad input ([`check_threads`]).
pub fn resolve_threads(threads: Option<usize>) -> Result<usize, AppError> {
    Ok(check_threads(threads)?.unwrap_or_else(default_threads))
}
