//! The data that crosses the boundary: the `#[repr(C)]` structs, the constants of the
//! header, the opaque [`HordeSim`] handle, and their conversions to and from horde's types
//! (each value checked, a bad one named in the [`Failure`]).

use std::ffi::c_char;

use horde::glam::Vec2;
use horde::settings::{SETTINGS, Value};
use horde::{ForceField, ForceKind, GroupId, Layer, SimConfig, Simulation, Terrain, UnitSpec};

pub use crate::config::HordeConfig;
use crate::failure::Failure;
pub use crate::status::HordeStatus;

/// The version of this ABI: raised whenever a function, a struct or a constant of
/// `horde.h` changes incompatibly. Compare it with `horde_abi_version` at start-up.
pub const HORDE_ABI_VERSION: u32 = 2;

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

/// `HordeUnit::flags` bit: the unit is at rest on a cell of its goal.
pub const HORDE_UNIT_ARRIVED: u32 = 1;
/// `HordeUnit::flags` bit: the unit is at rest outside its goal, in its army's resting blob
/// (joined to the goal through resting units of the groups sharing that goal).
pub const HORDE_UNIT_SETTLED: u32 = 2;
/// `HordeUnit::flags` bit: the unit is quarantined: its state stopped being finite, so horde
/// took it out of the simulation (it no longer moves; despawn it).
pub const HORDE_UNIT_QUARANTINED: u32 = 4;
/// `HordeUnit::flags` bit: the unit is player-controlled.
pub const HORDE_UNIT_CONTROLLABLE: u32 = 8;
/// `HordeUnit::flags` bit: the unit is blocked: not at rest, and held within a body radius of
/// one spot for a second or more (behind a jam, pressed in a corridor). It keeps trying; the
/// bit clears once it gets on.
pub const HORDE_UNIT_BLOCKED: u32 = 16;
/// `HordeUnit::flags` bit: the unit cannot reach its group's goal: no walk leads from where
/// it stands to a goal cell on its layer where its body fits (a sealed pocket, a goal walled
/// off, a gap too narrow for its size). It stands still; the bit clears when a terrain edit
/// or a goal change opens a way.
pub const HORDE_UNIT_UNREACHABLE: u32 = 64;
/// `HordeUnit::flags` bit: the unit is asleep: at rest among still neighbours, it costs
/// nothing until something reaches it (a unit walking near, a force, a terrain edit within
/// two cells, a goal change, a despawn beside it, its position set; docs/behaviour.md,
/// "Sleeping"). Arrived or settled stays set.
pub const HORDE_UNIT_ASLEEP: u32 = 32;

/// The length of `HordeStageTime::name`, its terminating NUL included.
pub const HORDE_STAGE_NAME_LEN: usize = 32;

/// Marks a live simulation handle (cleared when it is freed).
pub(crate) const SIM_MAGIC: u64 = 0x686f_7264_655f_7369;

/// A simulation: opaque, made by `horde_sim_create`, `horde_sim_create_movingai` or
/// `horde_sim_create_from_snapshot`, freed by `horde_sim_free`.
///
/// A handle is *live* from the create call that wrote it until `horde_sim_free`. Every call
/// whose contract says "`sim` is a live handle" also needs that no other thread uses the
/// handle during the call: a handle is not locked, but it may move between threads.
pub struct HordeSim {
    /// `SIM_MAGIC` while the handle is live.
    pub(crate) magic: u64,
    pub(crate) sim: Simulation,
    /// A panic inside horde left the state unknown: only free and restore are allowed.
    pub(crate) poisoned: bool,
    /// The encoded snapshot of the current state, kept between `horde_snapshot_size` and
    /// `horde_snapshot_write`; cleared by every call that changes the state.
    pub(crate) snapshot_bytes: Option<Vec<u8>>,
    /// Scratch of the bulk reads, kept so that reading every frame allocates nothing.
    pub(crate) scratch: Vec<HordeUnit>,
}

impl HordeSim {
    pub(crate) fn new(sim: Simulation) -> Self {
        Self {
            magic: SIM_MAGIC,
            sim,
            poisoned: false,
            snapshot_bytes: None,
            scratch: Vec::new(),
        }
    }

