//! The job graph's error types: what can go wrong building a pool, building a graph, and running one.

use std::any::Any;

/// [`WorkerPool::new`](super::WorkerPool::new) could not create the pool.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PoolError {
    /// `threads` was 0. It counts every thread that does work, the caller included, so the smallest
    /// pool is `threads = 1`: no worker threads, everything runs on the caller.
    #[error("a worker pool needs at least 1 thread (the caller); got 0")]
    ZeroThreads,
    /// The operating system refused to start a worker thread. Workers started before it have been
    /// shut down and joined again.
    #[error("could not start worker thread `{thread}`: {source}")]
    Spawn {
        /// Name of the thread that could not be started, e.g. `horde-worker-3`.
        thread: String,
        /// The operating system's error.
        source: std::io::Error,
    },
}

/// [`JobGraphBuilder::build`](super::JobGraphBuilder::build) rejected the declared stages.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum GraphBuildError {
    /// Two stages have the same name.
    #[error("two stages are named `{name}`")]
    DuplicateStage {
        /// The repeated name.
        name: String,
    },
    /// A stage runs `after` a stage that was never declared.
    #[error("stage `{stage}` runs after `{dependency}`, but no stage has that name")]
    UnknownDependency {
        /// The stage that declared the dependency.
        stage: String,
        /// The name it gave, which matches no stage.
        dependency: String,
    },
    /// A stage runs `after` an exclusive stage declared after it, or a stage declared after
    /// such an exclusive stage: it would have to wait for something that waits for it.
    #[error(
        "stage `{stage}` runs after `{dependency}`, but `{dependency}` is (or follows) an \
         exclusive stage declared after `{stage}`, so it runs after `{stage}`"
    )]
    AcrossExclusive {
        /// The stage that declared the dependency.
        stage: String,
        /// The stage or exclusive stage it named.
        dependency: String,
    },
    /// The `after` declarations form a cycle, so no stage of it could ever start.
    #[error("the stages form a dependency cycle: {}", cycle_text(.stages))]
    Cycle {
        /// The stages of one cycle, each one running before the next and the last before the first.
        /// The cycle starts at the stage declared first.
        stages: Vec<String>,
    },
    /// Two stages touch the same resource, at least one of them writes it, and neither runs after
    /// the other (directly or through other stages), so they could run at the same time.
    #[error(
        "stages `{first}` and `{second}` both access `{resource}` and at least one writes it, but \
         neither runs after the other; order them with `after`"
    )]
    Conflict {
        /// The stage declared first.
        first: String,
        /// The stage declared second.
        second: String,
        /// The resource both touch: a Rust type name, or a name given to `read_named`/`write_named`.
        resource: String,
    },
}

fn cycle_text(stages: &[String]) -> String {
    let mut text = stages.join(" -> ");
    if let Some(first) = stages.first() {
        text.push_str(" -> ");
        text.push_str(first);
    }
    text
}

/// A stage or a batch panicked. The panic was caught; everything already running finished, and the
/// pool and the graph can be used again.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
#[error("{}", self.describe())]
pub struct JobPanic {
    /// The stage that panicked (for a batch: the stage that split its work into batches). For the
    /// batch helpers called directly on a [`WorkerPool`](super::WorkerPool), outside any stage, the
    /// helper's name: `for_each_batch`, `for_each_chunk_mut` or `map_batches`.
    pub stage: String,
    /// The batch that panicked, or `None` when the stage itself panicked outside its batches.
    pub batch: Option<usize>,
    /// The panic's message (`"<non-string panic payload>"` when it was not a string).
    pub message: String,
}

impl JobPanic {
    pub(crate) fn new(stage: &str, batch: Option<usize>, payload: &(dyn Any + Send)) -> Self {
        Self {
            stage: stage.to_owned(),
            batch,
            message: panic_message(payload),
        }
    }

    fn describe(&self) -> String {
        match self.batch {
            Some(batch) => format!(
                "stage `{}` panicked in batch {batch}: {}",
                self.stage, self.message
            ),
            None => format!("stage `{}` panicked: {}", self.stage, self.message),
        }
    }
}

/// The text of a panic payload: `panic!` gives a `&'static str` or a `String`.
fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(text) = payload.downcast_ref::<&'static str>() {
        (*text).to_owned()
    } else if let Some(text) = payload.downcast_ref::<String>() {
        text.clone()
    } else if let Some(panic) = payload.downcast_ref::<JobPanic>() {
        panic.message.clone()
    } else {
        "<non-string panic payload>".to_owned()
    }
}
