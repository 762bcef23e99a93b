use std::collections::BTreeSet;

use super::*;

#[test]
fn the_defaults_are_valid_and_every_name_and_key_is_unique() {
    assert_eq!(SimConfig::default().validate(), Ok(()));
    let names: BTreeSet<_> = SETTINGS.iter().map(|s| s.name).collect();
    let keys: BTreeSet<_> = SETTINGS.iter().map(|s| s.key).collect();
    assert_eq!(names.len(), SETTINGS.len());
    assert_eq!(keys.len(), SETTINGS.len());
    for s in SETTINGS {
        assert!(!s.doc.trim().is_empty(), "{} has no doc", s.name);
        assert_eq!(Setting::named(s.name).map(|n| n.key), Some(s.key));
        assert_eq!(Setting::at_key(s.key).map(|n| n.name), Some(s.name));
    }
}

/// A value `s` accepts other than `v`, if it has one.
fn another(s: &Setting, v: Value) -> Option<Value> {
    let candidates = match v {
        Value::Int(i) => vec![Value::Int(i + 1), Value::Int(i.saturating_sub(1))],
        Value::Real(r) => vec![
            Value::Real(r * 0.5),
            Value::Real(r + 0.25),
            Value::Real(0.1),
        ],
    };
    candidates
        .into_iter()
        .find(|&c| c != v && s.check(c).is_ok())
}

#[test]
fn each_setting_reads_and_writes_its_own_field_only() {
    let defaults = SimConfig::default();
    for s in SETTINGS {
        let value = another(s, s.default_value()).expect("a second valid value");
        let mut c = defaults;
        s.apply(&mut c, value).unwrap();
        assert_eq!(s.get(&c), value, "{}", s.name);
        for other in SETTINGS.iter().filter(|o| o.name != s.name) {
            assert_eq!(
                other.get(&c),
                other.get(&defaults),
                "{} moved {}",
                s.name,
                other.name
            );
        }
    }
}

#[test]
fn a_value_out_of_range_is_refused_by_name_and_leaves_the_config() {
    let relaxation = Setting::named("contact_relaxation").unwrap();
    let mut c = SimConfig::default();
    let e = relaxation.apply(&mut c, Value::Real(f32::NAN)).unwrap_err();
    assert_eq!(c, SimConfig::default());
    assert_eq!(
        e.to_string(),
        "contact_relaxation = NaN is invalid: it must be finite, in 0.5..=2"
    );
    c.steering.fan_step = 0.0;
    assert_eq!(
        c.validate().unwrap_err().to_string(),
        "fan_step = 0 is invalid: it must be finite, in (0, pi]"
    );
    c.steering.fan_step = std::f32::consts::PI;
    c.size_classes = 0;
    let e = c.validate().unwrap_err();
    assert_eq!((e.name, e.key), ("size_classes", "size_classes"));
    assert_eq!(e.expected, "an integer in 1..=4");
}

#[test]
fn whole_numbers_past_their_type_and_flags_past_one_are_refused() {
    let los = Setting::named("line_of_sight_radius").unwrap();
    assert!(los.check(Value::Int(u64::from(u32::MAX))).is_ok());
    let e = los.check(Value::Int(u64::from(u32::MAX) + 1)).unwrap_err();
    assert_eq!(e.expected, "an integer in 0..=4294967295");
    let partial = Setting::named("partial_fields").unwrap();
    assert_eq!(partial.check(Value::Int(2)).unwrap_err().expected, "0 or 1");
    let navigation = Setting::named("navigation").unwrap();
    assert_eq!(
        navigation.check(Value::Int(2)).unwrap_err().expected,
        "0 (\"flat\") or 1 (\"hierarchical\")"
    );
    // A real where a whole number belongs, and the other way round.
    assert!(partial.check(Value::Real(1.0)).is_err());
    assert!(
        Setting::named("jitter")
            .unwrap()
            .check(Value::Int(0))
            .is_err()
    );
    assert!(
        Setting::named("seed")
            .unwrap()
            .check(Value::Int(u64::MAX))
            .is_ok()
    );
}

#[test]
fn reals_are_finite_and_bounds_are_as_written() {
    let jitter = Setting::named("jitter").unwrap();
    for bad in [f32::INFINITY, f32::NEG_INFINITY, -0.001, 3.2] {
        assert!(jitter.check(Value::Real(bad)).is_err(), "{bad}");
    }
    assert!(jitter.check(Value::Real(0.0)).is_ok());
    assert_eq!(
        Setting::named("arrival_distance")
            .unwrap()
            .range
            .describe(Kind::Real),
        "finite, in 0..=1e6"
    );
}
