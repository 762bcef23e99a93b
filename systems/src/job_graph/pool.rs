//! A persistent pool of named worker threads with scoped, borrowing parallelism.
//!
//! # Why this module allows `unsafe_code`
//!
//! The workers live as long as the pool, but the work they run borrows from the stack of whoever
//! called [`WorkerPool::for_each_batch`] or [`JobGraph::run`](super::JobGraph::run): the closure,
//! the frame context, the counters. A `'static` queue cannot hold such borrows, so a job is queued
//! as a [`JobRef`]: a raw pointer to a [`TaskSet`] on the caller's stack, with its lifetime erased.
//! Three facts make that sound, and all three live in this file:
//!
//! 1. **The task set outlives every job that points to it.** [`Spawner::spawn_each`] adds one to
//!    the set's `pending` count *before* it queues a job, and a job subtracts its one as the very
//!    last thing it does with the set. [`WorkerPool::run_tasks`] creates the set on its own stack
//!    frame and does not return (or unwind) until `pending` is back to 0, so no queued or running
//!    job can see the set freed. The `Spawner` that queues jobs cannot leave that call either: it
//!    is only ever lent out by reference under a higher-ranked lifetime, and it is `!Send`.
//! 2. **Only `Sync` data crosses threads.** The set holds `&S` with `S: Sync` (and `F: Sync` for
//!    batch closures), atomics and a `parking_lot` mutex, so sharing `&TaskSet` is sound; that is
//!    what the `Send` impl of `JobRef` asserts.
//! 3. **Nothing unwinds past the bookkeeping.** User code runs inside `catch_unwind`; the payload
//!    is stored and re-raised on the caller *after* the wait. If the bookkeeping itself were to
//!    unwind (a panic payload whose `Drop` panics), an [`AbortOnUnwind`] guard aborts the process
//!    rather than leave `pending` too high (a hang) or a worker dead.
//!
//! The design (queue, sleeping, helping while waiting) is described in `README.md` next to this
//! file.
#![allow(unsafe_code)]

use std::any::Any;
use std::borrow::Cow;
use std::fmt;
use std::ops::Range;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use crossbeam::deque::{Injector, Steal};
use parking_lot::{Condvar, Mutex};

use super::error::{JobPanic, PoolError};

/// A fixed set of worker threads that run batches and graph stages; the thread that asks for work
/// always works too.
///
/// `threads` counts every thread that does work, the caller included: `WorkerPool::new(4)` starts
/// three workers named `horde-worker-1` to `horde-worker-3`, and `WorkerPool::new(1)` starts none,
/// so everything runs on the caller, through the same code. Threads are started once, here, and
/// never per frame; dropping the pool stops and joins them.
///
/// ```
/// use horde_systems::WorkerPool;
/// use std::sync::atomic::{AtomicU64, Ordering};
///
/// let pool = WorkerPool::new(3).unwrap();
/// let values: Vec<u64> = (0..1000).collect();
/// let sum = AtomicU64::new(0);
/// pool.for_each_batch(values.len(), 64, |_batch, range| {
///     let part: u64 = values[range].iter().sum();
///     sum.fetch_add(part, Ordering::Relaxed);
/// })
/// .unwrap();
/// assert_eq!(sum.into_inner(), 499_500);
/// ```
pub struct WorkerPool {
    shared: Arc<Shared>,
    workers: Vec<JoinHandle<()>>,
    threads: usize,
}

