//! Tests of the worker pool, the access declarations and the job graph.
//!
//! Tests that need threads to meet use `Rendezvous`, which gives up after a timeout, so a broken
//! pool fails them instead of hanging them.

use std::collections::{BTreeMap, BTreeSet};
use std::ops::Range;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};

use super::{
    Access, GraphBuildError, JobGraph, JobGraphBuilder, JobPanic, Next, PoolError, Resource,
    StageContext, WorkerPool,
};

/// Pool sizes the determinism and coverage tests compare.
const THREAD_COUNTS: [usize; 4] = [1, 2, 3, 8];
/// Long enough that threads which can meet always do; only reached when something is broken.
const MEET_TIMEOUT: Duration = Duration::from_secs(10);

fn pool(threads: usize) -> WorkerPool {
    WorkerPool::new(threads).expect("the pool starts")
}

fn thread_name() -> Option<String> {
    thread::current().name().map(str::to_owned)
}

/// Lets `parties` threads wait for each other. `arrive` says whether all of them met before the
/// timeout; one that gives up withdraws, so a later arrival does not count it as present.
struct Rendezvous {
    arrived: Mutex<usize>,
    all_here: Condvar,
    parties: usize,
}

impl Rendezvous {
    fn new(parties: usize) -> Self {
        Self {
            arrived: Mutex::new(0),
            all_here: Condvar::new(),
            parties,
        }
    }

    fn arrive(&self, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        let mut arrived = self.arrived.lock();
        *arrived += 1;
        if *arrived >= self.parties {
            self.all_here.notify_all();
            return true;
        }
        while *arrived < self.parties {
            if self.all_here.wait_until(&mut arrived, deadline).timed_out() {
                if *arrived >= self.parties {
                    return true;
                }
                *arrived -= 1;
                return false;
            }
        }
        true
    }
}

/// Runs one batch per thread where every batch waits for all the others: each thread of the pool
/// must take exactly one. Returns the names of the threads that ran them.
fn names_of_threads_that_meet(pool: &WorkerPool) -> BTreeSet<Option<String>> {
    let threads = pool.threads();
    let rendezvous = Rendezvous::new(threads);
    let names = Mutex::new(BTreeSet::new());
    let all_met = AtomicBool::new(true);
    pool.for_each_batch(threads, 1, |_, _| {
        names.lock().insert(thread_name());
        if !rendezvous.arrive(MEET_TIMEOUT) {
            all_met.store(false, Ordering::Relaxed);
        }
    })
    .expect("no batch panics");
    assert!(
        all_met.into_inner(),
        "{threads} batches could not run at the same time on {threads} threads"
    );
    names.into_inner()
}

fn expected_thread_names(threads: usize) -> BTreeSet<Option<String>> {
    (1..threads)
        .map(|number| Some(format!("horde-worker-{number}")))
        .chain([thread_name()])
        .collect()
}

// ---------------------------------------------------------------------------------------------
// The pool

#[test]
fn pool_rejects_zero_threads() {
    assert!(matches!(WorkerPool::new(0), Err(PoolError::ZeroThreads)));
}

#[test]
fn pool_and_graph_can_be_shared_between_threads() {
    fn send_and_sync<T: Send + Sync>() {}
    send_and_sync::<WorkerPool>();
    send_and_sync::<JobGraph<u32>>();
    send_and_sync::<JobPanic>();
}

#[test]
fn pool_threads_are_named_and_all_work() {
    assert_eq!(pool(1).threads(), 1);
    for threads in [2, 3, 4] {
        let pool = pool(threads);
        assert_eq!(pool.threads(), threads);
        assert_eq!(
            names_of_threads_that_meet(&pool),
            expected_thread_names(threads)
        );
    }
}

#[test]
fn single_thread_pool_runs_everything_on_the_caller() {
    let pool = pool(1);
    let names = Mutex::new(BTreeSet::new());
    pool.for_each_batch(100, 7, |_, _| {
        names.lock().insert(thread_name());
    })
    .expect("no batch panics");
    assert_eq!(names.into_inner(), BTreeSet::from([thread_name()]));
}

#[test]
fn dropping_the_pool_joins_its_workers() {
    for threads in [1, 2, 5] {
        let pool = pool(threads);
        let live_handles = pool.live_handles();
        assert_eq!(live_handles(), threads, "the pool and each worker hold one");
        drop(pool);
        assert_eq!(live_handles(), 0, "every worker thread has exited");
    }
}

/// Batch `i` of `len` indices in batches of `batch_size`, as documented.
fn expected_batches(len: usize, batch_size: usize) -> Vec<(usize, Range<usize>)> {
    (0..len.div_ceil(batch_size))
        .map(|batch| {
            let start = batch * batch_size;
            (batch, start..(start + batch_size).min(len))
        })
        .collect()
}

