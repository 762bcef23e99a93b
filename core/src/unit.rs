//! The components a unit is made of (docs/behaviour.md, "Units"), and the validated description
//! used to spawn one. They are plain data: any ECS can store them; horde's stages use hecs.

use glam::Vec2;

use crate::grid::Grid;
use crate::map::Map;
use crate::terrain::{Layer, WALL};

/// Where the unit's centre is (world units).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Position(pub Vec2);

/// The unit's own, self-propelled velocity from steering (world units per second).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Velocity(pub Vec2);

/// Velocity given by force fields (the article's `externalVelocity`); decays by drag.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ExternalForce(pub Vec2);

/// Seconds of lost control left; a stunned unit does not steer.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Stun(pub f32);

/// Mass (> 0): heavier units are pushed less by the same force.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Mass(pub f32);

/// A unit's stable number, given at spawn in spawn order. Per-unit random numbers come from
/// (seed, id, frame) and the state hash orders units by it, so neither depends on storage
/// order or thread count.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct UnitId(pub u32);

/// The group a unit belongs to; each group has a goal (a field to follow).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct GroupId(pub u16);

/// What a unit is: fixed parameters set at spawn.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Agent {
    /// Body radius (world units, > 0).
    pub radius: f32,
    /// Top self-propelled speed (world units per second, >= 0).
    pub max_speed: f32,
    /// Largest heading change per second (radians, > 0).
    pub turn_rate: f32,
    /// Which cost field the unit walks on.
    pub layer: Layer,
    /// Which group's goal it follows.
    pub group: GroupId,
    /// Player-controlled; force fields may be set to leave such units alone.
    pub controllable: bool,
}

/// What steering remembers between frames.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Steering {
    /// Smoothed unit heading (zero until the unit first moves).
    pub heading: Vec2,
    /// Side the fan turned to the last time the way ahead was blocked: `1` = positive angles
    /// (clockwise on screen, since world `+y` points down the map), `-1` negative angles.
    /// The next fan starts on this side, which stops units flip-flopping at corners.
    pub avoid_side: i8,
    /// The unit has reached its group's goal area and rests there.
    pub arrived: bool,
    /// The unit rests outside its goal, in its army's resting blob (docs/behaviour.md,
    /// "Coming to rest"): joined to the goal through resting units of its army.
    pub settled: bool,
    /// Seconds since the unit last got a body radius away from [`Self::anchor`] while not at
    /// rest (0 at rest, stunned or just moved on): from [`BLOCKED_AFTER`] on it is blocked.
    pub stall: f32,
    /// Where the unit stood when [`Self::stall`] last started counting.
    pub anchor: Vec2,
    /// Whether and why the unit gave way this frame (docs/behaviour.md, "Jams"): it backs
    /// away, and in the next frame units with the right of way are not held by it and push
    /// it aside.
    pub yielding: GiveWay,
    /// The unit, blocked on its field's way, takes the way round its army's resting blob to
    /// free room (docs/behaviour.md, "Jams"), until it reaches the rest area or rests.
    pub detour: bool,
    /// The frame (the number the simulation's frame counter had once it ran) in which the
    /// unit first arrived since its group's goal was last set; `None` until it arrives.
    pub arrived_frame: Option<u64>,
    /// Seconds the unit has been still at rest: at rest, not stunned, its own velocity zero
    /// and its external velocity under [`Steering::still_speed`] (docs/behaviour.md,
    /// "Sleeping"); 0 otherwise. Counts no further than [`SLEEP_AFTER`].
    pub still: f32,
    /// Where the unit fell asleep, while it sleeps (docs/behaviour.md, "Sleeping"): a unit
    /// still for [`SLEEP_AFTER`] seconds among neighbours as still stops being simulated
    /// (no steering, forces, contacts or fill work) until something wakes it. Moving it
    /// away from this point (a caller writing its [`Position`](crate::Position)) wakes it, as
    /// does setting this to `None`.
    pub asleep: Option<Vec2>,
}

impl Default for Steering {
    fn default() -> Self {
        Self {
            heading: Vec2::ZERO,
            avoid_side: 1,
            arrived: false,
            settled: false,
            stall: 0.0,
            anchor: Vec2::ZERO,
            yielding: GiveWay::No,
            detour: false,
            arrived_frame: None,
            still: 0.0,
            asleep: None,
        }
    }
}

