//! Replays: a starting snapshot and every command given to the simulation after it, with the
//! state hash after each frame, so a replay both reproduces a run and proves it did.
//!
//! [`Simulation::start_recording`] takes the starting snapshot; from then on every command
//! that succeeds through the `Simulation` API (adding groups, goal changes, spawns,
//! despawns, force fields, terrain edits, frames) is appended; [`Simulation::finish_recording`] hands the
//! [`Replay`] back. [`Replay::play`] restores the snapshot and gives the same commands
//! through the same API, comparing the state hash after every frame.

use std::path::Path;

use horde_core::{Cell, GroupId, UnitId};
use serde::{Deserialize, Serialize};

use super::container::{self, FileError, FileKind};
use super::record::{self, ForceRecord, SnapshotRecord, SpecRecord};
use super::{Snapshot, decode, validate};
use crate::command::Command;

/// The replay format version this build reads and writes (2: its snapshot holds the contact
/// settings; 5: its snapshot holds the origin, and the recorded state hashes cover the
/// terrain, the force fields, the goals and the quarantined units; 6: its snapshot holds
/// the size classes; 7: its snapshot holds each army's rest order and each unit's stall and
/// giving way; 8: its snapshot holds each unit's stillness and sleep).
pub const REPLAY_VERSION: u32 = 12;

/// One command given to a [`Simulation`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) enum CommandRecord {
    /// `add_group(goal)`.
    AddGroup(Vec<(u32, u32)>),
    /// `set_group_goal(group, goal)`.
    SetGoal { group: u16, goal: Vec<(u32, u32)> },
    /// `spawn(spec)`.
    Spawn(SpecRecord),
    /// `add_force(field)`.
    AddForce(ForceRecord),
    /// `set_terrain(cell, terrain)`.
    SetTerrain { x: u32, y: u32, terrain: u8 },
    /// `step(dt)`, and the state hash it produced.
    Step { dt: f32, hash: u64 },
    /// `despawn(entity)` of the unit with this id (last, so replays written before it
    /// existed still read).
    Despawn { id: u32 },
    /// `set_formation(group, order)`.
    SetFormation {
        group: u16,
        order: Option<record::OrderRecord>,
    },
    /// `set_group_target(group, target)`: the unit's id and the distance.
    SetTarget {
        group: u16,
        target: Option<(u32, f32)>,
    },
}

impl CommandRecord {
    /// The records of `command` as given (a terrain edit of several cells is one record
    /// per cell); `hash` is the state hash after a frame (read only for [`Command::Step`]).
    pub(crate) fn of(command: &Command, hash: impl FnOnce() -> u64) -> Vec<Self> {
        match command {
            Command::AddGroup(goal) => vec![Self::AddGroup(record::cells(goal))],
            Command::SetGoal { group, goal } => vec![Self::SetGoal {
                group: group.0,
                goal: record::cells(goal),
            }],
            Command::Spawn(spec) => vec![Self::Spawn(SpecRecord::from_spec(spec))],
            Command::Despawn(id) => vec![Self::Despawn { id: id.0 }],
            Command::AddForce(field) => vec![Self::AddForce(ForceRecord::from_field(field))],
            Command::SetTerrain { cells, terrain } => cells
                .iter()
                .map(|c| Self::SetTerrain {
                    x: c.x,
                    y: c.y,
                    terrain: *terrain as u8,
                })
                .collect(),
            Command::SetFormation { group, order } => vec![Self::SetFormation {
                group: group.0,
                order: order.as_ref().map(record::OrderRecord::from_order),
            }],
            Command::SetTarget { group, target } => vec![Self::SetTarget {
                group: group.0,
                target: target.map(|t| (t.unit.0, t.distance)),
            }],
            Command::Step { dt } => vec![Self::Step {
                dt: *dt,
                hash: hash(),
            }],
        }
    }

