//! horde-ffi: a C ABI for [horde](https://docs.rs/horde), so that engines written in C, C++,
//! C# (P/Invoke) or anything else with a C FFI can drive a horde simulation.
//!
//! The library builds as a `cdylib` (`libhorde_ffi.so`, `horde_ffi.dll`, `libhorde_ffi.dylib`)
//! and a `staticlib` (`libhorde_ffi.a`); its header, `include/horde.h`, is generated from this
//! crate by cbindgen and checked to be current by the crate's tests. `docs/ffi.md` in the
//! repository is the guide: ownership, threading, errors and an engine loop.
//!
//! Rules every function keeps:
//!
//! - Only plain `#[repr(C)]` data crosses the boundary; a simulation is an opaque
//!   [`HordeSim`] handle.
//! - Every function but [`horde_abi_version`] and [`horde_status_name`] returns a
//!   [`HordeStatus`]: [`HORDE_OK`] or an error code; after an error,
//!   [`horde_last_error`] copies the message into a caller's buffer.
//! - No panic crosses the boundary: a panic inside horde is caught and returned as
//!   [`HORDE_ERROR_PANIC`] (and poisons the simulation).
//! - A call that fails changes nothing, except where its documentation says otherwise.
//!
//! This crate is the one place in the workspace where `unsafe` is allowed, for the
//! boundary only: every block says why it is sound in a `SAFETY:` comment.

mod guard;
pub mod status;

#[cfg(test)]
mod tests;

use std::ffi::c_char;
use std::mem::MaybeUninit;
use std::time::Duration;

use horde::components::{ExternalForce, Position, Quarantined, Stun, Velocity};
use horde::fields::FlowConfig;
use horde::forces::KnockbackParams;
use horde::formats::MapFormat;
use horde::glam::Vec2;
use horde::hecs::{Entity, World};
use horde::steering::{ContactConfig, SteeringConfig};
use horde::{
    Cell, ForceField, ForceKind, GoalSet, Grid, GroupId, Layer, Map, Navigation, SimConfig,
    Simulation, Snapshot, Terrain, UnitId, UnitSpec,
};

use guard::{Failure, guarded, with_last_error, with_sim, with_sim_even_poisoned};
use status::*;

/// The status every call returns: `HORDE_OK` (0) or one of the
/// `HORDE_ERROR_*` codes.
pub type HordeStatus = i32;

/// The version of this ABI: raised whenever a function, a struct or a constant of
/// `horde.h` changes incompatibly. Compare it with `horde_abi_version` at start-up.
pub const HORDE_ABI_VERSION: u32 = 1;

/// Terrain byte: open ground; every layer passes.
pub const HORDE_TERRAIN_EMPTY: u8 = 0;
/// Terrain byte: brick wall; a wall for ground and hover units, air units fly over it
/// (destroy it with `horde_set_terrain`).
pub const HORDE_TERRAIN_BRICK_WALL: u8 = 1;
/// Terrain byte: steel plate; a wall for ground and hover units, air units fly over it.
pub const HORDE_TERRAIN_STEEL_PLATE: u8 = 2;
/// Terrain byte: forest; rough for ground and hover units (cost 3: paths go round it when
/// that is cheaper), open for air.
pub const HORDE_TERRAIN_FOREST: u8 = 3;
/// Terrain byte: water; a wall for ground units, open for hover and air units.
pub const HORDE_TERRAIN_WATER: u8 = 4;
/// Terrain byte: snow; open for every layer, slippery (less drag on knock-back).
pub const HORDE_TERRAIN_SNOW: u8 = 5;
/// Terrain byte: the players' lair; a wall for ground and hover units, open for air.
pub const HORDE_TERRAIN_LAIR: u8 = 6;
/// Terrain byte: swamp (Moving AI `S`); rough for ground and hover units (cost 2), open
/// for air.
pub const HORDE_TERRAIN_SWAMP: u8 = 7;
/// Terrain byte: blocked (Moving AI `@`, `O`, `T`); a wall for ground and hover units, open
/// for air.
pub const HORDE_TERRAIN_BLOCKED: u8 = 8;

/// Layer byte: ground units (the default).
pub const HORDE_LAYER_GROUND: u8 = 0;
/// Layer byte: hover units (cross water).
pub const HORDE_LAYER_HOVER: u8 = 1;
/// Layer byte: air units (cross everything but the map's edge).
pub const HORDE_LAYER_AIR: u8 = 2;

/// `HordeConfig::navigation`: one full-map flow field per goal and layer (the default).
pub const HORDE_NAVIGATION_FLAT: u32 = 0;
/// `HordeConfig::navigation`: sector fields along a coarse route, for big maps.
pub const HORDE_NAVIGATION_HIERARCHICAL: u32 = 1;

/// `HordeForceField::kind`: pushes away from the centre (a blast).
pub const HORDE_FORCE_EXPLOSION: u32 = 0;
/// `HordeForceField::kind`: pulls toward the centre (a black hole).
pub const HORDE_FORCE_ATTRACTOR: u32 = 1;
/// `HordeForceField::kind`: pushes along `direction_x, direction_y` everywhere in the radius.
pub const HORDE_FORCE_PUSH: u32 = 2;
/// `HordeForceField::kind`: pushes along the circle around the centre (a whirlpool);
/// `clockwise` says which way (clockwise as seen with world +y pointing down).
pub const HORDE_FORCE_VORTEX: u32 = 3;

/// `HordeUnit::flags` bit: the unit is at rest in its goal area.
pub const HORDE_UNIT_ARRIVED: u32 = 1;
/// `HordeUnit::flags` bit: the unit is at rest outside its goal, behind resting units of its
/// group.
pub const HORDE_UNIT_SETTLED: u32 = 2;
/// `HordeUnit::flags` bit: the unit is quarantined: its state stopped being finite, so horde
/// took it out of the simulation (it no longer moves; despawn it).
pub const HORDE_UNIT_QUARANTINED: u32 = 4;
/// `HordeUnit::flags` bit: the unit is player-controlled.
pub const HORDE_UNIT_CONTROLLABLE: u32 = 8;

/// The length of `HordeStageTime::name`, its terminating NUL included.
pub const HORDE_STAGE_NAME_LEN: usize = 32;

/// Marks a live simulation handle (cleared when it is freed).
const SIM_MAGIC: u64 = 0x686f_7264_655f_7369;

/// A simulation: opaque, made by `horde_sim_create`, `horde_sim_create_movingai` or
/// `horde_sim_create_from_snapshot`, freed by `horde_sim_free`.
pub struct HordeSim {
    magic: u64,
    sim: Simulation,
    /// A panic inside horde left the state unknown: only free and restore are allowed.
    poisoned: bool,
    /// The encoded snapshot of the current state, kept between `horde_snapshot_size` and
    /// `horde_snapshot_write`; cleared by every call that changes the state.
    snapshot_bytes: Option<Vec<u8>>,
    /// Scratch of the bulk reads, kept so that reading every frame allocates nothing.
    scratch: Vec<HordeUnit>,
}

impl HordeSim {
    fn new(sim: Simulation) -> Self {
        Self {
            magic: SIM_MAGIC,
            sim,
            poisoned: false,
            snapshot_bytes: None,
            scratch: Vec::new(),
        }
    }

    /// The simulation, for a call that changes it (the cached snapshot goes).
    fn changing(&mut self) -> &mut Simulation {
        self.snapshot_bytes = None;
        &mut self.sim
    }
}