impl WorkerPool {
    /// Starts `threads - 1` worker threads; the caller of each parallel call is the last thread.
    ///
    /// # Errors
    /// [`PoolError::ZeroThreads`] for `threads == 0` (it is not clamped to 1: a zero usually means
    /// a configuration value was never set), and [`PoolError::Spawn`] when the operating system
    /// refuses a thread; the workers already started are then stopped and joined.
    pub fn new(threads: usize) -> Result<Self, PoolError> {
        if threads == 0 {
            return Err(PoolError::ZeroThreads);
        }
        let mut pool = Self {
            shared: Arc::new(Shared {
                queue: Injector::new(),
                shutdown: Mutex::new(false),
                wake: Condvar::new(),
            }),
            workers: Vec::with_capacity(threads - 1),
            threads,
        };
        for number in 1..threads {
            let name = format!("horde-worker-{number}");
            let shared = Arc::clone(&pool.shared);
            match thread::Builder::new()
                .name(name.clone())
                .spawn(move || shared.work_until_shutdown())
            {
                Ok(handle) => pool.workers.push(handle),
                // Dropping `pool` stops and joins the workers started so far.
                Err(source) => {
                    return Err(PoolError::Spawn {
                        thread: name,
                        source,
                    });
                }
            }
        }
        Ok(pool)
    }

    /// How many threads do work: the workers plus the calling thread.
    #[must_use]
    pub fn threads(&self) -> usize {
        self.threads
    }

    /// Splits `0..len` into batches of `batch_size` indices (the last one may be shorter) and calls
    /// `f(batch_index, range)` once per batch, on the pool's threads and the caller's; returns when
    /// every batch is done.
    ///
    /// Batch `i` is always `i * batch_size .. min((i + 1) * batch_size, len)`: the boundaries depend
    /// on `len` and `batch_size` only, never on the number of threads. `f` may borrow from the
    /// caller's stack. Each batch is a puffin scope named `batch` whose data is the batch index.
    ///
    /// # Errors
    /// If a batch panics, batches not yet started are skipped, the ones running finish, and the
    /// panic comes back as a [`JobPanic`] (`stage` is `"for_each_batch"`). The pool stays usable.
    ///
    /// # Panics
    /// If `batch_size` is 0.
    pub fn for_each_batch<F>(&self, len: usize, batch_size: usize, f: F) -> Result<(), JobPanic>
    where
        F: Fn(usize, Range<usize>) + Sync,
    {
        static SCOPE: ProfileScope = ProfileScope::new_static("batch");
        self.batches("for_each_batch", &SCOPE, len, batch_size, &f)
    }

    /// Like [`for_each_batch`](Self::for_each_batch) over `0..data.len()`, also handing each batch
    /// its own `&mut` chunk of `data` (`data[range]`), so batches can write their results in place.
    ///
    /// # Errors
    /// A panicking batch, as for `for_each_batch` (`stage` is `"for_each_chunk_mut"`).
    ///
    /// # Panics
    /// If `batch_size` is 0.
    pub fn for_each_chunk_mut<T, F>(
        &self,
        data: &mut [T],
        batch_size: usize,
        f: F,
    ) -> Result<(), JobPanic>
    where
        T: Send,
        F: Fn(usize, Range<usize>, &mut [T]) + Sync,
    {
        static SCOPE: ProfileScope = ProfileScope::new_static("batch");
        self.chunks_mut("for_each_chunk_mut", &SCOPE, data, batch_size, &f)
    }

    /// Like [`for_each_batch`](Self::for_each_batch), collecting what each batch returns, in batch
    /// order whatever thread ran it. Folding that vector in order gives the same result for every
    /// thread count, even for floating-point sums.
    ///
    /// # Errors
    /// A panicking batch, as for `for_each_batch` (`stage` is `"map_batches"`).
    ///
    /// # Panics
    /// If `batch_size` is 0.
    pub fn map_batches<R, F>(&self, len: usize, batch_size: usize, f: F) -> Result<Vec<R>, JobPanic>
    where
        R: Send,
        F: Fn(usize, Range<usize>) -> R + Sync,
    {
        static SCOPE: ProfileScope = ProfileScope::new_static("batch");
        self.map("map_batches", &SCOPE, len, batch_size, &f)
    }