#[test]
fn for_each_batch_covers_every_index_once_with_fixed_boundaries() {
    let pools: Vec<WorkerPool> = THREAD_COUNTS.iter().map(|&threads| pool(threads)).collect();
    for len in [0, 1, 2, 7, 63, 64, 65, 1000, 1001] {
        for batch_size in [1, 3, 64, 1000, 4096] {
            for pool in &pools {
                let visits: Vec<AtomicU32> = (0..len).map(|_| AtomicU32::new(0)).collect();
                let batches = Mutex::new(Vec::new());
                pool.for_each_batch(len, batch_size, |batch, range| {
                    for index in range.clone() {
                        visits[index].fetch_add(1, Ordering::Relaxed);
                    }
                    batches.lock().push((batch, range));
                })
                .expect("no batch panics");
                let threads = pool.threads();
                for (index, visits) in visits.iter().enumerate() {
                    assert_eq!(
                        visits.load(Ordering::Relaxed),
                        1,
                        "index {index} of {len} (batches of {batch_size}, {threads} threads)"
                    );
                }
                let mut batches = batches.into_inner();
                batches.sort_by_key(|(batch, _)| *batch);
                assert_eq!(
                    batches,
                    expected_batches(len, batch_size),
                    "{len} in batches of {batch_size} on {threads} threads"
                );
            }
        }
    }
}

#[test]
#[should_panic(expected = "batch_size must be at least 1")]
fn zero_batch_size_is_a_bug() {
    let _ = pool(2).for_each_batch(10, 0, |_, _| {});
}

#[test]
fn for_each_chunk_mut_hands_each_batch_its_own_chunk() {
    for threads in THREAD_COUNTS {
        let pool = pool(threads);
        let mut data = vec![0usize; 1003];
        pool.for_each_chunk_mut(&mut data, 100, |batch, range, chunk| {
            assert_eq!(chunk.len(), range.len());
            for (value, index) in chunk.iter_mut().zip(range) {
                *value = index * 10 + batch;
            }
        })
        .expect("no batch panics");
        let expected: Vec<usize> = (0..1003).map(|index| index * 10 + index / 100).collect();
        assert_eq!(data, expected, "{threads} threads");
    }
}

#[test]
fn map_batches_returns_results_in_batch_order() {
    for threads in THREAD_COUNTS {
        let pool = pool(threads);
        let sums = pool
            .map_batches(1000, 64, |batch, range| (batch, range.sum::<usize>()))
            .expect("no batch panics");
        let expected: Vec<(usize, usize)> = expected_batches(1000, 64)
            .into_iter()
            .map(|(batch, range)| (batch, range.sum()))
            .collect();
        assert_eq!(sums, expected, "{threads} threads");
    }
}

#[test]
fn batches_can_nest() {
    for threads in [1, 2, 4] {
        let pool = pool(threads);
        let total = AtomicUsize::new(0);
        pool.for_each_batch(8, 1, |_, _| {
            pool.for_each_batch(100, 9, |_, range| {
                total.fetch_add(range.len(), Ordering::Relaxed);
            })
            .expect("no inner batch panics");
        })
        .expect("no outer batch panics");
        assert_eq!(total.into_inner(), 800, "{threads} threads");
    }
}

#[test]
fn batch_panic_comes_back_as_an_error_and_the_pool_recovers() {
    for threads in THREAD_COUNTS {
        let pool = pool(threads);
        let runs: Vec<AtomicU32> = (0..10).map(|_| AtomicU32::new(0)).collect();
        let error = pool
            .for_each_batch(100, 10, |batch, _| {
                runs[batch].fetch_add(1, Ordering::Relaxed);
                if batch == 3 {
                    panic!("batch three broke");
                }
            })
            .expect_err("batch 3 panics");
        assert_eq!(
            error,
            JobPanic {
                stage: "for_each_batch".to_owned(),
                batch: Some(3),
                message: "batch three broke".to_owned(),
            }
        );
        assert!(
            runs.iter().all(|runs| runs.load(Ordering::Relaxed) <= 1),
            "no batch ran twice"
        );
        assert_eq!(runs[3].load(Ordering::Relaxed), 1);

        // Non-string payloads and the other helpers report too.
        let error = pool
            .map_batches(10, 1, |batch, _| {
                if batch == 9 {
                    std::panic::panic_any(42_u8);
                }
                batch
            })
            .expect_err("batch 9 panics");
        assert_eq!(error.stage, "map_batches");
        assert_eq!(error.batch, Some(9));
        assert_eq!(error.message, "<non-string panic payload>");
        let mut data = [0_u8; 10];
        let error = pool
            .for_each_chunk_mut(&mut data, 4, |batch, _, _| {
                assert_ne!(batch, 2, "chunk two")
            })
            .expect_err("batch 2 panics");
        assert_eq!(error.stage, "for_each_chunk_mut");
        assert!(error.message.contains("chunk two"), "{error}");

        // Every worker is still alive and the pool still covers every index.
        if threads > 1 {
            assert_eq!(
                names_of_threads_that_meet(&pool),
                expected_thread_names(threads)
            );
        }
        let sum = AtomicUsize::new(0);
        pool.for_each_batch(1000, 10, |_, range| {
            sum.fetch_add(range.sum::<usize>(), Ordering::Relaxed);
        })
        .expect("no batch panics");
        assert_eq!(sum.into_inner(), 499_500);
    }
}

