//! Stages, their order, and the graph that runs each of them once per frame.

use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::ops::Range;
use std::panic::{self, AssertUnwindSafe};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use parking_lot::Mutex;

use super::access::{Access, Resource};
use super::declared;
use super::error::{GraphBuildError, JobPanic};
use super::pool::{ProfileScope, Spawner, WorkerPool};

/// A stage's code: reads the frame context `C`, splits its work through the [`StageContext`].
type StageFn<C> = Box<dyn Fn(&C, &StageContext<'_>) + Send + Sync>;

/// Declares the stages of a [`JobGraph`]; [`build`](Self::build) checks them.
///
/// `C` is the frame context every stage receives by shared reference; stages mutate it through
/// interior mutability (locks, hecs' own borrow checks), which is why the graph also wants each
/// stage's [`Access`] declaration.
#[must_use]
pub struct JobGraphBuilder<C: ?Sized> {
    stages: Vec<Declared<C>>,
}

struct Declared<C: ?Sized> {
    name: Arc<str>,
    access: Access,
    after: Vec<String>,
    run: StageFn<C>,
}

impl<C: ?Sized> Default for JobGraphBuilder<C> {
    fn default() -> Self {
        Self { stages: Vec::new() }
    }
}

impl<C: ?Sized> JobGraphBuilder<C> {
    /// A builder with no stages.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds the stage `name`, which touches `access`, starts only after every stage named in
    /// `after` has finished, and runs `run` once per frame.
    ///
    /// `after` may name stages declared later. Mistakes (a repeated name, an unknown or cyclic
    /// dependency, an access conflict) are reported by [`build`](Self::build).
    pub fn stage<F>(
        mut self,
        name: impl Into<Arc<str>>,
        access: Access,
        after: &[&str],
        run: F,
    ) -> Self
    where
        F: Fn(&C, &StageContext<'_>) + Send + Sync + 'static,
    {
        self.stages.push(Declared {
            name: name.into(),
            access,
            after: after.iter().map(|&name| name.to_owned()).collect(),
            run: Box::new(run),
        });
        self
    }

    /// Checks the declarations and computes the order once; running the graph then only counts
    /// finished dependencies.
    ///
    /// # Errors
    /// The first problem found, in this order: [`GraphBuildError::DuplicateStage`],
    /// [`GraphBuildError::UnknownDependency`], [`GraphBuildError::Cycle`], and
    /// [`GraphBuildError::Conflict`] for two stages (in declaration order) that touch a resource
    /// incompatibly with no order between them.
    pub fn build(self) -> Result<JobGraph<C>, GraphBuildError> {
        let count = self.stages.len();
        let dependencies = self.resolve_dependencies()?;
        let order = topological_order(&dependencies).map_err(|cycle| GraphBuildError::Cycle {
            stages: cycle
                .into_iter()
                .map(|stage| self.stages[stage].name.to_string())
                .collect(),
        })?;

        // before[s]: every stage that finishes before `s` starts, directly or through others.
        let mut before = vec![BitSet::new(count); count];
        for &stage in &order {
            let mut set = BitSet::new(count);
            for &dependency in &dependencies[stage] {
                set.insert(dependency);
                set.union_with(&before[dependency]);
            }
            before[stage] = set;
        }
        for second in 0..count {
            for first in 0..second {
                if before[second].contains(first) || before[first].contains(second) {
                    continue;
                }
                let (a, b) = (&self.stages[first], &self.stages[second]);
                if let Some(resource) = a.access.conflict(&b.access) {
                    return Err(GraphBuildError::Conflict {
                        first: a.name.to_string(),
                        second: b.name.to_string(),
                        resource: resource.name().to_owned(),
                    });
                }
            }
        }

        let mut dependents = vec![Vec::new(); count];
        for (stage, stage_dependencies) in dependencies.iter().enumerate() {
            for &dependency in stage_dependencies {
                dependents[dependency].push(stage);
            }
        }
        let roots = (0..count)
            .filter(|&stage| dependencies[stage].is_empty())
            .collect();
        let stages = self
            .stages
            .into_iter()
            .zip(dependencies)
            .zip(dependents)
            .map(|((declared, dependencies), dependents)| Stage {
                scope: ProfileScope::new(declared.name.to_string()),
                batch_scope: ProfileScope::new(format!("{}::batch", declared.name)),
                name: declared.name,
                access: declared.access,
                dependencies,
                dependents,
                run: declared.run,
            })
            .collect();
        Ok(JobGraph { stages, roots })
    }

    /// Each stage's direct dependencies, as indices, without repeats.
    fn resolve_dependencies(&self) -> Result<Vec<Vec<usize>>, GraphBuildError> {
        let mut index = HashMap::with_capacity(self.stages.len());
        for (stage, declared) in self.stages.iter().enumerate() {
            if index.insert(&*declared.name, stage).is_some() {
                return Err(GraphBuildError::DuplicateStage {
                    name: declared.name.to_string(),
                });
            }
        }
        self.stages
            .iter()
            .map(|declared| {
                let mut dependencies = Vec::with_capacity(declared.after.len());
                for name in &declared.after {
                    let &dependency = index.get(name.as_str()).ok_or_else(|| {
                        GraphBuildError::UnknownDependency {
                            stage: declared.name.to_string(),
                            dependency: name.clone(),
                        }
                    })?;
                    if !dependencies.contains(&dependency) {
                        dependencies.push(dependency);
                    }
                }
                Ok(dependencies)
            })
            .collect()
    }
}

impl<C: ?Sized> fmt::Debug for JobGraphBuilder<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(self.stages.iter().map(|stage| (&stage.name, &stage.after)))
            .finish()
    }
}

