//! horde: moves huge RTS armies.
//!
//! The root holds what a game programmer starts with: [`Simulation`] (a crowd with its own
//! `hecs::World`) or [`Horde`] (the same stages on a world you own), [`SimConfig`],
//! [`UnitSpec`], [`GoalSet`], the [`Map`] with its [`Grid`], [`Cell`]s and [`Terrain`],
//! [`ForceField`]s, the [`Command`]s a simulation takes, [`Snapshot`]s and [`Replay`]s,
//! what the simulation reports about units and groups, and the errors those calls return.
//! [`prelude`] is the same in one `use`.
//!
//! The rest lives in domain modules: [`components`] (what a unit is made of),
//! [`fields`] (cost, integration and flow fields, clearance, regions), [`hierarchy`]
//! (sectors and portals for big maps), [`sizes`] (size classes), [`crowd`] (neighbour
//! buckets, goal-area fills), [`formations`] (formations and unit targets), [`formats`]
//! (map and scenario files), [`steering`],
//! [`bodies`] (units as discs against walls), [`forces`], [`settings`], [`level`] (the
//! seeded generator),
//! [`jobs`] (the job graph and frame reports) and [`persistence`] (snapshots, replays,
//! file limits). [`hecs`], [`glam`] and [`puffin`] are re-exported, so their versions always
//! match.
//!
//! The implementation crates are `horde-core` (data and algorithms, no threads) and
//! `horde-systems` (the stages and the job graph); this crate is the API.
//!
//! The README follows; its quick start is compiled and run as a doctest.
#![doc = include_str!("../README.md")]
#![warn(missing_docs)]

pub use glam;
pub use hecs;
/// The puffin horde records its profiling scopes into (0.20): a stage scope named after each
/// stage, a `<stage>::batch` scope per batch, and `Horde::step`, `JobGraph::run` and `sort_units` around the
/// frame. Use this one (or the same version) to see them; turn them on with
/// `puffin::set_scopes_on(true)` and end a puffin frame after each step.
pub use puffin;

pub use horde_core::{
    Cell, EmptyGoalSet, FieldError, ForceField, ForceFieldError, ForceFieldId, ForceKind,
    FormationError, FormationOrder, GoalSet, Grid, GridError, GroupId, Layer, LevelError, Map,
    MapFormatError, SpawnError, Terrain, UnitId, UnitSpec, UnitTarget,
};
pub use horde_systems::{
    Command, ConfigError, FileError, FrameReport, Group, GroupReach, GroupStatus, Groups, Horde,
    Navigation, Outcome, Replay, ReplayError, SimConfig, SimError, Simulation, Snapshot,
    StageError, TargetLoss, TargetState, UnitState, UnitStatus,
};

/// The types most programs use, in one `use horde::prelude::*;`.
pub mod prelude {
    pub use glam::Vec2;
    pub use hecs::{Entity, World};
    pub use horde_core::{
        Cell, ForceField, ForceKind, FormationOrder, GoalSet, Grid, GroupId, Layer, Map, Position,
        Shape, Terrain, UnitId, UnitSpec, UnitTarget, Velocity,
    };
    pub use horde_systems::{
        Command, Horde, Outcome, SimConfig, SimError, Simulation, Snapshot, UnitStatus,
    };
}

/// What a unit is made of: the hecs components [`Horde::spawn`] adds, and their limits.
pub mod components {
    pub use horde_core::{
        Agent, BLOCKED_AFTER, ExternalForce, GiveWay, MAX_RADIUS, MAX_SPEED, Mass, Position,
        Quarantined, SLEEP_AFTER, Steering, Stun, UnitId, Velocity,
    };
}

/// Navigation fields: per-layer costs, the integration field (cost to the goal), the flow
/// field (a direction per cell), their cache, clearance, connected regions, and the exact
/// reference they are checked against.
pub mod fields {
    pub use horde_core::reference;
    pub use horde_core::{
        Clearance, CostField, CostFieldError, CostTable, DIAG_STEP, Direction, FieldCache, FieldId,
        FieldKey, FlowConfig, FlowField, IntegrationField, LINE_OF_SIGHT, NO_DIRECTION, NavField,
        OPEN, ORTHO_STEP, Regions, TerrainProps, UNREACHABLE, WALL, ZeroCost, fill_direction_rows,
        segment_is_clear,
    };
    pub use horde_systems::{ParallelIntegration, Workers};
}

/// Hierarchical navigation for big maps: sectors, the portal graph between them, coarse
/// routes and sector fields built lazily where units stand, and the simulation's requests.
pub mod hierarchy {
    pub use horde_core::hierarchy::*;
    pub use horde_core::{HierarchyError, SectorGrid};
    pub use horde_systems::HierarchyNav;
}

