//! Every error path of the boundary: NULL pointers, bad ids, buffers too small, bad values,
//! panics (in a call, and in a stage of the frame), all returned as statuses.

/// Test-only faults, per thread: a panic inside the next guarded call, or a failure the next
/// `horde_step` returns instead of stepping. The shipped library has none of this.
pub(crate) mod hook {
    use std::cell::{Cell, RefCell};

    use horde::{Grid, SimConfig, SimError};

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

use horde::jobs::{Access, JobGraph, StageError, WorkerPool};
use horde::{Grid, SimConfig, SimError};

use super::*;
use crate::status::*;
use crate::types::SIM_MAGIC;

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

#[test]
fn abi_version_and_status_names() {
    assert_eq!(horde_abi_version(), HORDE_ABI_VERSION);
    let name = |s| {
        // SAFETY: horde_status_name returns a static NUL-terminated string.
        unsafe { CStr::from_ptr(horde_status_name(s)) }
            .to_str()
            .unwrap()
            .to_owned()
    };
    assert_eq!(name(HORDE_OK), "HORDE_OK");
    assert_eq!(name(HORDE_ERROR_POISONED), "HORDE_ERROR_POISONED");
    let names: std::collections::BTreeSet<String> = (0..=14).map(name).collect();
    assert_eq!(names.len(), 15, "every code has its own name");
    assert_eq!(name(-1), "HORDE_ERROR_UNKNOWN");
    assert_eq!(name(15), "HORDE_ERROR_UNKNOWN");
}

#[test]
fn last_error_is_empty_after_success_and_copied_whole_or_cut() {
    let sim = sim_with(0);
    assert_eq!(last_error(), "");
    // SAFETY: `sim` is live; NaN is refused.
    let status = unsafe { horde_step(sim, f32::NAN) };
    expect_error(status, HORDE_ERROR_INVALID_ARGUMENT, "time step NaN");
    let full = last_error();
    // Asking for the length.
    let mut len = 0;
    // SAFETY: NULL buffer with capacity 0; `len` is a local.
    let status = unsafe { horde_last_error(null_mut(), 0, &mut len) };
    assert_eq!(status, HORDE_ERROR_BUFFER_TOO_SMALL);
    assert_eq!(len, full.len());
    // A NULL buffer with a capacity is refused.
    // SAFETY: NULL buffer, refused before any write.
    let status = unsafe { horde_last_error(null_mut(), 8, null_mut()) };
    assert_eq!(status, HORDE_ERROR_NULL_POINTER);
    // Cut to the buffer, NUL-terminated; the message stays.
    let mut small = [0x7f as c_char; 6];
    // SAFETY: `small` holds 6 bytes.
    let status = unsafe { horde_last_error(small.as_mut_ptr(), small.len(), &mut len) };
    assert_eq!(status, HORDE_ERROR_BUFFER_TOO_SMALL);
    assert_eq!(len, full.len());
    // SAFETY: NUL-terminated by horde_last_error.
    let cut = unsafe { CStr::from_ptr(small.as_ptr()) }.to_str().unwrap();
    assert_eq!(cut, &full[..5]);
    assert_eq!(last_error(), full);
    // A success clears it; capacity 0 still only tells the length.
    assert_eq!(step(sim), HORDE_OK);
    assert_eq!(last_error(), "");
    // SAFETY: NULL buffer with capacity 0; `len` is a local.
    let status = unsafe { horde_last_error(null_mut(), 0, &mut len) };
    assert_eq!((status, len), (HORDE_ERROR_BUFFER_TOO_SMALL, 0));
    free(sim);
}

#[test]
fn a_cut_message_ends_at_a_character_boundary() {
    // The Moving AI parser quotes the bad first line: "é" is two bytes.
    let text = "type é\nheight 1\nwidth 1\nmap\n.\n";
    let mut sim = null_mut();
    // SAFETY: `text` has `text.len()` bytes; `sim` is a local.
    let status =
        unsafe { horde_sim_create_movingai(text.as_ptr().cast(), text.len(), null(), &mut sim) };
    expect_error(status, HORDE_ERROR_MAP_FORMAT, "type é");
    let full = last_error();
    let at = full.find('é').unwrap();
    // A buffer that ends in the middle of "é": the cut drops the whole character.
    let mut buffer = vec![0 as c_char; at + 2];
    let mut len = 0;
    // SAFETY: `buffer` holds `at + 2` bytes.
    let status = unsafe { horde_last_error(buffer.as_mut_ptr(), buffer.len(), &mut len) };
    assert_eq!(status, HORDE_ERROR_BUFFER_TOO_SMALL);
    // SAFETY: NUL-terminated.
    let cut = unsafe { CStr::from_ptr(buffer.as_ptr()) }
        .to_str()
        .expect("valid UTF-8");
    assert_eq!(cut, &full[..at]);
    assert!(sim.is_null());
}

#[test]
fn create_refuses_bad_maps_and_configs() {
    let terrain = terrain();
    let mut sim = std::ptr::dangling_mut::<HordeSim>();
    let create = |w, h, t: *const u8, len, c: *const HordeConfig, out: *mut *mut HordeSim| {
        // SAFETY: every pointer is NULL, or a local of the right size.
        unsafe { horde_sim_create(w, h, t, len, c, out) }
    };
    let status = create(W, H, terrain.as_ptr(), terrain.len(), null(), null_mut());
    expect_error(status, HORDE_ERROR_NULL_POINTER, "out_sim");
    let status = create(W, H, null(), terrain.len(), null(), &mut sim);
    expect_error(status, HORDE_ERROR_NULL_POINTER, "terrain");
    assert!(sim.is_null(), "a failed create leaves NULL");
    let status = create(0, H, terrain.as_ptr(), 0, null(), &mut sim);
    expect_error(status, HORDE_ERROR_INVALID_ARGUMENT, "grid size 0x12");
    let status = create(W, H, terrain.as_ptr(), terrain.len() - 1, null(), &mut sim);
    expect_error(status, HORDE_ERROR_INVALID_ARGUMENT, "terrain_len = 191");
    let mut bad = terrain.clone();
    bad[(2 * W + 5) as usize] = 9;
    let status = create(W, H, bad.as_ptr(), bad.len(), null(), &mut sim);
    expect_error(
        status,
        HORDE_ERROR_INVALID_ARGUMENT,
        "terrain[37] (cell 5, 2)",
    );

    let mut defaults = HordeConfig::from_sim_config(&SimConfig::default());
    // SAFETY: `defaults` is a local.
    assert_eq!(unsafe { horde_config_default(&mut defaults) }, HORDE_OK);
    assert_eq!(defaults.threads, 1);
    type Spoil = fn(&mut HordeConfig);
    let cases: [(Spoil, &str); 6] = [
        (|c| c.threads = 0, "threads = 0"),
        (|c| c.threads = 5000, "threads = 5000"),
        (|c| c.navigation = 7, "navigation = 7"),
        (|c| c.partial_fields = 2, "partial_fields = 2"),
        (|c| c.contact_relaxation = f32::NAN, "contacts.relaxation"),
        (|c| c.drag = -1.0, "drag"),
    ];
    for (spoil, needle) in cases {
        let mut config = defaults;
        spoil(&mut config);
        let status = create(W, H, terrain.as_ptr(), terrain.len(), &config, &mut sim);
        expect_error(status, HORDE_ERROR_INVALID_ARGUMENT, needle);
        assert!(sim.is_null());
    }
    // A config read from an odd address is refused, not read.
    let mut raw = vec![0u8; std::mem::size_of::<HordeConfig>() + 8];
    let odd = raw.as_mut_ptr().wrapping_add(1).cast::<HordeConfig>();
    let status = create(W, H, terrain.as_ptr(), terrain.len(), odd, &mut sim);
    expect_error(status, HORDE_ERROR_INVALID_ARGUMENT, "not aligned");
}

#[test]
fn movingai_text_creates_or_names_the_line() {
    let text = "type octile\nheight 3\nwidth 4\nmap\n@@@@\n@..@\n@@@@\n";
    let mut sim = null_mut();
    // SAFETY: `text` has `text.len()` bytes.
    let status =
        unsafe { horde_sim_create_movingai(text.as_ptr().cast(), text.len(), null(), &mut sim) };
    assert_eq!(status, HORDE_OK, "{}", last_error());
    let (mut w, mut h) = (0, 0);
    // SAFETY: live handle, locals.
    assert_eq!(unsafe { horde_map_size(sim, &mut w, &mut h) }, HORDE_OK);
    assert_eq!((w, h), (4, 3));
    let mut t = 99;
    // SAFETY: live handle, local.
    assert_eq!(unsafe { horde_terrain_at(sim, 0, 0, &mut t) }, HORDE_OK);
    assert_eq!(t, HORDE_TERRAIN_BLOCKED);
    // SAFETY: live handle, local.
    let status = unsafe { horde_terrain_at(sim, 4, 0, &mut t) };
    expect_error(status, HORDE_ERROR_OUTSIDE_MAP, "(4, 0)");
    free(sim);

    let bad = "type octile\nheight 3\nwidth 4\nmap\n@@@@\n@.?@\n@@@@\n";
    // SAFETY: `bad` has `bad.len()` bytes.
    let status =
        unsafe { horde_sim_create_movingai(bad.as_ptr().cast(), bad.len(), null(), &mut sim) };
    expect_error(status, HORDE_ERROR_MAP_FORMAT, "map text:6: column 3");
    let not_utf8 = [b't', 0xff, 0xfe];
    // SAFETY: three bytes.
    let status =
        unsafe { horde_sim_create_movingai(not_utf8.as_ptr().cast(), 3, null(), &mut sim) };
    expect_error(status, HORDE_ERROR_MAP_FORMAT, "UTF-8");
    // SAFETY: NULL text is refused.
    let status = unsafe { horde_sim_create_movingai(null(), 3, null(), &mut sim) };
    expect_error(status, HORDE_ERROR_NULL_POINTER, "text");
    assert!(sim.is_null());
}

#[test]
fn every_call_refuses_a_null_simulation() {
    let mut n = 0usize;
    let mut u64_out = 0u64;
    let mut u32_out = 0u32;
    let mut u16_out = 0u16;
    let mut u8_out = 0u8;
    let cell = [HordeCell { x: 1, y: 1 }];
    let ids = [0u32];
    let spec = [spec(1.5, 1.5)];
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
    let s = null_mut();
    // SAFETY: every call gets a NULL simulation, refused before anything is read.
    let statuses = unsafe {
        [
            horde_add_group(s, cell.as_ptr(), 1, &mut u16_out),
            horde_set_group_goal(s, 0, cell.as_ptr(), 1),
            horde_spawn(s, spec.as_ptr(), 1, null_mut(), null_mut()),
            horde_despawn(s, ids.as_ptr(), 1),
            horde_add_force(s, &field, null_mut()),
            horde_set_terrain(s, 0, 0, 0),
            horde_set_terrain_rect(s, 0, 0, 1, 1, 0),
            horde_step(s, 0.1),
            horde_unit_count(s, &mut n),
            horde_read_units(s, null_mut(), 0, &mut n),
            horde_read_positions(s, null_mut(), 0, &mut n),
            horde_frame(s, &mut u64_out),
            horde_map_size(s, &mut u32_out, &mut u32_out),
            horde_terrain_at(s, 0, 0, &mut u8_out),
            horde_state_hash(s, &mut u64_out),
            horde_stage_times(s, null_mut(), 0, &mut n, null_mut()),
            horde_snapshot_size(s, &mut n),
            horde_snapshot_write(s, null_mut(), 0, &mut n),
            horde_snapshot_restore(s, ids.as_ptr().cast(), 4),
        ]
    };
    for (i, status) in statuses.into_iter().enumerate() {
        assert_eq!(status, HORDE_ERROR_NULL_POINTER, "call {i}");
    }
    assert!(last_error().contains("`sim` is NULL"));
    // Free takes NULL, as free() does.
    // SAFETY: NULL.
    assert_eq!(unsafe { horde_sim_free(null_mut()) }, HORDE_OK);
    // SAFETY: NULL outputs of the default functions are refused.
    unsafe {
        assert_eq!(horde_config_default(null_mut()), HORDE_ERROR_NULL_POINTER);
        assert_eq!(
            horde_unit_spec_default(null_mut()),
            HORDE_ERROR_NULL_POINTER
        );
        assert_eq!(
            horde_force_field_default(null_mut()),
            HORDE_ERROR_NULL_POINTER
        );
    }
}

#[test]
fn every_output_pointer_is_checked() {
    let sim = sim_with(3);
    let cell = [HordeCell { x: 1, y: 1 }];
    // SAFETY: live handle; every output is NULL or misaligned, refused before any write.
    unsafe {
        expect_error(
            horde_add_group(sim, cell.as_ptr(), 1, null_mut()),
            HORDE_ERROR_NULL_POINTER,
            "out_group",
        );
        expect_error(
            horde_unit_count(sim, null_mut()),
            HORDE_ERROR_NULL_POINTER,
            "out_count",
        );
        expect_error(
            horde_frame(sim, null_mut()),
            HORDE_ERROR_NULL_POINTER,
            "out_frame",
        );
        let mut w = 0;
        expect_error(
            horde_map_size(sim, &mut w, null_mut()),
            HORDE_ERROR_NULL_POINTER,
            "out_height",
        );
        expect_error(
            horde_terrain_at(sim, 0, 0, null_mut()),
            HORDE_ERROR_NULL_POINTER,
            "out_terrain",
        );
        expect_error(
            horde_state_hash(sim, null_mut()),
            HORDE_ERROR_NULL_POINTER,
            "out_hash",
        );
        expect_error(
            horde_read_units(sim, null_mut(), 0, null_mut()),
            HORDE_ERROR_NULL_POINTER,
            "out_count",
        );
        expect_error(
            horde_read_positions(sim, null_mut(), 0, null_mut()),
            HORDE_ERROR_NULL_POINTER,
            "out_count",
        );
        expect_error(
            horde_stage_times(sim, null_mut(), 0, null_mut(), null_mut()),
            HORDE_ERROR_NULL_POINTER,
            "out_count",
        );
        expect_error(
            horde_snapshot_size(sim, null_mut()),
            HORDE_ERROR_NULL_POINTER,
            "out_size",
        );
        expect_error(
            horde_snapshot_write(sim, null_mut(), 0, null_mut()),
            HORDE_ERROR_NULL_POINTER,
            "out_len",
        );
        let mut raw = [0u64; 4];
        let odd = raw
            .as_mut_ptr()
            .cast::<u8>()
            .wrapping_add(1)
            .cast::<usize>();
        expect_error(
            horde_unit_count(sim, odd),
            HORDE_ERROR_INVALID_ARGUMENT,
            "not aligned",
        );
        // A capacity with a NULL buffer.
        let mut n = 0;
        expect_error(
            horde_read_units(sim, null_mut(), 3, &mut n),
            HORDE_ERROR_NULL_POINTER,
            "`out`",
        );
    }
    assert_eq!(count(sim), 3, "nothing changed");
    free(sim);
}

#[test]
fn groups_refuse_bad_goals_and_ids() {
    let sim = sim_with(2);
    let before = hash(sim);
    let mut group = 0;
    let add = |cells: &[HordeCell], out: &mut u16| {
        // SAFETY: live handle; `cells` holds its length.
        unsafe { horde_add_group(sim, cells.as_ptr(), cells.len(), out) }
    };
    expect_error(
        add(&[], &mut group),
        HORDE_ERROR_INVALID_ARGUMENT,
        "at least one cell",
    );
    expect_error(
        add(&[HordeCell { x: 16, y: 0 }], &mut group),
        HORDE_ERROR_OUTSIDE_MAP,
        "(16, 0)",
    );
    expect_error(
        add(&[HordeCell { x: 8, y: 4 }], &mut group),
        HORDE_ERROR_BLOCKED,
        "(8, 4) is a wall",
    );
    // SAFETY: NULL cells with a count.
    let status = unsafe { horde_add_group(sim, null(), 2, &mut group) };
    expect_error(status, HORDE_ERROR_NULL_POINTER, "goals");
    let goal = [HordeCell { x: 1, y: 10 }];
    // SAFETY: live handle, one cell.
    let status = unsafe { horde_set_group_goal(sim, 1, goal.as_ptr(), 1) };
    expect_error(
        status,
        HORDE_ERROR_NO_SUCH_GROUP,
        "group 1 does not exist (the simulation has 1 groups)",
    );
    // SAFETY: live handle, a wall cell.
    let status = unsafe { horde_set_group_goal(sim, 0, [HordeCell { x: 8, y: 2 }].as_ptr(), 1) };
    expect_error(status, HORDE_ERROR_BLOCKED, "wall");
    assert_eq!(hash(sim), before, "nothing changed");
    assert_eq!(add(&goal, &mut group), HORDE_OK);
    assert_eq!(group, 1);
    free(sim);
}

#[test]
fn spawn_checks_every_spec_first() {
    let sim = sim_with(0);
    let good = spec(1.5, 1.5);
    let cases: [(HordeUnitSpec, HordeStatus, &str); 7] = [
        (
            HordeUnitSpec { group: 3, ..good },
            HORDE_ERROR_NO_SUCH_GROUP,
            "specs[1]: group 3",
        ),
        (
            spec(20.0, 1.5),
            HORDE_ERROR_OUTSIDE_MAP,
            "specs[1]: position",
        ),
        (spec(8.5, 4.5), HORDE_ERROR_BLOCKED, "specs[1]: position"),
        (spec(3.5, 3.5), HORDE_ERROR_BLOCKED, "Ground"),
        (
            HordeUnitSpec {
                radius: f32::NAN,
                ..good
            },
            HORDE_ERROR_INVALID_ARGUMENT,
            "radius = NaN",
        ),
        (
            HordeUnitSpec { layer: 3, ..good },
            HORDE_ERROR_INVALID_ARGUMENT,
            "layer = 3",
        ),
        (
            HordeUnitSpec {
                controllable: 2,
                ..good
            },
            HORDE_ERROR_INVALID_ARGUMENT,
            "controllable = 2",
        ),
    ];
    for (bad, status, needle) in cases {
        let specs = [good, bad, good];
        let mut ids = [7u32; 3];
        let mut spawned = 9usize;
        // SAFETY: three specs, three ids.
        let got = unsafe { horde_spawn(sim, specs.as_ptr(), 3, ids.as_mut_ptr(), &mut spawned) };
        expect_error(got, status, needle);
        assert_eq!(spawned, 0);
        assert_eq!(ids, [7; 3], "no id written");
        assert_eq!(count(sim), 0, "none spawned");
    }
    // A hover unit may stand on water.
    let hover = HordeUnitSpec {
        layer: HORDE_LAYER_HOVER,
        ..spec(3.5, 3.5)
    };
    // SAFETY: one spec; NULL outputs are allowed.
    let status = unsafe { horde_spawn(sim, &hover, 1, null_mut(), null_mut()) };
    assert_eq!(status, HORDE_OK);
    // SAFETY: NULL specs with a count; zero specs.
    unsafe {
        expect_error(
            horde_spawn(sim, null(), 2, null_mut(), null_mut()),
            HORDE_ERROR_NULL_POINTER,
            "specs",
        );
        assert_eq!(
            horde_spawn(sim, null(), 0, null_mut(), null_mut()),
            HORDE_OK
        );
    }
    assert_eq!(count(sim), 1);
    free(sim);
}

#[test]
fn despawn_checks_every_id_first() {
    let sim = sim_with(4);
    let before = hash(sim);
    let despawn = |ids: &[u32]| {
        // SAFETY: live handle; `ids` holds its length.
        unsafe { horde_despawn(sim, ids.as_ptr(), ids.len()) }
    };
    expect_error(
        despawn(&[1, 9]),
        HORDE_ERROR_NO_SUCH_UNIT,
        "ids[1]: no unit has id 9",
    );
    expect_error(
        despawn(&[2, 0, 2]),
        HORDE_ERROR_NO_SUCH_UNIT,
        "ids[0] and ids[2] are both unit 2",
    );
    // SAFETY: NULL ids with a count.
    expect_error(
        unsafe { horde_despawn(sim, null(), 1) },
        HORDE_ERROR_NULL_POINTER,
        "ids",
    );
    assert_eq!(count(sim), 4);
    assert_eq!(hash(sim), before);
    assert_eq!(despawn(&[3, 1]), HORDE_OK);
    let mut units = [HordeUnit::default(); 4];
    let mut n = 0;
    // SAFETY: four slots.
    let status = unsafe { horde_read_units(sim, units.as_mut_ptr(), 4, &mut n) };
    assert_eq!(status, HORDE_OK);
    assert_eq!(n, 2);
    assert_eq!([units[0].id, units[1].id], [0, 2]);
    expect_error(despawn(&[1]), HORDE_ERROR_NO_SUCH_UNIT, "removed already");
    free(sim);
}

#[test]
fn force_fields_and_terrain_edits_refuse_bad_values() {
    let sim = sim_with(2);
    let before = hash(sim);
    let mut base = HordeForceField {
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
    // SAFETY: a local.
    assert_eq!(unsafe { horde_force_field_default(&mut base) }, HORDE_OK);
    let cases: [(HordeForceField, &str); 7] = [
        (HordeForceField { kind: 4, ..base }, "kind = 4"),
        (
            HordeForceField {
                radius: 0.0,
                ..base
            },
            "radius 0",
        ),
        (
            HordeForceField {
                strength: -1.0,
                ..base
            },
            "strength -1",
        ),
        (
            HordeForceField {
                duration: f32::NAN,
                ..base
            },
            "duration NaN",
        ),
        (
            HordeForceField {
                kind: HORDE_FORCE_PUSH,
                direction_x: 0.0,
                ..base
            },
            "push direction",
        ),
        (
            HordeForceField {
                kind: HORDE_FORCE_VORTEX,
                clockwise: 5,
                ..base
            },
            "clockwise = 5",
        ),
        (
            HordeForceField {
                affects_controllable: 2,
                ..base
            },
            "affects_controllable = 2",
        ),
    ];
    for (field, needle) in cases {
        let mut id = 77;
        // SAFETY: live handle; a local field and id.
        let status = unsafe { horde_add_force(sim, &field, &mut id) };
        expect_error(status, HORDE_ERROR_INVALID_ARGUMENT, needle);
        assert_eq!(id, 77);
    }
    // SAFETY: NULL field.
    expect_error(
        unsafe { horde_add_force(sim, null(), null_mut()) },
        HORDE_ERROR_NULL_POINTER,
        "field",
    );
    // SAFETY: live handle; every edit is refused.
    unsafe {
        expect_error(
            horde_set_terrain(sim, 16, 0, 1),
            HORDE_ERROR_OUTSIDE_MAP,
            "cell (16, 0) lies outside the 16x12 map",
        );
        expect_error(
            horde_set_terrain(sim, 0, 0, 9),
            HORDE_ERROR_INVALID_ARGUMENT,
            "terrain = 9",
        );
        expect_error(
            horde_set_terrain_rect(sim, 10, 10, 6, 3, 1),
            HORDE_ERROR_OUTSIDE_MAP,
            "6x3 rectangle",
        );
        expect_error(
            horde_set_terrain_rect(sim, u32::MAX, 0, 2, 1, 1),
            HORDE_ERROR_OUTSIDE_MAP,
            "rectangle",
        );
        assert_eq!(
            horde_set_terrain_rect(sim, 3, 3, 0, 5, 1),
            HORDE_OK,
            "an empty rectangle"
        );
    }
    assert_eq!(hash(sim), before, "nothing changed");
    // SAFETY: live handle.
    unsafe {
        assert_eq!(
            horde_set_terrain_rect(sim, 10, 0, 2, 2, HORDE_TERRAIN_SNOW),
            HORDE_OK
        );
        let mut t = 0;
        assert_eq!(horde_terrain_at(sim, 11, 1, &mut t), HORDE_OK);
        assert_eq!(t, HORDE_TERRAIN_SNOW);
        let mut id = 5;
        assert_eq!(horde_add_force(sim, &base, &mut id), HORDE_OK);
        assert_eq!(id, 0);
    }
    // SAFETY: live handle; bad time steps.
    unsafe {
        expect_error(
            horde_step(sim, -0.1),
            HORDE_ERROR_INVALID_ARGUMENT,
            "time step",
        );
        expect_error(
            horde_step(sim, f32::INFINITY),
            HORDE_ERROR_INVALID_ARGUMENT,
            "time step",
        );
    }
    free(sim);
}

#[test]
fn reads_say_how_much_room_they_need() {
    let sim = sim_with(5);
    let mut n = 0;
    let mut units = [HordeUnit {
        id: 42,
        ..HordeUnit::default()
    }; 5];
    // SAFETY: `units` holds 5; we pass 4, so nothing may be written.
    let status = unsafe { horde_read_units(sim, units.as_mut_ptr(), 4, &mut n) };
    expect_error(
        status,
        HORDE_ERROR_BUFFER_TOO_SMALL,
        "holds 4 units, 5 are needed",
    );
    assert_eq!(n, 5);
    assert!(units.iter().all(|u| u.id == 42), "nothing written");
    // SAFETY: size query.
    let status = unsafe { horde_read_units(sim, null_mut(), 0, &mut n) };
    assert_eq!(status, HORDE_ERROR_BUFFER_TOO_SMALL);
    let mut xy = [-1.0f32; 10];
    // SAFETY: `xy` holds 5 pairs; we pass 2.
    let status = unsafe { horde_read_positions(sim, xy.as_mut_ptr(), 2, &mut n) };
    expect_error(status, HORDE_ERROR_BUFFER_TOO_SMALL, "5 are needed");
    assert!(xy.iter().all(|&v| v == -1.0));
    // SAFETY: room for all.
    unsafe {
        assert_eq!(
            horde_read_units(sim, units.as_mut_ptr(), 5, &mut n),
            HORDE_OK
        );
        assert_eq!(
            horde_read_positions(sim, xy.as_mut_ptr(), 5, &mut n),
            HORDE_OK
        );
    }
    for (i, u) in units.iter().enumerate() {
        assert_eq!(u.id, i as u32);
        assert_eq!((xy[2 * i], xy[2 * i + 1]), (u.x, u.y));
        assert_eq!(u.flags & HORDE_UNIT_CONTROLLABLE, HORDE_UNIT_CONTROLLABLE);
        assert_eq!(u.radius, 0.4);
    }
    // Stage times: none before the first frame, then each stage.
    let mut stages = [HordeStageTime {
        name: [0; HORDE_STAGE_NAME_LEN],
        seconds: -1.0,
    }; 16];
    let mut total = -1.0;
    // SAFETY: `stages` holds 16.
    unsafe {
        assert_eq!(
            horde_stage_times(sim, stages.as_mut_ptr(), 16, &mut n, &mut total),
            HORDE_OK
        );
        assert_eq!((n, total), (0, 0.0));
        assert_eq!(step(sim), HORDE_OK);
        let status = horde_stage_times(sim, stages.as_mut_ptr(), 2, &mut n, &mut total);
        expect_error(status, HORDE_ERROR_BUFFER_TOO_SMALL, "stages");
        assert!(n > 2);
        assert_eq!(stages[0].seconds, -1.0, "nothing written");
        assert_eq!(
            horde_stage_times(sim, stages.as_mut_ptr(), 16, &mut n, &mut total),
            HORDE_OK
        );
    }
    // SAFETY: NUL-terminated by horde_stage_times.
    let last = unsafe { CStr::from_ptr(stages[n - 1].name.as_ptr()) };
    assert_eq!(last.to_str().unwrap(), "sort_units");
    assert!(total > 0.0 && stages[..n].iter().all(|s| s.seconds >= 0.0));
    let mut frame = 0;
    // SAFETY: a local.
    assert_eq!(unsafe { horde_frame(sim, &mut frame) }, HORDE_OK);
    assert_eq!(frame, 1);
    free(sim);
}

#[test]
fn snapshots_refuse_small_buffers_and_bad_bytes() {
    let sim = sim_with(6);
    assert_eq!(step(sim), HORDE_OK);
    let bytes = snapshot(sim);
    let before = hash(sim);
    let mut small = vec![0u8; bytes.len() - 1];
    let mut len = 0;
    // SAFETY: `small` holds its length.
    let status = unsafe { horde_snapshot_write(sim, small.as_mut_ptr(), small.len(), &mut len) };
    expect_error(status, HORDE_ERROR_BUFFER_TOO_SMALL, "bytes");
    assert_eq!(len, bytes.len());
    assert!(small.iter().all(|&b| b == 0));
    let restore = |b: &[u8]| {
        // SAFETY: live handle; `b` holds its length.
        unsafe { horde_snapshot_restore(sim, b.as_ptr(), b.len()) }
    };
    expect_error(
        restore(&bytes[..bytes.len() / 2]),
        HORDE_ERROR_SNAPSHOT,
        "snapshot",
    );
    let mut flipped = bytes.clone();
    flipped[bytes.len() / 2] ^= 1;
    expect_error(restore(&flipped), HORDE_ERROR_SNAPSHOT, "checksum");
    expect_error(
        restore(b"definitely not a snapshot"),
        HORDE_ERROR_SNAPSHOT,
        "not a horde",
    );
    // SAFETY: NULL bytes.
    expect_error(
        unsafe { horde_snapshot_restore(sim, null(), 5) },
        HORDE_ERROR_NULL_POINTER,
        "bytes",
    );
    assert_eq!(hash(sim), before, "the state stays");
    let mut copy = null_mut();
    // SAFETY: `bytes` holds its length; bad thread counts and bytes are refused.
    unsafe {
        let status = horde_sim_create_from_snapshot(bytes.as_ptr(), bytes.len(), 0, &mut copy);
        expect_error(status, HORDE_ERROR_INVALID_ARGUMENT, "threads = 0");
        let status = horde_sim_create_from_snapshot(flipped.as_ptr(), flipped.len(), 1, &mut copy);
        expect_error(status, HORDE_ERROR_SNAPSHOT, "checksum");
        assert!(copy.is_null());
        assert_eq!(
            horde_sim_create_from_snapshot(bytes.as_ptr(), bytes.len(), 2, &mut copy),
            HORDE_OK
        );
    }
    assert_eq!(hash(copy), before);
    // The state moved on: the kept encoding was dropped, a new snapshot differs.
    assert_eq!(step(sim), HORDE_OK);
    assert_ne!(snapshot(sim), bytes);
    assert_eq!(restore(&bytes), HORDE_OK);
    assert_eq!(hash(sim), before);
    free(copy);
    free(sim);
}

#[test]
fn a_handle_that_is_not_a_live_simulation_is_refused() {
    let sim = sim_with(1);
    // SAFETY: the test owns the live handle; it breaks the magic, then mends it.
    unsafe { (*sim).magic = 0 };
    expect_error(
        step(sim),
        HORDE_ERROR_INVALID_ARGUMENT,
        "not a simulation handle",
    );
    // SAFETY: as above.
    expect_error(
        unsafe { horde_sim_free(sim) },
        HORDE_ERROR_INVALID_ARGUMENT,
        "not a simulation handle",
    );
    // SAFETY: as above.
    unsafe { (*sim).magic = SIM_MAGIC };
    let odd = (sim as usize + 1) as *mut HordeSim;
    expect_error(step(odd), HORDE_ERROR_INVALID_ARGUMENT, "misaligned");
    free(sim);
}

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

fn hash_status(sim: *mut HordeSim) -> HordeStatus {
    let mut h = 0;
    // SAFETY: a local.
    unsafe { horde_state_hash(sim, &mut h) }
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
    let panic = graph.run(&WorkerPool::new(2).unwrap(), &()).unwrap_err();
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
        horde::fields::SpatialGrid::new(&Grid::new(4, 4).unwrap(), f32::NAN).unwrap_err(),
    );
    hook::fail_next_step(SimError::Stage(failure));
    expect_error(step(sim), HORDE_ERROR_STAGE, "bucketing failed");
    assert_eq!(step(sim), HORDE_OK);
    free(sim);
}

#[test]
fn a_simulation_moves_between_threads() {
    fn send<T: Send>() {}
    send::<HordeSim>();
    let sim = sim_with(3) as usize;
    let frame = std::thread::Builder::new()
        .name("other".into())
        .spawn(move || {
            let sim = sim as *mut HordeSim;
            assert_eq!(step(sim), HORDE_OK);
            // The other thread's error message is its own.
            // SAFETY: NaN is refused.
            unsafe { horde_step(sim, f32::NAN) };
            let mut frame = 0;
            // SAFETY: a local.
            unsafe { horde_frame(sim, &mut frame) };
            frame
        })
        .unwrap()
        .join()
        .unwrap();
    assert_eq!(frame, 1);
    assert_eq!(last_error(), "");
    free(sim as *mut HordeSim);
}

/// The same commands through the boundary give the same state hash on 1 and 3 threads,
/// with hierarchical navigation on a Moving AI map, and a snapshot taken on 3 threads goes
/// on identically on 1.
#[test]
fn thread_counts_and_navigation_modes_agree() {
    let mut text = String::from("type octile\nheight 40\nwidth 70\nmap\n");
    for y in 0..40 {
        for x in 0..70 {
            let wall = x == 35 && !(18..22).contains(&y);
            text.push(if y == 0 || y == 39 || x == 0 || x == 69 || wall {
                '@'
            } else {
                '.'
            });
        }
        text.push('\n');
    }
    let run = |threads: u32, navigation: u32| {
        let mut config = HordeConfig::from_sim_config(&SimConfig::default());
        config.threads = threads;
        config.navigation = navigation;
        config.seed = 3;
        let mut sim = null_mut();
        // SAFETY: `text` holds its length; locals.
        let status = unsafe {
            horde_sim_create_movingai(text.as_ptr().cast(), text.len(), &config, &mut sim)
        };
        assert_eq!(status, HORDE_OK, "{}", last_error());
        let goal = [HordeCell { x: 65, y: 30 }, HordeCell { x: 66, y: 30 }];
        let mut group = 0;
        // SAFETY: live handle; two cells.
        let status = unsafe { horde_add_group(sim, goal.as_ptr(), 2, &mut group) };
        assert_eq!(status, HORDE_OK);
        let specs: Vec<HordeUnitSpec> = (0..300)
            .map(|i| spec(2.5 + (i % 20) as f32, 2.5 + (i / 20) as f32))
            .collect();
        // SAFETY: 300 specs.
        let status = unsafe { horde_spawn(sim, specs.as_ptr(), 300, null_mut(), null_mut()) };
        assert_eq!(status, HORDE_OK, "{}", last_error());
        for _ in 0..40 {
            assert_eq!(step(sim), HORDE_OK, "{}", last_error());
        }
        sim
    };
    for navigation in [HORDE_NAVIGATION_FLAT, HORDE_NAVIGATION_HIERARCHICAL] {
        let one = run(1, navigation);
        let three = run(3, navigation);
        assert_eq!(hash(one), hash(three), "navigation {navigation}");
        let bytes = snapshot(three);
        let mut copy = null_mut();
        // SAFETY: `bytes` holds its length.
        let status =
            unsafe { horde_sim_create_from_snapshot(bytes.as_ptr(), bytes.len(), 1, &mut copy) };
        assert_eq!(status, HORDE_OK, "{}", last_error());
        let before = hash(one);
        for sim in [one, three, copy] {
            for _ in 0..20 {
                assert_eq!(step(sim), HORDE_OK);
            }
        }
        assert_ne!(hash(one), before, "the units move");
        assert_eq!(hash(one), hash(three));
        assert_eq!(hash(copy), hash(three));
        for sim in [one, three, copy] {
            free(sim);
        }
    }
}