    /// The simulation, for a call that changes it (the cached snapshot goes).
    pub(crate) fn changing(&mut self) -> &mut Simulation {
        self.snapshot_bytes = None;
        &mut self.sim
    }
}

impl HordeConfig {
    pub(crate) fn from_sim_config(c: &SimConfig) -> Self {
        let values: Vec<Value> = SETTINGS.iter().map(|s| s.get(c)).collect();
        Self::from_values(&values)
    }

    /// The `SimConfig` this describes, every value checked in the settings' order; the
    /// error names the first bad one by its field.
    pub(crate) fn to_sim_config(self) -> Result<SimConfig, Failure> {
        let mut c = SimConfig::default();
        for (setting, value) in SETTINGS.iter().zip(self.values()) {
            setting.apply(&mut c, value)?;
        }
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
    pub(crate) fn to_spec(self) -> Result<UnitSpec, Failure> {
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
/// one frame), then set the kind, centre, radius and strength. Every field is checked for
/// every kind, the ones the kind does not use included.
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
    /// The push's direction (`HORDE_FORCE_PUSH` uses it; finite and not zero for every
    /// kind; any length). Default (1, 0).
    pub direction_x: f32,
    /// See `direction_x`.
    pub direction_y: f32,
    /// Which way a vortex turns (`HORDE_FORCE_VORTEX` uses it; 0 or 1 for every kind):
    /// 1 clockwise (default), 0 counter-clockwise.
    pub clockwise: u8,
    /// 1 (default): player-controlled units feel it; 0: only the others do.
    pub affects_controllable: u8,
}

impl HordeForceField {
    /// The `ForceField` this describes. Every field is checked whatever the kind, the ones
    /// it does not use included (a `clockwise` of 2 on an explosion is as wrong as on a
    /// vortex, and a NaN direction is a bug in the caller's code either way).
    pub(crate) fn to_field(self) -> Result<ForceField, Failure> {
        let clockwise = flag("clockwise", u32::from(self.clockwise))?;
        let affects = flag("affects_controllable", u32::from(self.affects_controllable))?;
        let direction = Vec2::new(self.direction_x, self.direction_y);
        if !direction.is_finite() || direction == Vec2::ZERO {
            return Err(Failure::invalid(format!(
                "direction = ({}, {}) is invalid: it must be finite and not (0, 0), whatever \
                 the kind (the default is (1, 0))",
                self.direction_x, self.direction_y
            )));
        }
        let kind = match self.kind {
            HORDE_FORCE_EXPLOSION => ForceKind::Explosion,
            HORDE_FORCE_ATTRACTOR => ForceKind::Attractor,
            HORDE_FORCE_PUSH => ForceKind::Push { direction },
            HORDE_FORCE_VORTEX => ForceKind::Vortex { clockwise },
            other => {
                return Err(Failure::invalid(format!(
                    "force field kind = {other} is invalid: it must be HORDE_FORCE_EXPLOSION (0), \
                     _ATTRACTOR (1), _PUSH (2) or _VORTEX (3)"
                )));
            }
        };
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
    /// Bits: `HORDE_UNIT_ARRIVED`, `HORDE_UNIT_SETTLED`, `HORDE_UNIT_BLOCKED`,
    /// `HORDE_UNIT_UNREACHABLE`, `HORDE_UNIT_QUARANTINED`, `HORDE_UNIT_CONTROLLABLE`,
    /// `HORDE_UNIT_ASLEEP`. At most one of `ARRIVED`, `SETTLED`, `BLOCKED` and `UNREACHABLE`
    /// is set (the unit's status); a unit with none of them is on its way.
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
    /// The stage's name, NUL-terminated (`check_units`, `update_forces`, ...,
    /// `sort_units`); a name longer than `HORDE_STAGE_NAME_LEN - 1` bytes is cut to that.
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

pub(crate) fn terrain_of(value: u8) -> Result<Terrain, Failure> {
    Terrain::from_u8(value).ok_or_else(|| {
        Failure::invalid(format!(
            "terrain = {value} is invalid: it must be 0..=8 (HORDE_TERRAIN_EMPTY .. \
             HORDE_TERRAIN_BLOCKED)"
        ))
    })
}