    /// The batch loop behind every batch helper; `stage` names the caller in a [`JobPanic`].
    pub(crate) fn batches<F>(
        &self,
        stage: &str,
        scope: &ProfileScope,
        len: usize,
        batch_size: usize,
        f: &F,
    ) -> Result<(), JobPanic>
    where
        F: Fn(usize, Range<usize>) + Sync,
    {
        assert!(batch_size > 0, "batch_size must be at least 1");
        let count = len.div_ceil(batch_size);
        if count == 0 {
            return Ok(());
        }
        let batches = Batches {
            f,
            len,
            batch_size,
            count,
            next: AtomicUsize::new(0),
            cancelled: AtomicBool::new(false),
            panic: Mutex::new(None),
            stage,
            scope,
        };
        // Helpers beyond the number of batches would find nothing to claim.
        let helpers = count.min(self.threads) - 1;
        self.run_tasks(&batches, claim_batches::<F>, |spawner| {
            spawner.spawn_each(std::iter::repeat_n(0, helpers));
            batches.claim_all();
        });
        match batches.panic.into_inner() {
            Some(panic) => Err(panic),
            None => Ok(()),
        }
    }

    pub(crate) fn chunks_mut<T, F>(
        &self,
        stage: &str,
        scope: &ProfileScope,
        data: &mut [T],
        batch_size: usize,
        f: &F,
    ) -> Result<(), JobPanic>
    where
        T: Send,
        F: Fn(usize, Range<usize>, &mut [T]) + Sync,
    {
        assert!(batch_size > 0, "batch_size must be at least 1");
        let len = data.len();
        // One uncontended lock per batch hands out the disjoint chunks without unsafe code.
        let chunks: Vec<Mutex<&mut [T]>> = data.chunks_mut(batch_size).map(Mutex::new).collect();
        self.batches(stage, scope, len, batch_size, &|batch, range| {
            let mut chunk = chunks[batch].lock();
            f(batch, range, &mut chunk);
        })
    }

    pub(crate) fn map<R, F>(
        &self,
        stage: &str,
        scope: &ProfileScope,
        len: usize,
        batch_size: usize,
        f: &F,
    ) -> Result<Vec<R>, JobPanic>
    where
        R: Send,
        F: Fn(usize, Range<usize>) -> R + Sync,
    {
        assert!(batch_size > 0, "batch_size must be at least 1");
        let slots: Vec<Mutex<Option<R>>> = (0..len.div_ceil(batch_size))
            .map(|_| Mutex::new(None))
            .collect();
        self.batches(stage, scope, len, batch_size, &|batch, range| {
            let result = f(batch, range);
            *slots[batch].lock() = Some(result);
        })?;
        Ok(slots
            .into_iter()
            .map(|slot| {
                slot.into_inner()
                    .expect("a batch returned without a panic but left no result")
            })
            .collect())
    }

    /// Runs a dynamic set of tasks over borrowed `state` and returns when all of them are done.
    ///
    /// `start` runs on the caller and may queue tasks (`spawner.spawn_each`) and do work itself;
    /// each task is `task(state, index, spawner)` for a queued `index`, on any thread of the pool,
    /// and may queue more tasks. While it waits, the caller runs queued jobs (its own or anyone's),
    /// so it never idles while there is work. A panic in `start` or in a task is re-raised here,
    /// after every task has finished.
    pub(crate) fn run_tasks<S: Sync>(
        &self,
        state: &S,
        task: fn(&S, usize, &Spawner<'_>),
        start: impl FnOnce(&Spawner<'_>),
    ) {
        let set = TaskSet {
            state,
            task,
            pending: AtomicUsize::new(0),
            panic: Mutex::new(None),
        };
        let spawner = Spawner {
            set: std::ptr::from_ref(&set).cast(),
            execute: execute_task::<S>,
            pending: &set.pending,
            shared: &self.shared,
        };
        // Even if `start` panics, jobs it queued point at `set`: wait for them before unwinding.
        let started = panic::catch_unwind(AssertUnwindSafe(|| start(&spawner)));
        self.shared
            .help_until(|| set.pending.load(Ordering::Acquire) == 0);
        // `pending` is 0: no job refers to `set` any more, so it may be dropped.
        if let Err(payload) = started {
            panic::resume_unwind(payload);
        }
        if let Some(payload) = set.panic.into_inner() {
            panic::resume_unwind(payload);
        }
    }
}

impl Drop for WorkerPool {
    fn drop(&mut self) {
        *self.shared.shutdown.lock() = true;
        self.shared.wake.notify_all();
        for worker in self.workers.drain(..) {
            // Workers never unwind (see `AbortOnUnwind`), so `join` cannot report a panic.
            let _ = worker.join();
        }
    }
}

impl fmt::Debug for WorkerPool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WorkerPool")
            .field("threads", &self.threads)
            .finish_non_exhaustive()
    }
}