// ---------------------------------------------------------------------------------------------
// Access declarations

struct Positions;
struct Velocities;

#[test]
fn accesses_conflict_when_one_writes_what_the_other_touches() {
    let read_positions = Access::new().read::<Positions>();
    let write_positions = Access::new().write::<Positions>();
    let write_velocities = Access::new().read::<Positions>().write::<Velocities>();
    assert!(read_positions.is_compatible(&read_positions));
    assert!(read_positions.is_compatible(&write_velocities));
    assert!(!read_positions.is_compatible(&write_positions));
    assert!(!write_positions.is_compatible(&read_positions));
    assert!(!write_positions.is_compatible(&write_positions));
    assert!(!write_velocities.is_compatible(&write_positions));
    assert_eq!(
        write_positions.conflict(&read_positions),
        Some(&Resource::of::<Positions>())
    );

    let read_fields = Access::new().read_named("cost_fields");
    let write_fields = Access::new().write_named(String::from("cost_fields"));
    assert!(read_fields.is_compatible(&read_fields));
    assert!(!read_fields.is_compatible(&write_fields));
    assert_eq!(
        read_fields.conflict(&write_fields).map(Resource::name),
        Some("cost_fields")
    );
    // A name is not a type, even one spelled the same.
    let type_name = std::any::type_name::<Positions>();
    assert!(
        Access::new()
            .write_named(type_name)
            .is_compatible(&write_positions)
    );

    // Writing includes reading; declaring twice changes nothing.
    let upgraded = Access::new()
        .read::<Positions>()
        .write::<Positions>()
        .read::<Positions>();
    assert_eq!(upgraded, Access::new().write::<Positions>());
    assert_eq!(upgraded.reads().count(), 0);
    assert_eq!(Resource::of::<Positions>().name(), type_name);
}

// ---------------------------------------------------------------------------------------------
// Building graphs