/// Every setting of a simulation. Get the defaults with `horde_config_default` and change
/// what you need; every value is checked when a simulation is created
/// (`HORDE_ERROR_INVALID_ARGUMENT` names the first bad one).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HordeConfig {
    /// Seed of the per-unit random numbers (default 0).
    pub seed: u64,
    /// Threads, the caller's included (default 1: everything runs on the thread that calls
    /// `horde_step`; n > 1 starts n - 1 worker threads at creation, joined by
    /// `horde_sim_free`). 1..=1024. Results do not depend on it.
    pub threads: u32,
    /// Units per data-parallel batch (default 1024; at least 1).
    pub batch_size: u32,
    /// `HORDE_NAVIGATION_FLAT` (default) or `HORDE_NAVIGATION_HIERARCHICAL`.
    pub navigation: u32,
    /// 1 (default): a field whose goal moved is rebuilt only as far as its followers need
    /// that frame; 0: always complete. Results do not depend on it.
    pub partial_fields: u32,
    /// Contact passes per frame (default 4; 0..=16; 0 lets bodies overlap).
    pub contact_passes: u32,
    /// Scale of a unit's summed contact correction (default 1.5; 0.5..=2).
    pub contact_relaxation: f32,
    /// Cells within this many cells of a single-cell goal walk straight at it when they see
    /// it (default 16; 0 turns line of sight off).
    pub line_of_sight_radius: u32,
    /// Steering: how far ahead of a unit's edge its probe rays look (default 1.5).
    pub probe_length: f32,
    /// Steering: side rays start at `radius * probe_inflate` from the centre (default 1.1).
    pub probe_inflate: f32,
    /// Steering: angle between fan directions, radians (default 10 degrees; in (0, pi]).
    pub fan_step: f32,
    /// Steering: fan steps on each side (default 6; at most 180).
    pub fan_steps: u32,
    /// Steering: weight of the avoidance direction (default 1.0).
    pub avoid_weight: f32,
    /// Steering: weight of separation (default 1.5).
    pub separation_weight: f32,
    /// Steering: fraction of top speed at which separation pushes directly (default 0.5).
    pub separation_push: f32,
    /// Steering: neighbours closer than `(r_a + r_b) * separation_range` push apart
    /// (default 1.2).
    pub separation_range: f32,
    /// Steering: largest random turn a frame, radians (default 0.03).
    pub jitter: f32,
    /// Steering: a unit this many cells (path distance) from its goal has arrived
    /// (default 0.5).
    pub arrival_distance: f32,
    /// Steering: units slow down within this many cells of the goal (default 1.5).
    pub slow_distance: f32,
    /// Knock-back: largest external speed, world units per second (default 20).
    pub max_external_speed: f32,
    /// Knock-back: a hit whose speed change exceeds this stuns (default 4).
    pub stun_threshold: f32,
    /// Knock-back: seconds of stun per unit of speed change above the threshold
    /// (default 0.1).
    pub stun_per_impulse: f32,
    /// Knock-back: longest stun of one hit, seconds (default 2).
    pub max_stun: f32,
    /// Knock-back: drag per second on normal terrain (default 4).
    pub drag: f32,
    /// Knock-back: drag per second on slippery terrain (default 1).
    pub slippery_drag: f32,
    /// Knock-back: external speeds below this snap to zero (default 0.05).
    pub snap_speed: f32,
}

impl HordeConfig {
    fn from_sim_config(c: &SimConfig) -> Self {
        Self {
            seed: c.seed,
            threads: u32::try_from(c.threads).unwrap_or(u32::MAX),
            batch_size: u32::try_from(c.batch_size).unwrap_or(u32::MAX),
            navigation: match c.navigation {
                Navigation::Hierarchical => HORDE_NAVIGATION_HIERARCHICAL,
                _ => HORDE_NAVIGATION_FLAT,
            },
            partial_fields: u32::from(c.partial_fields),
            contact_passes: c.contacts.passes,
            contact_relaxation: c.contacts.relaxation,
            line_of_sight_radius: c.flow.line_of_sight_radius,
            probe_length: c.steering.probe_length,
            probe_inflate: c.steering.probe_inflate,
            fan_step: c.steering.fan_step,
            fan_steps: c.steering.fan_steps,
            avoid_weight: c.steering.avoid_weight,
            separation_weight: c.steering.separation_weight,
            separation_push: c.steering.separation_push,
            separation_range: c.steering.separation_range,
            jitter: c.steering.jitter,
            arrival_distance: c.steering.arrival_distance,
            slow_distance: c.steering.slow_distance,
            max_external_speed: c.knockback.max_external_speed,
            stun_threshold: c.knockback.stun_threshold,
            stun_per_impulse: c.knockback.stun_per_impulse,
            max_stun: c.knockback.max_stun,
            drag: c.knockback.drag,
            slippery_drag: c.knockback.slippery_drag,
            snap_speed: c.knockback.snap_speed,
        }
    }

    /// The `SimConfig` this describes, every value checked.
    fn to_sim_config(self) -> Result<SimConfig, Failure> {
        let navigation = match self.navigation {
            HORDE_NAVIGATION_FLAT => Navigation::Flat,
            HORDE_NAVIGATION_HIERARCHICAL => Navigation::Hierarchical,
            other => {
                return Err(Failure::invalid(format!(
                    "config: navigation = {other} is invalid: it must be \
                     HORDE_NAVIGATION_FLAT (0) or HORDE_NAVIGATION_HIERARCHICAL (1)"
                )));
            }
        };
        let c = SimConfig {
            seed: self.seed,
            threads: self.threads as usize,
            batch_size: self.batch_size as usize,
            navigation,
            partial_fields: flag("config: partial_fields", self.partial_fields)?,
            contacts: ContactConfig {
                passes: self.contact_passes,
                relaxation: self.contact_relaxation,
            },
            flow: FlowConfig {
                line_of_sight_radius: self.line_of_sight_radius,
            },
            steering: SteeringConfig {
                probe_length: self.probe_length,
                probe_inflate: self.probe_inflate,
                fan_step: self.fan_step,
                fan_steps: self.fan_steps,
                avoid_weight: self.avoid_weight,
                separation_weight: self.separation_weight,
                separation_push: self.separation_push,
                separation_range: self.separation_range,
                jitter: self.jitter,
                arrival_distance: self.arrival_distance,
                slow_distance: self.slow_distance,
            },
            knockback: KnockbackParams {
                max_external_speed: self.max_external_speed,
                stun_threshold: self.stun_threshold,
                stun_per_impulse: self.stun_per_impulse,
                max_stun: self.max_stun,
                drag: self.drag,
                slippery_drag: self.slippery_drag,
                snap_speed: self.snap_speed,
            },
        };
        c.validate()?;
        Ok(c)
    }
}

/// A cell of the map: column `x` (from the left), row `y` (from the top: row 0 is the first
/// row of the terrain array and the first line of a map file).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HordeCell {
    /// Column, 0..width.
    pub x: u32,
    /// Row, 0..height.
    pub y: u32,
}

/// One unit to spawn. Get the defaults with `horde_unit_spec_default`, then set at least
/// the position and the group.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HordeUnitSpec {
    /// Centre, world units (cell `(x, y)` covers `[x, x + 1) x [y, y + 1)`): must be inside
    /// the map, in a cell the unit's layer can enter.
    pub x: f32,
    /// See `x`.
    pub y: f32,
    /// Body radius (default 0.5; finite, > 0, at most 1e6).
    pub radius: f32,
    /// Top speed, world units per second (default 4; finite, 0..=1e4).
    pub max_speed: f32,
    /// Largest heading change, radians per second (default 2 pi; finite, > 0).
    pub turn_rate: f32,
    /// Mass (default 1; finite, > 0).
    pub mass: f32,
    /// The group whose goal the unit follows (default 0; the group must exist).
    pub group: u16,
    /// `HORDE_LAYER_GROUND` (default), `HORDE_LAYER_HOVER` or `HORDE_LAYER_AIR`.
    pub layer: u8,
    /// 1 (default): player-controlled (force fields with `affects_controllable = 0` leave
    /// it alone); 0: not.
    pub controllable: u8,
}

impl HordeUnitSpec {
    fn to_spec(self) -> Result<UnitSpec, Failure> {
        let layer = layer_of(self.layer)?;
        let controllable = flag("controllable", u32::from(self.controllable))?;
        Ok(UnitSpec::at(Vec2::new(self.x, self.y))
            .with_radius(self.radius)
            .with_max_speed(self.max_speed)
            .with_turn_rate(self.turn_rate)
            .with_mass(self.mass)
            .with_group(GroupId(self.group))
            .with_layer(layer)
            .with_controllable(controllable))
    }
}

/// A force field to add. Get the defaults with `horde_force_field_default` (an explosion of
/// one frame), then set the kind, centre, radius and strength.
///
/// For a unit at distance `d < radius` from the centre the force is
/// `strength * (1 - d / radius)^falloff * max(0, 1 - time_decay * elapsed)` along the kind's
/// direction; zero outside the radius.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HordeForceField {
    /// `HORDE_FORCE_EXPLOSION` (default), `_ATTRACTOR`, `_PUSH` or `_VORTEX`.
    pub kind: u32,
    /// Centre, world units (finite).
    pub x: f32,
    /// See `x`.
    pub y: f32,
    /// Radius of influence, world units (finite, > 0; default 1).
    pub radius: f32,
    /// Force at the centre, world units x mass / s^2 (0..=1e9; default 0).
    pub strength: f32,
    /// Seconds the field lasts (default 0: a one-frame impulse; `INFINITY`: until the end).
    pub duration: f32,
    /// Distance falloff exponent (0 constant, 1 linear (default), 2 quadratic, ...).
    pub falloff: u32,
    /// Linear fade per second (finite, >= 0; default 0).
    pub time_decay: f32,
    /// `HORDE_FORCE_PUSH` only: the direction (finite, not zero; any length). Default (1, 0).
    pub direction_x: f32,
    /// See `direction_x`.
    pub direction_y: f32,
    /// `HORDE_FORCE_VORTEX` only: 1 clockwise (default), 0 counter-clockwise.
    pub clockwise: u8,
    /// 1 (default): player-controlled units feel it; 0: only the others do.
    pub affects_controllable: u8,
}

