//! [`Command`]: one thing a [`crate::Simulation`] is told to do. The simulation's calls
//! (`add_group`, `set_group_goal`, `spawn`, `despawn`, `add_force`, `set_terrain`, `step`)
//! are each one command, [`crate::Simulation::apply`] takes any of them, a replay records
//! them (and plays them back through `apply`), and the app's scenario events and viewer
//! tools are lists of them.

use hecs::Entity;
use horde_core::{
    Cell, ForceField, ForceFieldId, FormationOrder, GoalSet, GroupId, Terrain, UnitId, UnitSpec,
    UnitTarget,
};

use crate::horde::GroupReach;
use crate::job_graph::FrameReport;

/// One thing a simulation is told to do (see the module docs).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Command {
    /// A new group heading for `goal`.
    AddGroup(GoalSet),
    /// Group `group` heads for `goal` from now on.
    SetGoal {
        /// The group.
        group: GroupId,
        /// Its new goal.
        goal: GoalSet,
    },
    /// A new unit.
    Spawn(UnitSpec),
    /// The unit with this id is removed.
    Despawn(UnitId),
    /// A force field appears.
    AddForce(ForceField),
    /// Cells change terrain (a wall placed or destroyed), in order.
    SetTerrain {
        /// The cells.
        cells: Vec<Cell>,
        /// Their new terrain.
        terrain: Terrain,
    },
    /// Group `group` moves in formation from now on (`None`: as a blob again).
    SetFormation {
        /// The group.
        group: GroupId,
        /// Its formation.
        order: Option<FormationOrder>,
    },
    /// Group `group` follows a unit from now on (`None`: it stops following).
    SetTarget {
        /// The group.
        group: GroupId,
        /// The unit and the distance to keep.
        target: Option<UnitTarget>,
    },
    /// One frame of `dt` seconds.
    Step {
        /// Seconds.
        dt: f32,
    },
}

/// What a [`Command`] gave back, one variant per command.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Outcome {
    /// [`Command::AddGroup`]: the new group.
    Group(GroupId),
    /// [`Command::SetGoal`]: which of the group's units can reach the new goal.
    Goal(GroupReach),
    /// [`Command::Spawn`]: the new unit's entity.
    Spawned(Entity),
    /// [`Command::Despawn`]: the removed unit's entity.
    Despawned(Entity),
    /// [`Command::AddForce`]: the new field's id.
    Force(ForceFieldId),
    /// [`Command::SetTerrain`]: every cell changed.
    Terrain,
    /// [`Command::SetFormation`]: done.
    Formation,
    /// [`Command::SetTarget`]: done.
    Target,
    /// [`Command::Step`]: the frame's report.
    Frame(FrameReport),
}