/// Kahn's algorithm, taking ready stages in declaration order. On a cycle, returns the stages of
/// one cycle, each running before the next, starting with the one declared first.
fn topological_order(dependencies: &[Vec<usize>]) -> Result<Vec<usize>, Vec<usize>> {
    let count = dependencies.len();
    let mut waiting: Vec<usize> = dependencies.iter().map(Vec::len).collect();
    let mut dependents = vec![Vec::new(); count];
    for (stage, stage_dependencies) in dependencies.iter().enumerate() {
        for &dependency in stage_dependencies {
            dependents[dependency].push(stage);
        }
    }
    let mut ready: VecDeque<usize> = (0..count).filter(|&s| waiting[s] == 0).collect();
    let mut order = Vec::with_capacity(count);
    while let Some(stage) = ready.pop_front() {
        order.push(stage);
        for &dependent in &dependents[stage] {
            waiting[dependent] -= 1;
            if waiting[dependent] == 0 {
                ready.push_back(dependent);
            }
        }
    }
    if order.len() == count {
        return Ok(order);
    }
    // Every stage left over still waits for a left-over dependency (otherwise it would have become
    // ready), so walking from one to a left-over dependency, again and again, must come back to a
    // stage already seen: that loop is a cycle.
    let mut seen_at = vec![None; count];
    let mut path = Vec::new();
    let mut stage = (0..count)
        .find(|&s| waiting[s] > 0)
        .expect("some stage is left over");
    let start = loop {
        if let Some(at) = seen_at[stage] {
            break at;
        }
        seen_at[stage] = Some(path.len());
        path.push(stage);
        stage = *dependencies[stage]
            .iter()
            .filter(|&&d| waiting[d] > 0)
            .min()
            .expect("a left-over stage waits for a left-over dependency");
    };
    // The path follows "runs after"; reverse it to list each stage before the next.
    let mut cycle: Vec<usize> = path[start..].iter().rev().copied().collect();
    let first = (0..cycle.len())
        .min_by_key(|&i| cycle[i])
        .expect("a cycle has a stage");
    cycle.rotate_left(first);
    Err(cycle)
}

/// A fixed-size set of stage indices.
#[derive(Clone)]
struct BitSet(Vec<u64>);

