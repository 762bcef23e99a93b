//! What a unit is made of: the one list of its hecs components. [`crate::Horde::spawn`] and
//! a snapshot's restore build a [`Unit`]; the storage sort copies its columns
//! ([`unit_columns`], [`copy_unit_columns`]); the state hash, the unit states and the
//! snapshot read a [`UnitRef`] from [`UnitComponents`]. A quarantined unit keeps the same
//! components but its `Agent` and `Steering`, which move into its [`Quarantined`] marker
//! ([`QuarantinedComponents`]), so no stage sees it.

use glam::Vec2;
use hecs::{Archetype, ColumnBatchBuilder, ColumnBatchType, Component};
use horde_core::{
    Agent, ExternalForce, Mass, Position, Quarantined, Steering, Stun, UnitId, Velocity,
};

/// Defines the unit's types from the one list of its components (field name and type, in
/// storage order).
macro_rules! unit_components {
    ($($field:ident: $t:ident),* $(,)?) => {
        /// A unit's components by value.
        #[derive(Clone, Copy, Debug, PartialEq)]
        pub(crate) struct Unit {
            $(pub(crate) $field: $t,)*
        }

        /// A unit's components borrowed from the world.
        #[derive(Clone, Copy, Debug)]
        pub(crate) struct UnitRef<'a> {
            $(pub(crate) $field: &'a $t,)*
        }

        /// A unit's components as a hecs query: an archetype satisfies it exactly when it
        /// holds units (quarantined ones have no `Agent` or `Steering`).
        pub(crate) type UnitComponents<'a> = ($(&'a $t,)*);

        /// How many components a unit has: an archetype with exactly these holds nothing
        /// but horde's units.
        pub(crate) const UNIT_COMPONENTS: usize = [$(stringify!($field)),*].len();

        impl Unit {
            /// The components as the tuple hecs spawns.
            pub(crate) fn bundle(self) -> ($($t,)*) {
                ($(self.$field,)*)
            }
        }

        impl<'a> UnitRef<'a> {
            /// Names the parts of a [`UnitComponents`] query item.
            pub(crate) fn of(($($field,)*): UnitComponents<'a>) -> Self {
                Self { $($field,)* }
            }

            /// The components copied out of the world.
            #[cfg(test)]
            pub(crate) fn copied(self) -> Unit {
                Unit { $($field: *self.$field,)* }
            }
        }

        /// The column types of an archetype of units, for a hecs column batch.
        pub(crate) fn unit_columns() -> ColumnBatchType {
            let mut types = ColumnBatchType::new();
            $(types.add::<$t>();)*
            types
        }

        /// Copies every column of `archetype` (of units only) into `batch`, rows in `rows`
        /// order; `false` when a column is missing or full.
        pub(crate) fn copy_unit_columns(
            archetype: &Archetype,
            batch: &ColumnBatchBuilder,
            rows: &[u32],
        ) -> bool {
            $(copy::<$t>(archetype, batch, rows))&&*
        }
    };
}

unit_components! {
    id: UnitId,
    position: Position,
    velocity: Velocity,
    external: ExternalForce,
    stun: Stun,
    mass: Mass,
    agent: Agent,
    steering: Steering,
}

impl Unit {
    /// A unit at rest where `spec`-like parts put it: no velocity, no stun.
    pub(crate) fn at_rest(id: UnitId, position: Vec2, mass: f32, agent: Agent) -> Self {
        Self {
            id,
            position: Position(position),
            velocity: Velocity(Vec2::ZERO),
            external: ExternalForce(Vec2::ZERO),
            stun: Stun(0.0),
            mass: Mass(mass),
            agent,
            steering: Steering::default(),
        }
    }

    /// The tuple hecs spawns for this unit quarantined since `frame`: its `Agent` and
    /// `Steering` inside the [`Quarantined`] marker.
    pub(crate) fn quarantined(
        self,
        frame: u64,
    ) -> (
        UnitId,
        Position,
        Velocity,
        ExternalForce,
        Stun,
        Mass,
        Quarantined,
    ) {
        (
            self.id,
            self.position,
            self.velocity,
            self.external,
            self.stun,
            self.mass,
            Quarantined {
                frame,
                agent: self.agent,
                steering: self.steering,
            },
        )
    }
}

/// A quarantined unit's components as a hecs query.
pub(crate) type QuarantinedComponents<'a> = (
    &'a UnitId,
    &'a Position,
    &'a Velocity,
    &'a ExternalForce,
    &'a Stun,
    &'a Mass,
    &'a Quarantined,
);

/// Copies column `T` of `archetype` into `batch`, rows in `rows` order.
fn copy<T: Component + Copy>(
    archetype: &Archetype,
    batch: &ColumnBatchBuilder,
    rows: &[u32],
) -> bool {
    let (Some(column), Some(mut writer)) = (archetype.get::<&T>(), batch.writer::<T>()) else {
        return false;
    };
    rows.iter()
        .all(|&row| writer.push(column[row as usize]).is_ok())
}