fn nothing(_: &(), _: &StageContext<'_>) {}

#[test]
fn unordered_conflict_is_a_build_error_and_an_order_fixes_it() {
    let writes = || Access::new().write::<Positions>();
    let reads = || Access::new().read::<Positions>().write::<Velocities>();

    let unordered = JobGraphBuilder::<()>::new()
        .stage("integrate", writes(), &[], nothing)
        .stage("steer", reads(), &[], nothing)
        .build();
    assert_eq!(
        unordered.expect_err("the stages may run together"),
        GraphBuildError::Conflict {
            first: "integrate".to_owned(),
            second: "steer".to_owned(),
            resource: std::any::type_name::<Positions>().to_owned(),
        }
    );

    let ordered = JobGraphBuilder::<()>::new()
        .stage("integrate", writes(), &["steer"], nothing)
        .stage("steer", reads(), &[], nothing)
        .build()
        .expect("steer runs first");
    assert_eq!(ordered.len(), 2);

    // An order through a third stage counts too.
    JobGraphBuilder::<()>::new()
        .stage("steer", reads(), &[], nothing)
        .stage("between", Access::new(), &["steer"], nothing)
        .stage("integrate", writes(), &["between"], nothing)
        .build()
        .expect("steer runs before between, which runs before integrate");

    // Named resources are checked the same way, and readers never conflict.
    let error = JobGraphBuilder::<()>::new()
        .stage(
            "read_a",
            Access::new().read_named("cost_fields"),
            &[],
            nothing,
        )
        .stage(
            "read_b",
            Access::new().read_named("cost_fields"),
            &[],
            nothing,
        )
        .stage(
            "rebuild",
            Access::new().write_named("cost_fields"),
            &["read_a"],
            nothing,
        )
        .build()
        .expect_err("rebuild and read_b are unordered");
    assert_eq!(
        error,
        GraphBuildError::Conflict {
            first: "read_b".to_owned(),
            second: "rebuild".to_owned(),
            resource: "cost_fields".to_owned(),
        }
    );
    assert!(
        error.to_string().contains("`read_b` and `rebuild`"),
        "{error}"
    );
}

#[test]
fn cycle_is_a_build_error_naming_its_stages() {
    let error = JobGraphBuilder::<()>::new()
        .stage("free", Access::new(), &[], nothing)
        .stage("a", Access::new(), &["c", "free"], nothing)
        .stage("b", Access::new(), &["a"], nothing)
        .stage("c", Access::new(), &["b"], nothing)
        .stage("downstream", Access::new(), &["c"], nothing)
        .build()
        .expect_err("a, b and c wait for each other");
    assert_eq!(
        error,
        GraphBuildError::Cycle {
            stages: vec!["a".to_owned(), "b".to_owned(), "c".to_owned()],
        }
    );
    assert!(error.to_string().contains("a -> b -> c -> a"), "{error}");

    let error = JobGraphBuilder::<()>::new()
        .stage("selfish", Access::new(), &["selfish"], nothing)
        .build()
        .expect_err("a stage cannot wait for itself");
    assert_eq!(
        error,
        GraphBuildError::Cycle {
            stages: vec!["selfish".to_owned()],
        }
    );
}

#[test]
fn unknown_dependency_is_a_build_error() {
    let error = JobGraphBuilder::<()>::new()
        .stage("steer", Access::new(), &["bucket_units"], nothing)
        .build()
        .expect_err("bucket_units was never declared");
    assert_eq!(
        error,
        GraphBuildError::UnknownDependency {
            stage: "steer".to_owned(),
            dependency: "bucket_units".to_owned(),
        }
    );
}

#[test]
fn duplicate_stage_is_a_build_error() {
    let error = JobGraphBuilder::<()>::new()
        .stage("steer", Access::new(), &[], nothing)
        .stage(String::from("steer"), Access::new(), &[], nothing)
        .build()
        .expect_err("two stages are named steer");
    assert_eq!(
        error,
        GraphBuildError::DuplicateStage {
            name: "steer".to_owned(),
        }
    );
}

// ---------------------------------------------------------------------------------------------
// Running graphs

#[test]
fn empty_graph_runs() {
    let graph = JobGraph::<()>::builder().build().expect("nothing to check");
    assert!(graph.is_empty());
    let report = graph.run(&pool(2), &mut ()).expect("nothing to panic");
    assert!(report.stages().is_empty());
}

/// A diamond and a tail: (stage, the stages it runs after).
const ORDERED_STAGES: [(&str, &[&str]); 7] = [
    ("a", &[]),
    ("b", &["a"]),
    ("c", &["a"]),
    ("d", &["b", "c"]),
    ("e", &[]),
    ("f", &["d", "e"]),
    ("g", &["e"]),
];

/// When each stage started and ended, on one clock shared by all threads.
struct Trace {
    clock: AtomicUsize,
    started: Vec<AtomicUsize>,
    ended: Vec<AtomicUsize>,
    runs: Vec<AtomicUsize>,
}

impl Trace {
    fn new(stages: usize) -> Self {
        let zeros = || (0..stages).map(|_| AtomicUsize::new(0)).collect();
        Self {
            clock: AtomicUsize::new(0),
            started: zeros(),
            ended: zeros(),
            runs: zeros(),
        }
    }

    fn tick(&self) -> usize {
        self.clock.fetch_add(1, Ordering::SeqCst) + 1
    }

    fn record(&self, stage: usize, context: &StageContext<'_>) {
        self.started[stage].store(self.tick(), Ordering::SeqCst);
        self.runs[stage].fetch_add(1, Ordering::SeqCst);
        // Some work in batches, so stages take long enough to interleave.
        context.for_each_batch(64, 8, |_, range| {
            let mut x = 0_u64;
            for i in 0..(range.len() as u64 * 200) {
                x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(i));
            }
        });
        self.ended[stage].store(self.tick(), Ordering::SeqCst);
    }
}

#[test]
fn stages_start_only_after_their_dependencies_finished() {
    let index_of = |name: &str| {
        ORDERED_STAGES
            .iter()
            .position(|(stage, _)| *stage == name)
            .expect("declared")
    };
    let mut builder = JobGraphBuilder::<Trace>::new();
    for (stage, (name, after)) in ORDERED_STAGES.into_iter().enumerate() {
        builder = builder.stage(name, Access::new(), after, move |trace: &Trace, context| {
            assert_eq!(context.name(), name);
            trace.record(stage, context);
        });
    }
    let graph = builder.build().expect("a valid graph");
    for threads in [1, 2, 4] {
        let pool = pool(threads);
        let mut trace = Trace::new(ORDERED_STAGES.len());
        for run in 1..=200 {
            graph.run(&pool, &mut trace).expect("no stage panics");
            for (stage, (name, after)) in ORDERED_STAGES.iter().enumerate() {
                assert_eq!(
                    trace.runs[stage].load(Ordering::SeqCst),
                    run,
                    "{name} runs once"
                );
                for dependency in after.iter().map(|&name| index_of(name)) {
                    let finished = trace.ended[dependency].load(Ordering::SeqCst);
                    let started = trace.started[stage].load(Ordering::SeqCst);
                    assert!(
                        finished < started,
                        "run {run} on {threads} threads: {name} started at {started}, before \
                         its dependency {} ended at {finished}",
                        ORDERED_STAGES[dependency].0
                    );
                }
            }
        }
    }
}

/// Two stages with no order between them, each waiting for the other.
struct Meeting {
    rendezvous: Rendezvous,
    met: [AtomicBool; 2],
    timeout: Duration,
}