/// How long a thread with nothing to do keeps watching for work before it sleeps (see
/// `Shared::spin_until`).
const SPIN: Duration = Duration::from_micros(50);

/// What the workers and the waiting callers share: the queue and the way to sleep on it.
struct Shared {
    /// Jobs ready to run, first in first out.
    queue: Injector<JobRef>,
    /// Set once, when the pool is dropped. Its mutex is also the one every sleeper holds while it
    /// checks whether to sleep, which is what makes wake-ups impossible to miss.
    shutdown: Mutex<bool>,
    wake: Condvar,
}

impl Shared {
    fn pop(&self) -> Option<JobRef> {
        loop {
            match self.queue.steal() {
                Steal::Success(job) => return Some(job),
                Steal::Empty => return None,
                Steal::Retry => {}
            }
        }
    }

    /// Wakes every sleeper so it re-checks its condition. Callers change the condition (push a job,
    /// complete a count) *before* calling this; taking the lock here orders that change after any
    /// sleeper's check-then-wait, so the sleeper either saw the change or is woken by this notify.
    fn wake_all(&self) {
        drop(self.shutdown.lock());
        self.wake.notify_all();
    }

    /// Watches the queue and `done()` for a short while before a thread goes to sleep: true as
    /// soon as either has something, false after [`SPIN`] without. A frame is a chain of short
    /// parallel steps (a stage's batches, then the next stage's), and a sleeping thread takes
    /// tens of microseconds to wake, as long as a whole step of a small crowd; a watching one
    /// picks the next step up at once.
    fn spin_until(&self, done: &impl Fn() -> bool) -> bool {
        let start = Instant::now();
        loop {
            for _ in 0..64 {
                if done() || !self.queue.is_empty() {
                    return true;
                }
                std::hint::spin_loop();
            }
            if start.elapsed() >= SPIN {
                return false;
            }
        }
    }

    /// Runs queued jobs until `done()` holds, sleeping when there is nothing to run.
    fn help_until(&self, done: impl Fn() -> bool) {
        loop {
            if done() {
                return;
            }
            if let Some(job) = self.pop() {
                // SAFETY: every queued `JobRef` comes from `Spawner::spawn_each`, whose task set is
                // kept alive until the job has run; `self` is the pool whose queue held the job.
                unsafe { job.execute(self) };
                continue;
            }
            if self.spin_until(&done) {
                continue;
            }
            let mut guard = self.shutdown.lock();
            if done() || !self.queue.is_empty() {
                continue;
            }
            self.wake.wait(&mut guard);
        }
    }

    /// A worker thread's whole life.
    fn work_until_shutdown(&self) {
        loop {
            if let Some(job) = self.pop() {
                // SAFETY: as in `help_until`.
                unsafe { job.execute(self) };
                continue;
            }
            if self.spin_until(&|| false) {
                continue;
            }
            let mut shutdown = self.shutdown.lock();
            if *shutdown {
                return;
            }
            if !self.queue.is_empty() {
                continue;
            }
            self.wake.wait(&mut shutdown);
        }
    }
}

