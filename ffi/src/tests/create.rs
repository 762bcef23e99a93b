//! Creating a simulation: bad maps, bad configs, bad Moving AI text.

use super::*;
use horde::settings::{Range, Value};

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
    let cases: [(Spoil, &str); 8] = [
        (|c| c.threads = 0, "threads = 0"),
        (|c| c.size_classes = 0, "size_classes = 0"),
        (|c| c.size_classes = 300, "size_classes = 300"),
        (|c| c.threads = 5000, "threads = 5000"),
        (|c| c.navigation = 7, "navigation = 7"),
        (|c| c.partial_fields = 2, "partial_fields = 2"),
        (
            |c| c.contact_relaxation = f32::NAN,
            "contact_relaxation = NaN",
        ),
        (|c| c.drag = -1.0, "drag"),
    ];
    for (spoil, needle) in cases {
        let mut config = defaults;
        spoil(&mut config);
        let status = create(W, H, terrain.as_ptr(), terrain.len(), &config, &mut sim);
        expect_error(status, HORDE_ERROR_INVALID_ARGUMENT, needle);
        assert!(sim.is_null());
    }
    // Every setting that can be wrong is named as the header names it: each one set past
    // its range (NaN for reals), all others at their defaults.
    let mut named = 0;
    for (i, setting) in horde::settings::SETTINGS.iter().enumerate() {
        let bad = match (setting.range, setting.default_value()) {
            (_, Value::Real(_)) => Value::Real(f32::NAN),
            (Range::Ints { max, .. }, _) if max < u64::from(u32::MAX) => Value::Int(max + 1),
            (Range::Ints { min, .. }, _) if min > 0 => Value::Int(min - 1),
            (Range::Flag | Range::Choice(_), _) => Value::Int(7),
            // Every value of its C type is valid.
            _ => continue,
        };
        let mut values = defaults.values();
        values[i] = bad;
        let config = HordeConfig::from_values(&values);
        let status = create(W, H, terrain.as_ptr(), terrain.len(), &config, &mut sim);
        let needle = format!("config: {} = {bad} is invalid", setting.name);
        expect_error(status, HORDE_ERROR_INVALID_ARGUMENT, &needle);
        assert!(sim.is_null());
        named += 1;
    }
    assert!(named >= 25, "{named} settings checked");
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
fn the_default_force_field_is_the_libraries_default() {
    // `horde_force_field_default` writes its values out (core's `ForceField` keeps its
    // defaults private); converted back they must be exactly `ForceField::new`'s defaults
    // for the same kind, place, radius and strength, so the two cannot drift apart.
    let field = default_field();
    let converted = field
        .to_field()
        .unwrap_or_else(|_| panic!("the default converts"));
    let library = horde::ForceField::new(
        horde::glam::Vec2::new(field.x, field.y),
        horde::ForceKind::Explosion,
        field.radius,
        field.strength,
    )
    .unwrap();
    assert_eq!(converted, library);
}
