//! Tests of the force fields, the manager and the knock-back rules.

use super::manager::inside;
use super::*;
use crate::config::KnockbackParams;

/// Below `always_snaps_below`, drag ends a velocity at zero on either terrain, for any
/// direction and any shortening of it.
#[test]
fn velocities_below_the_snap_bound_always_end_at_rest() {
    let params = KnockbackParams::default();
    for dt in [1.0 / 60.0, 1.0 / 30.0, 0.5] {
        let below = always_snaps_below(dt, &params);
        assert!(below > 0.0, "{below}");
        for i in 0..64 {
            let angle = i as f32 * 0.1;
            let v = Vec2::new(angle.cos(), angle.sin()) * below * (1.0 - 1e-6);
            for shortened in [v, v * 0.5, Vec2::new(v.x, 0.0)] {
                for slippery in [false, true] {
                    let (after, _) = decay_external(shortened, 0.0, slippery, dt, &params);
                    assert_eq!(after, Vec2::ZERO, "dt {dt}, {shortened}, {slippery}");
                }
            }
        }
    }
}

/// The force without the index: every live field, in insertion order.
fn force_over_every_field(m: &ForceManager, pos: Vec2, controllable: bool) -> Vec2 {
    let mut total = Vec2::ZERO;
    for e in &m.entries {
        if e.live && e.field.affects(controllable) && inside(pos, e.min, e.max) {
            total += e.field.force_at(pos);
        }
    }
    total
}

proptest::proptest! {
    /// The index changes which fields are looked at, never the force: bit for bit the
    /// sum over every live field, through adds, removals (pending fields too) and
    /// expiries.
    #[test]
    fn the_index_gives_the_force_of_every_field(
        fields in proptest::collection::vec(
            (0.0f32..300.0, 0.0f32..300.0, 0.5f32..60.0, 0u8..4, 0u8..3, proptest::bool::ANY),
            1..60,
        ),
        removals in proptest::collection::vec(0usize..80, 0..10),
        probes in proptest::collection::vec((-20.0f32..320.0, -20.0f32..320.0), 50),
    ) {
        let mut m = ForceManager::new();
        let mut ids = Vec::new();
        for (round, chunk) in fields.chunks(7).enumerate() {
            for &(x, y, radius, kind, life, hits_players) in chunk {
                let kind = match kind {
                    0 => ForceKind::Explosion,
                    1 => ForceKind::Attractor,
                    2 => ForceKind::Vortex { clockwise: true },
                    _ => ForceKind::Push { direction: Vec2::new(0.6, -0.8) },
                };
                let field = ForceField::new(Vec2::new(x, y), kind, radius, 50.0)
                    .unwrap()
                    .with_duration(f32::from(life) * 0.05)
                    .unwrap()
                    .with_affects_controllable(hits_players);
                ids.push(m.add(field));
            }
            if let Some(&r) = removals.get(round) {
                // Pending or live, whichever `r` names.
                let id = ids[r % ids.len()];
                m.remove(id);
            }
            if round % 2 == 0 {
                m.advance(0.05);
            }
            for &(x, y) in &probes {
                let pos = Vec2::new(x, y);
                for controllable in [false, true] {
                    let expected = force_over_every_field(&m, pos, controllable);
                    let got = m.force_at(pos, controllable);
                    proptest::prop_assert_eq!(got.x.to_bits(), expected.x.to_bits());
                    proptest::prop_assert_eq!(got.y.to_bits(), expected.y.to_bits());
                }
            }
        }
    }
}

const DT: f32 = 1.0 / 60.0;

fn field(kind: ForceKind) -> ForceField {
    ForceField::new(Vec2::new(2.0, 3.0), kind, 5.0, 100.0).unwrap()
}

fn close(a: Vec2, b: Vec2) -> bool {
    (a - b).length() <= 1e-4 * (1.0 + a.length().max(b.length()))
}

fn live(fields: &[ForceField]) -> ForceManager {
    let mut m = ForceManager::new();
    for &f in fields {
        m.add(f.with_duration(1.0).unwrap());
    }
    m.advance(DT);
    m
}

