//! [`Simulation`]: a [`Horde`] with its own world, for callers that have none; its snapshots,
//! and the playing of its replays.

use std::ops::Deref;
use std::path::Path;

use hecs::{Entity, World};
use horde_core::{
    Cell, ForceField, ForceFieldId, FormationOrder, GoalSet, GroupId, Map, Quarantined, Terrain,
    UnitId, UnitSpec, UnitTarget,
};

use crate::command::{Command, Outcome};
use crate::horde::{GroupReach, GroupStatus};
use crate::job_graph::FrameReport;
use crate::snapshot::{CommandRecord, FileError, Replay, ReplayRecord};
use crate::snapshot::{FileKind, Snapshot};
use crate::{Horde, ReplayError, SimError, UnitState, state_hash};
use horde_core::SimConfig;

/// A [`Horde`] with its own world: the simplest way to run a crowd.
pub struct Simulation {
    horde: Horde,
    world: World,
    recording: Option<ReplayRecord>,
}

impl std::fmt::Debug for Simulation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Simulation")
            .field("horde", &self.horde)
            .field("units", &self.world.len())
            .finish()
    }
}

impl Simulation {
    /// A simulation on `map` with `config` and no units.
    pub fn new(map: Map, config: SimConfig) -> Result<Self, SimError> {
        Ok(Self::from_parts(Horde::new(map, config)?, World::new()))
    }

    pub(crate) fn from_parts(horde: Horde, world: World) -> Self {
        Self {
            horde,
            world,
            recording: None,
        }
    }

    /// Starts recording a replay: takes a snapshot now, then appends every command that
    /// succeeds (a recording already under way starts over).
    pub fn start_recording(&mut self) {
        self.recording = Some(Replay::start(&self.snapshot()));
    }

    /// Whether a replay is being recorded.
    #[must_use]
    pub fn is_recording(&self) -> bool {
        self.recording.is_some()
    }

    /// Stops recording and returns the replay, or `None` if none was being recorded.
    pub fn finish_recording(&mut self) -> Option<Replay> {
        self.recording.take().map(Replay::from_record)
    }

    /// Appends `command`, which just succeeded, to the recording (a frame with the state
    /// hash it produced).
    fn record(&mut self, command: &Command) {
        if self.recording.is_none() {
            return;
        }
        let records = CommandRecord::of(command, || state_hash(&self.horde, &self.world));
        if let Some(r) = &mut self.recording {
            r.commands.extend(records);
        }
    }

    /// Gives `command` to the simulation: the same as the call it names
    /// ([`Command::SetTerrain`] edits its cells in order and stops at the first refused
    /// one). Replays play through this, and the app's scenario events and viewer tools are
    /// commands.
    pub fn apply(&mut self, command: Command) -> Result<Outcome, SimError> {
        match command {
            Command::AddGroup(goal) => self.add_group(goal).map(Outcome::Group),
            Command::SetGoal { group, goal } => self.set_group_goal(group, goal).map(Outcome::Goal),
            Command::Spawn(spec) => self.spawn(spec).map(Outcome::Spawned),
            Command::Despawn(id) => {
                let entity = self.entity_of(id).ok_or(SimError::NoUnitWithId(id))?;
                self.despawn(entity)?;
                Ok(Outcome::Despawned(entity))
            }
            Command::AddForce(field) => Ok(Outcome::Force(self.add_force(field))),
            Command::SetTerrain { cells, terrain } => {
                for cell in cells {
                    self.set_terrain(cell, terrain)?;
                }
                Ok(Outcome::Terrain)
            }
            Command::SetFormation { group, order } => self
                .set_formation(group, order)
                .map(|()| Outcome::Formation),
            Command::SetTarget { group, target } => self
                .set_group_target(group, target)
                .map(|()| Outcome::Target),
            Command::Step { dt } => self.step(dt).cloned().map(Outcome::Frame),
        }
    }

    /// The units taken out of the simulation because their state stopped being finite, in
    /// id order, with the frame each was quarantined in.
    #[must_use]
    pub fn quarantined(&self) -> Vec<(UnitId, u64)> {
        let mut out: Vec<(UnitId, u64)> = self
            .world
            .query::<(&UnitId, &Quarantined)>()
            .iter()
            .map(|(id, q)| (*id, q.frame))
            .collect();
        out.sort_unstable();
        out
    }

    /// The stages and resources.
    #[must_use]
    pub fn horde(&self) -> &Horde {
        &self.horde
    }

    /// See [`Horde::set_scenario`].
    pub fn set_scenario(&mut self, name: &str, fingerprint: u64) {
        self.horde.set_scenario(name, fingerprint);
    }

    /// The units' world (read-only: change units through the simulation's methods).
    #[must_use]
    pub fn world(&self) -> &World {
        &self.world
    }