/// A queued job: one `index` of the task set behind `data`, run by `execute`.
struct JobRef {
    data: *const (),
    index: usize,
    execute: unsafe fn(*const (), usize, &Shared),
}

// SAFETY: `data` points to a `TaskSet<S>` with `S: Sync`, which is `Sync` itself (shared refs,
// atomics, a mutex), and `execute` only reads it through a shared reference; `run_tasks` keeps it
// alive until the job has run. So the job may run on any thread.
unsafe impl Send for JobRef {}

impl JobRef {
    /// # Safety
    /// The task set behind `data` must be alive (guaranteed for jobs queued by `Spawner`), and
    /// `shared` must be the pool that queued the job.
    unsafe fn execute(self, shared: &Shared) {
        // SAFETY: forwarded from the caller; `execute` was made for the type `data` points to.
        unsafe { (self.execute)(self.data, self.index, shared) }
    }
}

/// The state of one `run_tasks` call, on the caller's stack.
struct TaskSet<'s, S> {
    state: &'s S,
    task: fn(&S, usize, &Spawner<'_>),
    /// Jobs queued or running that point to this set.
    pending: AtomicUsize,
    /// The first panic of a task, re-raised on the caller.
    panic: Mutex<Option<Box<dyn Any + Send>>>,
}

/// Queues tasks of the current `run_tasks` call. Lent by reference only, and `!Send`.
pub(crate) struct Spawner<'t> {
    set: *const (),
    execute: unsafe fn(*const (), usize, &Shared),
    pending: &'t AtomicUsize,
    shared: &'t Shared,
}

impl Spawner<'_> {
    /// Queues one task per index and wakes sleeping threads to run them.
    pub(crate) fn spawn_each(&self, indices: impl IntoIterator<Item = usize>) {
        let mut any = false;
        for index in indices {
            // Count the job before it can run (and finish), so `pending` cannot reach 0 early.
            self.pending.fetch_add(1, Ordering::AcqRel);
            self.shared.queue.push(JobRef {
                data: self.set,
                index,
                execute: self.execute,
            });
            any = true;
        }
        if any {
            self.shared.wake_all();
        }
    }
}

/// `JobRef::execute` for a `TaskSet<S>`.
///
/// # Safety
/// `data` must point to a live `TaskSet<S>` whose `pending` counts this job.
unsafe fn execute_task<S: Sync>(data: *const (), index: usize, shared: &Shared) {
    let abort = AbortOnUnwind;
    // SAFETY: `data` was made from `&TaskSet<S>` in `run_tasks`, which does not return until
    // `pending` is 0; this job holds one count of `pending` until the `fetch_sub` below.
    let set = unsafe { &*data.cast::<TaskSet<'_, S>>() };
    let spawner = Spawner {
        set: data,
        execute: execute_task::<S>,
        pending: &set.pending,
        shared,
    };
    let outcome = panic::catch_unwind(AssertUnwindSafe(|| {
        (set.task)(set.state, index, &spawner);
    }));
    if let Err(payload) = outcome {
        let mut first = set.panic.lock();
        if first.is_none() {
            *first = Some(payload);
        }
    }
    // The last use of `set`: once `pending` reaches 0 the caller of `run_tasks` may free it. From
    // here on only `shared`, which the executing thread owns a handle to, is touched.
    if set.pending.fetch_sub(1, Ordering::AcqRel) == 1 {
        shared.wake_all();
    }
    std::mem::forget(abort);
}

/// Aborts the process if dropped while unwinding out of the pool's own bookkeeping, which would
/// otherwise leave a count too high (a hang) or a task set freed under a running job.
struct AbortOnUnwind;

impl Drop for AbortOnUnwind {
    fn drop(&mut self) {
        eprintln!("horde job graph: a panic escaped the worker pool's bookkeeping; aborting");
        std::process::abort();
    }
}

/// One `for_each_batch` call: batches are claimed from `next` by the caller and the helpers.
struct Batches<'a, F> {
    f: &'a F,
    len: usize,
    batch_size: usize,
    count: usize,
    next: AtomicUsize,
    /// Set by the first panicking batch: batches not yet claimed are skipped.
    cancelled: AtomicBool,
    panic: Mutex<Option<JobPanic>>,
    stage: &'a str,
    scope: &'a ProfileScope,
}