impl BitSet {
    fn new(len: usize) -> Self {
        Self(vec![0; len.div_ceil(64)])
    }

    fn insert(&mut self, index: usize) {
        self.0[index / 64] |= 1 << (index % 64);
    }

    fn contains(&self, index: usize) -> bool {
        self.0[index / 64] & (1 << (index % 64)) != 0
    }

    fn union_with(&mut self, other: &Self) {
        for (word, other) in self.0.iter_mut().zip(&other.0) {
            *word |= other;
        }
    }
}

/// The frame as stages with a checked order; [`run`](Self::run) runs each stage once.
///
/// ```
/// use horde_systems::{Access, JobGraphBuilder, WorkerPool};
/// use parking_lot::Mutex;
///
/// struct Frame {
///     positions: Mutex<Vec<f32>>,
///     velocities: Mutex<Vec<f32>>,
/// }
/// struct Positions;
/// struct Velocities;
///
/// let graph = JobGraphBuilder::<Frame>::new()
///     .stage("steer_units", Access::new().read::<Positions>().write::<Velocities>(), &[],
///         |frame, stage| {
///             let positions = frame.positions.lock();
///             let mut velocities = frame.velocities.lock();
///             // Batches of 256 units, whatever the number of threads.
///             stage.for_each_chunk_mut(&mut velocities, 256, |_batch, range, chunk| {
///                 for (velocity, position) in chunk.iter_mut().zip(&positions[range]) {
///                     *velocity = -position;
///                 }
///             });
///         })
///     .stage("integrate_units", Access::new().read::<Velocities>().write::<Positions>(),
///         &["steer_units"],
///         |frame, _stage| {
///             let velocities = frame.velocities.lock();
///             for (position, velocity) in frame.positions.lock().iter_mut().zip(velocities.iter()) {
///                 *position += 0.5 * velocity;
///             }
///         })
///     .build()
///     .unwrap();
///
/// let pool = WorkerPool::new(2).unwrap();
/// let frame = Frame { positions: Mutex::new(vec![2.0; 1000]), velocities: Mutex::new(vec![0.0; 1000]) };
/// let report = graph.run(&pool, &frame).unwrap();
/// assert_eq!(frame.positions.lock()[999], 1.0);
/// assert_eq!(report.stages()[0].name.as_ref(), "steer_units");
/// ```
pub struct JobGraph<C: ?Sized> {
    stages: Vec<Stage<C>>,
    /// Stages without dependencies, in declaration order.
    roots: Vec<usize>,
}

struct Stage<C: ?Sized> {
    name: Arc<str>,
    access: Access,
    dependencies: Vec<usize>,
    dependents: Vec<usize>,
    run: StageFn<C>,
    scope: ProfileScope,
    batch_scope: ProfileScope,
}

impl<C: ?Sized> JobGraph<C> {
    /// A builder with no stages.
    pub fn builder() -> JobGraphBuilder<C> {
        JobGraphBuilder::new()
    }

    /// The number of stages.
    #[must_use]
    pub fn len(&self) -> usize {
        self.stages.len()
    }

    /// Whether the graph has no stages (running it does nothing).
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.stages.is_empty()
    }

    /// The stage names, in declaration order.
    pub fn stage_names(&self) -> impl Iterator<Item = &str> {
        self.stages.iter().map(|stage| &*stage.name)
    }

    /// What the stage `name` declared it touches, or `None` for an unknown name.
    #[must_use]
    pub fn access(&self, name: &str) -> Option<&Access> {
        self.stages
            .iter()
            .find(|stage| &*stage.name == name)
            .map(|stage| &stage.access)
    }
}

impl<C: ?Sized> JobGraph<C> {
    /// The stages the stage `name` runs after (its declared order, not the ones it merely
    /// conflicts with), or `None` for an unknown name.
    pub fn runs_after(&self, name: &str) -> Option<impl Iterator<Item = &str>> {
        let stage = self.stages.iter().find(|stage| &*stage.name == name)?;
        Some(stage.dependencies.iter().map(|&d| &*self.stages[d].name))
    }

