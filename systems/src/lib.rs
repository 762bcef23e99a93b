//! horde-systems: the frame's stages and the crossbeam job graph that runs them.
//!
//! - [`Simulation`]: a crowd with its own `hecs::World`; [`Horde`]: the same stages on a
//!   world you own.
//! - The frame (docs/behaviour.md, "The frame") is a [`JobGraph`] of stages that declare what they
//!   read and write (the table in ARCHITECTURE.md is written by the graph itself). Between
//!   frames the units' storage is kept in map order (the exclusive stage `sort_units`), so the
//!   stages read memory
//!   in order.
#![warn(missing_docs)]

mod body_stats;
mod command;
mod edit_log;
mod error;
mod formations;
mod frame;
mod frame_times;
mod groups;
mod hierarchy_nav;
mod horde;
mod job_graph;
mod parallel_integration;
mod simulation;
mod snapshot;
mod unit;
mod unit_check;

pub use body_stats::BodyStats;
pub use command::{Command, Outcome};
pub use error::{ReplayError, SimError, StageError};
pub use formations::{Formation, Formations};
pub use frame_times::FrameTimes;
pub use groups::{Group, Groups, TargetLoss, TargetState};
pub use hierarchy_nav::HierarchyNav;
pub use horde::{GroupReach, GroupStatus, Horde, UnitState, UnitStatus, state_hash};
pub use horde_core::{ConfigError, ContactConfig, Navigation, SimConfig};
pub use job_graph::{
    Access, FrameReport, GraphBuildError, JobGraph, JobGraphBuilder, JobPanic, Next, PoolError,
    Resource, StageContext, StageTime, WorkerPool,
};
pub use parallel_integration::{ParallelIntegration, Workers};
pub use simulation::Simulation;
pub use snapshot::{
    FileError, FileKind, MAX_ORIGIN_NAME_BYTES, MAX_SNAPSHOT_FILE_BYTES, Origin, REPLAY_VERSION,
    Replay, SNAPSHOT_VERSION, Snapshot, write_atomic,
};
