//! horde: moves huge RTS armies.
//!
//! This facade re-exports [`horde_core`] (data and algorithms) and [`horde_systems`]
//! (stages and the job graph).
pub use horde_core as core;
pub use horde_systems as systems;