/// Whether and why a unit gives way in a jam ([`Steering::yielding`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum GiveWay {
    /// It does not.
    #[default]
    No,
    /// Before a one-cell lane, to a unit nearer the lane; or, a big body blocked at a mouth,
    /// to a friend nearer the goal (docs/behaviour.md, "Jams dissolve").
    AtLane,
    /// To a unit with the right of way: `0` straight to a unit of a lower army right ahead,
    /// `n` behind a friend right ahead giving way at `n - 1` (at most [`GiveWay::MAX_HOPS`]:
    /// a ring of friends each behind the other cannot hold itself up for ever).
    RightOfWay(u8),
}

impl GiveWay {
    /// How many friends deep giving way spreads back from the unit that meets the right of
    /// way.
    pub const MAX_HOPS: u8 = 6;

    /// Its byte in a snapshot: 0, 1, then `2 + hops`.
    #[must_use]
    pub fn to_u8(self) -> u8 {
        match self {
            Self::No => 0,
            Self::AtLane => 1,
            Self::RightOfWay(hops) => 2 + hops,
        }
    }

    /// The kind of a saved byte (`None` for a byte no kind has).
    #[must_use]
    pub fn from_u8(b: u8) -> Option<Self> {
        match b {
            0 => Some(Self::No),
            1 => Some(Self::AtLane),
            b if b - 2 <= Self::MAX_HOPS => Some(Self::RightOfWay(b - 2)),
            _ => None,
        }
    }
}

/// Seconds a unit that is not at rest may stay within a body radius of one spot before it
/// counts as blocked ([`Steering::stall`]; docs/behaviour.md, "Coming to rest").
pub const BLOCKED_AFTER: f32 = 1.0;

/// Seconds a unit must be still at rest, among neighbours as still, before it falls asleep
/// ([`Steering::asleep`]).
pub const SLEEP_AFTER: f32 = 0.5;

impl Steering {
    /// The external speed under which a unit of `radius` counts as still
    /// ([`Steering::still`]): a tenth of its radius a second. Contacts shove a packed crowd
    /// at rest by far less (measured on 20,000 units at rest: 0.03 cells a second at the
    /// 99th percentile for radius 0.45); a unit that drifts faster is being pushed.
    #[must_use]
    pub fn still_speed(radius: f32) -> f32 {
        0.1 * radius
    }

    /// Whether the unit has been still long enough to sleep, or sleeps
    /// ([`Steering::asleep`]): what a neighbour of it needs to fall asleep.
    #[must_use]
    pub fn is_calm(&self) -> bool {
        self.asleep.is_some() || self.still >= SLEEP_AFTER
    }

    /// Wakes the unit if it sleeps ([`Steering::asleep`]); its stillness counts again from 0.
    pub fn wake(&mut self) {
        self.asleep = None;
        self.still = 0.0;
    }

    /// The unit's order changed (a new goal, a new formation): it is no longer at rest, and
    /// its arrival counts again from the next time it arrives.
    pub fn set_off(&mut self) {
        self.arrived = false;
        self.settled = false;
        self.arrived_frame = None;
    }

    /// Whether the unit is blocked: not at rest, and held within a body radius of one spot
    /// for [`BLOCKED_AFTER`] seconds or more.
    #[must_use]
    pub fn is_blocked(&self) -> bool {
        !self.arrived && !self.settled && self.stall >= BLOCKED_AFTER
    }

    /// Counts the stall of a unit at `pos` of `radius` over a frame of `dt` seconds
    /// (`resting`: it is at rest now, or stunned: no stall counts).
    pub fn count_stall(&mut self, pos: Vec2, radius: f32, dt: f32, resting: bool) {
        if resting || pos.distance_squared(self.anchor) > radius * radius {
            self.anchor = pos;
            self.stall = 0.0;
        } else {
            self.stall += dt;
        }
    }
}

/// A unit taken out of the simulation because its state stopped being finite (a caller
/// wrote NaN or infinity into it, say). It replaces the unit's [`Agent`] and [`Steering`],
/// which it keeps, so horde's stages skip the unit while its data stays for inspection.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Quarantined {
    /// The frame in which the unit was found non-finite.
    pub frame: u64,
    /// The unit's parameters.
    pub agent: Agent,
    /// Its steering memory.
    pub steering: Steering,
}

/// Everything needed to spawn a unit. Checked by [`UnitSpec::validate`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct UnitSpec {
    /// Initial centre (world units).
    pub position: Vec2,
    /// Body radius (default 0.5).
    pub radius: f32,
    /// Top speed (default 4.0 world units per second).
    pub max_speed: f32,
    /// Largest heading change per second (default 2π radians).
    pub turn_rate: f32,
    /// Mass (default 1.0).
    pub mass: f32,
    /// Movement layer (default ground).
    pub layer: Layer,
    /// Group (default 0).
    pub group: GroupId,
    /// Player-controlled (default true).
    pub controllable: bool,
}