    /// The graph as a Markdown table, one row a stage in declaration order: what it runs
    /// after, reads and writes (types by their last path segment). The docs' stage table is
    /// this text, checked current by a test.
    #[must_use]
    pub fn markdown_table(&self) -> String {
        let cells = |names: Vec<String>| {
            if names.is_empty() {
                "-".to_owned()
            } else {
                names.join(", ")
            }
        };
        let ticked = |name: &str| format!("`{name}`");
        let mut table =
            String::from("| stage | runs after | reads | writes |\n|---|---|---|---|\n");
        for stage in &self.stages {
            let after = self.runs_after(&stage.name).into_iter().flatten();
            table.push_str(&format!(
                "| `{}` | {} | {} | {} |\n",
                stage.name,
                cells(after.map(ticked).collect()),
                cells(
                    stage
                        .access
                        .reads()
                        .map(|r| ticked(short_name(r)))
                        .collect()
                ),
                cells(
                    stage
                        .access
                        .writes()
                        .map(|r| ticked(short_name(r)))
                        .collect()
                ),
            ));
        }
        table
    }
}

/// A resource's name without its module path (`Position` for `horde_core::unit::Position`).
fn short_name(resource: &Resource) -> &str {
    let name = resource.name();
    match name.find('<') {
        None => name.rsplit("::").next().unwrap_or(name),
        Some(_) => name,
    }
}

impl<C: ?Sized + Sync> JobGraph<C> {
    /// The report of a run that ran no stage (every stage listed, at zero time).
    #[must_use]
    pub fn idle_report(&self) -> FrameReport {
        FrameReport {
            total: Duration::ZERO,
            stages: (self.stages.iter())
                .map(|stage| StageTime {
                    name: Arc::clone(&stage.name),
                    duration: Duration::ZERO,
                })
                .collect(),
        }
    }

    /// Runs every stage once on `pool`, each after all its dependencies, stages without an order
    /// between them possibly at the same time on different threads. The calling thread runs stages
    /// too. Each stage is a puffin scope named after the stage.
    ///
    /// # Errors
    /// If a stage (or one of its batches) panics, stages not yet started are skipped, the ones
    /// running finish, and the first panic comes back as a [`JobPanic`]. The graph and the pool
    /// can run again.
    pub fn run(&self, pool: &WorkerPool, ctx: &C) -> Result<FrameReport, JobPanic> {
        puffin::profile_function!();
        let started = Instant::now();
        let run = Run {
            graph: self,
            ctx,
            pool,
            waiting: self
                .stages
                .iter()
                .map(|stage| AtomicUsize::new(stage.dependencies.len()))
                .collect(),
            nanos: self.stages.iter().map(|_| AtomicU64::new(0)).collect(),
            failed: AtomicBool::new(false),
            panic: Mutex::new(None),
        };
        pool.run_tasks(&run, run_stage::<C>, |spawner| {
            spawner.spawn_each(self.roots.iter().copied());
        });
        if let Some(panic) = run.panic.into_inner() {
            return Err(panic);
        }
        let stages = self
            .stages
            .iter()
            .zip(run.nanos)
            .map(|(stage, nanos)| StageTime {
                name: Arc::clone(&stage.name),
                duration: Duration::from_nanos(nanos.into_inner()),
            })
            .collect();
        Ok(FrameReport {
            total: started.elapsed(),
            stages,
        })
    }
}

impl<C: ?Sized> fmt::Debug for JobGraph<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut list = f.debug_list();
        for stage in &self.stages {
            let after: Vec<&str> = stage
                .dependencies
                .iter()
                .map(|&d| &*self.stages[d].name)
                .collect();
            list.entry(&(&stage.name, after, &stage.access));
        }
        list.finish()
    }
}

