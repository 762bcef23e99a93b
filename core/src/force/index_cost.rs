//! What the force index costs: entries per field, rebuilds.

use super::*;

/// The index holds at most four entries a field whatever the fields' sizes (a field as
/// wide as the live bounds used to be listed in all 4,096 cells), and advancing fields
/// that neither start nor end keeps it as it is.
#[test]
fn the_index_grows_with_the_fields_not_their_area() {
    let mut m = ForceManager::new();
    for i in 0..2_000u16 {
        let position = Vec2::new(f32::from(i % 50), f32::from(i / 50));
        let radius = if i % 2 == 0 { 500.0 } else { 0.7 };
        let field = ForceField::new(position, ForceKind::Attractor, radius, 1.0)
            .and_then(|f| f.with_duration(ForceField::FOREVER))
            .unwrap();
        m.add(field);
    }
    m.advance(0.1);
    assert!(
        m.index.fields.len() <= 4 * m.len(),
        "{}",
        m.index.fields.len()
    );
    let built = m.index.fields.as_ptr();
    m.advance(0.1);
    assert_eq!(m.index.fields.as_ptr(), built, "not rebuilt");
    // Still every field: the force equals the sum over every field, bit for bit.
    for p in [
        Vec2::new(3.3, 7.1),
        Vec2::new(49.0, 39.5),
        Vec2::new(-100.0, 20.0),
    ] {
        let every = m
            .entries
            .iter()
            .filter(|e| e.live)
            .fold(Vec2::ZERO, |t, e| t + e.field.force_at(p));
        assert_eq!(m.force_at(p, false), every);
    }
}