fn meeting_graph() -> JobGraph<Meeting> {
    let meet = |side: usize| {
        move |meeting: &Meeting, _: &StageContext<'_>| {
            let met = meeting.rendezvous.arrive(meeting.timeout);
            meeting.met[side].store(met, Ordering::SeqCst);
        }
    };
    JobGraphBuilder::new()
        .stage("left", Access::new().read::<Positions>(), &[], meet(0))
        .stage("right", Access::new().read::<Positions>(), &[], meet(1))
        .build()
        .expect("readers do not conflict")
}

#[test]
fn independent_stages_run_at_the_same_time() {
    let graph = meeting_graph();
    for threads in [2, 4] {
        let pool = pool(threads);
        for _ in 0..20 {
            let mut meeting = Meeting {
                rendezvous: Rendezvous::new(2),
                met: [AtomicBool::new(false), AtomicBool::new(false)],
                timeout: MEET_TIMEOUT,
            };
            graph.run(&pool, &mut meeting).expect("no stage panics");
            assert!(
                meeting.met.iter().all(|met| met.load(Ordering::SeqCst)),
                "left and right did not overlap on {threads} threads"
            );
        }
    }
    // With one thread they cannot: each gives up waiting for the other.
    let mut meeting = Meeting {
        rendezvous: Rendezvous::new(2),
        met: [AtomicBool::new(true), AtomicBool::new(true)],
        timeout: Duration::from_millis(30),
    };
    graph.run(&pool(1), &mut meeting).expect("no stage panics");
    assert!(meeting.met.iter().all(|met| !met.load(Ordering::SeqCst)));
}

/// Counts runs per stage; `fail` makes the stage `boom` (or batch 7 of `split`) panic.
struct Flaky {
    fail: AtomicBool,
    runs: BTreeMap<&'static str, AtomicUsize>,
}

fn flaky_graph() -> (JobGraph<Flaky>, Flaky) {
    fn count(flaky: &Flaky, context: &StageContext<'_>) {
        flaky.runs[context.name()].fetch_add(1, Ordering::SeqCst);
    }
    let graph = JobGraphBuilder::new()
        .stage("first", Access::new(), &[], count)
        .stage(
            "boom",
            Access::new(),
            &["first"],
            |flaky: &Flaky, context| {
                count(flaky, context);
                if flaky.fail.load(Ordering::SeqCst) {
                    panic!("boom went off");
                }
            },
        )
        .stage("after_boom", Access::new(), &["boom"], count)
        .stage("independent", Access::new(), &[], count)
        .build()
        .expect("a valid graph");
    let flaky = Flaky {
        fail: AtomicBool::new(true),
        runs: ["first", "boom", "after_boom", "independent"]
            .into_iter()
            .map(|name| (name, AtomicUsize::new(0)))
            .collect(),
    };
    (graph, flaky)
}

#[test]
fn stage_panic_comes_back_as_an_error_and_the_next_run_succeeds() {
    for threads in [1, 2, 4] {
        let pool = pool(threads);
        let (graph, mut flaky) = flaky_graph();
        let error = graph.run(&pool, &mut flaky).expect_err("boom panics");
        assert_eq!(
            error,
            JobPanic {
                stage: "boom".to_owned(),
                batch: None,
                message: "boom went off".to_owned(),
            }
        );
        assert_eq!(error.to_string(), "stage `boom` panicked: boom went off");
        let runs = |flaky: &Flaky, name: &str| flaky.runs[name].load(Ordering::SeqCst);
        assert_eq!(runs(&flaky, "boom"), 1);
        assert_eq!(
            runs(&flaky, "after_boom"),
            0,
            "a stage after a panic is skipped"
        );

        flaky.fail.store(false, Ordering::SeqCst);
        let report = graph.run(&pool, &mut flaky).expect("nothing panics now");
        assert_eq!(report.stages().len(), 4);
        assert_eq!(runs(&flaky, "boom"), 2);
        assert_eq!(runs(&flaky, "after_boom"), 1);
        if threads > 1 {
            assert_eq!(
                names_of_threads_that_meet(&pool),
                expected_thread_names(threads)
            );
        }
    }
}

