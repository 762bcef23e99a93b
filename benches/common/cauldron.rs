//! The map of the field benches, shared by `benches/fields.rs` and
//! `benches/size_classes.rs`: `Cauldron.map` from `../shared/data/movingai` when present,
//! else a generated level of the same size.

use std::path::Path;

use horde::{
    Map,
    formats::load_map,
    level::{LevelConfig, generate_level},
};

/// The map and its name for reports.
pub fn bench_map() -> (String, Map) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data/movingai/Cauldron.map");
    match load_map(&path) {
        Ok(map) => ("Cauldron.map".into(), map),
        Err(e) => {
            eprintln!("{e}; using a generated 1024x1024 level instead");
            let config = LevelConfig::default()
                .with_size(256, 256)
                .with_cells_per_tile(4);
            let level = generate_level(7, &config).expect("valid config");
            ("generated 1024x1024".into(), level.into_map())
        }
    }
}