/// One `JobGraph::run` call, on the caller's stack.
struct Run<'a, C: ?Sized> {
    graph: &'a JobGraph<C>,
    ctx: &'a C,
    pool: &'a WorkerPool,
    /// Per stage, the dependencies that have not finished yet.
    waiting: Vec<AtomicUsize>,
    nanos: Vec<AtomicU64>,
    /// Set by the first panic: stages that have not started are skipped.
    failed: AtomicBool,
    panic: Mutex<Option<JobPanic>>,
}

fn run_stage<C: ?Sized + Sync>(run: &Run<'_, C>, index: usize, spawner: &Spawner<'_>) {
    let stage = &run.graph.stages[index];
    if !run.failed.load(Ordering::Relaxed) {
        let started = Instant::now();
        let outcome = panic::catch_unwind(AssertUnwindSafe(|| {
            let _scope = stage.scope.enter(|| "");
            let context = StageContext {
                name: &stage.name,
                index,
                access: &stage.access,
                pool: run.pool,
                batch_scope: &stage.batch_scope,
            };
            declared::as_stage(&stage.name, &stage.access, || {
                (stage.run)(run.ctx, &context);
            });
        }));
        let nanos = u64::try_from(started.elapsed().as_nanos()).unwrap_or(u64::MAX);
        run.nanos[index].store(nanos, Ordering::Relaxed);
        if let Err(payload) = outcome {
            run.failed.store(true, Ordering::Relaxed);
            let panic = match payload.downcast::<JobPanic>() {
                // A batch of this stage panicked; `StageContext` already named stage and batch.
                Ok(panic) => *panic,
                Err(payload) => JobPanic::new(&stage.name, None, &*payload),
            };
            run.panic.lock().get_or_insert(panic);
        }
    }
    // A skipped stage still releases its dependents (which will be skipped too), so every stage
    // is accounted for and the run ends. AcqRel: the last dependency to finish hands the dependent
    // everything every dependency wrote.
    spawner.spawn_each(
        stage
            .dependents
            .iter()
            .copied()
            .filter(|&dependent| run.waiting[dependent].fetch_sub(1, Ordering::AcqRel) == 1),
    );
}

/// What a running stage gets besides the frame context: its name and the pool's batch
/// parallelism.
///
/// Batches split `0..len` into ranges of `batch_size` that depend on `len` and `batch_size` only,
/// never on the number of threads, so results are the same for every pool size. A panicking batch
/// makes the whole stage fail: the call unwinds (after the other batches finished or were
/// skipped) and [`JobGraph::run`] returns a [`JobPanic`] naming the stage and the batch.
pub struct StageContext<'a> {
    name: &'a str,
    index: usize,
    access: &'a Access,
    pool: &'a WorkerPool,
    batch_scope: &'a ProfileScope,
}

