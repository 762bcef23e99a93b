//! The garrison, a benchmark fixture: an army with nothing to do but rest. `units` units of
//! radius 0.45 spawned packed one per cell in the middle of a square goal area of twice
//! their number, on open ground twice the area's side. It measures what a crowd at rest
//! costs (docs/behaviour.md, "Sleeping").

use glam::Vec2;
use horde_core::{Cell, GoalSet, Grid, Map, UnitSpec};

use crate::{SimConfig, SimError, Simulation};

/// The garrison of a given size (see the module docs).
#[derive(Clone, Copy, Debug)]
pub struct Garrison {
    units: u32,
}

impl Garrison {
    /// The time step it runs at.
    pub const DT: f32 = 1.0 / 30.0;

    /// A garrison of `units` units (clamped to `16..=4_000_000`).
    #[must_use]
    pub fn new(units: u32) -> Self {
        Self {
            units: units.clamp(16, 4_000_000),
        }
    }

    /// Its unit count.
    #[must_use]
    pub fn units(&self) -> u32 {
        self.units
    }

    /// The simulation with the garrison spawned, on `threads` threads.
    pub fn simulation(&self, threads: usize) -> Result<Simulation, SimError> {
        let side = f64::from(self.units).sqrt().ceil() as u32;
        let goal_side = (2.0 * f64::from(side * side)).sqrt().ceil() as u32;
        let map_side = goal_side * 2;
        let map = Map::new(Grid::new(map_side, map_side).expect("a map side of at most 8,200"));
        let mut sim = Simulation::new(map, SimConfig::default().with_threads(threads))?;
        let low = (map_side - goal_side) / 2;
        let cells = (low..low + goal_side)
            .flat_map(|y| (low..low + goal_side).map(move |x| Cell::new(x, y)));
        let goal = GoalSet::new(cells).expect("the goal area has cells");
        let group = sim.add_group(goal)?;
        let start = (map_side - side) / 2;
        for i in 0..self.units {
            let (x, y) = (start + i % side, start + i / side);
            let at = Vec2::new(x as f32 + 0.5, y as f32 + 0.5);
            sim.spawn(UnitSpec::at(at).with_radius(0.45).with_group(group))?;
        }
        Ok(sim)
    }

    /// Runs `sim` until 99% of the garrison is at rest, at most `max_frames` frames; returns
    /// the frames it ran.
    pub fn walk_in(&self, sim: &mut Simulation, max_frames: usize) -> Result<usize, SimError> {
        for frame in 1..=max_frames {
            sim.step(Self::DT)?;
            if frame % 30 == 0 {
                let s = sim.group_status()[0];
                if (s.arrived + s.settled) * 100 >= s.units * 99 {
                    return Ok(frame);
                }
            }
        }
        Ok(max_frames)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_small_garrison_comes_to_rest_and_mostly_sleeps() {
        let garrison = Garrison::new(400);
        let mut sim = garrison.simulation(2).unwrap();
        let frames = garrison.walk_in(&mut sim, 1800).unwrap();
        assert!(frames < 1800, "not at rest after a minute");
        for _ in 0..150 {
            sim.step(Garrison::DT).unwrap();
        }
        // Units within a few cells of one still on its way stay awake.
        let awake = sim.horde().awake_units();
        assert!(
            awake * 3 <= 400,
            "{awake} of 400 awake five seconds after resting"
        );
    }
}