#[test]
fn superposition_sums_each_field() {
    let a = field(ForceKind::Explosion);
    let b = ForceField::new(Vec2::new(4.0, 1.0), ForceKind::Attractor, 6.0, 70.0)
        .unwrap()
        .with_falloff(2);
    let c = field(ForceKind::Vortex { clockwise: false });
    let both = live(&[a, b, c]);
    for i in 0..50 {
        let p = Vec2::new(i as f32 * 0.21 - 1.0, 6.0 - i as f32 * 0.17);
        let sum = live(&[a]).force_at(p, false)
            + live(&[b]).force_at(p, false)
            + live(&[c]).force_at(p, false);
        assert_eq!(both.force_at(p, false), sum, "at {p}");
        assert_eq!(sum, a.force_at(p) + b.force_at(p) + c.force_at(p));
    }
}

#[test]
fn falloff_decreases_with_distance() {
    for falloff in [0, 1, 2, 3, 7] {
        let f = field(ForceKind::Explosion).with_falloff(falloff);
        let mut last = f32::INFINITY;
        for i in 1..=60 {
            let d = i as f32 * 0.1;
            let m = f.force_at(f.position() + Vec2::new(d, 0.0)).length();
            assert!(m <= last, "falloff {falloff} at {d}: {m} > {last}");
            if falloff > 0 && d < 5.0 {
                assert!(m < last, "falloff {falloff} at {d} not strictly decreasing");
            }
            last = m;
        }
    }
    let linear = field(ForceKind::Explosion);
    let half = linear.force_at(linear.position() + Vec2::new(2.5, 0.0));
    assert!(close(half, Vec2::new(50.0, 0.0)), "{half}");
    let quad = linear.with_falloff(2);
    let quarter = quad.force_at(quad.position() + Vec2::new(0.0, -2.5));
    assert!(close(quarter, Vec2::new(0.0, -25.0)), "{quarter}");
}

#[test]
fn outside_the_radius_is_zero() {
    for kind in [
        ForceKind::Explosion,
        ForceKind::Attractor,
        ForceKind::Push { direction: Vec2::X },
        ForceKind::Vortex { clockwise: true },
    ] {
        let f = field(kind).with_falloff(0);
        let c = f.position();
        assert_eq!(f.force_at(c + Vec2::new(5.0, 0.0)), Vec2::ZERO);
        assert_eq!(f.force_at(c + Vec2::new(4.0, 3.01)), Vec2::ZERO);
        assert_eq!(f.force_at(c + Vec2::new(-1e30, 1e30)), Vec2::ZERO);
        assert_eq!(f.force_at(Vec2::new(f32::MAX, -f32::MAX)), Vec2::ZERO);
        assert_eq!(f.force_at(Vec2::NAN), Vec2::ZERO);
        assert_eq!(f.force_at(Vec2::new(f32::INFINITY, 0.0)), Vec2::ZERO);
        assert_ne!(f.force_at(c + Vec2::new(4.9, 0.0)), Vec2::ZERO);
        let m = live(&[f]);
        assert_eq!(m.force_at(c + Vec2::new(0.0, 5.5), false), Vec2::ZERO);
        assert_eq!(m.force_at(Vec2::NAN, false), Vec2::ZERO);
    }
}

#[test]
fn explosion_pushes_outward_and_light_units_further() {
    let f = field(ForceKind::Explosion);
    let force = f.force_at(f.position() + Vec2::new(1.0, 1.0));
    assert!(force.x > 0.0 && force.y > 0.0 && (force.x - force.y).abs() < 1e-4);
    let params = KnockbackParams::default().with_max_external_speed(1e6);
    let (light, light_stun) = apply_impulse(Vec2::ZERO, 0.0, force, 1.0, DT, &params);
    let (heavy, heavy_stun) = apply_impulse(Vec2::ZERO, 0.0, force, 5.0, DT, &params);
    assert!(light.length() > heavy.length());
    assert!(close(light, heavy * 5.0));
    assert!(light_stun >= heavy_stun);
    assert_eq!(
        f.force_at(f.position()),
        Vec2::ZERO,
        "no direction at the centre"
    );
}

#[test]
fn attractor_points_inward() {
    let f = field(ForceKind::Attractor);
    for offset in [
        Vec2::new(1.0, 0.0),
        Vec2::new(-2.0, 3.0),
        Vec2::new(0.5, -0.5),
    ] {
        let force = f.force_at(f.position() + offset);
        assert!(force.dot(offset) < 0.0);
        assert!(force.perp_dot(offset).abs() < 1e-3 * force.length());
    }
    assert_eq!(f.force_at(f.position()), Vec2::ZERO);
}