impl UnitSpec {
    /// A unit at `position` with every other parameter at its default.
    #[must_use]
    pub fn at(position: Vec2) -> Self {
        Self {
            position,
            radius: 0.5,
            max_speed: 4.0,
            turn_rate: std::f32::consts::TAU,
            mass: 1.0,
            layer: Layer::Ground,
            group: GroupId(0),
            controllable: true,
        }
    }

    /// Same spec with another radius.
    #[must_use]
    pub fn with_radius(mut self, radius: f32) -> Self {
        self.radius = radius;
        self
    }

    /// Same spec with another top speed.
    #[must_use]
    pub fn with_max_speed(mut self, max_speed: f32) -> Self {
        self.max_speed = max_speed;
        self
    }

    /// Same spec with another mass.
    #[must_use]
    pub fn with_mass(mut self, mass: f32) -> Self {
        self.mass = mass;
        self
    }

    /// Same spec on another layer.
    #[must_use]
    pub fn with_layer(mut self, layer: Layer) -> Self {
        self.layer = layer;
        self
    }

    /// Same spec in another group.
    #[must_use]
    pub fn with_group(mut self, group: GroupId) -> Self {
        self.group = group;
        self
    }

    /// Same spec, player-controlled or not.
    #[must_use]
    pub fn with_controllable(mut self, controllable: bool) -> Self {
        self.controllable = controllable;
        self
    }

    /// Same spec with another turn rate (radians per second).
    #[must_use]
    pub fn with_turn_rate(mut self, turn_rate: f32) -> Self {
        self.turn_rate = turn_rate;
        self
    }

    /// The unit's fixed parameters as the [`Agent`] component.
    #[must_use]
    pub fn agent(&self) -> Agent {
        Agent {
            radius: self.radius,
            max_speed: self.max_speed,
            turn_rate: self.turn_rate,
            layer: self.layer,
            group: self.group,
            controllable: self.controllable,
        }
    }

    /// Checks every number and that the position is inside the map, in a cell the unit's
    /// layer can enter.
    pub fn validate(&self, map: &Map) -> Result<(), SpawnError> {
        self.validate_parameters()?;
        if !self.position.is_finite() {
            return Err(SpawnError::NonFinitePosition(self.position));
        }
        let grid: &Grid = map.grid();
        let Some(cell) = grid.cell_at(self.position) else {
            return Err(SpawnError::OutsideMap(self.position));
        };
        if map.cost_field(self.layer).get(cell) == WALL {
            return Err(SpawnError::Blocked {
                position: self.position,
                layer: self.layer,
            });
        }
        Ok(())
    }

    /// Checks the numbers alone (radius, mass and turn rate finite and `> 0`, radius at most
    /// [`MAX_RADIUS`], top speed finite, `>= 0` and at most [`MAX_SPEED`]), not the position.
    pub fn validate_parameters(&self) -> Result<(), SpawnError> {
        let positive = |name: &'static str, v: f32| {
            if v.is_finite() && v > 0.0 {
                Ok(())
            } else {
                Err(SpawnError::BadNumber { name, value: v })
            }
        };
        positive("radius", self.radius)?;
        if self.radius > MAX_RADIUS {
            return Err(SpawnError::TooLarge {
                name: "radius",
                value: self.radius,
                max: MAX_RADIUS,
            });
        }
        positive("mass", self.mass)?;
        positive("turn_rate", self.turn_rate)?;
        if !(self.max_speed.is_finite() && self.max_speed >= 0.0) {
            return Err(SpawnError::BadNumber {
                name: "max_speed",
                value: self.max_speed,
            });
        }
        if self.max_speed > MAX_SPEED {
            return Err(SpawnError::TooLarge {
                name: "max_speed",
                value: self.max_speed,
                max: MAX_SPEED,
            });
        }
        Ok(())
    }
}

/// The largest speed a unit may be given (its top speed, and the external speed of
/// knock-back), world units per second: at 30 frames a second a third of the largest map
/// side a frame. Far faster and positions stop being numbers within a few frames.
pub const MAX_SPEED: f32 = 1.0e4;

/// The largest unit radius, world units: far beyond any map, and small enough that what is
/// derived from it (a unit's reach, the neighbour buckets sized by it) stays finite.
pub const MAX_RADIUS: f32 = 1.0e6;