impl HordeForceField {
    fn to_field(self) -> Result<ForceField, Failure> {
        let kind = match self.kind {
            HORDE_FORCE_EXPLOSION => ForceKind::Explosion,
            HORDE_FORCE_ATTRACTOR => ForceKind::Attractor,
            HORDE_FORCE_PUSH => ForceKind::Push {
                direction: Vec2::new(self.direction_x, self.direction_y),
            },
            HORDE_FORCE_VORTEX => ForceKind::Vortex {
                clockwise: flag("clockwise", u32::from(self.clockwise))?,
            },
            other => {
                return Err(Failure::invalid(format!(
                    "force field kind = {other} is invalid: it must be HORDE_FORCE_EXPLOSION (0), \
                     _ATTRACTOR (1), _PUSH (2) or _VORTEX (3)"
                )));
            }
        };
        let affects = flag("affects_controllable", u32::from(self.affects_controllable))?;
        Ok(
            ForceField::new(Vec2::new(self.x, self.y), kind, self.radius, self.strength)?
                .with_duration(self.duration)?
                .with_falloff(self.falloff)
                .with_time_decay(self.time_decay)?
                .with_affects_controllable(affects),
        )
    }
}

/// One unit as `horde_read_units` copies it.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct HordeUnit {
    /// The unit's id (given by `horde_spawn`, never reused).
    pub id: u32,
    /// Its group.
    pub group: u16,
    /// Its layer (`HORDE_LAYER_*`).
    pub layer: u8,
    /// Always 0.
    pub reserved: u8,
    /// Bits: `HORDE_UNIT_ARRIVED`, `HORDE_UNIT_SETTLED`, `HORDE_UNIT_QUARANTINED`,
    /// `HORDE_UNIT_CONTROLLABLE`. A unit with neither `ARRIVED` nor `SETTLED` is on its way
    /// (or cannot reach its goal).
    pub flags: u32,
    /// Centre, world units.
    pub x: f32,
    /// See `x`.
    pub y: f32,
    /// The unit's own velocity (steering), world units per second.
    pub vx: f32,
    /// See `vx`.
    pub vy: f32,
    /// The external velocity (knock-back from force fields and shoves), world units per
    /// second. The unit moves by `(vx + external_x, vy + external_y) * dt` a frame (less
    /// where walls or other bodies are in the way).
    pub external_x: f32,
    /// See `external_x`.
    pub external_y: f32,
    /// Seconds of stun left (0 when not stunned; a stunned unit does not steer).
    pub stun: f32,
    /// Body radius.
    pub radius: f32,
}

/// One stage's wall time in the last frame (`horde_stage_times`).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HordeStageTime {
    /// The stage's name, NUL-terminated (`update_forces`, `rebuild_fields`, ...,
    /// `sort_units`).
    pub name: [c_char; HORDE_STAGE_NAME_LEN],
    /// Wall time, seconds.
    pub seconds: f64,
}

/// `value` as a boolean: 0 or 1, anything else refused.
fn flag(name: &str, value: u32) -> Result<bool, Failure> {
    match value {
        0 => Ok(false),
        1 => Ok(true),
        other => Err(Failure::invalid(format!(
            "{name} = {other} is invalid: it must be 0 or 1"
        ))),
    }
}

fn layer_of(value: u8) -> Result<Layer, Failure> {
    Layer::ALL.get(usize::from(value)).copied().ok_or_else(|| {
        Failure::invalid(format!(
            "layer = {value} is invalid: it must be HORDE_LAYER_GROUND (0), _HOVER (1) or _AIR (2)"
        ))
    })
}

fn terrain_of(value: u8) -> Result<Terrain, Failure> {
    Terrain::from_u8(value).ok_or_else(|| {
        Failure::invalid(format!(
            "terrain = {value} is invalid: it must be 0..=8 (HORDE_TERRAIN_EMPTY .. \
             HORDE_TERRAIN_BLOCKED)"
        ))
    })
}

/// Checks an output pointer: not NULL, aligned for `T`.
fn out_ptr<T>(ptr: *mut T, name: &str) -> Result<*mut T, Failure> {
    if ptr.is_null() {
        return Err(Failure::null(name));
    }
    if !ptr.is_aligned() {
        return Err(Failure::invalid(format!(
            "`{name}` is not aligned for its type ({} bytes)",
            std::mem::align_of::<T>()
        )));
    }
    Ok(ptr)
}

/// Writes `value` through the output pointer `ptr`.
///
/// # Safety
/// `ptr` is NULL or points to memory the caller lets us write a `T` to.
unsafe fn write_out<T>(ptr: *mut T, name: &str, value: T) -> Result<(), Failure> {
    let ptr = out_ptr(ptr, name)?;
    // SAFETY: not NULL and aligned (checked by `out_ptr`); the caller promises it points to
    // writable memory for one `T`.
    unsafe { ptr.write(value) };
    Ok(())
}

/// The `len` elements at `ptr` as a slice; NULL is allowed only for `len == 0`.
///
/// # Safety
/// A non-NULL `ptr` points to `len` initialised `T`s that stay unchanged during the call.
unsafe fn in_slice<'a, T>(ptr: *const T, len: usize, name: &str) -> Result<&'a [T], Failure> {
    if len == 0 {
        return Ok(&[]);
    }
    if ptr.is_null() {
        return Err(Failure::null(name));
    }
    if !ptr.is_aligned() {
        return Err(Failure::invalid(format!(
            "`{name}` is not aligned for its type ({} bytes)",
            std::mem::align_of::<T>()
        )));
    }
    if len
        .checked_mul(std::mem::size_of::<T>())
        .is_none_or(|bytes| bytes > isize::MAX as usize)
    {
        return Err(Failure::invalid(format!(
            "`{name}`: {len} elements do not fit in memory"
        )));
    }
    // SAFETY: `ptr` is not NULL, aligned, and the byte length fits `isize` (checked above);
    // the caller promises it points to `len` initialised elements that nothing changes while
    // the call runs.
    Ok(unsafe { std::slice::from_raw_parts(ptr, len) })
}

/// The `len` elements at `ptr` as a slice of slots to write; NULL is allowed only for
/// `len == 0`. The slots are `MaybeUninit`: the caller's buffer need not be initialised.
///
/// # Safety
/// A non-NULL `ptr` points to `len` `T`s the caller lets us overwrite, used by nothing else
/// during the call.
unsafe fn out_slice<'a, T>(
    ptr: *mut T,
    len: usize,
    name: &str,
) -> Result<&'a mut [MaybeUninit<T>], Failure> {
    if len == 0 {
        return Ok(&mut []);
    }
    let ptr = out_ptr(ptr, name)?;
    if len
        .checked_mul(std::mem::size_of::<T>())
        .is_none_or(|bytes| bytes > isize::MAX as usize)
    {
        return Err(Failure::invalid(format!(
            "`{name}`: {len} elements do not fit in memory"
        )));
    }
    // SAFETY: `ptr` is not NULL, aligned, and the byte length fits `isize` (checked above);
    // the caller promises `len` writable elements there that nothing else touches during the
    // call. They are seen as `MaybeUninit<T>` (same layout), so whatever the caller left
    // there is never read, only overwritten.
    Ok(unsafe { std::slice::from_raw_parts_mut(ptr.cast::<MaybeUninit<T>>(), len) })
}

/// Writes `from` into the slots `to` (of the same length).
fn fill<T: Copy>(to: &mut [MaybeUninit<T>], from: &[T]) {
    for (slot, value) in to.iter_mut().zip(from) {
        slot.write(*value);
    }
}

fn goal_of(cells: &[HordeCell], what: &str) -> Result<GoalSet, Failure> {
    GoalSet::new(cells.iter().map(|c| Cell::new(c.x, c.y))).map_err(|_| {
        Failure::invalid(format!(
            "{what}: a goal needs at least one cell (goal_count is 0)"
        ))
    })
}

/// Makes a handle for `sim` and writes it to `out`.
///
/// # Safety
/// `out` is NULL or points to writable memory for one pointer.
unsafe fn hand_out(sim: Simulation, out: *mut *mut HordeSim) -> Result<(), Failure> {
    let out = out_ptr(out, "out_sim")?;
    let handle = Box::into_raw(Box::new(HordeSim::new(sim)));
    // SAFETY: `out` is not NULL and aligned (checked by `out_ptr`); the caller promises it
    // points to writable memory for one pointer.
    unsafe { out.write(handle) };
    Ok(())
}

/// Sets `*out` to NULL when `out` can be written, so a failed create leaves no stale handle.
///
/// # Safety
/// `out` is NULL or points to writable memory for one pointer.
unsafe fn clear_out(out: *mut *mut HordeSim) {
    if !out.is_null() && out.is_aligned() {
        // SAFETY: not NULL and aligned; the caller promises writable memory for a pointer.
        unsafe { out.write(std::ptr::null_mut()) };
    }
}

