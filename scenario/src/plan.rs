//! [`Plan`]: a simulation ready to run, with the events that happen at given frames. Built
//! from the built-in demo or a scenario file; run by `horde run` and drawn by `horde render`.

use horde::GroupId;
use horde::{Command, GroupReach, Outcome, SimConfig, SimError, Simulation};

/// A command given at the start of a frame: a scenario's force fields, goal changes and
/// terrain edits (the simulation's own [`Command`], so a recorded run replays them as they
/// were given).
#[derive(Clone, Debug)]
pub struct TimedEvent {
    /// Frame number (0 = before the first frame).
    pub frame: u32,
    /// What happens.
    pub command: Command,
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
            if let Outcome::Goal(reach) = self.sim.apply(e.command.clone())? {
                reaches.push(reach);
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

impl Plan {
    /// A fingerprint of what the plan runs, saved in its snapshots so that `--resume` with
    /// a snapshot of another plan is refused: its name, time step and events, and the
    /// simulation as built (every unit's id, position and parameters, every group's goal,
    /// every force field). The map and the settings (the seed among them) are compared on
    /// their own ([`horde::Snapshot::differences`]); the frame count and the thread
    /// count are not part of it (a run may be resumed for longer, on other threads).
    #[must_use]
    pub fn fingerprint(&self) -> u64 {
        use horde::UnitId;
        use horde::components::{Agent, Mass, Position};
        use std::fmt::Write;
        let mut h = horde::formats::Fnv::default();
        h.bytes(self.name.as_bytes());
        h.word(u64::from(self.dt.to_bits()));
        // Formatting into the hash cannot fail.
        let _ = write!(h, "{:?}", self.events);
        let world = self.sim.world();
        let mut units: Vec<[u32; 11]> = world
            .query::<(&UnitId, &Position, &Mass, &Agent)>()
            .iter()
            .map(|(id, p, m, a)| {
                [
                    id.0,
                    p.0.x.to_bits(),
                    p.0.y.to_bits(),
                    m.0.to_bits(),
                    a.radius.to_bits(),
                    a.max_speed.to_bits(),
                    a.turn_rate.to_bits(),
                    a.layer as u32,
                    u32::from(a.group.0),
                    u32::from(a.controllable),
                    0,
                ]
            })
            .collect();
        units.sort_unstable();
        h.word(units.len() as u64);
        for u in units {
            for w in u {
                h.word(u64::from(w));
            }
        }
        let horde = self.sim.horde();
        let groups = horde.groups();
        for g in (0..groups.len()).filter_map(|i| u16::try_from(i).ok().and_then(|i| groups.get(i)))
        {
            let _ = write!(h, "{:?}", g.goal);
        }
        for entry in horde.forces().entries() {
            let _ = write!(h, "{entry:?}");
        }
        h.0
    }

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
