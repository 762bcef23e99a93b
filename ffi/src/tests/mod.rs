//! Every error path of the boundary: NULL pointers, bad ids, buffers too small, bad values,
//! panics (in a call, and in a stage of the frame), all returned as statuses.
//!
//! This module holds the test hooks and the helpers every file shares; the tests are filed
//! by the part of the boundary they check, as the crate's modules are.

mod commands;
mod create;
mod errors;
mod handles;
mod panics;
mod reads;
mod snapshot;
mod threads;

/// Test-only faults, per thread: a panic inside the next guarded call, or a failure the next
/// `horde_step` returns instead of stepping. The shipped library has none of this.
pub(crate) mod hook {
    use std::cell::{Cell, RefCell};

    use horde::SimError;

    thread_local! {
        static PANIC_NEXT: Cell<bool> = const { Cell::new(false) };
        static STEP_FAILURE: RefCell<Option<SimError>> = const { RefCell::new(None) };
    }

    /// The next guarded call on this thread panics inside its guard.
    pub(crate) fn panic_next_call() {
        PANIC_NEXT.with(|p| p.set(true));
    }

    /// Called by the guard: panics once after [`panic_next_call`].
    pub(crate) fn maybe_panic() {
        if PANIC_NEXT.with(|p| p.replace(false)) {
            panic!("test hook: a panic inside the call");
        }
    }

    /// The next `horde_step` on this thread returns `error` instead of stepping.
    pub(crate) fn fail_next_step(error: SimError) {
        STEP_FAILURE.with(|f| *f.borrow_mut() = Some(error));
    }

    /// Called by `horde_step`.
    pub(crate) fn stage_failure() -> Option<SimError> {
        STEP_FAILURE.with(|f| f.borrow_mut().take())
    }
}

use std::ffi::{CStr, c_char};
use std::ptr::{null, null_mut};

use horde::SimConfig;

use super::*;
use crate::status::*;

/// This thread's last error message.
fn last_error() -> String {
    let mut buffer = vec![0 as c_char; 1024];
    let mut len = 0usize;
    // SAFETY: the buffer holds 1024 bytes; `len` is a local.
    let status = unsafe { horde_last_error(buffer.as_mut_ptr(), buffer.len(), &mut len) };
    assert_eq!(status, HORDE_OK, "the message fits");
    // SAFETY: horde_last_error wrote a NUL-terminated string into the buffer.
    let text = unsafe { CStr::from_ptr(buffer.as_ptr()) };
    let text = text.to_str().unwrap().to_owned();
    assert_eq!(text.len(), len);
    text
}

/// Asserts `status` is `expected` and the message contains `needle`.
#[track_caller]
fn expect_error(status: HordeStatus, expected: HordeStatus, needle: &str) {
    let message = last_error();
    assert_eq!(
        status,
        expected,
        "got {} ({message})",
        // SAFETY: horde_status_name returns a static NUL-terminated string.
        unsafe { CStr::from_ptr(horde_status_name(status)) }
            .to_str()
            .unwrap()
    );
    assert!(
        message.contains(needle),
        "message {message:?} should contain {needle:?}"
    );
}

const W: u32 = 16;
const H: u32 = 12;

/// A 16x12 map: open, with a brick wall at column 8 (rows 2..10) and water at (3, 3).
fn terrain() -> Vec<u8> {
    let mut t = vec![HORDE_TERRAIN_EMPTY; (W * H) as usize];
    for y in 2..10 {
        t[(y * W + 8) as usize] = HORDE_TERRAIN_BRICK_WALL;
    }
    t[(3 * W + 3) as usize] = HORDE_TERRAIN_WATER;
    t
}