#[test]
fn batch_panic_in_a_stage_comes_back_as_an_error_and_the_next_run_succeeds() {
    let fail = Arc::new(AtomicBool::new(true));
    let batches_run = Arc::new(AtomicUsize::new(0));
    let graph = {
        let (fail, batches_run) = (Arc::clone(&fail), Arc::clone(&batches_run));
        JobGraphBuilder::<()>::new()
            .stage("split", Access::new(), &[], move |(), context| {
                context.for_each_batch(100, 10, |batch, _| {
                    batches_run.fetch_add(1, Ordering::SeqCst);
                    if batch == 7 && fail.load(Ordering::SeqCst) {
                        panic!("unit {} is NaN", batch * 10);
                    }
                });
            })
            .stage("after_split", Access::new(), &["split"], nothing)
            .build()
            .expect("a valid graph")
    };
    for threads in [1, 2, 4] {
        let pool = pool(threads);
        fail.store(true, Ordering::SeqCst);
        let error = graph.run(&pool, &mut ()).expect_err("batch 7 panics");
        assert_eq!(
            error,
            JobPanic {
                stage: "split".to_owned(),
                batch: Some(7),
                message: "unit 70 is NaN".to_owned(),
            }
        );
        assert_eq!(
            error.to_string(),
            "stage `split` panicked in batch 7: unit 70 is NaN"
        );

        fail.store(false, Ordering::SeqCst);
        batches_run.store(0, Ordering::SeqCst);
        graph.run(&pool, &mut ()).expect("nothing panics now");
        assert_eq!(batches_run.load(Ordering::SeqCst), 10);
    }
}

#[test]
fn frame_report_times_stages_in_declaration_order() {
    let graph = JobGraphBuilder::<()>::new()
        .stage("quick", Access::new(), &["slow"], nothing)
        .stage("slow", Access::new(), &[], |(), _| {
            thread::sleep(Duration::from_millis(20));
        })
        .build()
        .expect("a valid graph");
    let report = graph.run(&pool(2), &mut ()).expect("no stage panics");
    let names: Vec<&str> = report.stages().iter().map(|stage| &*stage.name).collect();
    assert_eq!(names, ["quick", "slow"]);
    assert_eq!(graph.stage_names().collect::<Vec<_>>(), names);
    let slow = report.stage("slow").expect("slow ran");
    assert!(slow >= Duration::from_millis(20), "{slow:?}");
    assert!(report.stage("quick").expect("quick ran") < slow);
    assert!(report.total() >= slow);
    assert_eq!(report.stage("missing"), None);
}

/// Locks a resource of `Numbers`. Stages that touch it are ordered, so it is always free: waiting
/// would mean the graph ran them together, which fails the test instead of deadlocking it.
fn free<T>(resource: &Mutex<T>) -> parking_lot::MutexGuard<'_, T> {
    resource
        .try_lock_for(Duration::from_secs(5))
        .expect("the graph ran two stages that touch the same resource at the same time")
}

/// A deterministic floating-point frame: order-sensitive sums over batches.
struct Numbers {
    values: Mutex<Vec<f32>>,
    weights: Mutex<Vec<f32>>,
    total: Mutex<f32>,
}

fn numbers_graph() -> JobGraph<Numbers> {
    JobGraphBuilder::new()
        .stage(
            "init_values",
            Access::new().write_named("values"),
            &[],
            |n: &Numbers, stage| {
                stage.for_each_chunk_mut(&mut free(&n.values)[..], 97, |_, range, chunk| {
                    for (value, i) in chunk.iter_mut().zip(range) {
                        *value = (i as f32 * 0.37).sin() * 1000.0;
                    }
                });
            },
        )
        .stage(
            "init_weights",
            Access::new().write_named("weights"),
            &[],
            |n: &Numbers, stage| {
                stage.for_each_chunk_mut(&mut free(&n.weights)[..], 101, |_, range, chunk| {
                    for (weight, i) in chunk.iter_mut().zip(range) {
                        *weight = (i as f32 * 0.11).cos() / 3.0;
                    }
                });
            },
        )
        .stage(
            "blend",
            Access::new()
                .read_named("values")
                .read_named("weights")
                .write_named("total"),
            &["init_values", "init_weights"],
            |n: &Numbers, stage| {
                let values = free(&n.values);
                let weights = free(&n.weights);
                let partial_sums = stage.map_batches(values.len(), 61, |_, range| {
                    range.fold(0.0_f32, |sum, i| {
                        sum + values[i] * weights[i] / (1.0 + i as f32)
                    })
                });
                *free(&n.total) = partial_sums.into_iter().fold(0.0, |sum, part| sum + part);
            },
        )
        .stage(
            "scale",
            Access::new().read_named("total").write_named("values"),
            &["blend"],
            |n: &Numbers, stage| {
                let total = *free(&n.total);
                stage.for_each_chunk_mut(&mut free(&n.values)[..], 50, |_, _, chunk| {
                    for value in chunk {
                        *value = *value * 1.000_1 + total / 7.0;
                    }
                });
            },
        )
        .build()
        .expect("a valid graph")
}

#[test]
fn results_are_bit_identical_for_every_thread_count() {
    const UNITS: usize = 10_007;
    let graph = numbers_graph();
    let mut results = Vec::new();
    for threads in THREAD_COUNTS {
        let pool = pool(threads);
        for _ in 0..3 {
            let mut numbers = Numbers {
                values: Mutex::new(vec![0.0; UNITS]),
                weights: Mutex::new(vec![0.0; UNITS]),
                total: Mutex::new(0.0),
            };
            graph.run(&pool, &mut numbers).expect("no stage panics");
            let bits: Vec<u32> = numbers
                .values
                .into_inner()
                .iter()
                .map(|v| v.to_bits())
                .collect();
            results.push((threads, numbers.total.into_inner().to_bits(), bits));
        }
    }
    let (_, total, values) = &results[0];
    assert_ne!(*total, 0, "the frame computed something");
    for (threads, other_total, other_values) in &results {
        assert_eq!(other_total, total, "total on {threads} threads");
        assert!(other_values == values, "values on {threads} threads");
    }
}

