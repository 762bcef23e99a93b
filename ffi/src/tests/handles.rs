//! The checks every call makes before it acts: the handle (NULL, not live, misaligned) and
//! each output pointer.

use super::*;
use crate::types::SIM_MAGIC;

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
    let field = default_field();
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