/// A simulation on [`terrain`] with one group (goal (14, 6)) and `units` units in it.
fn sim_with(units: usize) -> *mut HordeSim {
    let terrain = terrain();
    let mut sim = null_mut();
    // SAFETY: the terrain array has W * H bytes; `sim` is a local.
    let status =
        unsafe { horde_sim_create(W, H, terrain.as_ptr(), terrain.len(), null(), &mut sim) };
    assert_eq!(status, HORDE_OK, "{}", last_error());
    let goal = [HordeCell { x: 14, y: 6 }];
    let mut group = 99;
    // SAFETY: `sim` is live; one goal cell; `group` is a local.
    let status = unsafe { horde_add_group(sim, goal.as_ptr(), 1, &mut group) };
    assert_eq!(status, HORDE_OK);
    assert_eq!(group, 0);
    let specs: Vec<HordeUnitSpec> = (0..units)
        .map(|i| spec(1.5 + (i % 6) as f32, 1.5 + (i / 6) as f32))
        .collect();
    let mut ids = vec![0u32; units];
    let mut spawned = 0usize;
    // SAFETY: `specs` and `ids` hold `units` entries; `spawned` is a local.
    let status = unsafe { horde_spawn(sim, specs.as_ptr(), units, ids.as_mut_ptr(), &mut spawned) };
    assert_eq!(status, HORDE_OK, "{}", last_error());
    assert_eq!(spawned, units);
    sim
}

fn spec(x: f32, y: f32) -> HordeUnitSpec {
    let mut spec = HordeUnitSpec {
        x: 0.0,
        y: 0.0,
        radius: 0.0,
        max_speed: 0.0,
        turn_rate: 0.0,
        mass: 0.0,
        group: 0,
        layer: 0,
        controllable: 0,
    };
    // SAFETY: `spec` is a local.
    assert_eq!(unsafe { horde_unit_spec_default(&mut spec) }, HORDE_OK);
    spec.x = x;
    spec.y = y;
    spec.radius = 0.4;
    spec
}

/// The default force field, as `horde_force_field_default` writes it.
fn default_field() -> HordeForceField {
    let mut field = HordeForceField {
        kind: 0,
        x: 0.0,
        y: 0.0,
        radius: 0.0,
        strength: 0.0,
        duration: 0.0,
        falloff: 0,
        time_decay: 0.0,
        direction_x: 0.0,
        direction_y: 0.0,
        clockwise: 0,
        affects_controllable: 0,
    };
    // SAFETY: `field` is a local.
    assert_eq!(unsafe { horde_force_field_default(&mut field) }, HORDE_OK);
    field
}

fn free(sim: *mut HordeSim) {
    // SAFETY: `sim` is a live handle, freed once.
    assert_eq!(unsafe { horde_sim_free(sim) }, HORDE_OK);
}

fn count(sim: *mut HordeSim) -> usize {
    let mut n = 0;
    // SAFETY: `sim` is live; `n` is a local.
    assert_eq!(unsafe { horde_unit_count(sim, &mut n) }, HORDE_OK);
    n
}

fn hash(sim: *mut HordeSim) -> u64 {
    let mut h = 0;
    // SAFETY: `sim` is live; `h` is a local.
    assert_eq!(unsafe { horde_state_hash(sim, &mut h) }, HORDE_OK);
    h
}

fn snapshot(sim: *mut HordeSim) -> Vec<u8> {
    let mut size = 0;
    // SAFETY: `sim` is live; `size` is a local.
    assert_eq!(unsafe { horde_snapshot_size(sim, &mut size) }, HORDE_OK);
    let mut bytes = vec![0u8; size];
    let mut len = 0;
    // SAFETY: `bytes` holds `size` bytes.
    let status = unsafe { horde_snapshot_write(sim, bytes.as_mut_ptr(), size, &mut len) };
    assert_eq!(status, HORDE_OK);
    assert_eq!(len, size);
    bytes
}

fn step(sim: *mut HordeSim) -> HordeStatus {
    // SAFETY: `sim` is live (or NULL, which is refused).
    unsafe { horde_step(sim, 1.0 / 30.0) }
}

/// The status of `horde_state_hash` on `sim` (which may be poisoned).
fn hash_status(sim: *mut HordeSim) -> HordeStatus {
    let mut h = 0;
    // SAFETY: a local.
    unsafe { horde_state_hash(sim, &mut h) }
}
