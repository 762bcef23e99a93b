//! Panics, in a call and in a stage of the frame, come back as statuses and poison the
//! simulation.

use horde::jobs::{Access, JobGraph, StageError, WorkerPool};
use horde::{Grid, SimError};

use super::*;

#[test]
fn a_panic_in_a_call_is_caught_and_poisons_the_simulation() {
    let sim = sim_with(4);
    assert_eq!(step(sim), HORDE_OK);
    let saved = snapshot(sim);
    let saved_hash = hash(sim);
    hook::panic_next_call();
    expect_error(
        step(sim),
        HORDE_ERROR_PANIC,
        "panic inside horde: test hook",
    );
    expect_error(hash_status(sim), HORDE_ERROR_POISONED, "poisoned");
    expect_error(step(sim), HORDE_ERROR_POISONED, "horde_snapshot_restore");
    // Restoring a snapshot clears the poison.
    // SAFETY: `saved` holds its length.
    let status = unsafe { horde_snapshot_restore(sim, saved.as_ptr(), saved.len()) };
    assert_eq!(status, HORDE_OK);
    assert_eq!(hash(sim), saved_hash);
    assert_eq!(step(sim), HORDE_OK);
    // A call without a simulation reports its panic too.
    hook::panic_next_call();
    let mut config = HordeConfig::from_sim_config(&SimConfig::default());
    // SAFETY: a local.
    expect_error(
        unsafe { horde_config_default(&mut config) },
        HORDE_ERROR_PANIC,
        "test hook",
    );
    // A poisoned simulation can be freed.
    hook::panic_next_call();
    expect_error(step(sim), HORDE_ERROR_PANIC, "test hook");
    free(sim);
}

/// A real panic inside a real stage: a job graph whose stage panics, run on a pool of two
/// threads, gives the `JobPanic` that `Simulation::step` returns as `SimError::Frame` when
/// one of horde's stages panics (horde's own stages cannot be made to panic from outside:
/// that would be a bug). `horde_step` reports it as a panic and poisons the simulation.
#[test]
fn a_panic_inside_a_stage_comes_back_as_a_status() {
    let graph = JobGraph::<()>::builder()
        .stage("steer_units", Access::new(), &[], |_, stage| {
            stage.for_each_batch(64, 8, |batch, _| {
                if batch == 3 {
                    panic!("a stage broke");
                }
            });
        })
        .build()
        .unwrap();
    let panic = graph
        .run(&WorkerPool::new(2).unwrap(), &mut ())
        .unwrap_err();
    let sim = sim_with(2);
    hook::fail_next_step(SimError::Frame(panic));
    expect_error(
        step(sim),
        HORDE_ERROR_PANIC,
        "stage `steer_units` panicked in batch 3: a stage broke",
    );
    expect_error(step(sim), HORDE_ERROR_POISONED, "poisoned");
    free(sim);

    // A stage that failed without panicking: the frame counts, the simulation goes on.
    let sim = sim_with(2);
    let failure = StageError::Buckets(
        horde::crowd::SpatialGrid::new(&Grid::new(4, 4).unwrap(), f32::NAN).unwrap_err(),
    );
    hook::fail_next_step(SimError::Stage(failure));
    expect_error(step(sim), HORDE_ERROR_STAGE, "bucketing failed");
    assert_eq!(step(sim), HORDE_OK);
    free(sim);
}