impl<F: Fn(usize, Range<usize>) + Sync> Batches<'_, F> {
    fn claim_all(&self) {
        while !self.cancelled.load(Ordering::Relaxed) {
            let batch = self.next.fetch_add(1, Ordering::Relaxed);
            if batch >= self.count {
                return;
            }
            // batch < count = ceil(len / batch_size), so start < len: no overflow.
            let start = batch * self.batch_size;
            let range = start..start.saturating_add(self.batch_size).min(self.len);
            let outcome = panic::catch_unwind(AssertUnwindSafe(|| {
                let _scope = self.scope.enter(|| batch.to_string());
                (self.f)(batch, range);
            }));
            if let Err(payload) = outcome {
                self.cancelled.store(true, Ordering::Relaxed);
                let panic = match payload.downcast::<JobPanic>() {
                    // A nested batch call already named the stage and the batch.
                    Ok(inner) => *inner,
                    Err(payload) => JobPanic::new(self.stage, Some(batch), &*payload),
                };
                self.panic.lock().get_or_insert(panic);
            }
        }
    }
}

fn claim_batches<F: Fn(usize, Range<usize>) + Sync>(
    batches: &Batches<'_, F>,
    _helper: usize,
    _spawner: &Spawner<'_>,
) {
    batches.claim_all();
}

/// A puffin scope whose name is chosen at run time (a stage's name).
///
/// puffin's `profile_scope!` caches its scope id in a `static` at the call site, so one call site
/// with a changing name would show every stage under the first stage's name. Instead each stage
/// registers its own scope once, by name, with `GlobalProfiler::register_user_scopes`, the first
/// time it runs with scopes on; the viewer then shows the stage's name.
pub(crate) struct ProfileScope {
    name: Cow<'static, str>,
    id: OnceLock<puffin::ScopeId>,
}

impl ProfileScope {
    pub(crate) const fn new_static(name: &'static str) -> Self {
        Self {
            name: Cow::Borrowed(name),
            id: OnceLock::new(),
        }
    }

    pub(crate) fn new(name: String) -> Self {
        Self {
            name: Cow::Owned(name),
            id: OnceLock::new(),
        }
    }

    /// Opens the scope until the returned guard drops; `data` (shown next to the name) is only
    /// computed when puffin scopes are on. Costs one atomic load when they are off.
    pub(crate) fn enter<D: AsRef<str>>(
        &self,
        data: impl FnOnce() -> D,
    ) -> Option<puffin::ProfilerScope> {
        if !puffin::are_scopes_on() {
            return None;
        }
        let id = *self.id.get_or_init(|| {
            let details = puffin::ScopeDetails::from_scope_name(self.name.clone())
                .with_file(puffin::short_file_name(file!()))
                .with_line_nr(line!());
            puffin::GlobalProfiler::lock().register_user_scopes(&[details])[0]
        });
        Some(puffin::ProfilerScope::new(id, data()))
    }

    #[cfg(test)]
    pub(crate) fn registered_id(&self) -> Option<puffin::ScopeId> {
        self.id.get().copied()
    }
}

#[cfg(test)]
impl WorkerPool {
    /// Counts the handles to the pool's shared state still alive: the pool's own plus one per
    /// running worker thread. Keeps counting after the pool is dropped.
    pub(super) fn live_handles(&self) -> impl Fn() -> usize + use<> {
        let shared = Arc::downgrade(&self.shared);
        move || shared.strong_count()
    }
}