    /// See [`Horde::add_group`].
    pub fn add_group(&mut self, goal: GoalSet) -> Result<GroupId, SimError> {
        let id = self.horde.add_group(goal.clone())?;
        self.record(&Command::AddGroup(goal));
        Ok(id)
    }

    /// See [`Horde::set_group_goal`].
    pub fn set_group_goal(
        &mut self,
        group: GroupId,
        goal: GoalSet,
    ) -> Result<GroupReach, SimError> {
        let reach = self
            .horde
            .set_group_goal(&mut self.world, group, goal.clone())?;
        self.record(&Command::SetGoal { group, goal });
        Ok(reach)
    }

    /// See [`Horde::set_formation`].
    pub fn set_formation(
        &mut self,
        group: GroupId,
        order: Option<FormationOrder>,
    ) -> Result<(), SimError> {
        self.horde
            .set_formation(&mut self.world, group, order.clone())?;
        self.record(&Command::SetFormation { group, order });
        Ok(())
    }

    /// See [`Horde::set_group_target`].
    pub fn set_group_target(
        &mut self,
        group: GroupId,
        target: Option<UnitTarget>,
    ) -> Result<(), SimError> {
        self.horde
            .set_group_target(&mut self.world, group, target)?;
        self.record(&Command::SetTarget { group, target });
        Ok(())
    }

    /// See [`Horde::reachability`].
    #[must_use]
    pub fn reachability(&self) -> Vec<GroupReach> {
        self.horde.reachability(&self.world)
    }

    /// See [`Horde::group_status`].
    #[must_use]
    pub fn group_status(&self) -> Vec<GroupStatus> {
        self.horde.group_status(&self.world)
    }

    /// See [`Horde::spawn`].
    pub fn spawn(&mut self, spec: UnitSpec) -> Result<Entity, SimError> {
        let entity = self.horde.spawn(&mut self.world, spec)?;
        self.record(&Command::Spawn(spec));
        Ok(entity)
    }

    /// Removes a unit (a unit that died, say), quarantined or not: it is gone from the
    /// next frame on, its id is never given again, and sleeping units beside it wake
    /// ([`Horde::despawn`]). Returns its id. While recording, the
    /// removal is recorded (by id, so a replay removes the same unit).
    pub fn despawn(&mut self, entity: Entity) -> Result<UnitId, SimError> {
        let id = self.horde.despawn(&mut self.world, entity)?;
        self.record(&Command::Despawn(id));
        Ok(id)
    }

    /// The entity of the unit with id `id`, if there is one (a scan over the units).
    #[must_use]
    pub fn entity_of(&self, id: UnitId) -> Option<Entity> {
        Horde::entity_of(&self.world, id)
    }

    /// See [`Horde::add_force`].
    pub fn add_force(&mut self, field: ForceField) -> ForceFieldId {
        let id = self.horde.add_force(field);
        self.record(&Command::AddForce(field));
        id
    }

    /// See [`Horde::set_terrain`].
    pub fn set_terrain(&mut self, cell: Cell, terrain: Terrain) -> Result<(), SimError> {
        self.horde.set_terrain(cell, terrain)?;
        self.record(&Command::SetTerrain {
            cells: vec![cell],
            terrain,
        });
        Ok(())
    }

    /// See [`Horde::step`]; returns the frame's report, as [`Horde::step`] does. While
    /// recording, the frame and its state hash are recorded.
    pub fn step(&mut self, dt: f32) -> Result<&FrameReport, SimError> {
        let before = self.horde.frame();
        let outcome = self.horde.step(&mut self.world, dt).map(|_| ());
        // A frame that ran is recorded even if a stage reported a failure afterwards, so the
        // replay keeps in step with the state.
        if self.recording.is_some() && self.horde.frame() != before {
            self.record(&Command::Step { dt });
        }
        outcome?;
        Ok(self
            .horde
            .last_report()
            .expect("a frame that ran left its report"))
    }

    /// See [`Horde::state_hash`].
    #[must_use]
    pub fn state_hash(&self) -> u64 {
        state_hash(&self.horde, &self.world)
    }

    /// Every unit's state in id order.
    #[must_use]
    pub fn units(&self) -> Vec<UnitState> {
        self.horde.unit_states(&self.world)
    }

    /// How solid the units' bodies are now (see [`crate::BodyStats`]).
    #[must_use]
    pub fn body_stats(&self) -> crate::BodyStats {
        self.horde.body_stats(&self.world)
    }

    /// Number of units.
    #[must_use]
    pub fn unit_count(&self) -> usize {
        self.world.len() as usize
    }

    /// Number of frames run so far.
    #[must_use]
    pub fn frame(&self) -> u64 {
        self.horde.frame()
    }