/// The config `config` points to, or the defaults for NULL.
///
/// # Safety
/// `config` is NULL or points to a `HordeConfig`.
unsafe fn config_of(config: *const HordeConfig) -> Result<SimConfig, Failure> {
    if config.is_null() {
        return Ok(SimConfig::default());
    }
    if !config.is_aligned() {
        return Err(Failure::invalid("`config` is not aligned for HordeConfig"));
    }
    // SAFETY: not NULL, aligned; the caller promises it points to a `HordeConfig`, whose
    // fields are plain integers and floats (any bit pattern is a value).
    let config = unsafe { config.read() };
    config.to_sim_config()
}

// ---------------------------------------------------------------------------------------
// Versions and errors

/// The ABI version of the library (`HORDE_ABI_VERSION` of the header it was built with).
/// A program should check it equals the `HORDE_ABI_VERSION` it was compiled against.
#[unsafe(no_mangle)]
pub extern "C" fn horde_abi_version() -> u32 {
    HORDE_ABI_VERSION
}

/// The name of a status code (`"HORDE_OK"`, `"HORDE_ERROR_NULL_POINTER"`, ...;
/// `"HORDE_ERROR_UNKNOWN"` for a code that is none of them), as a static NUL-terminated
/// string the caller must not free.
#[unsafe(no_mangle)]
pub extern "C" fn horde_status_name(status: HordeStatus) -> *const c_char {
    let name: &'static [u8] = match status {
        HORDE_OK => b"HORDE_OK\0",
        HORDE_ERROR_NULL_POINTER => b"HORDE_ERROR_NULL_POINTER\0",
        HORDE_ERROR_INVALID_ARGUMENT => b"HORDE_ERROR_INVALID_ARGUMENT\0",
        HORDE_ERROR_BUFFER_TOO_SMALL => b"HORDE_ERROR_BUFFER_TOO_SMALL\0",
        HORDE_ERROR_NO_SUCH_GROUP => b"HORDE_ERROR_NO_SUCH_GROUP\0",
        HORDE_ERROR_NO_SUCH_UNIT => b"HORDE_ERROR_NO_SUCH_UNIT\0",
        HORDE_ERROR_OUTSIDE_MAP => b"HORDE_ERROR_OUTSIDE_MAP\0",
        HORDE_ERROR_BLOCKED => b"HORDE_ERROR_BLOCKED\0",
        HORDE_ERROR_MAP_FORMAT => b"HORDE_ERROR_MAP_FORMAT\0",
        HORDE_ERROR_SNAPSHOT => b"HORDE_ERROR_SNAPSHOT\0",
        HORDE_ERROR_LIMIT => b"HORDE_ERROR_LIMIT\0",
        HORDE_ERROR_STAGE => b"HORDE_ERROR_STAGE\0",
        HORDE_ERROR_PANIC => b"HORDE_ERROR_PANIC\0",
        HORDE_ERROR_POISONED => b"HORDE_ERROR_POISONED\0",
        HORDE_ERROR_INTERNAL => b"HORDE_ERROR_INTERNAL\0",
        _ => b"HORDE_ERROR_UNKNOWN\0",
    };
    name.as_ptr().cast()
}

/// Copies the message of the last call on this thread that failed into `buffer`, as UTF-8
/// with a terminating NUL; the message is empty ("") when the last call succeeded. This call
/// does not change the message.
///
/// `*out_len` (when `out_len` is not NULL) receives the message's length in bytes, NUL not
/// included: a buffer of `*out_len + 1` bytes holds it whole. When `capacity` is smaller than
/// that, the first bytes that fit in `capacity - 1` are copied (cut at a UTF-8 character
/// boundary), terminated by a NUL, and the call returns `HORDE_ERROR_BUFFER_TOO_SMALL`.
/// `capacity` 0 writes nothing but `*out_len` and returns `HORDE_ERROR_BUFFER_TOO_SMALL`;
/// `buffer` may be NULL only then (`horde_last_error(NULL, 0, &len)` asks for the length).
/// A NULL `buffer` with a `capacity` returns `HORDE_ERROR_NULL_POINTER`.
///
/// # Safety
/// `buffer` points to `capacity` writable bytes (or is NULL with `capacity` 0); `out_len` is
/// NULL or points to a writable `size_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn horde_last_error(
    buffer: *mut c_char,
    capacity: usize,
    out_len: *mut usize,
) -> HordeStatus {
    let outcome = std::panic::catch_unwind(|| {
        with_last_error(|message| {
            if !out_len.is_null() {
                if !out_len.is_aligned() {
                    return HORDE_ERROR_INVALID_ARGUMENT;
                }
                // SAFETY: not NULL, aligned; the caller promises a writable `size_t`.
                unsafe { out_len.write(message.len()) };
            }
            if capacity == 0 {
                return HORDE_ERROR_BUFFER_TOO_SMALL;
            }
            if buffer.is_null() {
                return HORDE_ERROR_NULL_POINTER;
            }
            let mut copy = message.len().min(capacity - 1);
            while !message.is_char_boundary(copy) {
                copy -= 1;
            }
            // SAFETY: `buffer` is not NULL and the caller promises `capacity` writable bytes;
            // we write `copy + 1 <= capacity` of them, from the message, which does not
            // overlap the caller's buffer (it lives in this thread's storage).
            unsafe {
                std::ptr::copy_nonoverlapping(message.as_ptr(), buffer.cast::<u8>(), copy);
                buffer.add(copy).write(0);
            }
            if copy < message.len() {
                HORDE_ERROR_BUFFER_TOO_SMALL
            } else {
                HORDE_OK
            }
        })
    });
    outcome.unwrap_or(HORDE_ERROR_PANIC)
}

// ---------------------------------------------------------------------------------------
// Defaults

/// Writes the default config to `*out` (every field's default is in `HordeConfig`'s docs).
///
/// # Safety
/// `out` is NULL or points to a writable `HordeConfig`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn horde_config_default(out: *mut HordeConfig) -> HordeStatus {
    guarded(|| {
        let config = HordeConfig::from_sim_config(&SimConfig::default());
        // SAFETY: the caller keeps this function's `# Safety` contract on every pointer, which
        // is all that `with_sim` and the pointer helpers (`in_slice`, `write_out`, ...) require.
        unsafe { write_out(out, "out", config) }
    })
}

/// Writes the default unit spec to `*out`: position (0, 0), radius 0.5, top speed 4, turn
/// rate 2 pi, mass 1, group 0, ground layer, controllable. Set the position and group.
///
/// # Safety
/// `out` is NULL or points to a writable `HordeUnitSpec`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn horde_unit_spec_default(out: *mut HordeUnitSpec) -> HordeStatus {
    guarded(|| {
        let s = UnitSpec::at(Vec2::ZERO);
        let spec = HordeUnitSpec {
            x: s.position.x,
            y: s.position.y,
            radius: s.radius,
            max_speed: s.max_speed,
            turn_rate: s.turn_rate,
            mass: s.mass,
            group: s.group.0,
            layer: s.layer as u8,
            controllable: u8::from(s.controllable),
        };
        // SAFETY: the caller keeps this function's `# Safety` contract on every pointer, which
        // is all that `with_sim` and the pointer helpers (`in_slice`, `write_out`, ...) require.
        unsafe { write_out(out, "out", spec) }
    })
}

/// Writes the default force field to `*out`: an explosion at (0, 0), radius 1, strength 0,
/// duration 0 (one frame), linear falloff, no time decay, push direction (1, 0), clockwise,
/// affecting controllable units. Set kind, centre, radius and strength.
///
/// # Safety
/// `out` is NULL or points to a writable `HordeForceField`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn horde_force_field_default(out: *mut HordeForceField) -> HordeStatus {
    guarded(|| {
        let field = HordeForceField {
            kind: HORDE_FORCE_EXPLOSION,
            x: 0.0,
            y: 0.0,
            radius: 1.0,
            strength: 0.0,
            duration: 0.0,
            falloff: 1,
            time_decay: 0.0,
            direction_x: 1.0,
            direction_y: 0.0,
            clockwise: 1,
            affects_controllable: 1,
        };
        // SAFETY: the caller keeps this function's `# Safety` contract on every pointer, which
        // is all that `with_sim` and the pointer helpers (`in_slice`, `write_out`, ...) require.
        unsafe { write_out(out, "out", field) }
    })
}

// ---------------------------------------------------------------------------------------
// Lifecycle

