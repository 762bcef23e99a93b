//! `HordeConfig`, written from horde's settings (`horde::settings::SETTINGS`) by
//! `HORDE_BLESS=1 cargo test --test settings`: change the settings, not this file.

use horde::settings::Value;

/// Every setting of a simulation. Get the defaults with `horde_config_default` and change
/// what you need; every value is checked when a simulation is created
/// (`HORDE_ERROR_INVALID_ARGUMENT` names the first bad one).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HordeConfig {
    /// Seed of the per-unit random numbers (jitter, the way out for a unit standing
    /// exactly on another).
    ///
    /// Default 0; any whole number.
    pub seed: u64,
    /// Threads the simulation works on, the caller's included. Results do not depend
    /// on it.
    ///
    /// Default 1; an integer in 1..=1024.
    pub threads: u32,
    /// Units per batch of the data-parallel stages. Batch boundaries depend on the unit
    /// count and this number only; keep it equal on every peer.
    ///
    /// Default 1024; an integer in 1..=4294967295.
    pub batch_size: u32,
    /// Where units get their direction: one full-map flow field per goal, layer and size
    /// class ("flat"), or sector fields along a coarse route on the portal graph, for big
    /// maps ("hierarchical").
    ///
    /// Default 0 ("flat"); 0 ("flat") or 1 ("hierarchical").
    pub navigation: u32,
    /// On: with flat navigation, a field whose goal moved is rebuilt only as far as the
    /// cells its followers stand in, then completed a slice a frame once the goal rests.
    /// Off: fields are always complete (to draw or read them). Steering reads the same
    /// values either way, so results do not depend on it and snapshots do not hold it.
    ///
    /// Default 1; 0 or 1.
    pub partial_fields: u32,
    /// How many size classes units path in. A unit of radius `r` cells follows the
    /// fields of class `c`, the smallest with `r <= c + 0.5` (capped at the last class),
    /// in which every cell within `c` cells of a wall or the map's edge is blocked, so
    /// they lead a body only where it fits. 1 sends every unit along the fields of a unit
    /// half a cell across. Fields are built per class present in a group, not per unit.
    ///
    /// Default 4; an integer in 1..=4.
    pub size_classes: u32,
    /// Passes a frame at most; 0 turns contacts off and bodies overlap as steering leaves
    /// them. Each pass resolves a unit's overlaps as they stood before it; the passes
    /// stop early once one moves no unit.
    ///
    /// Default 4; an integer in 0..=16.
    pub contact_passes: u32,
    /// Scale of the summed correction of a unit with several contacts, divided by their
    /// count: 1 moves it by the average of its contacts' corrections, more opens a packed
    /// crowd faster (outside the range the passes overshoot or stall).
    ///
    /// Default 1.5; finite, in 0.5..=2.
    pub contact_relaxation: f32,
    /// Cells within this many cells (Chebyshev distance) of a one-cell goal are tested
    /// for a straight line to it; units in cells that see the goal walk straight at it.
    /// 0 turns line of sight off.
    ///
    /// Default 16; an integer in 0..=4294967295.
    pub line_of_sight_radius: u32,
    /// How far past a unit's edge its probe rays look, world units (each ray walks the
    /// cells it covers).
    ///
    /// Default 1.5; finite, in 0..=100.
    pub probe_length: f32,
    /// The side rays start at `radius * probe_inflate` from the centre.
    ///
    /// Default 1.1; finite, in 0..=10.
    pub probe_inflate: f32,
    /// Angle between fan directions, radians (10 degrees).
    ///
    /// Default 0.17453292; finite, in (0, pi].
    pub fan_step: f32,
    /// Fan directions on each side (6 x 10 degrees: 60 degrees each way, a 120-degree
    /// fan).
    ///
    /// Default 6; an integer in 0..=180.
    pub fan_steps: u32,
    /// Weight of the avoidance direction in the blend.
    ///
    /// Default 1; finite, in 0..=1000.
    pub avoid_weight: f32,
    /// Weight of separation in the blend.
    ///
    /// Default 1.5; finite, in 0..=1000.
    pub separation_weight: f32,
    /// Fraction of its top speed at which separation pushes a unit directly, on top of
    /// turning its heading.
    ///
    /// Default 0.5; finite, in 0..=10.
    pub separation_push: f32,
    /// Neighbours closer than `(r_a + r_b) * separation_range` push each other apart;
    /// also how far a unit looks for neighbours, and (with a cell more) how near
    /// something must come to wake a sleeping unit.
    ///
    /// Default 1.2; finite, in (0, 1000].
    pub separation_range: f32,
    /// Largest random turn added each frame, radians (breaks symmetric deadlocks).
    ///
    /// Default 0.03; finite, in 0..=pi.
    pub jitter: f32,
    /// A unit whose path distance to its goal is at most this many cells is in it.
    ///
    /// Default 0.5; finite, in 0..=1e6.
    pub arrival_distance: f32,
    /// Units slow down linearly within this many cells of the goal, to a quarter of their
    /// top speed at least.
    ///
    /// Default 1.5; finite, in 0..=1e6.
    pub slow_distance: f32,
    /// Largest external speed, world units per second.
    ///
    /// Default 20; finite, in 0..=10000.
    pub max_external_speed: f32,
    /// A hit whose speed change (the length of `force * dt / mass`, before clamping)
    /// exceeds this stuns the unit.
    ///
    /// Default 4; finite, in 0..=10000.
    pub stun_threshold: f32,
    /// Seconds of stun per world unit per second of speed change above the threshold.
    ///
    /// Default 0.1; finite, in 0..=1e6.
    pub stun_per_impulse: f32,
    /// Longest stun one hit gives, seconds (hits do not stack: the longer stun wins).
    ///
    /// Default 2; finite, in 0..=1e6.
    pub max_stun: f32,
    /// Drag on normal terrain, per second: each frame the external velocity is divided
    /// by `1 + drag * dt`.
    ///
    /// Default 4; finite, in 0..=1e6.
    pub drag: f32,
    /// The same on slippery terrain (snow).
    ///
    /// Default 1; finite, in 0..=1e6.
    pub slippery_drag: f32,
    /// External speeds below this (world units per second) become exactly 0.
    ///
    /// Default 0.05; finite, in 0..=10000.
    pub snap_speed: f32,
}