#[test]
fn vortex_is_tangential() {
    for clockwise in [true, false] {
        let f = field(ForceKind::Vortex { clockwise });
        for offset in [
            Vec2::new(1.0, 0.0),
            Vec2::new(-2.0, 3.0),
            Vec2::new(0.3, -4.0),
        ] {
            let force = f.force_at(f.position() + offset);
            assert!(force.length() > 0.0);
            assert!(force.dot(offset).abs() < 1e-4 * force.length() * offset.length());
        }
        // Right of the centre, clockwise on screen (+y down) pushes toward +y.
        let right = f.force_at(f.position() + Vec2::X);
        assert_eq!(right.y > 0.0, clockwise);
        assert_eq!(f.force_at(f.position()), Vec2::ZERO);
    }
}

#[test]
fn push_follows_its_direction() {
    let f = field(ForceKind::Push {
        direction: Vec2::new(3.0, -4.0),
    });
    assert_eq!(
        f.kind(),
        ForceKind::Push {
            direction: Vec2::new(0.6, -0.8)
        }
    );
    for offset in [Vec2::ZERO, Vec2::new(1.0, 2.0), Vec2::new(-3.0, 0.5)] {
        let force = f.force_at(f.position() + offset);
        assert!(force.length() > 0.0);
        assert!(close(force.normalize(), Vec2::new(0.6, -0.8)));
    }
    assert!(close(f.force_at(f.position()), Vec2::new(60.0, -80.0)));
    let huge = ForceField::new(
        Vec2::ZERO,
        ForceKind::Push {
            direction: Vec2::new(f32::MAX, f32::MAX),
        },
        1.0,
        1.0,
    )
    .unwrap();
    let ForceKind::Push { direction } = huge.kind() else {
        unreachable!()
    };
    assert!(close(
        direction,
        Vec2::splat(std::f32::consts::FRAC_1_SQRT_2)
    ));
}

#[test]
fn impulses_last_one_frame_and_timed_fields_expire() {
    let mut m = ForceManager::new();
    let p = Vec2::new(3.0, 3.0);
    let impulse = m.add(field(ForceKind::Explosion));
    let timed = m.add(field(ForceKind::Attractor).with_duration(0.1).unwrap());
    assert_eq!(
        m.force_at(p, false),
        Vec2::ZERO,
        "pending fields do not act"
    );
    assert!(!m.is_live(impulse));
    let mut frames = [0u32; 2];
    for _ in 0..20 {
        m.advance(0.025);
        let forces = [
            m.get(impulse).map(|f| f.force_at(p)),
            m.get(timed).map(|f| f.force_at(p)),
        ];
        for (count, force) in frames.iter_mut().zip(forces) {
            if let Some(force) = force {
                assert_ne!(force, Vec2::ZERO);
                *count += 1;
            }
        }
    }
    // 0.1 s at 0.025 s a frame: elapsed 0, .025, .05, .075 (float sums may add one).
    assert_eq!(frames[0], 1);
    assert!((4..=5).contains(&frames[1]), "{frames:?}");
    assert!(m.is_empty());
    assert!(m.get(timed).is_none() && m.remove(timed).is_none());

    // An impulse lasts one frame even when time stands still.
    let id = m.add(field(ForceKind::Explosion));
    m.advance(0.0);
    assert!(m.is_live(id));
    m.advance(f32::NAN);
    assert!(m.get(id).is_none());
    // A forever field stays until removed; ids are not reused.
    let forever = m.add(
        field(ForceKind::Attractor)
            .with_duration(ForceField::FOREVER)
            .unwrap(),
    );
    assert!(forever > id);
    for _ in 0..100 {
        m.advance(1e6);
    }
    assert_ne!(m.force_at(p, true), Vec2::ZERO);
    assert!(m.remove(forever).is_some());
    assert_eq!(m.force_at(p, true), Vec2::ZERO);
}

#[test]
fn time_decay_fades_linearly() {
    let mut m = ForceManager::new();
    let id = m.add(
        field(ForceKind::Explosion)
            .with_duration(10.0)
            .unwrap()
            .with_time_decay(0.5)
            .unwrap(),
    );
    let p = Vec2::new(3.0, 3.0);
    m.advance(1.0);
    let full = m.force_at(p, false);
    m.advance(1.0);
    assert!(close(m.force_at(p, false), full * 0.5));
    m.advance(1.0);
    assert_eq!(m.force_at(p, false), Vec2::ZERO);
    assert_eq!(m.get(id).unwrap().time_factor(), 0.0);
}