/// Creates a simulation on a `width x height` map and writes its handle to `*out_sim`.
///
/// `terrain` holds `terrain_len == width * height` bytes, row by row from the top
/// (`terrain[y * width + x]` is cell `(x, y)`), each a `HORDE_TERRAIN_*` value (0..=8). Cells
/// are 1 world unit wide and the map's corner is at world (0, 0), so cell `(x, y)` covers
/// `[x, x + 1) x [y, y + 1)`. Each side is 1..=32768. `config` NULL means the defaults.
///
/// On failure `*out_sim` is set to NULL (when `out_sim` is not NULL) and nothing is made.
///
/// # Safety
/// `terrain` points to `terrain_len` readable bytes; `config` is NULL or points to a
/// `HordeConfig`; `out_sim` is NULL or points to a writable `HordeSim*`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn horde_sim_create(
    width: u32,
    height: u32,
    terrain: *const u8,
    terrain_len: usize,
    config: *const HordeConfig,
    out_sim: *mut *mut HordeSim,
) -> HordeStatus {
    // SAFETY: the caller keeps this function's `# Safety` contract on every pointer, which
    // is all that `with_sim` and the pointer helpers (`in_slice`, `write_out`, ...) require.
    unsafe { clear_out(out_sim) };
    guarded(|| {
        out_ptr(out_sim, "out_sim")?;
        if terrain.is_null() {
            return Err(Failure::null("terrain"));
        }
        let grid = Grid::new(width, height)?;
        if terrain_len != grid.len() {
            return Err(Failure::invalid(format!(
                "terrain_len = {terrain_len}, but a {width}x{height} map has {} cells",
                grid.len()
            )));
        }
        // SAFETY: the caller keeps this function's `# Safety` contract on every pointer, which
        // is all that `with_sim` and the pointer helpers (`in_slice`, `write_out`, ...) require.
        let bytes = unsafe { in_slice(terrain, terrain_len, "terrain")? };
        let cells = bytes
            .iter()
            .enumerate()
            .map(|(i, &b)| {
                terrain_of(b).map_err(|f| {
                    f.context(&format!(
                        "terrain[{i}] (cell {}, {})",
                        i % width as usize,
                        i / width as usize
                    ))
                })
            })
            .collect::<Result<Vec<Terrain>, Failure>>()?;
        // SAFETY: the caller keeps this function's `# Safety` contract on every pointer, which
        // is all that `with_sim` and the pointer helpers (`in_slice`, `write_out`, ...) require.
        let config = unsafe { config_of(config)? };
        let map = Map::from_terrain(grid, cells, horde::fields::CostTable::default())?;
        let sim = Simulation::new(map, config)?;
        // SAFETY: the caller keeps this function's `# Safety` contract on every pointer, which
        // is all that `with_sim` and the pointer helpers (`in_slice`, `write_out`, ...) require.
        unsafe { hand_out(sim, out_sim) }
    })
}

/// Creates a simulation on a Moving AI `.map` file's text and writes its handle to
/// `*out_sim`. `text` holds `text_len` bytes of UTF-8 (no terminating NUL needed):
/// `type octile`, `height H`, `width W`, `map`, then H rows of W characters (`.` `G` empty,
/// `@` `O` `T` blocked, `S` swamp, `W` water; horde's own `#` `X` `F` `~` `:` `L` too). Row 0
/// is the first row. `config` NULL means the defaults.
///
/// On failure `*out_sim` is set to NULL (when `out_sim` is not NULL); a malformed file gives
/// `HORDE_ERROR_MAP_FORMAT` with the line in the message.
///
/// # Safety
/// `text` points to `text_len` readable bytes; `config` is NULL or points to a
/// `HordeConfig`; `out_sim` is NULL or points to a writable `HordeSim*`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn horde_sim_create_movingai(
    text: *const c_char,
    text_len: usize,
    config: *const HordeConfig,
    out_sim: *mut *mut HordeSim,
) -> HordeStatus {
    // SAFETY: the caller keeps this function's `# Safety` contract on every pointer, which
    // is all that `with_sim` and the pointer helpers (`in_slice`, `write_out`, ...) require.
    unsafe { clear_out(out_sim) };
    guarded(|| {
        out_ptr(out_sim, "out_sim")?;
        if text.is_null() {
            return Err(Failure::null("text"));
        }
        // SAFETY: the caller keeps this function's `# Safety` contract on every pointer, which
        // is all that `with_sim` and the pointer helpers (`in_slice`, `write_out`, ...) require.
        let bytes = unsafe { in_slice(text.cast::<u8>(), text_len, "text")? };
        // SAFETY: the caller keeps this function's `# Safety` contract on every pointer, which
        // is all that `with_sim` and the pointer helpers (`in_slice`, `write_out`, ...) require.
        let config = unsafe { config_of(config)? };
        let map = MapFormat::MovingAi.parse_bytes(bytes, "map text")?;
        let sim = Simulation::new(map, config)?;
        // SAFETY: the caller keeps this function's `# Safety` contract on every pointer, which
        // is all that `with_sim` and the pointer helpers (`in_slice`, `write_out`, ...) require.
        unsafe { hand_out(sim, out_sim) }
    })
}

/// Creates a simulation in the state a snapshot holds (bytes written by
/// `horde_snapshot_write`, from this library version), running on `threads` threads
/// (1..=1024; the snapshot holds every other setting), and writes its handle to `*out_sim`.
/// It continues exactly as the simulation that was saved: same state hash, frame by frame.
///
/// On failure `*out_sim` is set to NULL (when `out_sim` is not NULL).
///
/// # Safety
/// `bytes` points to `len` readable bytes; `out_sim` is NULL or points to a writable
/// `HordeSim*`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn horde_sim_create_from_snapshot(
    bytes: *const u8,
    len: usize,
    threads: u32,
    out_sim: *mut *mut HordeSim,
) -> HordeStatus {
    // SAFETY: the caller keeps this function's `# Safety` contract on every pointer, which
    // is all that `with_sim` and the pointer helpers (`in_slice`, `write_out`, ...) require.
    unsafe { clear_out(out_sim) };
    guarded(|| {
        out_ptr(out_sim, "out_sim")?;
        if bytes.is_null() {
            return Err(Failure::null("bytes"));
        }
        // SAFETY: the caller keeps this function's `# Safety` contract on every pointer, which
        // is all that `with_sim` and the pointer helpers (`in_slice`, `write_out`, ...) require.
        let bytes = unsafe { in_slice(bytes, len, "bytes")? };
        let sim = restore(bytes, threads as usize)?;
        // SAFETY: the caller keeps this function's `# Safety` contract on every pointer, which
        // is all that `with_sim` and the pointer helpers (`in_slice`, `write_out`, ...) require.
        unsafe { hand_out(sim, out_sim) }
    })
}

fn restore(bytes: &[u8], threads: usize) -> Result<Simulation, Failure> {
    if threads == 0 || threads > SimConfig::MAX_THREADS {
        return Err(Failure::invalid(format!(
            "threads = {threads} is invalid: it must be 1..={}",
            SimConfig::MAX_THREADS
        )));
    }
    let snapshot = Snapshot::from_bytes(bytes)?;
    Ok(Simulation::from_snapshot(&snapshot, threads)?)
}

/// Frees a simulation (its worker threads are stopped and joined). `sim` must not be used
/// afterwards. NULL is allowed and does nothing (returns `HORDE_OK`). A poisoned simulation
/// is freed too.
///
/// # Safety
/// `sim` is NULL or a handle from a `horde_sim_create*` call not yet freed, used by no other
/// thread.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn horde_sim_free(sim: *mut HordeSim) -> HordeStatus {
    guarded(|| {
        if sim.is_null() {
            return Ok(());
        }
        if !sim.is_aligned() {
            return Err(Failure::invalid(
                "`sim` is not a simulation handle (misaligned pointer)",
            ));
        }
        // SAFETY: the caller promises `sim` is a live handle from `hand_out` (a
        // `Box::into_raw`), used by no other thread; aligned (checked above).
        let magic = unsafe { (*sim).magic };
        if magic != SIM_MAGIC {
            return Err(Failure::invalid(
                "`sim` is not a simulation handle (freed already, or not made by \
                 horde_sim_create*)",
            ));
        }
        // SAFETY: as above: the pointer came from `Box::into_raw` and is freed only here;
        // the magic is cleared first so a second free of the same (not yet reused) memory is
        // caught instead of freeing twice... once the memory is reused nothing can tell, so
        // the docs forbid it.
        unsafe {
            (*sim).magic = 0;
            drop(Box::from_raw(sim));
        }
        Ok(())
    })
}

// ---------------------------------------------------------------------------------------
// Commands

/// Adds a group heading for the goal `goals[0..goal_count]` (at least one cell, each inside
/// the map and not a wall for both ground and hover units; duplicates are ignored) and writes
/// its id to `*out_group`. Group ids are 0, 1, 2, ... in the order groups are added.
///
/// # Safety
/// `sim` is a live handle; `goals` points to `goal_count` `HordeCell`s; `out_group` points
/// to a writable `uint16_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn horde_add_group(
    sim: *mut HordeSim,
    goals: *const HordeCell,
    goal_count: usize,
    out_group: *mut u16,
) -> HordeStatus {
    // SAFETY: the caller keeps this function's `# Safety` contract on every pointer, which
    // is all that `with_sim` and the pointer helpers (`in_slice`, `write_out`, ...) require.
    unsafe {
        with_sim(sim, |h| {
            out_ptr(out_group, "out_group")?;
            let cells = in_slice(goals, goal_count, "goals")?;
            let goal = goal_of(cells, "goals")?;
            let group = h.changing().add_group(goal)?;
            write_out(out_group, "out_group", group.0)
        })
    }
}

