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

/// An exclusive stage's code: the frame context `C` to itself, alone.
type ExclusiveFn<C> = Box<dyn Fn(&mut C, &StageContext<'_>) -> Next + Send + Sync>;

/// What an exclusive stage says of the rest of the frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Next {
    /// The stages after it run.
    Continue,
    /// The frame ends here: no stage after it runs (each is reported at zero time). For a
    /// frame that would change nothing.
    EndFrame,
}

/// Declares the stages of a [`JobGraph`]; [`build`](Self::build) checks them.
///
/// `C` is the frame context every stage receives by shared reference; stages mutate it through
/// interior mutability (locks, hecs' own borrow checks), which is why the graph also wants each
/// stage's [`Access`] declaration.
#[must_use]
pub struct JobGraphBuilder<C: ?Sized> {
    stages: Vec<Declared<C>>,
    /// The exclusive stages, each with the number of stages declared before it.
    exclusive: Vec<(usize, Arc<str>, ExclusiveFn<C>)>,
}

struct Declared<C: ?Sized> {
    name: Arc<str>,
    access: Access,
    after: Vec<String>,
    run: StageFn<C>,
    /// How many exclusive stages were declared before it.
    segment: usize,
}

impl<C: ?Sized> Default for JobGraphBuilder<C> {
    fn default() -> Self {
        Self {
            stages: Vec::new(),
            exclusive: Vec::new(),
        }
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
            segment: self.exclusive.len(),
        });
        self
    }

    /// Adds the exclusive stage `name`: it runs alone, on the calling thread, with the frame
    /// context to itself (`&mut C`: it may touch anything), after every stage declared before
    /// it and before every stage declared after it. It is the place for work that needs the
    /// whole context at once (checking or reordering the world between the concurrent parts).
    /// A stage may run `after` an exclusive stage or a stage before one (it does anyway), not
    /// a stage declared after an exclusive stage that follows it.
    pub fn exclusive<F>(mut self, name: impl Into<Arc<str>>, run: F) -> Self
    where
        F: Fn(&mut C, &StageContext<'_>) -> Next + Send + Sync + 'static,
    {
        self.exclusive
            .push((self.stages.len(), name.into(), Box::new(run)));
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
        let (shown, dependencies) = self.resolve_dependencies()?;
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
                let (a, b) = (&self.stages[first], &self.stages[second]);
                if before[second].contains(first)
                    || before[first].contains(second)
                    || a.segment != b.segment
                {
                    continue;
                }
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
        let mut roots = vec![Vec::new(); self.exclusive.len() + 1];
        for (stage, declared) in self.stages.iter().enumerate() {
            if dependencies[stage].is_empty() {
                roots[declared.segment].push(stage);
            }
        }
        let exclusive = self
            .exclusive
            .into_iter()
            .map(|(at, name, run)| Exclusive {
                at,
                scope: ProfileScope::new(name.to_string()),
                batch_scope: ProfileScope::new(format!("{name}::batch")),
                name,
                run,
            })
            .collect();
        let stages = self
            .stages
            .into_iter()
            .zip(dependencies)
            .zip(dependents)
            .zip(shown)
            .map(|(((declared, dependencies), dependents), shown)| Stage {
                scope: ProfileScope::new(declared.name.to_string()),
                batch_scope: ProfileScope::new(format!("{}::batch", declared.name)),
                name: declared.name,
                access: declared.access,
                dependencies,
                dependents,
                shown,
                segment: declared.segment,
                run: declared.run,
            })
            .collect();
        Ok(JobGraph {
            stages,
            exclusive,
            roots,
        })
    }

    /// Each stage's declared order by name (stages and exclusive stages, as the docs show
    /// it), and its direct dependencies among the stages of its own part of the frame (an
    /// earlier part finishes first anyway), as indices, without repeats.
    #[allow(clippy::type_complexity)]
    fn resolve_dependencies(
        &self,
    ) -> Result<(Vec<Vec<Arc<str>>>, Vec<Vec<usize>>), GraphBuildError> {
        // A name's place: a stage's index and part, or an exclusive stage's part boundary.
        let mut index = HashMap::with_capacity(self.stages.len() + self.exclusive.len());
        for (stage, declared) in self.stages.iter().enumerate() {
            if index
                .insert(&*declared.name, (Some(stage), declared.segment))
                .is_some()
            {
                return Err(GraphBuildError::DuplicateStage {
                    name: declared.name.to_string(),
                });
            }
        }
        for (k, (_, name, _)) in self.exclusive.iter().enumerate() {
            if index.insert(&**name, (None, k)).is_some() {
                return Err(GraphBuildError::DuplicateStage {
                    name: name.to_string(),
                });
            }
        }
        let mut shown = Vec::with_capacity(self.stages.len());
        let mut dependencies = Vec::with_capacity(self.stages.len());
        for declared in &self.stages {
            let mut names: Vec<Arc<str>> = Vec::with_capacity(declared.after.len());
            let mut own = Vec::with_capacity(declared.after.len());
            for name in &declared.after {
                let &(stage, segment) =
                    index
                        .get(name.as_str())
                        .ok_or_else(|| GraphBuildError::UnknownDependency {
                            stage: declared.name.to_string(),
                            dependency: name.clone(),
                        })?;
                // An exclusive stage `k` ends part `k`: one in a later part, or a stage of a
                // later part, runs after `declared`.
                let later = match stage {
                    None => segment >= declared.segment,
                    Some(_) => segment > declared.segment,
                };
                if later {
                    return Err(GraphBuildError::AcrossExclusive {
                        stage: declared.name.to_string(),
                        dependency: name.clone(),
                    });
                }
                if let Some(stage) = stage
                    && segment == declared.segment
                    && !own.contains(&stage)
                {
                    own.push(stage);
                }
                if !names.iter().any(|n| **n == **name) {
                    names.push(Arc::from(name.as_str()));
                }
            }
            shown.push(names);
            dependencies.push(own);
        }
        Ok((shown, dependencies))
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
/// let mut frame = Frame { positions: Mutex::new(vec![2.0; 1000]), velocities: Mutex::new(vec![0.0; 1000]) };
/// let report = graph.run(&pool, &mut frame).unwrap();
/// assert_eq!(frame.positions.lock()[999], 1.0);
/// assert_eq!(report.stages()[0].name.as_ref(), "steer_units");
/// ```
pub struct JobGraph<C: ?Sized> {
    stages: Vec<Stage<C>>,
    /// The exclusive stages, in declaration order; exclusive stage `k` ends part `k` of the
    /// frame.
    exclusive: Vec<Exclusive<C>>,
    /// Per part of the frame, its stages without dependencies, in declaration order.
    roots: Vec<Vec<usize>>,
}

struct Stage<C: ?Sized> {
    name: Arc<str>,
    access: Access,
    /// Its dependencies in its own part of the frame (what the run waits for).
    dependencies: Vec<usize>,
    dependents: Vec<usize>,
    /// Every stage it was declared to run after (what the docs show).
    shown: Vec<Arc<str>>,
    /// Its part of the frame: the number of exclusive stages before it.
    segment: usize,
    run: StageFn<C>,
    scope: ProfileScope,
    batch_scope: ProfileScope,
}

struct Exclusive<C: ?Sized> {
    name: Arc<str>,
    /// The number of stages declared before it.
    at: usize,
    run: ExclusiveFn<C>,
    scope: ProfileScope,
    batch_scope: ProfileScope,
}

/// A stage or an exclusive stage, in declaration order.
enum Entry<'a, C: ?Sized> {
    Stage(&'a Stage<C>),
    Exclusive(&'a Exclusive<C>),
}

impl<C: ?Sized> JobGraph<C> {
    /// A builder with no stages.
    pub fn builder() -> JobGraphBuilder<C> {
        JobGraphBuilder::new()
    }

    /// The number of stages, exclusive ones included.
    #[must_use]
    pub fn len(&self) -> usize {
        self.stages.len() + self.exclusive.len()
    }

    /// Whether the graph has no stages (running it does nothing).
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Every stage and exclusive stage, in declaration order.
    fn entries(&self) -> impl Iterator<Item = Entry<'_, C>> {
        let mut exclusive = self.exclusive.iter().peekable();
        let mut stages = self.stages.iter().enumerate();
        std::iter::from_fn(move || {
            let next_stage = self.stages.len() - stages.len();
            if let Some(e) = exclusive.next_if(|e| e.at <= next_stage) {
                return Some(Entry::Exclusive(e));
            }
            stages.next().map(|(_, s)| Entry::Stage(s))
        })
    }

    /// The stage names, exclusive ones included, in declaration order.
    pub fn stage_names(&self) -> impl Iterator<Item = &str> {
        self.entries().map(|entry| match entry {
            Entry::Stage(s) => &*s.name,
            Entry::Exclusive(e) => &*e.name,
        })
    }

    /// What the stage `name` declared it touches, or `None` for an unknown name or an
    /// exclusive stage (which may touch anything).
    #[must_use]
    pub fn access(&self, name: &str) -> Option<&Access> {
        self.stages
            .iter()
            .find(|stage| &*stage.name == name)
            .map(|stage| &stage.access)
    }
}

impl<C: ?Sized> JobGraph<C> {
    /// The stages the stage `name` was declared to run after (its declared order, not the
    /// ones it merely conflicts with, nor the exclusive stages it follows), or `None` for an
    /// unknown name or an exclusive stage.
    pub fn runs_after(&self, name: &str) -> Option<impl Iterator<Item = &str>> {
        let stage = self.stages.iter().find(|stage| &*stage.name == name)?;
        Some(stage.shown.iter().map(|d| &**d))
    }

    /// Whether `name` is an exclusive stage.
    #[must_use]
    pub fn is_exclusive(&self, name: &str) -> bool {
        self.exclusive.iter().any(|e| &*e.name == name)
    }

    /// The graph as a Markdown table, one row a stage in declaration order: what it runs
    /// after, reads and writes (types by their last path segment); an exclusive stage runs
    /// after everything before it, alone. The docs' stage table is this text, checked
    /// current by a test.
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
        for entry in self.entries() {
            let stage = match entry {
                Entry::Stage(stage) => stage,
                Entry::Exclusive(e) => {
                    table.push_str(&format!(
                        "| `{}` | every stage before it, alone | everything | everything |\n",
                        e.name
                    ));
                    continue;
                }
            };
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
            stages: (self.stage_names())
                .map(|name| StageTime {
                    name: Arc::from(name),
                    duration: Duration::ZERO,
                })
                .collect(),
        }
    }

    /// Runs every stage once on `pool`, each after all its dependencies, stages without an order
    /// between them possibly at the same time on different threads; an exclusive stage runs
    /// alone, between the stages declared before it and those declared after it. The calling
    /// thread runs stages too. Each stage is a puffin scope named after the stage.
    ///
    /// # Errors
    /// If a stage (or one of its batches) panics, stages not yet started are skipped, the ones
    /// running finish, and the first panic comes back as a [`JobPanic`]. The graph and the pool
    /// can run again.
    pub fn run(&self, pool: &WorkerPool, ctx: &mut C) -> Result<FrameReport, JobPanic> {
        puffin::profile_function!();
        let started = Instant::now();
        let mut nanos = vec![0u64; self.stages.len()];
        let mut exclusive_nanos = vec![0u64; self.exclusive.len()];
        // Part `k` of the frame is the stages between exclusive stages `k - 1` and `k`.
        let mut part = 0;
        loop {
            self.run_part(pool, &*ctx, part, &mut nanos)?;
            let Some(exclusive) = self.exclusive.get(part) else {
                break;
            };
            let (next, elapsed) = run_exclusive(exclusive, pool, ctx)?;
            exclusive_nanos[part] = elapsed;
            if next == Next::EndFrame {
                break;
            }
            part += 1;
        }
        let mut nanos = nanos.into_iter();
        let mut exclusive_nanos = exclusive_nanos.into_iter();
        let stages = self
            .entries()
            .map(|entry| {
                let (name, nanos) = match entry {
                    Entry::Stage(s) => (&s.name, nanos.next()),
                    Entry::Exclusive(e) => (&e.name, exclusive_nanos.next()),
                };
                StageTime {
                    name: Arc::clone(name),
                    duration: Duration::from_nanos(nanos.unwrap_or(0)),
                }
            })
            .collect();
        Ok(FrameReport {
            total: started.elapsed(),
            stages,
        })
    }

    /// Runs the stages of part `part` of the frame, writing their times into `nanos`.
    fn run_part(
        &self,
        pool: &WorkerPool,
        ctx: &C,
        part: usize,
        nanos: &mut [u64],
    ) -> Result<(), JobPanic> {
        if self.roots[part].is_empty() {
            return Ok(());
        }
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
            spawner.spawn_each(self.roots[part].iter().copied());
        });
        if let Some(panic) = run.panic.into_inner() {
            return Err(panic);
        }
        for ((stage, out), time) in self.stages.iter().zip(nanos).zip(run.nanos) {
            if stage.segment == part {
                *out = time.into_inner();
            }
        }
        Ok(())
    }
}