/// Why a unit could not be spawned.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum SpawnError {
    /// A parameter is NaN, infinite or out of range.
    #[error("{name} = {value} is invalid: it must be a finite number > 0 (max_speed may be 0)")]
    BadNumber {
        /// The parameter.
        name: &'static str,
        /// Its value.
        value: f32,
    },
    /// A parameter is larger than its limit.
    #[error("{name} = {value} is too large: it must be at most {max}")]
    TooLarge {
        /// The parameter.
        name: &'static str,
        /// Its value.
        value: f32,
        /// The limit.
        max: f32,
    },
    /// The position is NaN or infinite.
    #[error("position {0} is not finite")]
    NonFinitePosition(Vec2),
    /// The position lies outside the map.
    #[error("position {0} lies outside the map")]
    OutsideMap(Vec2),
    /// The position lies in a cell the unit's layer cannot enter.
    #[error("position {position} lies in a cell that {layer:?} units cannot enter")]
    Blocked {
        /// The position.
        position: Vec2,
        /// The unit's layer.
        layer: Layer,
    },
    /// The group does not exist.
    #[error("group {0} does not exist")]
    NoSuchGroup(u16),
    /// Every [`UnitId`] has been given out (ids never wrap, so no two units share one).
    #[error("no unit id is left: {0} units were spawned")]
    IdsExhausted(u32),
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grid::{Cell, Grid};
    use crate::terrain::Terrain;

    #[test]
    fn spawn_validation() {
        let mut map = Map::new(Grid::new(8, 8).unwrap());
        map.set_terrain(Cell::new(2, 2), Terrain::Water);
        let ok = UnitSpec::at(Vec2::new(1.5, 1.5));
        assert_eq!(ok.validate(&map), Ok(()));
        assert!(matches!(
            ok.with_radius(0.0).validate(&map),
            Err(SpawnError::BadNumber { name: "radius", .. })
        ));
        assert!(matches!(
            ok.with_radius(2.0e6).validate(&map),
            Err(SpawnError::TooLarge { name: "radius", .. })
        ));
        assert_eq!(ok.with_radius(MAX_RADIUS).validate(&map), Ok(()));
        assert!(matches!(
            ok.with_mass(-1.0).validate(&map),
            Err(SpawnError::BadNumber { name: "mass", .. })
        ));
        assert!(matches!(
            ok.with_mass(f32::NAN).validate(&map),
            Err(SpawnError::BadNumber { .. })
        ));
        assert!(matches!(
            ok.with_max_speed(f32::INFINITY).validate(&map),
            Err(SpawnError::BadNumber { .. })
        ));
        let at = |x, y| UnitSpec {
            position: Vec2::new(x, y),
            ..ok
        };
        assert!(matches!(
            at(f32::NAN, 1.0).validate(&map),
            Err(SpawnError::NonFinitePosition(_))
        ));
        assert!(matches!(
            at(9.0, 1.0).validate(&map),
            Err(SpawnError::OutsideMap(_))
        ));
        assert!(matches!(
            at(2.5, 2.5).validate(&map),
            Err(SpawnError::Blocked { .. })
        ));
        assert_eq!(at(2.5, 2.5).with_layer(Layer::Hover).validate(&map), Ok(()));
    }

    #[test]
    fn giving_way_round_trips_through_its_byte() {
        for g in [
            GiveWay::No,
            GiveWay::AtLane,
            GiveWay::RightOfWay(0),
            GiveWay::RightOfWay(GiveWay::MAX_HOPS),
        ] {
            assert_eq!(GiveWay::from_u8(g.to_u8()), Some(g));
        }
        assert_eq!(GiveWay::from_u8(3 + GiveWay::MAX_HOPS), None);
    }

    #[test]
    fn a_unit_held_in_one_spot_is_blocked_after_a_second() {
        let mut s = Steering::default();
        let p = Vec2::new(3.0, 3.0);
        s.count_stall(p, 0.5, 0.0, false);
        for _ in 0..29 {
            s.count_stall(p + Vec2::X * 0.1, 0.5, 1.0 / 30.0, false);
        }
        assert!(!s.is_blocked());
        s.count_stall(p, 0.5, 1.0 / 30.0, false);
        assert!(s.is_blocked());
        // Getting a radius away, or resting, ends it.
        s.count_stall(p + Vec2::X, 0.5, 1.0 / 30.0, false);
        assert!(!s.is_blocked());
        s.settled = true;
        assert!(!s.is_blocked());
    }
}