#[test]
fn stages_are_puffin_scopes_named_after_the_stage() {
    // Other tests of this binary may open scopes now too; they only cost them a little time.
    puffin::set_scopes_on(true);
    let names = Arc::new(Mutex::new(BTreeSet::new()));
    let seen = Arc::new(Mutex::new(BTreeSet::new()));
    let sink = {
        let (names, seen) = (Arc::clone(&names), Arc::clone(&seen));
        puffin::GlobalProfiler::lock().add_sink(Box::new(move |frame| {
            for details in &frame.scope_delta {
                names.lock().insert(details.name().to_string());
            }
            let unpacked = frame
                .unpacked()
                .map_err(|error| error.to_string())
                .expect("the frame unpacks");
            for (thread, stream) in &unpacked.thread_streams {
                collect_scopes(&stream.stream, 0, &thread.name, &mut seen.lock());
            }
        }))
    };
    let graph = JobGraphBuilder::<()>::new()
        .stage("puffin_probe_stage", Access::new(), &[], |(), context| {
            context.for_each_batch(4, 1, |_, _| {});
        })
        .build()
        .expect("a valid graph");
    let pool = pool(2);
    graph.run(&pool, &mut ()).expect("no stage panics");
    puffin::GlobalProfiler::lock().new_frame();
    puffin::GlobalProfiler::lock().remove_sink(sink);
    puffin::set_scopes_on(false);

    let (stage_id, batch_id) = graph.scope_ids("puffin_probe_stage").expect("declared");
    let stage_id = stage_id.expect("the stage registered its scope");
    let batch_id = batch_id.expect("the batches registered their scope");
    let names = names.lock();
    assert!(names.contains("puffin_probe_stage"), "{names:?}");
    assert!(names.contains("puffin_probe_stage::batch"), "{names:?}");
    let seen = seen.lock();
    assert!(
        seen.iter().any(|(id, _)| *id == stage_id),
        "the stage's scope was recorded"
    );
    assert_eq!(
        seen.iter().filter(|(id, _)| *id == batch_id).count(),
        4,
        "one scope per batch: {seen:?}"
    );
}

/// Every scope in `stream` below `offset`, as (scope id, thread + data).
fn collect_scopes(
    stream: &puffin::Stream,
    offset: u64,
    thread: &str,
    out: &mut BTreeSet<(puffin::ScopeId, String)>,
) {
    let reader = puffin::Reader::with_offset(stream, offset).expect("a valid offset");
    for scope in reader.read_top_scopes().expect("a valid stream") {
        out.insert((scope.id, format!("{thread} {}", scope.record.data)));
        collect_scopes(stream, scope.child_begin_position, thread, out);
    }
}

/// In debug builds (the tests'), a stage that touches a resource or a component its access
/// does not declare panics with its name and the resource, in its own call and in its
/// batches on any thread; declared touches, and touches between runs, pass.
#[cfg(debug_assertions)]
#[test]
fn a_stage_touching_what_it_did_not_declare_fails_the_run() {
    use super::declared::{check, check_query};
    struct Declared;
    struct Undeclared;
    #[derive(Clone, Copy)]
    struct Component;

    let run = |touch: fn()| -> Result<(), JobPanic> {
        let graph = JobGraphBuilder::<()>::new()
            .stage(
                "careful",
                Access::new().read::<Declared>().write::<Component>(),
                &[],
                move |(), context| {
                    touch();
                    context.for_each_batch(8, 1, |_, _| touch());
                },
            )
            .build()
            .expect("a valid graph");
        for threads in [1, 3] {
            graph.run(&pool(threads), &mut ())?;
        }
        Ok(())
    };
    run(|| {
        check::<Declared>(false);
        check::<Component>(true);
        check_query::<(&Component, hecs::Entity)>();
        check_query::<&mut Component>();
    })
    .expect("declared touches pass");
    let message = |touch: fn()| run(touch).expect_err("an undeclared touch").message;
    assert!(
        message(|| check::<Undeclared>(false)).starts_with("stage `careful` reads `"),
        "{}",
        message(|| check::<Undeclared>(false))
    );
    assert!(message(|| check::<Declared>(true)).contains("writes"));
    assert!(message(check_query::<(&Component, &Undeclared)>).contains("queries"));
    // Outside a stage nothing is checked.
    check::<Undeclared>(true);
    check_query::<&mut Undeclared>();
}

