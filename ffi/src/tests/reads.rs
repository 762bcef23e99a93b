//! The reads say how much room they need.

use super::*;

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

/// Every output buffer is checked in one order: NULL with a capacity is a NULL pointer
/// whether or not the capacity would be enough, then alignment, then the size; the count
/// is written first whatever follows.
#[test]
fn every_buffer_is_checked_in_one_order() {
    let sim = sim_with(5);
    assert_eq!(step(sim), HORDE_OK);
    let needle = "is NULL with a capacity";
    let snapshot_size = snapshot(sim).len();
    for capacity in [1, 4, 5, 1000, 100_000] {
        let mut n = 0;
        let mut total = 0.0;
        // SAFETY: NULL buffers are refused before anything is written through them; the
        // counts are locals.
        unsafe {
            let status = horde_read_units(sim, null_mut(), capacity, &mut n);
            expect_error(status, HORDE_ERROR_NULL_POINTER, needle);
            assert_eq!(n, 5, "the count is written first");
            n = 0;
            let status = horde_read_positions(sim, null_mut(), capacity, &mut n);
            expect_error(status, HORDE_ERROR_NULL_POINTER, needle);
            assert_eq!(n, 5);
            let status = horde_stage_times(sim, null_mut(), capacity, &mut n, &mut total);
            expect_error(status, HORDE_ERROR_NULL_POINTER, needle);
            let status = horde_snapshot_write(sim, null_mut(), capacity, &mut n);
            expect_error(status, HORDE_ERROR_NULL_POINTER, needle);
            assert_eq!(n, snapshot_size, "the snapshot's size is written first");
        }
    }
    // A misaligned buffer too small for the data: alignment is checked before the size.
    let mut raw = vec![0u32; 64];
    let odd = raw.as_mut_ptr().cast::<u8>().wrapping_add(1);
    let mut n = 0;
    // SAFETY: refused before anything is written (misaligned).
    unsafe {
        let status = horde_read_units(sim, odd.cast(), 1, &mut n);
        expect_error(status, HORDE_ERROR_INVALID_ARGUMENT, "not aligned");
        let status = horde_read_positions(sim, odd.cast(), 1, &mut n);
        expect_error(status, HORDE_ERROR_INVALID_ARGUMENT, "not aligned");
    }
    // NULL with capacity 0 asks for the size: too small, with the size written.
    // SAFETY: size queries; the counts are locals.
    unsafe {
        assert_eq!(
            horde_read_positions(sim, null_mut(), 0, &mut n),
            HORDE_ERROR_BUFFER_TOO_SMALL
        );
        assert_eq!(n, 5);
        assert_eq!(
            horde_snapshot_write(sim, null_mut(), 0, &mut n),
            HORDE_ERROR_BUFFER_TOO_SMALL
        );
    }
    free(sim);
}

/// A unit whose goal is walled off is unreachable, not blocked, however long it stands; the
/// bit clears once a way opens.
#[test]
fn a_unit_cut_off_from_its_goal_is_unreachable() {
    let sim = sim_with(1);
    let ring = |terrain: u8| {
        for y in 5..=7 {
            for x in 13..=15 {
                if (x, y) != (14, 6) {
                    // SAFETY: live handle; cells on the map.
                    assert_eq!(unsafe { horde_set_terrain(sim, x, y, terrain) }, HORDE_OK);
                }
            }
        }
    };
    let flags = || {
        let mut unit = [HordeUnit::default()];
        let mut n = 0;
        // SAFETY: room for the one unit; `n` is a local.
        let status = unsafe { horde_read_units(sim, unit.as_mut_ptr(), 1, &mut n) };
        assert_eq!(status, HORDE_OK);
        unit[0].flags
    };
    let status_bits =
        HORDE_UNIT_ARRIVED | HORDE_UNIT_SETTLED | HORDE_UNIT_BLOCKED | HORDE_UNIT_UNREACHABLE;
    ring(HORDE_TERRAIN_BRICK_WALL);
    for _ in 0..90 {
        assert_eq!(step(sim), HORDE_OK);
    }
    assert_eq!(
        flags() & status_bits,
        HORDE_UNIT_UNREACHABLE,
        "three seconds walled off"
    );
    ring(HORDE_TERRAIN_EMPTY);
    assert_eq!(step(sim), HORDE_OK);
    assert_eq!(flags() & HORDE_UNIT_UNREACHABLE, 0, "the way is open again");
    free(sim);
}
