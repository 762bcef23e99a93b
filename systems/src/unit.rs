//! What a unit is made of: the one list of its hecs components. [`crate::Horde::spawn`] and
//! a snapshot's restore build a [`Unit`]; the storage sort copies its columns
//! ([`unit_columns`], [`copy_unit_columns`]); the state hash, the unit states and the
//! snapshot read a unit's state as a [`UnitRef`] from [`UnitComponents`]; the stages' cache
//! of each unit ([`Memo`]) moves with it and is read by no one else. A quarantined unit keeps
//! the same state components but its `Agent` and `Steering`, which move into its
//! [`Quarantined`] marker ([`QuarantinedComponents`]), and has no memo, so no stage sees it.

use glam::Vec2;
use hecs::{Archetype, ColumnBatchBuilder, ColumnBatchType, Component};
use horde_core::{
    Agent, CellMemo, ExternalForce, Mass, Position, Quarantined, Steering, Stun, UnitId, Velocity,
};

/// Defines the unit's types from the one list of its components (field name and type, in
/// storage order): its state, then the stages' caches, which move with the unit but which
/// nothing reads back (the hash, the snapshot and the unit states see the state only).
macro_rules! unit_components {
    (
        state { $($field:ident: $t:ident),* $(,)? }
        cache { $($cfield:ident: $ct:ident),* $(,)? }
    ) => {
        /// A unit's components by value.
        #[derive(Clone, Copy, Debug, PartialEq)]
        pub(crate) struct Unit {
            $(pub(crate) $field: $t,)*
            $(pub(crate) $cfield: $ct,)*
        }

        /// A unit's state borrowed from the world.
        #[derive(Clone, Copy, Debug)]
        pub(crate) struct UnitRef<'a> {
            $(pub(crate) $field: &'a $t,)*
        }

        /// A unit's state as a hecs query: an archetype satisfies it exactly when it holds
        /// units (quarantined ones have no `Agent` or `Steering`).
        pub(crate) type UnitComponents<'a> = ($(&'a $t,)*);

        /// How many components a unit has: an archetype with exactly these holds nothing
        /// but horde's units.
        pub(crate) const UNIT_COMPONENTS: usize =
            [$(stringify!($field),)* $(stringify!($cfield),)*].len();

        impl Unit {
            /// The components as the tuple hecs spawns.
            pub(crate) fn bundle(self) -> ($($t,)* $($ct,)*) {
                ($(self.$field,)* $(self.$cfield,)*)
            }
        }

        impl<'a> UnitRef<'a> {
            /// Names the parts of a [`UnitComponents`] query item.
            pub(crate) fn of(($($field,)*): UnitComponents<'a>) -> Self {
                Self { $($field,)* }
            }

            /// The state copied out of the world, with blank caches.
            #[cfg(test)]
            pub(crate) fn copied(self) -> Unit {
                Unit { $($field: *self.$field,)* $($cfield: $ct::default(),)* }
            }
        }

        /// The column types of an archetype of units, for a hecs column batch.
        pub(crate) fn unit_columns() -> ColumnBatchType {
            let mut types = ColumnBatchType::new();
            $(types.add::<$t>();)*
            $(types.add::<$ct>();)*
            types
        }

        /// Copies every column of `archetype` (of units only) into `batch`, rows in `rows`
        /// order; `false` when a column is missing or full.
        pub(crate) fn copy_unit_columns(
            archetype: &Archetype,
            batch: &ColumnBatchBuilder,
            rows: &[u32],
        ) -> bool {
            $(copy::<$t>(archetype, batch, rows))&&* $(&& copy::<$ct>(archetype, batch, rows))*
        }
    };
}

unit_components! {
    state {
        id: UnitId,
        position: Position,
        velocity: Velocity,
        external: ExternalForce,
        stun: Stun,
        mass: Mass,
        agent: Agent,
        steering: Steering,
    }
    cache {
        memo: Memo,
    }
}

/// The stages' cache of what a unit last read about its cell ([`CellMemo`]: its field's
/// byte, its clearance), a component only this crate names: steering fills it, the move
/// reads it. Not state: never saved nor hashed, blank in a restored unit, dropped when the
/// unit is quarantined.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Memo(pub(crate) CellMemo);

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
            memo: Memo::default(),
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
