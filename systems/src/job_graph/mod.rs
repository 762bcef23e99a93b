//! The frame as a job graph: stages that declare what they touch, checked once when the graph is
//! built, then run every frame on a persistent [`WorkerPool`] (docs/behaviour.md, "The frame").
//!
//! - `access`: what a stage reads and writes ([`Access`], [`Resource`]).
//! - `pool`: the worker threads and scoped batch parallelism ([`WorkerPool`]); the only module
//!   with `unsafe` code, explained in its docs and in `README.md`.
//! - `graph`: stages, their order and the conflict check ([`JobGraphBuilder`], [`JobGraph`],
//!   [`StageContext`], [`FrameReport`]).
//! - `declared`: in debug builds, the check that a running stage locks and queries only what
//!   its access declares.
//! - `error`: [`PoolError`], [`GraphBuildError`], [`JobPanic`].

mod access;
pub(crate) mod declared;
mod error;
mod graph;
mod pool;
#[cfg(test)]
mod test;

pub use access::{Access, Resource};
pub use error::{GraphBuildError, JobPanic, PoolError};
pub use graph::{FrameReport, JobGraph, JobGraphBuilder, Next, StageContext, StageTime};
pub use pool::WorkerPool;