/// Runs an exclusive stage on the calling thread: what it says of the rest of the frame and
/// how long it took, or its panic.
fn run_exclusive<C: ?Sized>(
    exclusive: &Exclusive<C>,
    pool: &WorkerPool,
    ctx: &mut C,
) -> Result<(Next, u64), JobPanic> {
    let started = Instant::now();
    let outcome = panic::catch_unwind(AssertUnwindSafe(|| {
        let _scope = exclusive.scope.enter(|| "");
        let context = StageContext {
            name: &exclusive.name,
            index: exclusive.at,
            access: None,
            pool,
            batch_scope: &exclusive.batch_scope,
        };
        (exclusive.run)(ctx, &context)
    }));
    let nanos = u64::try_from(started.elapsed().as_nanos()).unwrap_or(u64::MAX);
    match outcome {
        Ok(next) => Ok((next, nanos)),
        Err(payload) => Err(match payload.downcast::<JobPanic>() {
            Ok(panic) => *panic,
            Err(payload) => JobPanic::new(&exclusive.name, None, &*payload),
        }),
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
        for exclusive in &self.exclusive {
            list.entry(&(&exclusive.name, "exclusive", exclusive.at));
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
                access: Some(&stage.access),
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
    /// What the stage declared; `None` for an exclusive stage (it may touch anything).
    access: Option<&'a Access>,
    pool: &'a WorkerPool,
    batch_scope: &'a ProfileScope,
}

impl<'a> StageContext<'a> {
    /// Runs `f` as code of this stage (checked against its declared access in debug builds;
    /// an exclusive stage's code is not checked).
    fn as_stage<R>(&self, f: impl FnOnce() -> R) -> R {
        match self.access {
            Some(access) => declared::as_stage(self.name, access, f),
            None => f(),
        }
    }

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
            self.as_stage(|| f(i, range));
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
            self.as_stage(|| f(i, range, chunk));
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
        let f = |i: usize, range: Range<usize>| self.as_stage(|| f(i, range));
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