/// Gives group `group` the goal `goals[0..goal_count]` (rules as in `horde_add_group`); it
/// takes effect from the next frame, and the group's arrived units set off again.
///
/// # Safety
/// `sim` is a live handle; `goals` points to `goal_count` `HordeCell`s.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn horde_set_group_goal(
    sim: *mut HordeSim,
    group: u16,
    goals: *const HordeCell,
    goal_count: usize,
) -> HordeStatus {
    // SAFETY: the caller keeps this function's `# Safety` contract on every pointer, which
    // is all that `with_sim` and the pointer helpers (`in_slice`, `write_out`, ...) require.
    unsafe {
        with_sim(sim, |h| {
            let cells = in_slice(goals, goal_count, "goals")?;
            let goal = goal_of(cells, "goals")?;
            if h.sim.horde().group_goal_frame(GroupId(group)).is_none() {
                return Err(no_such_group(group, &h.sim));
            }
            h.changing().set_group_goal(GroupId(group), goal)?;
            Ok(())
        })
    }
}

fn no_such_group(group: u16, sim: &Simulation) -> Failure {
    Failure::new(
        HORDE_ERROR_NO_SUCH_GROUP,
        format!(
            "group {group} does not exist (the simulation has {} groups)",
            sim.horde().groups().len()
        ),
    )
}

/// Spawns `count` units, `specs[0..count]`, in that order, and writes their ids to
/// `out_ids[0..count]` (when `out_ids` is not NULL). Ids count up from 0 over the life of the
/// simulation and are never reused.
///
/// Every spec is checked before any unit is spawned: a bad spec (an unknown group or layer,
/// a position outside the map or in a cell its layer cannot enter, a number out of range)
/// spawns none, and the message names its index. `*out_spawned` (when `out_spawned` is not
/// NULL) receives the number of units spawned: `count` on success, 0 on a bad spec; only a
/// limit reached part-way (`HORDE_ERROR_LIMIT`, ids exhausted) leaves the first
/// `*out_spawned` units spawned, their ids written.
///
/// # Safety
/// `sim` is a live handle; `specs` points to `count` `HordeUnitSpec`s; `out_ids` is NULL or
/// points to `count` writable `uint32_t`s; `out_spawned` is NULL or points to a writable
/// `size_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn horde_spawn(
    sim: *mut HordeSim,
    specs: *const HordeUnitSpec,
    count: usize,
    out_ids: *mut u32,
    out_spawned: *mut usize,
) -> HordeStatus {
    if !out_spawned.is_null() && out_spawned.is_aligned() {
        // SAFETY: not NULL, aligned; the caller promises a writable `size_t`.
        unsafe { out_spawned.write(0) };
    }
    // SAFETY: the caller keeps this function's `# Safety` contract on every pointer, which
    // is all that `with_sim` and the pointer helpers (`in_slice`, `write_out`, ...) require.
    unsafe {
        with_sim(sim, |h| {
            let specs = in_slice(specs, count, "specs")?;
            let ids = if out_ids.is_null() {
                None
            } else {
                Some(out_slice(out_ids, count, "out_ids")?)
            };
            if !out_spawned.is_null() {
                out_ptr(out_spawned, "out_spawned")?;
            }
            let mut checked = Vec::with_capacity(specs.len());
            {
                let map = h.sim.map();
                for (i, spec) in specs.iter().enumerate() {
                    let context = format!("specs[{i}]");
                    let spec = spec.to_spec().map_err(|f| f.context(&context))?;
                    spec.validate(&map)
                        .map_err(|e| Failure::from(e).context(&context))?;
                    if h.sim.horde().group_goal_frame(spec.group).is_none() {
                        return Err(no_such_group(spec.group.0, &h.sim).context(&context));
                    }
                    checked.push(spec);
                }
            }
            let sim = h.changing();
            let mut ids = ids;
            for (i, spec) in checked.into_iter().enumerate() {
                let entity = sim
                    .spawn(spec)
                    .map_err(|e| Failure::from(e).context(&format!("specs[{i}]")))?;
                if let Some(ids) = ids.as_deref_mut() {
                    ids[i].write(unit_id(sim.world(), entity));
                }
                if !out_spawned.is_null() {
                    write_out(out_spawned, "out_spawned", i + 1)?;
                }
            }
            Ok(())
        })
    }
}

fn unit_id(world: &World, entity: Entity) -> u32 {
    world.get::<&UnitId>(entity).map_or(u32::MAX, |id| id.0)
}

/// Removes the units with ids `ids[0..count]` (units that died, say), in that order (the
/// order is part of the state: lockstep peers must remove in the same order); they are gone
/// from the next read on, and their ids are never given again. Every id is checked first: an id
/// no unit has, or one given twice, removes none (`HORDE_ERROR_NO_SUCH_UNIT`, the message
/// names it). Quarantined units can be removed too.
///
/// # Safety
/// `sim` is a live handle; `ids` points to `count` `uint32_t`s.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn horde_despawn(
    sim: *mut HordeSim,
    ids: *const u32,
    count: usize,
) -> HordeStatus {
    // SAFETY: the caller keeps this function's `# Safety` contract on every pointer, which
    // is all that `with_sim` and the pointer helpers (`in_slice`, `write_out`, ...) require.
    unsafe {
        with_sim(sim, |h| {
            let ids = in_slice(ids, count, "ids")?;
            if ids.is_empty() {
                return Ok(());
            }
            // Sorted (id, position in `ids`) pairs: one pass over the world finds them all.
            let mut wanted: Vec<(u32, usize)> =
                ids.iter().enumerate().map(|(i, &id)| (id, i)).collect();
            wanted.sort_unstable();
            if let Some(pair) = wanted.windows(2).find(|w| w[0].0 == w[1].0) {
                return Err(Failure::new(
                    HORDE_ERROR_NO_SUCH_UNIT,
                    format!(
                        "ids[{}] and ids[{}] are both unit {}: each unit can be removed once",
                        pair[0].1.min(pair[1].1),
                        pair[0].1.max(pair[1].1),
                        pair[0].0
                    ),
                ));
            }
            let mut entities: Vec<Option<Entity>> = vec![None; ids.len()];
            for (entity, id) in h.sim.world().query::<(Entity, &UnitId)>().iter() {
                if let Ok(k) = wanted.binary_search_by_key(&id.0, |&(id, _)| id) {
                    entities[wanted[k].1] = Some(entity);
                }
            }
            if let Some(missing) = entities.iter().position(Option::is_none) {
                return Err(Failure::new(
                    HORDE_ERROR_NO_SUCH_UNIT,
                    format!(
                        "ids[{missing}]: no unit has id {} (never spawned, or removed already)",
                        ids[missing]
                    ),
                ));
            }
            let sim = h.changing();
            for entity in entities.into_iter().flatten() {
                sim.despawn(entity)?;
            }
            Ok(())
        })
    }
}

/// Adds a force field (it acts from the next frame on) and writes its id to `*out_id` (when
/// `out_id` is not NULL). Ids count up from 0 and are never reused.
///
/// # Safety
/// `sim` is a live handle; `field` points to a `HordeForceField`; `out_id` is NULL or points
/// to a writable `uint64_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn horde_add_force(
    sim: *mut HordeSim,
    field: *const HordeForceField,
    out_id: *mut u64,
) -> HordeStatus {
    // SAFETY: the caller keeps this function's `# Safety` contract on every pointer, which
    // is all that `with_sim` and the pointer helpers (`in_slice`, `write_out`, ...) require.
    unsafe {
        with_sim(sim, |h| {
            let field = in_slice(field, 1, "field")?[0].to_field()?;
            if !out_id.is_null() {
                out_ptr(out_id, "out_id")?;
            }
            let id = h.changing().add_force(field);
            if !out_id.is_null() {
                write_out(out_id, "out_id", id.get())?;
            }
            Ok(())
        })
    }
}

/// Changes the terrain of cell `(x, y)` to `terrain` (a `HORDE_TERRAIN_*` value): placing or
/// destroying a wall. Fields are repaired in the next frame; units caught inside a new wall
/// step out of it.
///
/// # Safety
/// `sim` is a live handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn horde_set_terrain(
    sim: *mut HordeSim,
    x: u32,
    y: u32,
    terrain: u8,
) -> HordeStatus {
    // SAFETY: the caller keeps this function's `# Safety` contract on every pointer, which
    // is all that `with_sim` and the pointer helpers (`in_slice`, `write_out`, ...) require.
    unsafe { horde_set_terrain_rect(sim, x, y, 1, 1, terrain) }
}