impl<'a> StageContext<'a> {
    /// The running stage's name.
    #[must_use]
    pub fn name(&self) -> &'a str {
        self.name
    }

    /// The running stage's place in the graph: stages count from 0 in the order they were
    /// declared. Results that several stages report at once are put in this order, so that
    /// they do not depend on which stage finished first.
    #[must_use]
    pub fn index(&self) -> usize {
        self.index
    }

    /// How many threads the pool has (the caller included). For information only: splitting work
    /// by it would make results depend on the machine.
    #[must_use]
    pub fn threads(&self) -> usize {
        self.pool.threads()
    }

    /// Calls `f(batch_index, range)` for every batch of `0..len` in parallel; see
    /// [`WorkerPool::for_each_batch`]. Each batch is a puffin scope named `<stage>::batch`.
    ///
    /// # Panics
    /// If `batch_size` is 0, or (after the other batches) if a batch panicked.
    pub fn for_each_batch<F>(&self, len: usize, batch_size: usize, f: F)
    where
        F: Fn(usize, Range<usize>) + Sync,
    {
        let f = |i: usize, range: Range<usize>| {
            declared::as_stage(self.name, self.access, || f(i, range));
        };
        let outcome = self
            .pool
            .batches(self.name, self.batch_scope, len, batch_size, &f);
        unwind_on_panic(outcome);
    }

    /// Calls `f(batch_index, range, &mut data[range])` for every batch in parallel; see
    /// [`WorkerPool::for_each_chunk_mut`].
    ///
    /// # Panics
    /// If `batch_size` is 0, or (after the other batches) if a batch panicked.
    pub fn for_each_chunk_mut<T, F>(&self, data: &mut [T], batch_size: usize, f: F)
    where
        T: Send,
        F: Fn(usize, Range<usize>, &mut [T]) + Sync,
    {
        let f = |i: usize, range: Range<usize>, chunk: &mut [T]| {
            declared::as_stage(self.name, self.access, || f(i, range, chunk));
        };
        let outcome = self
            .pool
            .chunks_mut(self.name, self.batch_scope, data, batch_size, &f);
        unwind_on_panic(outcome);
    }

    /// Collects `f(batch_index, range)` for every batch, in batch order; see
    /// [`WorkerPool::map_batches`].
    ///
    /// # Panics
    /// If `batch_size` is 0, or (after the other batches) if a batch panicked.
    #[must_use]
    pub fn map_batches<R, F>(&self, len: usize, batch_size: usize, f: F) -> Vec<R>
    where
        R: Send,
        F: Fn(usize, Range<usize>) -> R + Sync,
    {
        let f = |i: usize, range: Range<usize>| {
            declared::as_stage(self.name, self.access, || f(i, range))
        };
        let outcome = self
            .pool
            .map(self.name, self.batch_scope, len, batch_size, &f);
        unwind_on_panic(outcome)
    }
}

impl fmt::Debug for StageContext<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StageContext")
            .field("name", &self.name)
            .field("threads", &self.pool.threads())
            .finish()
    }
}

/// Continues a batch panic as a panic of the stage, carrying the [`JobPanic`] as its payload so
/// the graph reports the batch. `resume_unwind` does not run the panic hook again.
fn unwind_on_panic<T>(outcome: Result<T, JobPanic>) -> T {
    match outcome {
        Ok(value) => value,
        Err(panic) => panic::resume_unwind(Box::new(panic)),
    }
}

/// How long each stage of one [`JobGraph::run`] took.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FrameReport {
    total: Duration,
    stages: Vec<StageTime>,
}

/// One stage's wall time in a [`FrameReport`].
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct StageTime {
    /// The stage's name.
    pub name: Arc<str>,
    /// Wall time from the stage's start to its end, its batches included.
    pub duration: Duration,
}

impl FrameReport {
    /// Wall time of the whole run.
    #[must_use]
    pub fn total(&self) -> Duration {
        self.total
    }

    /// Every stage's time, in declaration order.
    #[must_use]
    pub fn stages(&self) -> &[StageTime] {
        &self.stages
    }

    /// The time of the stage `name`, or `None` for an unknown name.
    #[must_use]
    pub fn stage(&self, name: &str) -> Option<Duration> {
        self.stages
            .iter()
            .find(|stage| &*stage.name == name)
            .map(|stage| stage.duration)
    }

    /// Adds a step the caller ran after the graph (listed after the stages; its time counts
    /// in [`Self::total`]).
    pub(crate) fn push_step(&mut self, name: Arc<str>, duration: Duration) {
        self.total += duration;
        self.stages.push(StageTime { name, duration });
    }
}

#[cfg(test)]
impl<C: ?Sized> JobGraph<C> {
    /// The puffin scope ids the stage `name` registered for itself and its batches, if any yet.
    pub(super) fn scope_ids(
        &self,
        name: &str,
    ) -> Option<(Option<puffin::ScopeId>, Option<puffin::ScopeId>)> {
        let stage = self.stages.iter().find(|stage| &*stage.name == name)?;
        Some((
            stage.scope.registered_id(),
            stage.batch_scope.registered_id(),
        ))
    }
}