impl HordeConfig {
    /// The fields as values, in the order of the settings.
    pub(crate) fn values(&self) -> Vec<Value> {
        vec![
            Value::Int(self.seed),
            Value::Int(u64::from(self.threads)),
            Value::Int(u64::from(self.batch_size)),
            Value::Int(u64::from(self.navigation)),
            Value::Int(u64::from(self.partial_fields)),
            Value::Int(u64::from(self.size_classes)),
            Value::Int(u64::from(self.contact_passes)),
            Value::Real(self.contact_relaxation),
            Value::Int(u64::from(self.line_of_sight_radius)),
            Value::Real(self.probe_length),
            Value::Real(self.probe_inflate),
            Value::Real(self.fan_step),
            Value::Int(u64::from(self.fan_steps)),
            Value::Real(self.avoid_weight),
            Value::Real(self.separation_weight),
            Value::Real(self.separation_push),
            Value::Real(self.separation_range),
            Value::Real(self.jitter),
            Value::Real(self.arrival_distance),
            Value::Real(self.slow_distance),
            Value::Real(self.max_external_speed),
            Value::Real(self.stun_threshold),
            Value::Real(self.stun_per_impulse),
            Value::Real(self.max_stun),
            Value::Real(self.drag),
            Value::Real(self.slippery_drag),
            Value::Real(self.snap_speed),
        ]
    }

    /// The struct holding `values` (in the order of the settings; each one checked).
    pub(crate) fn from_values(values: &[Value]) -> Self {
        Self {
            seed: u64(values[0]),
            threads: u32(values[1]),
            batch_size: u32(values[2]),
            navigation: u32(values[3]),
            partial_fields: u32(values[4]),
            size_classes: u32(values[5]),
            contact_passes: u32(values[6]),
            contact_relaxation: f32(values[7]),
            line_of_sight_radius: u32(values[8]),
            probe_length: f32(values[9]),
            probe_inflate: f32(values[10]),
            fan_step: f32(values[11]),
            fan_steps: u32(values[12]),
            avoid_weight: f32(values[13]),
            separation_weight: f32(values[14]),
            separation_push: f32(values[15]),
            separation_range: f32(values[16]),
            jitter: f32(values[17]),
            arrival_distance: f32(values[18]),
            slow_distance: f32(values[19]),
            max_external_speed: f32(values[20]),
            stun_threshold: f32(values[21]),
            stun_per_impulse: f32(values[22]),
            max_stun: f32(values[23]),
            drag: f32(values[24]),
            slippery_drag: f32(values[25]),
            snap_speed: f32(values[26]),
        }
    }
}

/// A whole number as a `u32` (the settings' ranges keep them in it).
fn u32(value: Value) -> u32 {
    match value {
        Value::Int(v) => u32::try_from(v).unwrap_or(u32::MAX),
        Value::Real(_) => 0,
    }
}

/// A whole number as a `u64`.
fn u64(value: Value) -> u64 {
    match value {
        Value::Int(v) => v,
        Value::Real(_) => 0,
    }
}

/// A real as an `f32`.
fn f32(value: Value) -> f32 {
    match value {
        Value::Real(v) => v,
        Value::Int(_) => 0.0,
    }
}
