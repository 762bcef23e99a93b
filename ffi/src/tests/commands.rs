//! The calls that change a simulation refuse bad goals, ids, specs, fields and terrain,
//! and change nothing when they do.

use super::*;

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
    let base = default_field();
    let cases: [(HordeForceField, &str); 11] = [
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
            "direction = (0, 0)",
        ),
        // Every field is checked whatever the kind: the ones an explosion does not use too.
        (
            HordeForceField {
                clockwise: 2,
                ..base
            },
            "clockwise = 2",
        ),
        (
            HordeForceField {
                direction_x: f32::NAN,
                ..base
            },
            "direction = (NaN, 0)",
        ),
        (
            HordeForceField {
                kind: HORDE_FORCE_ATTRACTOR,
                direction_x: 0.0,
                direction_y: 0.0,
                ..base
            },
            "direction = (0, 0)",
        ),
        (
            HordeForceField {
                kind: HORDE_FORCE_VORTEX,
                direction_y: f32::INFINITY,
                ..base
            },
            "direction = (1, inf)",
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
fn formations_and_targets_refuse_bad_values_and_work_through_the_boundary() {
    let sim = sim_with(4);
    // A second group with one unit, to follow.
    let mut other = 0;
    let goal = [HordeCell { x: 2, y: 2 }];
    // SAFETY: live handle, one cell, `other` is a local.
    let status = unsafe { horde_add_group(sim, goal.as_ptr(), 1, &mut other) };
    assert_eq!(status, HORDE_OK);
    let mut leader = spec(1.5, 10.5);
    leader.group = other;
    let (mut id, mut spawned) = (0, 0);
    // SAFETY: live handle, one spec, `id` and `spawned` are locals.
    let status = unsafe { horde_spawn(sim, &leader, 1, &mut id, &mut spawned) };
    assert_eq!(status, HORDE_OK);
    let before = hash(sim);
    let set = |shape, width, spacing, fx, fy| {
        // SAFETY: `sim` is a live handle.
        unsafe { horde_set_formation(sim, 0, shape, width, spacing, fx, fy) }
    };
    expect_error(
        set(9, 0, 0.0, 0.0, 0.0),
        HORDE_ERROR_INVALID_ARGUMENT,
        "shape 9",
    );
    expect_error(
        set(HORDE_FORMATION_LINE, 0, 0.0, 0.0, 0.0),
        HORDE_ERROR_INVALID_ARGUMENT,
        "width",
    );
    expect_error(
        set(HORDE_FORMATION_BOX, 0, f32::NAN, 0.0, 0.0),
        HORDE_ERROR_INVALID_ARGUMENT,
        "spacing",
    );
    // SAFETY: live handle.
    let status = unsafe { horde_set_formation(sim, 7, HORDE_FORMATION_BOX, 0, 0.0, 0.0, 0.0) };
    expect_error(status, HORDE_ERROR_NO_SUCH_GROUP, "group 7");
    // SAFETY: live handle.
    let status = unsafe { horde_follow_unit(sim, 0, 999, 2.0) };
    expect_error(status, HORDE_ERROR_NO_SUCH_UNIT, "999");
    // SAFETY: live handle.
    let status = unsafe { horde_follow_unit(sim, other, id, 2.0) };
    expect_error(status, HORDE_ERROR_INVALID_ARGUMENT, "its own");
    // SAFETY: live handle.
    let status = unsafe { horde_follow_unit(sim, 0, id, -1.0) };
    expect_error(status, HORDE_ERROR_INVALID_ARGUMENT, "distance");
    assert_eq!(hash(sim), before, "nothing changed");

    assert_eq!(set(HORDE_FORMATION_WEDGE, 0, 0.0, 1.0, 0.0), HORDE_OK);
    // SAFETY: live handle.
    assert_eq!(unsafe { horde_follow_unit(sim, 0, id, 3.0) }, HORDE_OK);
    for _ in 0..10 {
        // SAFETY: live handle.
        assert_eq!(unsafe { horde_step(sim, 1.0 / 30.0) }, HORDE_OK);
    }
    let (mut state, mut unit) = (9, 9);
    // SAFETY: live handle; two locals.
    let status = unsafe { horde_group_target(sim, 0, &mut state, &mut unit) };
    assert_eq!(status, HORDE_OK);
    assert_eq!((state, unit), (1, id));
    // The leader dies: the group says so.
    // SAFETY: live handle, one id.
    assert_eq!(unsafe { horde_despawn(sim, &id, 1) }, HORDE_OK);
    // SAFETY: live handle.
    assert_eq!(unsafe { horde_step(sim, 1.0 / 30.0) }, HORDE_OK);
    // SAFETY: live handle; two locals.
    let status = unsafe { horde_group_target(sim, 0, &mut state, &mut unit) };
    assert_eq!(status, HORDE_OK);
    assert_eq!((state, unit), (2, id));
    // SAFETY: live handle; NULL output.
    let status = unsafe { horde_group_target(sim, 0, null_mut(), &mut unit) };
    expect_error(status, HORDE_ERROR_NULL_POINTER, "out_state");
    assert_eq!(set(HORDE_FORMATION_NONE, 0, 0.0, 0.0, 0.0), HORDE_OK);
    // The caller's own slots: a bad one is named by its index.
    let slots = [0.0f32, 0.0, 1.5, 0.0, f32::NAN, 1.0];
    // SAFETY: live handle; `slots` holds 3 pairs.
    let status = unsafe { horde_set_formation_slots(sim, 0, slots.as_ptr(), 3, 0.0, 0.0) };
    expect_error(status, HORDE_ERROR_INVALID_ARGUMENT, "custom slot 2");
    // SAFETY: live handle; NULL slots with a count.
    let status = unsafe { horde_set_formation_slots(sim, 0, null(), 3, 0.0, 0.0) };
    expect_error(status, HORDE_ERROR_NULL_POINTER, "xy");
    // SAFETY: live handle; `slots` holds 2 good pairs first.
    let status = unsafe { horde_set_formation_slots(sim, 0, slots.as_ptr(), 2, 1.0, 0.0) };
    assert_eq!(status, HORDE_OK);
    free(sim);
}