#[test]
fn controllable_units_skip_fields_that_spare_them() {
    let spare = field(ForceKind::Explosion).with_affects_controllable(false);
    let hit = field(ForceKind::Attractor);
    let m = live(&[spare, hit]);
    let p = Vec2::new(3.0, 3.5);
    assert_eq!(m.force_at(p, true), hit.force_at(p));
    assert_eq!(m.force_at(p, false), spare.force_at(p) + hit.force_at(p));
    assert!(!spare.affects(true) && spare.affects(false) && hit.affects(true));
}

/// `apply_knockback` skips units at rest on the strength of this: decaying `(+0, +0)` gives
/// `(+0, +0)` bit for bit, whatever the settings.
#[test]
fn decay_keeps_a_unit_at_rest_exactly() {
    for (drag, snap) in [(4.0, 0.05), (0.0, 0.0), (f32::MAX, 0.0), (1.0, 1e30)] {
        let params = KnockbackParams {
            drag,
            slippery_drag: drag,
            snap_speed: snap,
            ..KnockbackParams::default()
        };
        for dt in [0.0, DT, 1.0, f32::MAX] {
            for slippery in [false, true] {
                let (v, s) = decay_external(Vec2::ZERO, 0.0, slippery, dt, &params);
                assert_eq!((v.x.to_bits(), v.y.to_bits(), s.to_bits()), (0, 0, 0));
            }
        }
    }
}

#[test]
fn decay_reaches_exactly_zero_and_stun_counts_down() {
    let params = KnockbackParams::default();
    let (mut v, mut stun) = (Vec2::new(15.0, -7.0), 1.0);
    let mut frames = 0;
    while v != Vec2::ZERO {
        let (nv, ns) = decay_external(v, stun, false, DT, &params);
        assert!(nv.length() < v.length());
        assert!(ns <= stun && ns >= 0.0);
        (v, stun) = (nv, ns);
        frames += 1;
        assert!(frames < 10_000, "never reached zero");
    }
    assert_eq!(stun, 0.0);
    assert_eq!(v, Vec2::ZERO);
    let (_, s) = decay_external(Vec2::ZERO, 0.5, false, 0.2, &params);
    assert!((s - 0.3).abs() < 1e-6);
    let (_, s) = decay_external(Vec2::ZERO, 0.1, false, 0.2, &params);
    assert_eq!(s, 0.0);
}

#[test]
fn slippery_terrain_decays_slower() {
    let params = KnockbackParams::default();
    let v = Vec2::new(10.0, 0.0);
    let (normal, _) = decay_external(v, 0.0, false, DT, &params);
    let (slippery, _) = decay_external(v, 0.0, true, DT, &params);
    assert!(slippery.x > normal.x && normal.x < v.x);
    assert!(close(normal, v / (1.0 + 4.0 * DT)));
}

#[test]
fn impulse_clamps_speed_and_stuns_big_hits() {
    let params = KnockbackParams::default();
    // dv = 120 * 0.05 / 1 = 6: above the threshold 4 by 2 -> 0.2 s, speed under the cap.
    let (v, stun) = apply_impulse(Vec2::ZERO, 0.0, Vec2::new(120.0, 0.0), 1.0, 0.05, &params);
    assert!(close(v, Vec2::new(6.0, 0.0)));
    assert!((stun - 0.2).abs() < 1e-5, "{stun}");
    // A small push neither stuns nor shortens a running stun.
    let (_, stun) = apply_impulse(v, 0.7, Vec2::new(1.0, 0.0), 1.0, 0.05, &params);
    assert_eq!(stun, 0.7);
    // A huge one is capped in speed and stun.
    let (v, stun) = apply_impulse(Vec2::ZERO, 0.0, Vec2::new(0.0, -1e6), 1.0, 0.05, &params);
    assert!(close(v, Vec2::new(0.0, -20.0)));
    assert_eq!(stun, 2.0);
}