/// Changes the terrain of the `width x height` cells whose top-left cell is `(x, y)` to
/// `terrain`, row by row from the top, each row from the left (the same as
/// `horde_set_terrain` on each cell in that order). The whole rectangle must lie inside the
/// map (else `HORDE_ERROR_OUTSIDE_MAP` and nothing changes); an empty rectangle (a side 0)
/// changes nothing.
///
/// # Safety
/// `sim` is a live handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn horde_set_terrain_rect(
    sim: *mut HordeSim,
    x: u32,
    y: u32,
    width: u32,
    height: u32,
    terrain: u8,
) -> HordeStatus {
    // SAFETY: the caller keeps this function's `# Safety` contract on every pointer, which
    // is all that `with_sim` and the pointer helpers (`in_slice`, `write_out`, ...) require.
    unsafe {
        with_sim(sim, |h| {
            let terrain = terrain_of(terrain)?;
            if width == 0 || height == 0 {
                return Ok(());
            }
            let (map_w, map_h) = {
                let map = h.sim.map();
                (map.width(), map.height())
            };
            let fits = |start: u32, len: u32, side: u32| {
                start.checked_add(len).is_some_and(|end| end <= side)
            };
            if !fits(x, width, map_w) || !fits(y, height, map_h) {
                let what = if (width, height) == (1, 1) {
                    format!("cell ({x}, {y}) lies outside")
                } else {
                    format!("the {width}x{height} rectangle at cell ({x}, {y}) does not lie inside")
                };
                return Err(Failure::new(
                    HORDE_ERROR_OUTSIDE_MAP,
                    format!("{what} the {map_w}x{map_h} map"),
                ));
            }
            let sim = h.changing();
            for cy in y..y + height {
                for cx in x..x + width {
                    sim.set_terrain(Cell::new(cx, cy), terrain)?;
                }
            }
            Ok(())
        })
    }
}

/// Runs one frame of `dt` seconds (finite, >= 0).
///
/// `HORDE_ERROR_STAGE`: the frame ran, but a stage could not do its part (the message says
/// which); the simulation stays usable. `HORDE_ERROR_PANIC`: a stage panicked and the frame
/// was abandoned part-way; the simulation is poisoned.
///
/// # Safety
/// `sim` is a live handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn horde_step(sim: *mut HordeSim, dt: f32) -> HordeStatus {
    // SAFETY: the caller keeps this function's `# Safety` contract on every pointer, which
    // is all that `with_sim` and the pointer helpers (`in_slice`, `write_out`, ...) require.
    unsafe {
        with_sim(sim, |h| {
            #[cfg(test)]
            if let Some(error) = tests::hook::stage_failure() {
                return Err(error.into());
            }
            h.changing().step(dt)?;
            Ok(())
        })
    }
}

// ---------------------------------------------------------------------------------------
// Reads

/// Writes the number of units to `*out_count` (quarantined ones included): the number of
/// entries `horde_read_units` and `horde_read_positions` write.
///
/// # Safety
/// `sim` is a live handle; `out_count` points to a writable `size_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn horde_unit_count(
    sim: *mut HordeSim,
    out_count: *mut usize,
) -> HordeStatus {
    // SAFETY: the caller keeps this function's `# Safety` contract on every pointer, which
    // is all that `with_sim` and the pointer helpers (`in_slice`, `write_out`, ...) require.
    unsafe {
        with_sim(sim, |h| {
            write_out(out_count, "out_count", h.sim.unit_count())
        })
    }
}

/// Fills `h.scratch` with every unit, in id order.
fn gather_units(h: &mut HordeSim) {
    let world = h.sim.world();
    let out = &mut h.scratch;
    out.clear();
    out.reserve(world.len() as usize);
    let flags = |steering: &horde::components::Steering, controllable: bool| {
        (if steering.arrived {
            HORDE_UNIT_ARRIVED
        } else {
            0
        }) | (if steering.settled {
            HORDE_UNIT_SETTLED
        } else {
            0
        }) | (if controllable {
            HORDE_UNIT_CONTROLLABLE
        } else {
            0
        })
    };
    type Parts<'a> = (
        &'a UnitId,
        &'a Position,
        &'a Velocity,
        &'a ExternalForce,
        &'a Stun,
    );
    let unit =
        |(id, p, v, e, s): Parts<'_>, agent: &horde::components::Agent, flags: u32| HordeUnit {
            id: id.0,
            group: agent.group.0,
            layer: agent.layer as u8,
            reserved: 0,
            flags,
            x: p.0.x,
            y: p.0.y,
            vx: v.0.x,
            vy: v.0.y,
            external_x: e.0.x,
            external_y: e.0.y,
            stun: s.0,
            radius: agent.radius,
        };
    for (parts, agent, steering) in world
        .query::<(
            Parts<'_>,
            &horde::components::Agent,
            &horde::components::Steering,
        )>()
        .iter()
    {
        out.push(unit(parts, agent, flags(steering, agent.controllable)));
    }
    for (parts, q) in world.query::<(Parts<'_>, &Quarantined)>().iter() {
        let f = flags(&q.steering, q.agent.controllable) | HORDE_UNIT_QUARANTINED;
        out.push(unit(parts, &q.agent, f));
    }
    out.sort_unstable_by_key(|u| u.id);
}

/// Copies every unit, in id order, into `out[0..capacity]` and writes their number to
/// `*out_count`. When `capacity` is smaller than the number of units nothing is copied,
/// `*out_count` receives the number needed and the call returns
/// `HORDE_ERROR_BUFFER_TOO_SMALL` (pass `out` NULL and `capacity` 0 to ask for it, or use
/// `horde_unit_count`).
///
/// # Safety
/// `sim` is a live handle; `out` points to `capacity` writable `HordeUnit`s (or is NULL with
/// `capacity` 0); `out_count` points to a writable `size_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn horde_read_units(
    sim: *mut HordeSim,
    out: *mut HordeUnit,
    capacity: usize,
    out_count: *mut usize,
) -> HordeStatus {
    // SAFETY: the caller keeps this function's `# Safety` contract on every pointer, which
    // is all that `with_sim` and the pointer helpers (`in_slice`, `write_out`, ...) require.
    unsafe {
        with_sim(sim, |h| {
            let needed = h.sim.unit_count();
            write_out(out_count, "out_count", needed)?;
            if capacity < needed {
                return Err(too_small("out", capacity, needed, "units"));
            }
            let out = out_slice(out, needed, "out")?;
            gather_units(h);
            fill(out, &h.scratch);
            Ok(())
        })
    }
}

fn too_small(name: &str, capacity: usize, needed: usize, what: &str) -> Failure {
    Failure::new(
        HORDE_ERROR_BUFFER_TOO_SMALL,
        format!("`{name}` holds {capacity} {what}, {needed} are needed"),
    )
}

/// Copies every unit's position, in id order (the order of `horde_read_units`), into
/// `out_xy` as `x0, y0, x1, y1, ...`: `2 * count` floats. `capacity` counts units (pairs of
/// floats), not floats. `*out_count` receives the number of units; when `capacity` is smaller
/// nothing is copied and the call returns `HORDE_ERROR_BUFFER_TOO_SMALL`.
///
/// # Safety
/// `sim` is a live handle; `out_xy` points to `2 * capacity` writable floats (or is NULL with
/// `capacity` 0); `out_count` points to a writable `size_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn horde_read_positions(
    sim: *mut HordeSim,
    out_xy: *mut f32,
    capacity: usize,
    out_count: *mut usize,
) -> HordeStatus {
    // SAFETY: the caller keeps this function's `# Safety` contract on every pointer, which
    // is all that `with_sim` and the pointer helpers (`in_slice`, `write_out`, ...) require.
    unsafe {
        with_sim(sim, |h| {
            let needed = h.sim.unit_count();
            write_out(out_count, "out_count", needed)?;
            if capacity < needed {
                return Err(too_small("out_xy", capacity, needed, "positions"));
            }
            let floats = needed
                .checked_mul(2)
                .ok_or_else(|| Failure::invalid("too many units"))?;
            let out = out_slice(out_xy, floats, "out_xy")?;
            gather_units(h);
            for (pair, unit) in out.chunks_exact_mut(2).zip(&h.scratch) {
                pair[0].write(unit.x);
                pair[1].write(unit.y);
            }
            Ok(())
        })
    }
}

/// Writes the number of frames run so far to `*out_frame`.
///
/// # Safety
/// `sim` is a live handle; `out_frame` points to a writable `uint64_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn horde_frame(sim: *mut HordeSim, out_frame: *mut u64) -> HordeStatus {
    // SAFETY: the caller keeps this function's `# Safety` contract on every pointer, which
    // is all that `with_sim` and the pointer helpers (`in_slice`, `write_out`, ...) require.
    unsafe { with_sim(sim, |h| write_out(out_frame, "out_frame", h.sim.frame())) }
}

