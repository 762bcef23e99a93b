//! horde-systems: the frame's stages and the crossbeam job graph that runs them.
#![warn(missing_docs)]

mod job_graph;

pub use job_graph::{
    Access, FrameReport, GraphBuildError, JobGraph, JobGraphBuilder, JobPanic, PoolError,
    Resource, StageContext, StageTime, WorkerPool,
};