/// A frame context for exclusive stages: a log of what ran, and a number only the
/// exclusive stage changes.
#[derive(Default)]
struct Log {
    ran: Mutex<Vec<String>>,
    value: u64,
}

fn logging(name: &'static str) -> impl Fn(&Log, &StageContext<'_>) + Send + Sync {
    move |log, _| log.ran.lock().push(format!("{name} saw {}", log.value))
}

#[test]
fn an_exclusive_stage_runs_alone_between_the_stages_before_and_after_it() {
    for threads in THREAD_COUNTS {
        let graph = JobGraphBuilder::<Log>::new()
            .stage("a", Access::new().write_named("log"), &[], logging("a"))
            .stage("b", Access::new().write_named("other"), &[], |_, _| {})
            .exclusive("bump", |log, stage| {
                assert_eq!(stage.name(), "bump");
                // Its batches run on the pool like any stage's.
                let parts = stage.map_batches(10, 3, |_, range| range.len() as u64);
                log.value += parts.iter().sum::<u64>();
                log.ran.get_mut().push("bump".to_owned());
                Next::Continue
            })
            // Declared after the exclusive stage, it may still name a stage before it.
            .stage("c", Access::new().write_named("log"), &["a"], logging("c"))
            .build()
            .expect("a valid graph");
        let mut log = Log::default();
        let report = graph
            .run(&pool(threads), &mut log)
            .expect("no stage panics");
        assert_eq!(*log.ran.lock(), ["a saw 0", "bump", "c saw 10"]);
        let names: Vec<&str> = report.stages().iter().map(|s| &*s.name).collect();
        assert_eq!(names, ["a", "b", "bump", "c"]);
        assert!(graph.is_exclusive("bump") && !graph.is_exclusive("a"));
        assert_eq!(graph.access("bump"), None);
        assert_eq!(graph.runs_after("c").unwrap().collect::<Vec<_>>(), ["a"]);
        assert!(
            graph
                .markdown_table()
                .contains("| `bump` | every stage before it, alone | everything | everything |")
        );
    }
}

#[test]
fn an_exclusive_stage_can_end_the_frame() {
    let graph = JobGraphBuilder::<Log>::new()
        .exclusive("stop", |log, _| {
            log.value += 1;
            Next::EndFrame
        })
        .stage("a", Access::new(), &[], logging("a"))
        .exclusive("never", |_, _| unreachable!("the frame ended"))
        .build()
        .expect("a valid graph");
    let mut log = Log::default();
    let report = graph.run(&pool(2), &mut log).expect("no stage panics");
    assert!(log.ran.lock().is_empty());
    assert_eq!(log.value, 1);
    assert_eq!(report.stages().len(), 3, "every stage is listed");
    assert_eq!(report.stage("a"), Some(Duration::ZERO));
}

#[test]
fn a_stage_cannot_wait_for_what_an_exclusive_stage_after_it_waits_for() {
    let before_later = JobGraphBuilder::<Log>::new()
        .stage("a", Access::new(), &["c"], logging("a"))
        .exclusive("x", |_, _| Next::Continue)
        .stage("c", Access::new(), &[], logging("c"))
        .build();
    assert_eq!(
        before_later.err(),
        Some(GraphBuildError::AcrossExclusive {
            stage: "a".into(),
            dependency: "c".into()
        })
    );
    let on_the_exclusive = JobGraphBuilder::<Log>::new()
        .stage("a", Access::new(), &["x"], logging("a"))
        .exclusive("x", |_, _| Next::Continue)
        .build();
    assert!(matches!(
        on_the_exclusive.err(),
        Some(GraphBuildError::AcrossExclusive { .. })
    ));
    let named_twice = JobGraphBuilder::<Log>::new()
        .stage("a", Access::new(), &[], logging("a"))
        .exclusive("a", |_, _| Next::Continue)
        .build();
    assert!(matches!(
        named_twice.err(),
        Some(GraphBuildError::DuplicateStage { .. })
    ));
    // Stages on either side of an exclusive stage never overlap: no conflict between them.
    let sides = JobGraphBuilder::<Log>::new()
        .stage("a", Access::new().write_named("log"), &[], logging("a"))
        .exclusive("x", |_, _| Next::Continue)
        .stage("b", Access::new().write_named("log"), &[], logging("b"))
        .build();
    assert!(sides.is_ok());
}

#[test]
fn a_panic_in_an_exclusive_stage_comes_back_naming_it() {
    let graph = JobGraphBuilder::<Log>::new()
        .exclusive("boom", |_, _| panic!("went off"))
        .stage("a", Access::new(), &[], logging("a"))
        .build()
        .expect("a valid graph");
    let mut log = Log::default();
    let error = graph.run(&pool(2), &mut log).expect_err("boom panics");
    assert_eq!(error.to_string(), "stage `boom` panicked: went off");
    assert!(log.ran.lock().is_empty(), "the stages after it are skipped");
}
