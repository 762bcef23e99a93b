//! The list of settings: each one's field, type, default, range, where else it can be given,
//! and what it does. Everything else about a setting comes from here (see the module above).

use super::declare::settings;
use super::{Navigation, Range};
use crate::steering::MAX_SEPARATION_RANGE;
use crate::{MAX_SIZE_CLASSES, MAX_SPEED};

const PI: f32 = std::f32::consts::PI;

settings! {
    /// How the simulation runs: every setting, with its default. [`SimConfig::validate`]
    /// checks each against its range; [`SETTINGS`] lists them.
    pub struct SimConfig {
        /// Seed of the per-unit random numbers (jitter, the way out for a unit standing
        /// exactly on another).
        seed: u64 = 0, Range::Any, [Snapshot];
        /// Threads the simulation works on, the caller's included. Results do not depend
        /// on it.
        threads: usize = 1, Range::ints(1, SimConfig::MAX_THREADS as u64), [];
        /// Units per batch of the data-parallel stages. Batch boundaries depend on the unit
        /// count and this number only; keep it equal on every peer.
        batch_size: usize = 1024, Range::ints(1, u32::MAX as u64), [Scenario, Snapshot];
        /// Where units get their direction: one full-map flow field per goal, layer and size
        /// class ("flat"), or sector fields along a coarse route on the portal graph, for big
        /// maps ("hierarchical").
        navigation: Navigation = Navigation::Flat, Range::Choice(&["flat", "hierarchical"]),
            [Scenario, Snapshot];
        /// On: with flat navigation, a field whose goal moved is rebuilt only as far as the
        /// cells its followers stand in, then completed a slice a frame once the goal rests.
        /// Off: fields are always complete (to draw or read them). Steering reads the same
        /// values either way, so results do not depend on it and snapshots do not hold it.
        partial_fields: bool = true, Range::Flag, [Scenario];
        /// How many size classes units path in. A unit of radius `r` cells follows the
        /// fields of class `c`, the smallest with `r <= c + 0.5` (capped at the last class),
        /// in which every cell within `c` cells of a wall or the map's edge is blocked, so
        /// they lead a body only where it fits. 1 sends every unit along the fields of a unit
        /// half a cell across. Fields are built per class present in a group, not per unit.
        size_classes: u8 = MAX_SIZE_CLASSES, Range::ints(1, MAX_SIZE_CLASSES as u64),
            [Scenario, Snapshot];
    }

    /// The contact step (stage `resolve_contacts`): passes that push overlapping bodies
    /// apart, mass-weighted.
    pub struct ContactConfig in contacts {
        /// Passes a frame at most; 0 turns contacts off and bodies overlap as steering leaves
        /// them. Each pass resolves a unit's overlaps as they stood before it; the passes
        /// stop early once one moves no unit.
        passes as contact_passes: u32 = 4, Range::ints(0, ContactConfig::MAX_PASSES as u64), [Scenario, Snapshot];
        /// Scale of the summed correction of a unit with several contacts, divided by their
        /// count: 1 moves it by the average of its contacts' corrections, more opens a packed
        /// crowd faster (outside the range the passes overshoot or stall).
        relaxation as contact_relaxation: f32 = 1.5, Range::reals(0.5, 2.0), [Scenario, Snapshot];
    }

    /// Flow-field parameters.
    pub struct FlowConfig in flow {
        /// Cells within this many cells (Chebyshev distance) of a one-cell goal are tested
        /// for a straight line to it; units in cells that see the goal walk straight at it.
        /// 0 turns line of sight off.
        line_of_sight_radius: u32 = 16, Range::Any, [Scenario, Snapshot];
    }

    /// Steering parameters. Lengths are in world units, angles in radians.
    pub struct SteeringConfig in steering {
        /// How far past a unit's edge its probe rays look, world units (each ray walks the
        /// cells it covers).
        probe_length: f32 = 1.5, Range::reals(0.0, 100.0), [Scenario, Snapshot];
        /// The side rays start at `radius * probe_inflate` from the centre.
        probe_inflate: f32 = 1.1, Range::reals(0.0, 10.0), [Scenario, Snapshot];
        /// Angle between fan directions, radians (10 degrees).
        fan_step: f32 = 10f32.to_radians(), Range::reals_above(0.0, PI), [Scenario, Snapshot];
        /// Fan directions on each side (6 x 10 degrees: 60 degrees each way, a 120-degree
        /// fan).
        fan_steps: u32 = 6, Range::ints(0, 180), [Scenario, Snapshot];
        /// Weight of the avoidance direction in the blend.
        avoid_weight: f32 = 1.0, Range::reals(0.0, 1000.0), [Scenario, Snapshot];
        /// Weight of separation in the blend.
        separation_weight: f32 = 1.5, Range::reals(0.0, 1000.0), [Scenario, Snapshot];
        /// Fraction of its top speed at which separation pushes a unit directly, on top of
        /// turning its heading.
        separation_push: f32 = 0.5, Range::reals(0.0, 10.0), [Scenario, Snapshot];
        /// Neighbours closer than `(r_a + r_b) * separation_range` push each other apart;
        /// also how far a unit looks for neighbours, and (with a cell more) how near
        /// something must come to wake a sleeping unit.
        separation_range: f32 = 1.2, Range::reals_above(0.0, MAX_SEPARATION_RANGE),
            [Scenario, Snapshot];
        /// Largest random turn added each frame, radians (breaks symmetric deadlocks).
        jitter: f32 = 0.03, Range::reals(0.0, PI), [Scenario, Snapshot];
        /// A unit whose path distance to its goal is at most this many cells is in it.
        arrival_distance: f32 = 0.5, Range::reals(0.0, 1.0e6), [Scenario, Snapshot];
        /// Units slow down linearly within this many cells of the goal, to a quarter of their
        /// top speed at least.
        slow_distance: f32 = 1.5, Range::reals(0.0, 1.0e6), [Scenario, Snapshot];
    }

    /// How force turns into external (knock-back) velocity and stun, and how both wear off.
    /// The force functions read a value out of range as 0 rather than fail.
    pub struct KnockbackParams in knockback {
        /// Largest external speed, world units per second.
        max_external_speed: f32 = 20.0, Range::reals(0.0, MAX_SPEED), [Scenario, Snapshot];
        /// A hit whose speed change (the length of `force * dt / mass`, before clamping)
        /// exceeds this stuns the unit.
        stun_threshold: f32 = 4.0, Range::reals(0.0, MAX_SPEED), [Scenario, Snapshot];
        /// Seconds of stun per world unit per second of speed change above the threshold.
        stun_per_impulse: f32 = 0.1, Range::reals(0.0, 1.0e6), [Scenario, Snapshot];
        /// Longest stun one hit gives, seconds (hits do not stack: the longer stun wins).
        max_stun: f32 = 2.0, Range::reals(0.0, 1.0e6), [Scenario, Snapshot];
        /// Drag on normal terrain, per second: each frame the external velocity is divided
        /// by `1 + drag * dt`.
        drag: f32 = 4.0, Range::reals(0.0, 1.0e6), [Scenario, Snapshot];
        /// The same on slippery terrain (snow).
        slippery_drag: f32 = 1.0, Range::reals(0.0, 1.0e6), [Scenario, Snapshot];
        /// External speeds below this (world units per second) become exactly 0.
        snap_speed: f32 = 0.05, Range::reals(0.0, MAX_SPEED), [Scenario, Snapshot];
    }
}