/// Size classes (docs/behaviour.md, "Unit sizes"): which fields a unit of a radius follows,
/// and each class's costs, with cells too close to walls blocked.
pub mod sizes {
    pub use horde_core::{
        ClassCostChange, Escape, MAX_SIZE_CLASSES, class_clearance, class_cost_field, escape_from,
        size_class, update_class_cost,
    };
}

/// Where a crowd stands and rests: the neighbour buckets, goal-area fills (the rest order
/// round a goal) and the per-unit memo of cell reads.
pub mod crowd {
    pub use horde_core::{CellMemo, FillWay, GoalFill, SpatialGrid, SpatialGridError, cell_share};
}

/// Formations and unit targets (docs/behaviour.md, "Formations", "Unit targets"): shapes
/// and their slots, which unit takes which, each group's formation as it moves, and groups
/// that follow a unit.
pub mod formations {
    pub use horde_core::{
        FormationError, FormationOrder, MAX_OFFSET, MAX_SLOTS, SLOTS_APART, SPACING_MARGIN, Shape,
        UnitTarget, assign_slots, assign_slots_ranked, slot_of, slot_offsets, spread_slots,
        squeeze, to_world, turn_toward,
    };
    pub use horde_systems::{Formation, Formations, TargetLoss, TargetState};
}

/// Map and scenario files: horde's ASCII maps, Moving AI `.map` and `.map.scen`, the check
/// of a scenario's optimal lengths, and bounded, atomic file access.
pub mod formats {
    pub use horde_core::files;
    pub use horde_core::{
        Fnv, MAX_GRID_SIDE, MAX_MAP_FILE_BYTES, MapFormat, MapFormatError, MapFormatErrorKind,
        RELATIVE_TOLERANCE, Scen, ScenLine, ScenMismatch, ScenReport, TerrainLengthError,
        check_scen_lines, load_map, load_scen, movingai_char, parse_ascii_map, parse_movingai_map,
        parse_scen, uniform_cost_field, write_ascii_map, write_movingai_map,
    };
}

/// Steering: the ray fan against walls, separation, the blend and bounded turns, with
/// their settings.
pub mod steering {
    pub use horde_core::{
        Fan, MAX_SEPARATION_RANGE, RayHit, SteeringConfig, TurnLimit, avoid_walls, blend_and_turn,
        cast_ray, floor, probe, rotate, separation_push, unit_noise,
    };
}

/// Units as solid discs against the grid (sweeps, push-outs, slides, escapes from walls),
/// the contact step's settings and how solid a crowd is.
pub mod bodies {
    pub use horde_core::{
        Blocked, ESCAPE_REACH, WALL_TOLERANCE, cell_coords, centre_is_open, clear_of_walls,
        escape_wall, escape_wall_where, limit_approach, move_body, push_out_of_walls,
        slide_velocity, sweep, wall_depth, without_part_into,
    };
    pub use horde_systems::{BodyStats, ContactConfig};
}

/// Force fields (explosions, black holes, pushes, vortices), knock-back and drag.
pub mod forces {
    pub use horde_core::{
        ForceField, ForceFieldError, ForceFieldId, ForceKind, ForceManager, ForceRestoreError,
        KnockbackParams, always_snaps_below, apply_impulse, decay_external,
    };
}

/// Every setting of [`SimConfig`], declared once: [`SETTINGS`](settings::SETTINGS) gives each
/// one's name, scenario key, type, range, default and doc, and reads or writes it on a
/// config. Scenario files, snapshots and the C ABI all go through it.
pub mod settings {
    pub use horde_core::config::{Kind, Place, Range, SETTINGS, Setting, Value};
}

/// Levels: the seeded generator. (The benchmark levels horde measures itself on are the
/// crate `horde-fixtures`.)
pub mod level {
    pub use horde_core::{Level, LevelConfig, LevelError, LevelWeights, generate_level};
}

/// The job graph that runs the frame's stages, its worker pool, its reports and the
/// medians and quantiles of many frames' reports ([`FrameTimes`](jobs::FrameTimes)); and
/// [`RunJobs`](jobs::RunJobs), the shape of runner that the fields' methods which split
/// their work take.
pub mod jobs {
    pub use horde_core::{Job, RunJobs};
    pub use horde_systems::{
        Access, FrameReport, FrameTimes, GraphBuildError, JobGraph, JobGraphBuilder, JobPanic,
        Next, PoolError, Resource, StageContext, StageError, StageTime, WorkerPool,
    };
}

/// Snapshots, replays, the state hash and the limits on their files.
pub mod persistence {
    pub use horde_systems::{
        FileError, FileKind, MAX_ORIGIN_NAME_BYTES, MAX_SNAPSHOT_FILE_BYTES, Origin,
        REPLAY_VERSION, Replay, ReplayError, SNAPSHOT_VERSION, Snapshot, state_hash, write_atomic,
    };
}