    /// The command this record gives again, and for a frame the state hash it must
    /// produce.
    pub(crate) fn to_command(&self) -> Result<(Command, Option<u64>), String> {
        let command = match self {
            Self::AddGroup(goal) => Command::AddGroup(record::goal(goal)?),
            Self::SetGoal { group, goal } => Command::SetGoal {
                group: GroupId(*group),
                goal: record::goal(goal)?,
            },
            Self::Spawn(spec) => Command::Spawn(spec.to_spec()?),
            Self::AddForce(force) => Command::AddForce(force.to_field()?),
            Self::SetTerrain { x, y, terrain } => Command::SetTerrain {
                cells: vec![Cell::new(*x, *y)],
                terrain: record::terrain(*terrain)?,
            },
            Self::Step { dt, hash } => return Ok((Command::Step { dt: *dt }, Some(*hash))),
            Self::Despawn { id } => Command::Despawn(UnitId(*id)),
            Self::SetTarget { group, target } => Command::SetTarget {
                group: GroupId(*group),
                target: target.map(|(unit, distance)| horde_core::UnitTarget {
                    unit: UnitId(unit),
                    distance,
                }),
            },
            Self::SetFormation { group, order } => Command::SetFormation {
                group: GroupId(*group),
                order: order
                    .as_ref()
                    .map(record::OrderRecord::to_order)
                    .transpose()?,
            },
        };
        Ok((command, None))
    }

    /// Checks what can be checked without a simulation.
    fn validate(&self) -> Result<(), String> {
        match self {
            Self::AddGroup(goal) | Self::SetGoal { goal, .. } => record::goal(goal).map(|_| ()),
            Self::Spawn(spec) => spec.to_spec().map(|_| ()),
            Self::AddForce(force) => force.to_field().map(|_| ()),
            Self::SetTerrain { terrain, .. } => record::terrain(*terrain).map(|_| ()),
            Self::Step { dt, .. } if !(dt.is_finite() && *dt >= 0.0) => {
                Err(format!("time step {dt} must be finite and >= 0"))
            }
            Self::SetFormation { order, .. } => {
                order.as_ref().map_or(Ok(()), |o| o.to_order().map(|_| ()))
            }
            Self::SetTarget {
                target: Some((unit, distance)),
                ..
            } => horde_core::UnitTarget {
                unit: UnitId(*unit),
                distance: *distance,
            }
            .validate()
            .map_err(|e| e.to_string()),
            Self::Step { .. } | Self::Despawn { .. } | Self::SetTarget { .. } => Ok(()),
        }
    }
}

/// What a replay file holds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct ReplayRecord {
    pub start: SnapshotRecord,
    pub commands: Vec<CommandRecord>,
}

/// A recorded run: a starting snapshot and the commands after it (see the module docs).
#[derive(Clone, Debug, PartialEq)]
pub struct Replay {
    pub(crate) record: ReplayRecord,
}

impl Replay {
    pub(crate) fn start(snapshot: &Snapshot) -> ReplayRecord {
        ReplayRecord {
            start: snapshot.record().clone(),
            commands: Vec::new(),
        }
    }

    pub(crate) fn from_record(record: ReplayRecord) -> Self {
        Self { record }
    }

    /// The frame the replay starts at.
    #[must_use]
    pub fn start_frame(&self) -> u64 {
        self.record.start.frame
    }

    /// Number of frames recorded.
    #[must_use]
    pub fn frames(&self) -> usize {
        self.record
            .commands
            .iter()
            .filter(|c| matches!(c, CommandRecord::Step { .. }))
            .count()
    }

    /// Number of commands recorded, frames included.
    #[must_use]
    pub fn commands(&self) -> usize {
        self.record.commands.len()
    }

    /// The replay as the bytes of a replay file.
    pub fn to_bytes(&self) -> Result<Vec<u8>, FileError> {
        container::encode(FileKind::Replay, REPLAY_VERSION, &self.record)
    }