#[test]
fn extreme_inputs_stay_finite() {
    let values = [
        0.0,
        -0.0,
        f32::MIN_POSITIVE,
        1e-30,
        1.0,
        1e30,
        f32::MAX,
        -f32::MAX,
        -1.0,
    ];
    let weird = [f32::NAN, f32::INFINITY, f32::NEG_INFINITY];
    let params = [
        KnockbackParams::default(),
        KnockbackParams::default()
            .with_max_external_speed(f32::MAX)
            .with_stun(0.0, f32::MAX, f32::MAX)
            .with_drag(f32::MAX, 0.0)
            .with_snap_speed(f32::MAX),
        KnockbackParams::default().with_drag(f32::NAN, f32::INFINITY),
    ];
    for p in &params {
        for &a in values.iter().chain(&weird) {
            for &b in &values {
                let v = Vec2::new(a, b);
                for &s in values.iter().chain(&weird) {
                    let (e, st) = apply_impulse(v, s, Vec2::new(b, a), s, a, p);
                    assert!(e.is_finite() && st.is_finite() && st >= 0.0, "{v} {s}");
                    for slippery in [false, true] {
                        let (e, st) = decay_external(v, s, slippery, b, p);
                        assert!(e.is_finite() && st.is_finite() && st >= 0.0, "{v} {s}");
                    }
                }
            }
        }
    }
    let f = ForceField::new(
        Vec2::ZERO,
        ForceKind::Explosion,
        f32::MAX,
        ForceField::MAX_STRENGTH,
    )
    .unwrap()
    .with_falloff(u32::MAX);
    for &a in &values {
        for &b in &values {
            assert!(f.force_at(Vec2::new(a, b)).is_finite());
        }
    }
}

#[test]
fn bad_parameters_are_errors() {
    let k = ForceKind::Explosion;
    let o = Vec2::ZERO;
    assert!(matches!(
        ForceField::new(Vec2::new(f32::NAN, 0.0), k, 1.0, 1.0),
        Err(ForceFieldError::BadPosition(_))
    ));
    assert!(matches!(
        ForceField::new(Vec2::new(0.0, f32::INFINITY), k, 1.0, 1.0),
        Err(ForceFieldError::BadPosition(_))
    ));
    for r in [0.0, -1.0, f32::NAN, f32::INFINITY] {
        assert!(matches!(
            ForceField::new(o, k, r, 1.0),
            Err(ForceFieldError::BadRadius(_))
        ));
    }
    for s in [-1.0, f32::NAN, f32::INFINITY, 2e9] {
        assert!(matches!(
            ForceField::new(o, k, 1.0, s),
            Err(ForceFieldError::BadStrength(_))
        ));
    }
    for d in [Vec2::ZERO, Vec2::NAN, Vec2::new(f32::INFINITY, 1.0)] {
        assert!(matches!(
            ForceField::new(o, ForceKind::Push { direction: d }, 1.0, 1.0),
            Err(ForceFieldError::BadDirection(_))
        ));
    }
    let f = ForceField::new(o, k, 1.0, 1.0).unwrap();
    assert_eq!(
        f.with_duration(-1.0),
        Err(ForceFieldError::BadDuration(-1.0))
    );
    assert!(f.with_duration(f32::NAN).is_err());
    assert_eq!(
        f.with_time_decay(-0.5),
        Err(ForceFieldError::BadTimeDecay(-0.5))
    );
    assert!(f.with_time_decay(f32::INFINITY).is_err());
    // A restored counter with no room left is refused: ids never wrap.
    assert!(ForceManager::restore([], u64::MAX).is_err());
    assert!(ForceManager::restore([], ForceManager::MAX_NEXT_ID).is_ok());
    // Knock-back settings are checked with every other (config::SETTINGS); the error names
    // the field and its bound.
    let config = |knockback| crate::SimConfig {
        knockback,
        ..crate::SimConfig::default()
    };
    let slippery = config(KnockbackParams::default().with_drag(1.0, -2.0));
    let e = slippery.validate().unwrap_err();
    assert_eq!(
        (e.name, e.expected.as_str()),
        ("slippery_drag", "finite, in 0..=1e6")
    );
    let fast = config(KnockbackParams::default().with_max_external_speed(3e38));
    assert_eq!(
        fast.validate().unwrap_err().expected,
        "finite, in 0..=10000"
    );
    let nan = config(KnockbackParams::default().with_max_external_speed(f32::NAN));
    assert!(nan.validate().is_err());
}