    /// The map.
    pub fn map(&self) -> impl Deref<Target = Map> + '_ {
        self.horde.map()
    }
}

impl Simulation {
    /// The whole state (see [`Snapshot`]).
    #[must_use]
    pub fn snapshot(&self) -> Snapshot {
        self.horde().snapshot(self.world())
    }

    /// A simulation in the state `snapshot` holds, running on `threads` threads.
    pub fn from_snapshot(snapshot: &Snapshot, threads: usize) -> Result<Self, SimError> {
        let mut world = World::new();
        let horde = Horde::from_snapshot(snapshot, threads, &mut world)?;
        Ok(Simulation::from_parts(horde, world))
    }

    /// Saves the whole state to `path` atomically.
    pub fn save_snapshot(&self, path: &Path) -> Result<(), FileError> {
        self.snapshot().save(path)
    }

    /// Loads the snapshot file at `path` into a simulation on `threads` threads.
    pub fn load_snapshot(path: &Path, threads: usize) -> Result<Self, SimError> {
        let snapshot = Snapshot::load(path)?;
        Self::from_snapshot(&snapshot, threads)
    }
}

impl Replay {
    /// Restores the starting state on `threads` threads and gives every command again,
    /// calling `after_frame` after each frame; stops at the first frame whose state hash
    /// differs from the recorded one. Returns the simulation at the end of the replay.
    pub fn play(
        &self,
        threads: usize,
        mut after_frame: impl FnMut(&Simulation),
    ) -> Result<Simulation, ReplayError> {
        let start = Snapshot::from_record(self.record.start.clone());
        let mut sim = Simulation::from_snapshot(&start, threads).map_err(ReplayError::Start)?;
        for (index, command) in self.record.commands.iter().enumerate() {
            let frame = sim.frame();
            let failed = |source| ReplayError::Command {
                index,
                frame,
                source,
            };
            let (command, expected) = command.to_command().map_err(|detail| {
                failed(SimError::Snapshot(FileError::Invalid {
                    kind: FileKind::Replay,
                    detail,
                }))
            })?;
            sim.apply(command).map_err(failed)?;
            if let Some(expected) = expected {
                let found = sim.state_hash();
                if found != expected {
                    return Err(ReplayError::Desync {
                        frame: sim.frame(),
                        expected,
                        found,
                    });
                }
                after_frame(&sim);
            }
        }
        Ok(sim)
    }
}

#[cfg(test)]
mod tests {
    use glam::Vec2;
    use horde_core::{ForceKind, Grid};

    use super::*;

    /// Every command through `apply` does what its call does, is recorded once, and the
    /// replay of the commands ends in the same state.
    #[test]
    fn commands_apply_record_and_replay() {
        let map = Map::new(Grid::new(24, 24).unwrap());
        let mut sim = Simulation::new(map, SimConfig::default()).unwrap();
        sim.start_recording();
        let Outcome::Group(group) = sim
            .apply(Command::AddGroup(GoalSet::single(Cell::new(20, 20))))
            .unwrap()
        else {
            panic!("a group");
        };
        let mut ids = Vec::new();
        for i in 0..6 {
            let spec = UnitSpec::at(Vec2::new(2.5 + i as f32, 2.5)).with_group(group);
            let Outcome::Spawned(entity) = sim.apply(Command::Spawn(spec)).unwrap() else {
                panic!("a unit");
            };
            ids.push(*sim.world().get::<&UnitId>(entity).unwrap());
        }
        let blast = ForceField::new(Vec2::new(4.0, 3.0), ForceKind::Explosion, 3.0, 5.0).unwrap();
        let commands = [
            Command::AddForce(blast),
            Command::SetTerrain {
                cells: vec![Cell::new(10, 10), Cell::new(10, 11)],
                terrain: Terrain::BrickWall,
            },
            Command::Step { dt: 0.05 },
            Command::Despawn(ids[0]),
            Command::SetGoal {
                group,
                goal: GoalSet::single(Cell::new(3, 20)),
            },
            Command::Step { dt: 0.05 },
        ];
        for command in commands {
            sim.apply(command).unwrap();
        }
        assert_eq!(sim.unit_count(), 5);
        assert_eq!(sim.map().terrain_at(Cell::new(10, 11)), Terrain::BrickWall);
        assert!(matches!(
            sim.apply(Command::Despawn(ids[0])),
            Err(SimError::NoUnitWithId(_))
        ));
        let replay = sim.finish_recording().unwrap();
        // 1 group, 6 units, the force, 2 cells, 2 frames, the despawn, the goal.
        assert_eq!(replay.commands(), 14);
        let replayed = replay.play(2, |_| {}).unwrap();
        assert_eq!(replayed.state_hash(), sim.state_hash());
    }
}
