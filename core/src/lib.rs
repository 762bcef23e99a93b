//! horde-core: the data and algorithms of horde, with no threads.
//!
//! Grid geometry ([`Grid`], [`Cell`]), terrain ([`Terrain`], [`Layer`], [`CostTable`]) and the
//! navigation fields built from it ([`CostField`] -> [`IntegrationField`] -> [`FlowField`]),
//! cached per goal set and layer in a [`FieldCache`].
#![warn(missing_docs)]

mod body;
mod cell_memo;
mod clearance;
pub mod config;
mod cost_field;
mod crowd_field;
mod direction;
mod field_cache;
pub mod files;
mod flow;
mod force;
mod formation;
mod goal_fill;
mod grid;
pub mod hierarchy;
mod integration;
mod level;
mod map;
mod map_format;
pub mod reference;
mod regions;
mod scen_check;
mod size_class;
mod spatial_grid;
mod stamp;
mod steering;
mod terrain;
mod unit;

/// One batch of work handed to a [`RunJobs`]: `job(i)` does the `i`-th part, and may be
/// called from any thread.
pub type Job<'a> = dyn Fn(usize) + Sync + 'a;

/// How the methods that split their work (the hierarchy's sector fields and routes, the
/// spatial grid's sort, the parallel integration) have it run: `run(jobs, job)` calls
/// `job(i)` exactly once for every `i` in `0..jobs`, on whatever threads it has, and returns
/// when all are done. The results never depend on the order or the threads. Any closure of
/// that shape is one (`horde-systems` passes its worker pool; without threads, a loop over
/// `0..jobs` will do).
pub trait RunJobs: Fn(usize, &Job<'_>) {}

impl<R: Fn(usize, &Job<'_>)> RunJobs for R {}

/// The [`RunJobs`] for callers without threads: every job in order on the calling thread.
pub(crate) fn in_order(jobs: usize, job: &Job<'_>) {
    (0..jobs).for_each(job);
}

pub use body::{
    Blocked, ESCAPE_REACH, WALL_TOLERANCE, cell_coords, centre_is_open, clear_of_walls,
    escape_wall, escape_wall_where, limit_approach, move_body, push_out_of_walls, slide_velocity,
    sweep, wall_depth, without_part_into,
};
pub use cell_memo::CellMemo;
pub use clearance::Clearance;
pub use config::{
    ConfigError, ContactConfig, FlowConfig, KnockbackParams, Navigation, SETTINGS, Setting,
    SimConfig, SteeringConfig,
};
pub use cost_field::{CostField, CostFieldError};
pub use crowd_field::{CROWD_WEIGHT, CrowdField};
pub use direction::{DIAG_STEP, Direction, ORTHO_STEP};
pub use field_cache::{EmptyGoalSet, FieldCache, FieldId, FieldKey, GoalSet, NavField};
pub use flow::{FlowField, LINE_OF_SIGHT, NO_DIRECTION, fill_direction_rows, segment_is_clear};
pub use force::{
    ForceField, ForceFieldError, ForceFieldId, ForceKind, ForceManager, ForceRestoreError,
    always_snaps_below, apply_impulse, decay_external,
};
pub use formation::{
    FormationError, FormationOrder, MAX_OFFSET, MAX_SLOTS, SLOTS_APART, SPACING_MARGIN, Shape,
    UnitTarget, assign_slots, assign_slots_ranked, open_reach, slot_of, slot_offsets, spread_slots,
    squeeze, step_toward, to_world, turn_toward,
};
pub use goal_fill::{FIRST_REACH, FillWay, GoalFill, MAX_REACH, REST_MARGIN, cell_share};
pub use grid::{Cell, Grid, GridError, MAX_GRID_SIDE};
pub use hierarchy::{
    CoarseRoute, HierarchicalField, HierarchyError, HierarchyStats, PortalGraph, SectorCache,
    SectorGrid,
};
pub use integration::{DeltaStepping, FieldError, IntegrationField, UNREACHABLE};
pub use level::{Level, LevelConfig, LevelError, LevelWeights, generate_level};
pub use map::{ClassCostChange, Fnv, Map, TerrainLengthError};
pub use map_format::{
    MAX_MAP_FILE_BYTES, MapFormat, MapFormatError, MapFormatErrorKind, Scen, ScenLine, load_map,
    load_scen, movingai_char, parse_ascii_map, parse_movingai_map, parse_scen, write_ascii_map,
    write_movingai_map,
};
pub use regions::Regions;
pub use scen_check::{
    RELATIVE_TOLERANCE, ScenMismatch, ScenReport, check_scen_lines, uniform_cost_field,
};
pub use size_class::{
    Escape, MAX_SIZE_CLASSES, class_clearance, class_cost_field, escape_from, size_class,
    update_class_cost,
};
pub use spatial_grid::{SpatialGrid, SpatialGridError};
pub use steering::{
    Fan, LANE_REACH, Lane, MAX_SEPARATION_RANGE, RayHit, TurnLimit, avoid_walls, blend_and_turn,
    cast_ray, floor, lane_near, probe, rotate, separation_push, unit_noise,
};
pub use terrain::{CostTable, Layer, OPEN, Terrain, TerrainProps, WALL, ZeroCost};
pub use unit::{
    Agent, BLOCKED_AFTER, ExternalForce, GiveWay, GroupId, MAX_RADIUS, MAX_SPEED, Mass, Position,
    Quarantined, SLEEP_AFTER, SpawnError, Steering, Stun, UnitId, UnitSpec, Velocity,
};
