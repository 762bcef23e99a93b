//! What a [`crate::Horde`] or [`crate::Simulation`] call can fail with ([`SimError`]), what
//! a stage could not do in a frame ([`StageError`]), and why a replay stopped
//! ([`ReplayError`]).
//!
//! A stage's failure does not stop the frame: the stage leaves its part as it was (a field
//! unrepaired, the neighbour snapshot empty, a hierarchical request unanswered), the frame
//! runs to its end, and `step` then returns the first failure as [`SimError::Stage`]. None
//! is expected on a valid map; each names the stage's own error.

use hecs::Entity;
use horde_core::{Cell, FieldError, HierarchyError, SpatialGridError, SpawnError, UnitId};

use crate::job_graph::{GraphBuildError, JobPanic, PoolError};
use crate::snapshot::container::FileError;

/// What went wrong in a [`crate::Horde`] or [`crate::Simulation`] call.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SimError {
    /// A setting is out of range.
    #[error(transparent)]
    Config(#[from] horde_core::ConfigError),
    /// A unit could not be spawned.
    #[error(transparent)]
    Spawn(#[from] SpawnError),
    /// A goal or field problem.
    #[error(transparent)]
    Field(#[from] FieldError),
    /// A formation order with a bad number.
    #[error(transparent)]
    Formation(#[from] horde_core::FormationError),
    /// A group told to follow one of its own units.
    #[error("group {} cannot follow unit {}, one of its own", group.0, unit.0)]
    TargetInGroup {
        /// The unit.
        unit: horde_core::UnitId,
        /// The group.
        group: horde_core::GroupId,
    },
    /// A goal cell is a wall for ground and hover units alike.
    #[error("goal cell {0} is a wall")]
    GoalInWall(Cell),
    /// A goal set with no cell.
    #[error("a goal needs at least one cell")]
    EmptyGoal,
    /// A cell outside the map.
    #[error("cell {cell} lies outside the {width}x{height} map")]
    CellOutside {
        /// The cell.
        cell: Cell,
        /// Map width.
        width: u32,
        /// Map height.
        height: u32,
    },
    /// The time step is not a finite number >= 0.
    #[error("time step {0} must be finite and >= 0")]
    BadTimeStep(f32),
    /// A stage panicked; the frame was abandoned part-way.
    #[error("frame failed: {0}")]
    Frame(#[from] JobPanic),
    /// The worker pool could not start.
    #[error(transparent)]
    Pool(#[from] PoolError),
    /// The stage graph is inconsistent (a bug in horde).
    #[error(transparent)]
    Graph(#[from] GraphBuildError),
    /// A stage could not do its part of the frame (the frame ran to its end).
    #[error("stage failure: {0}")]
    Stage(#[from] StageError),
    /// A simulation holds at most 65,536 groups.
    #[error("a simulation holds at most {max} groups")]
    TooManyGroups {
        /// The most groups.
        max: usize,
    },
    /// The neighbour buckets cannot cover the map (a map of huge cells, or a unit so large
    /// that its buckets are too few or too many).
    #[error("the map cannot be split into neighbour buckets: {0}")]
    Buckets(horde_core::SpatialGridError),
    /// A snapshot or replay could not be read, written or restored.
    #[error(transparent)]
    Snapshot(#[from] FileError),
    /// The entity is not a unit of the simulation (never spawned, or despawned already).
    #[error("{0:?} is not a unit of this simulation")]
    NoSuchUnit(Entity),
    /// No unit has this id (never spawned, or despawned already).
    #[error("no unit has id {}", .0.0)]
    NoUnitWithId(UnitId),
}

/// A stage's failure in one frame (see the module docs).
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum StageError {
    /// `rebuild_fields`: a flow field could not be rebuilt or repaired.
    #[error("field update failed: {0}")]
    Field(FieldError),
    /// `bucket_units`: the large units' buckets could not be built.
    #[error("bucketing large units failed: {0}")]
    LargeBuckets(SpatialGridError),
    /// `bucket_units`: the units could not be sorted into buckets.
    #[error("bucketing failed: {0}")]
    Buckets(SpatialGridError),
    /// `update_hierarchy`: a layer's portal graph could not be built or updated.
    #[error("portal graph update failed: {0}")]
    PortalGraph(HierarchyError),
    /// `update_hierarchy`: a group's path request could not be opened or moved to its goal.
    #[error("path request failed: {0}")]
    PathRequest(HierarchyError),
    /// `update_hierarchy`: sector fields saved in a snapshot could not be restored.
    #[error("restoring sector fields failed: {0}")]
    RestoreSectors(HierarchyError),
    /// `update_hierarchy`: a sector field could not be built or marked in use.
    #[error("sector field failed: {0}")]
    SectorField(HierarchyError),
}

/// Why a replay could not be played to its end.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReplayError {
    /// The starting snapshot could not be restored.
    #[error("the replay's starting state: {0}")]
    Start(SimError),
    /// A command was refused by the simulation.
    #[error("command {index} (frame {frame}): {source}")]
    Command {
        /// Its index in the replay.
        index: usize,
        /// The frame it was given before.
        frame: u64,
        /// Why it was refused.
        source: SimError,
    },
    /// After a frame the state hash differs from the recorded one.
    #[error("desync after frame {frame}: state hash {found:016x}, recorded {expected:016x}")]
    Desync {
        /// The frame (as counted by the simulation after it ran).
        frame: u64,
        /// The recorded hash.
        expected: u64,
        /// The hash the replay produced.
        found: u64,
    },
}
