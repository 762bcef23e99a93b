//! horde: moves huge RTS armies.
//!
//! This facade re-exports everything public from [`horde_core`] (data and algorithms with no
//! threads: grid, terrain, fields, map formats, level generator) and [`horde_systems`] (the
//! frame's stages and the job graph), so `use horde::*` is all an engine needs.
//!
//! The README follows; its quick start is compiled and run as a doctest.
#![doc = include_str!("../README.md")]
#![warn(missing_docs)]

pub use horde_core::*;
pub use horde_systems::*;
