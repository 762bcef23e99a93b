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