/// Writes the map's width and height, in cells, to `*out_width` and `*out_height`.
///
/// # Safety
/// `sim` is a live handle; `out_width` and `out_height` point to writable `uint32_t`s.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn horde_map_size(
    sim: *mut HordeSim,
    out_width: *mut u32,
    out_height: *mut u32,
) -> HordeStatus {
    // SAFETY: the caller keeps this function's `# Safety` contract on every pointer, which
    // is all that `with_sim` and the pointer helpers (`in_slice`, `write_out`, ...) require.
    unsafe {
        with_sim(sim, |h| {
            out_ptr(out_width, "out_width")?;
            out_ptr(out_height, "out_height")?;
            let map = h.sim.map();
            write_out(out_width, "out_width", map.width())?;
            write_out(out_height, "out_height", map.height())
        })
    }
}

/// Writes the terrain of cell `(x, y)` (a `HORDE_TERRAIN_*` value) to `*out_terrain`.
///
/// # Safety
/// `sim` is a live handle; `out_terrain` points to a writable `uint8_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn horde_terrain_at(
    sim: *mut HordeSim,
    x: u32,
    y: u32,
    out_terrain: *mut u8,
) -> HordeStatus {
    // SAFETY: the caller keeps this function's `# Safety` contract on every pointer, which
    // is all that `with_sim` and the pointer helpers (`in_slice`, `write_out`, ...) require.
    unsafe {
        with_sim(sim, |h| {
            out_ptr(out_terrain, "out_terrain")?;
            let map = h.sim.map();
            if x >= map.width() || y >= map.height() {
                return Err(Failure::new(
                    HORDE_ERROR_OUTSIDE_MAP,
                    format!(
                        "cell ({x}, {y}) lies outside the {}x{} map",
                        map.width(),
                        map.height()
                    ),
                ));
            }
            write_out(
                out_terrain,
                "out_terrain",
                map.terrain_at(Cell::new(x, y)) as u8,
            )
        })
    }
}

/// Writes the state hash to `*out_hash`: a 64-bit hash of the whole state (every unit's
/// state in id order, the terrain, the groups' goals, the force fields). Equal on every
/// machine and thread count for the same commands, so lockstep peers compare it to detect
/// desyncs; equal to `horde::Simulation::state_hash` in Rust for the same commands.
///
/// # Safety
/// `sim` is a live handle; `out_hash` points to a writable `uint64_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn horde_state_hash(sim: *mut HordeSim, out_hash: *mut u64) -> HordeStatus {
    // SAFETY: the caller keeps this function's `# Safety` contract on every pointer, which
    // is all that `with_sim` and the pointer helpers (`in_slice`, `write_out`, ...) require.
    unsafe { with_sim(sim, |h| write_out(out_hash, "out_hash", h.sim.state_hash())) }
}

/// Copies the wall time of each stage of the last frame, in the order they were declared
/// (the storage sort, `sort_units`, last), into `out[0..capacity]` and writes their number to
/// `*out_count` (0 before the first frame). When `capacity` is smaller nothing is copied and
/// the call returns `HORDE_ERROR_BUFFER_TOO_SMALL` with the number needed in `*out_count`.
/// `*out_total_seconds` (when `out_total_seconds` is not NULL) receives the whole frame's
/// wall time.
///
/// # Safety
/// `sim` is a live handle; `out` points to `capacity` writable `HordeStageTime`s (or is NULL
/// with `capacity` 0); `out_count` points to a writable `size_t`; `out_total_seconds` is
/// NULL or points to a writable `double`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn horde_stage_times(
    sim: *mut HordeSim,
    out: *mut HordeStageTime,
    capacity: usize,
    out_count: *mut usize,
    out_total_seconds: *mut f64,
) -> HordeStatus {
    // SAFETY: the caller keeps this function's `# Safety` contract on every pointer, which
    // is all that `with_sim` and the pointer helpers (`in_slice`, `write_out`, ...) require.
    unsafe {
        with_sim(sim, |h| {
            out_ptr(out_count, "out_count")?;
            if !out_total_seconds.is_null() {
                out_ptr(out_total_seconds, "out_total_seconds")?;
            }
            let report = h.sim.horde().last_report();
            let stages = report.map_or(&[][..], |r| r.stages());
            write_out(out_count, "out_count", stages.len())?;
            if capacity < stages.len() {
                return Err(too_small("out", capacity, stages.len(), "stages"));
            }
            let out = out_slice(out, stages.len(), "out")?;
            for (slot, stage) in out.iter_mut().zip(stages) {
                slot.write(HordeStageTime {
                    name: stage_name(&stage.name),
                    seconds: stage.duration.as_secs_f64(),
                });
            }
            if !out_total_seconds.is_null() {
                let total = report.map_or(Duration::ZERO, |r| r.total());
                write_out(out_total_seconds, "out_total_seconds", total.as_secs_f64())?;
            }
            Ok(())
        })
    }
}

/// `name` as a NUL-terminated C array, cut to fit.
fn stage_name(name: &str) -> [c_char; HORDE_STAGE_NAME_LEN] {
    let mut out = [0 as c_char; HORDE_STAGE_NAME_LEN];
    for (slot, &byte) in out
        .iter_mut()
        .zip(name.as_bytes().iter().take(HORDE_STAGE_NAME_LEN - 1))
    {
        *slot = byte as c_char;
    }
    out
}

// ---------------------------------------------------------------------------------------
// Snapshots

/// The bytes of the current state's snapshot, encoded once and kept until the state changes.
fn snapshot_bytes(h: &mut HordeSim) -> Result<&[u8], Failure> {
    if h.snapshot_bytes.is_none() {
        h.snapshot_bytes = Some(h.sim.snapshot().to_bytes()?);
    }
    Ok(h.snapshot_bytes.as_deref().unwrap_or_default())
}

/// Writes the size in bytes of the current state's snapshot to `*out_size`: the buffer
/// `horde_snapshot_write` needs. (The snapshot is encoded here and kept, so the write that
/// follows does not encode it again.)
///
/// # Safety
/// `sim` is a live handle; `out_size` points to a writable `size_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn horde_snapshot_size(
    sim: *mut HordeSim,
    out_size: *mut usize,
) -> HordeStatus {
    // SAFETY: the caller keeps this function's `# Safety` contract on every pointer, which
    // is all that `with_sim` and the pointer helpers (`in_slice`, `write_out`, ...) require.
    unsafe {
        with_sim(sim, |h| {
            out_ptr(out_size, "out_size")?;
            let size = snapshot_bytes(h)?.len();
            write_out(out_size, "out_size", size)
        })
    }
}

/// Writes the snapshot of the current state (the whole state: map, settings but the thread
/// count, groups, force fields, units, frame; a versioned, checksummed byte string) into
/// `buffer[0..capacity]` and its length to `*out_len`. When `capacity` is smaller nothing is
/// written but `*out_len`, which receives the size needed, and the call returns
/// `HORDE_ERROR_BUFFER_TOO_SMALL`. The bytes belong to the caller: save them, send them, and
/// give them to `horde_snapshot_restore` or `horde_sim_create_from_snapshot`.
///
/// # Safety
/// `sim` is a live handle; `buffer` points to `capacity` writable bytes (or is NULL with
/// `capacity` 0); `out_len` points to a writable `size_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn horde_snapshot_write(
    sim: *mut HordeSim,
    buffer: *mut u8,
    capacity: usize,
    out_len: *mut usize,
) -> HordeStatus {
    // SAFETY: the caller keeps this function's `# Safety` contract on every pointer, which
    // is all that `with_sim` and the pointer helpers (`in_slice`, `write_out`, ...) require.
    unsafe {
        with_sim(sim, |h| {
            out_ptr(out_len, "out_len")?;
            let bytes = snapshot_bytes(h)?;
            write_out(out_len, "out_len", bytes.len())?;
            if capacity < bytes.len() {
                return Err(too_small("buffer", capacity, bytes.len(), "bytes"));
            }
            fill(out_slice(buffer, bytes.len(), "buffer")?, bytes);
            Ok(())
        })
    }
}

/// Replaces the whole state of `sim` with the snapshot in `bytes[0..len]` (written by
/// `horde_snapshot_write`), keeping its thread count; the handle stays the same. It then
/// continues exactly as the simulation that was saved. This is the one call allowed on a
/// poisoned simulation, and it clears the poison. On failure (`HORDE_ERROR_SNAPSHOT` for bytes
/// that are not a valid snapshot) the state is unchanged.
///
/// # Safety
/// `sim` is a live handle; `bytes` points to `len` readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn horde_snapshot_restore(
    sim: *mut HordeSim,
    bytes: *const u8,
    len: usize,
) -> HordeStatus {
    // SAFETY: the caller keeps this function's `# Safety` contract on every pointer, which
    // is all that `with_sim` and the pointer helpers (`in_slice`, `write_out`, ...) require.
    unsafe {
        with_sim_even_poisoned(sim, |h| {
            if bytes.is_null() {
                return Err(Failure::null("bytes"));
            }
            let bytes = in_slice(bytes, len, "bytes")?;
            let threads = h.sim.horde().config().threads;
            let restored = restore(bytes, threads)?;
            h.sim = restored;
            h.poisoned = false;
            h.snapshot_bytes = None;
            Ok(())
        })
    }
}