    /// Reads the bytes of a replay file, checking the header, the checksum, the starting
    /// snapshot and every command's values.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, FileError> {
        let kind = FileKind::Replay;
        let payload = container::unwrap(kind, REPLAY_VERSION, bytes)?;
        let record: ReplayRecord = decode(kind, payload)?;
        validate(&record.start).map_err(|detail| FileError::Invalid {
            kind,
            detail: format!("starting state: {detail}"),
        })?;
        for (i, c) in record.commands.iter().enumerate() {
            c.validate().map_err(|detail| FileError::Invalid {
                kind,
                detail: format!("command {i}: {detail}"),
            })?;
        }
        Ok(Self { record })
    }

    /// Writes the replay to `path` atomically.
    pub fn save(&self, path: &Path) -> Result<(), FileError> {
        container::save(path, &self.to_bytes()?)
    }

    /// Reads the replay file at `path`; errors name the file.
    pub fn load(path: &Path) -> Result<Self, FileError> {
        container::load(path, Self::from_bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ReplayError;
    use crate::Simulation;
    use glam::Vec2;
    use horde_core::SimConfig;
    use horde_core::{ForceField, GoalSet, Terrain, UnitSpec};
    use horde_core::{Grid, Map};

    fn small() -> Simulation {
        let mut sim =
            Simulation::new(Map::new(Grid::new(16, 16).unwrap()), SimConfig::default()).unwrap();
        let g = sim.add_group(GoalSet::single(Cell::new(14, 14))).unwrap();
        for i in 0..20 {
            let p = Vec2::new(1.5 + (i % 5) as f32, 1.5 + (i / 5) as f32);
            sim.spawn(UnitSpec::at(p).with_group(g)).unwrap();
        }
        sim
    }

    #[test]
    fn a_wrong_recorded_hash_is_reported_as_a_desync_at_its_frame() {
        let mut sim = small();
        sim.start_recording();
        for _ in 0..6 {
            sim.step(0.05).unwrap();
        }
        let mut replay = sim.finish_recording().unwrap();
        assert!(replay.play(1, |_| {}).is_ok());
        let CommandRecord::Step { hash, .. } = &mut replay.record.commands[3] else {
            panic!("frames only");
        };
        *hash ^= 1;
        let e = replay.play(2, |_| {}).unwrap_err();
        assert!(matches!(e, ReplayError::Desync { frame: 4, .. }), "{e}");
    }

    #[test]
    fn commands_the_simulation_refuses_are_errors_with_their_index() {
        let mut sim = small();
        sim.start_recording();
        sim.step(0.05).unwrap();
        let mut replay = sim.finish_recording().unwrap();
        replay.record.commands.insert(
            1,
            CommandRecord::SetTerrain {
                x: 99,
                y: 0,
                terrain: 1,
            },
        );
        let e = replay.play(1, |_| {}).unwrap_err();
        assert!(
            matches!(
                e,
                ReplayError::Command {
                    index: 1,
                    frame: 1,
                    ..
                }
            ),
            "{e}"
        );
        // A bad value is caught when the file is read.
        replay.record.commands[1] = CommandRecord::Step {
            dt: f32::NAN,
            hash: 0,
        };
        let e = Replay::from_bytes(&replay.to_bytes().unwrap()).unwrap_err();
        assert!(matches!(e, FileError::Invalid { .. }), "{e}");
        assert!(e.to_string().contains("command 1"), "{e}");
    }

    /// A replay edited to add a command that moves nobody (a terrain edit far from every
    /// unit, a force field far from them, a goal change of a group's) no longer matches its
    /// recorded hashes: the state hash covers the terrain, the forces and the goals.
    #[test]
    fn an_edited_replay_is_a_desync() {
        let mut sim = small();
        sim.start_recording();
        for _ in 0..6 {
            sim.step(0.05).unwrap();
        }
        let replay = sim.finish_recording().unwrap();
        let far = ForceField::new(
            Vec2::new(15.0, 0.5),
            horde_core::ForceKind::Explosion,
            0.5,
            1.0,
        )
        .unwrap();
        let edits = [
            Command::SetTerrain {
                cells: vec![Cell::new(15, 0)],
                terrain: Terrain::BrickWall,
            },
            Command::AddForce(far),
            Command::SetGoal {
                group: GroupId(0),
                goal: GoalSet::single(Cell::new(14, 15)),
            },
        ]
        .map(|c| CommandRecord::of(&c, || 0).remove(0));
        for edit in edits {
            let mut edited = replay.clone();
            edited.record.commands.insert(2, edit.clone());
            let e = edited.play(1, |_| {}).unwrap_err();
            assert!(
                matches!(e, ReplayError::Desync { frame: 3, .. }),
                "{edit:?}: {e}"
            );
        }
    }
}
