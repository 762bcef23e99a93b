use std::collections::{BTreeSet, VecDeque};
use std::path::PathBuf;

use glam::Vec2;
use proptest::prelude::*;

use super::*;
use crate::terrain::{Layer, WALL};

/// The golden levels: file name, seed and config. Regenerate them with
/// `HORDE_BLESS_LEVELS=1 cargo test -p horde-core --lib level::tests::golden`.
fn goldens() -> Vec<(&'static str, u64, LevelConfig)> {
    vec![
        ("seed_42_13x13.txt", 42, LevelConfig::default()),
        (
            "seed_42_13x13_reachable.txt",
            42,
            LevelConfig::default().with_guarantee_reachable(true),
        ),
        (
            "seed_7_24x16_reachable.txt",
            7,
            LevelConfig::default()
                .with_size(24, 16)
                .with_guarantee_reachable(true),
        ),
    ]
}

fn golden_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/level")
        .join(name)
}

fn level(seed: u64, config: &LevelConfig) -> Level {
    generate_level(seed, config).expect("valid config")
}

/// Whether a ground unit on `spawn` (a tile) can walk to a passable crowd cell that shares an
/// edge with a cell of the lair's ring: a plain 4-neighbour BFS over the crowd map's ground
/// costs, independent of the generator's own search.
fn spawn_reaches_lair(level: &Level, spawn: Cell) -> bool {
    let map = level.map();
    let grid = *map.grid();
    let costs = map.cost_field(Layer::Ground);
    let ring: BTreeSet<Cell> = level.lair_ring_tiles().iter().copied().collect();
    let in_ring = |c: Cell| ring.contains(&level.tile_of_cell(c));
    let neighbours = |c: Cell| {
        [(0i64, -1i64), (-1, 0), (1, 0), (0, 1)]
            .into_iter()
            .filter_map(move |(dx, dy)| {
                let (x, y) = (i64::from(c.x) + dx, i64::from(c.y) + dy);
                grid.contains(x, y).then(|| Cell::new(x as u32, y as u32))
            })
    };
    let mut seen = vec![false; grid.len()];
    let mut queue = VecDeque::new();
    for c in level.tile_cells(spawn) {
        if costs.get(c) != WALL {
            seen[grid.index(c)] = true;
            queue.push_back(c);
        }
    }
    while let Some(c) = queue.pop_front() {
        if neighbours(c).any(in_ring) {
            return true;
        }
        for n in neighbours(c) {
            let i = grid.index(n);
            if !seen[i] && costs.get(n) != WALL {
                seen[i] = true;
                queue.push_back(n);
            }
        }
    }
    false
}

fn all_spawns(level: &Level) -> Vec<Cell> {
    let mut spawns = level.player_spawn_tiles().to_vec();
    spawns.extend_from_slice(level.enemy_spawn_tiles());
    spawns
}

fn assert_zones_clear(level: &Level) {
    for tile in level.exclusion_zone_tiles() {
        let expected = if tile == level.lair_tile() {
            Terrain::Lair
        } else if level.lair_ring_tiles().contains(&tile) {
            Terrain::BrickWall
        } else {
            Terrain::Empty
        };
        assert_eq!(
            level.tile(tile),
            expected,
            "zone tile {tile}, seed {}",
            level.seed()
        );
    }
    assert_eq!(level.count(Terrain::Lair), 1);
}

#[test]
fn same_seed_gives_the_same_level() {
    for config in [
        LevelConfig::default(),
        LevelConfig::default().with_guarantee_reachable(true),
        LevelConfig::default()
            .with_size(31, 17)
            .with_cells_per_tile(2),
    ] {
        for seed in [0, 1, 42, u64::MAX] {
            let a = level(seed, &config);
            let b = level(seed, &config);
            assert_eq!(a, b);
            assert_eq!(a.to_ascii(), b.to_ascii());
            assert_eq!(a.seed(), seed);
            assert_eq!(a.config(), &config);
        }
    }
}

#[test]
fn golden_levels_match() {
    let bless = std::env::var_os("HORDE_BLESS_LEVELS").is_some();
    for (name, seed, config) in goldens() {
        let text = level(seed, &config).to_ascii();
        let path = golden_path(name);
        if bless {
            std::fs::write(&path, &text).expect("write golden level");
        }
        let golden = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
            .replace("\r\n", "\n");
        assert_eq!(
            text, golden,
            "{name} differs from the generator's output:\n{text}"
        );
    }
}

#[test]
fn different_seeds_give_different_levels() {
    let config = LevelConfig::default();
    let levels: BTreeSet<String> = (0..20).map(|s| level(s, &config).to_ascii()).collect();
    assert_eq!(levels.len(), 20);
}

#[test]
fn default_layout_is_the_articles() {
    let l = level(42, &LevelConfig::default());
    assert_eq!((l.tiles_width(), l.tiles_height()), (13, 13));
    assert_eq!(l.lair_tile(), Cell::new(6, 12));
    assert_eq!(
        l.lair_ring_tiles(),
        [(5, 12), (5, 11), (6, 11), (7, 12), (7, 11)].map(|(x, y)| Cell::new(x, y))
    );
    assert_eq!(l.player_spawn_tiles(), [Cell::new(4, 12), Cell::new(8, 12)]);
    assert_eq!(
        l.enemy_spawn_tiles(),
        [Cell::new(0, 0), Cell::new(6, 0), Cell::new(12, 0)]
    );
    assert_eq!(l.exclusion_zone_tiles().len(), 11);
    assert_eq!(
        l.lair_approach_tiles(),
        [
            (5, 10),
            (6, 10),
            (7, 10),
            (4, 11),
            (8, 11),
            (4, 12),
            (8, 12)
        ]
        .map(|(x, y)| Cell::new(x, y))
    );
}

#[test]
fn default_targets_follow_the_article() {
    // (169 - 11 zones - 10 reserved) * weight / 85 * 0.55, truncated, at least 4.
    let l = level(42, &LevelConfig::default());
    let expected = [
        (Terrain::BrickWall, 38, 8),
        (Terrain::SteelPlate, 14, 3),
        (Terrain::Forest, 14, 3),
        (Terrain::Water, 9, 2),
        (Terrain::Snow, 4, 1),
    ];
    for (kind, target, seeds) in expected {
        assert_eq!(l.target_count(kind), target, "{kind:?}");
        assert_eq!(l.seed_count(kind), seeds, "{kind:?}");
    }
    assert_eq!(l.target_count(Terrain::Empty), 0);
    assert_eq!(l.seed_count(Terrain::Lair), 0);
}

/// The article's semantics: a kind's count starts at its seeds and stops growing at its
/// target, so grown tiles <= max(target, seeds); the border pass and carving only remove.
#[test]
fn counts_respect_the_targets() {
    let configs = [
        LevelConfig::default(),
        LevelConfig::default().with_guarantee_reachable(true),
        LevelConfig::default()
            .with_cluster_percent(100)
            .with_fill(1.0),
        LevelConfig::default().with_size(9, 7).with_fill(0.05),
        LevelConfig::default().with_size(30, 20),
    ];
    for config in configs {
        let mut reached_target = false;
        for seed in 0..100 {
            let l = level(seed, &config);
            for kind in LevelWeights::KINDS {
                let mut count = l.count(kind);
                if kind == Terrain::BrickWall {
                    count -= l.lair_ring_tiles().len();
                }
                let cap = l.target_count(kind).max(l.seed_count(kind));
                assert!(count <= cap, "{kind:?}: {count} > {cap}, seed {seed}");
                assert!(l.seed_count(kind) <= (config.weights.get(kind) / 5).max(1) as usize);
                reached_target |= count == l.target_count(kind);
            }
        }
        assert!(
            reached_target,
            "no kind ever reached its target: {config:?}"
        );
    }
}

#[test]
fn exclusion_zones_stay_clear() {
    for config in [
        LevelConfig::default(),
        LevelConfig::default().with_guarantee_reachable(true),
        LevelConfig::default()
            .with_cluster_percent(100)
            .with_fill(1.0)
            .with_border_clear_percent(0),
        LevelConfig::default().with_size(5, 5),
        LevelConfig::default()
            .with_size(6, 9)
            .with_guarantee_reachable(true),
        LevelConfig::default().with_size(40, 25),
    ] {
        for seed in 0..100 {
            assert_zones_clear(&level(seed, &config));
        }
    }
}

#[test]
fn every_spawn_reaches_the_lair_with_the_guarantee() {
    let on = LevelConfig::default().with_guarantee_reachable(true);
    let off = LevelConfig::default();
    let (mut blocked_without, mut carved_levels) = (0, 0);
    for seed in 0..1000 {
        let l = level(seed, &on);
        for spawn in all_spawns(&l) {
            assert!(spawn_reaches_lair(&l, spawn), "seed {seed}, spawn {spawn}");
        }
        carved_levels += usize::from(!l.carved_tiles().is_empty());
        if seed < 200 {
            let plain = level(seed, &off);
            blocked_without += usize::from(
                !all_spawns(&plain)
                    .iter()
                    .all(|&s| spawn_reaches_lair(&plain, s)),
            );
        }
    }
    // The guarantee has work to do: without it some levels cut a spawn off.
    assert!(blocked_without > 0);
    assert!(carved_levels > 0);
}

#[test]
fn the_guarantee_only_clears_carved_blocking_tiles() {
    for (w, h) in [(13, 13), (8, 5), (25, 18)] {
        let base = LevelConfig::default().with_size(w, h);
        for seed in 0..200 {
            let plain = level(seed, &base);
            let carved = level(seed, &base.with_guarantee_reachable(true));
            let cleared: BTreeSet<Cell> = carved.carved_tiles().iter().copied().collect();
            assert_eq!(cleared.len(), carved.carved_tiles().len());
            for i in 0..plain.tiles().len() {
                let tile = plain.tile_grid().cell(i);
                if cleared.contains(&tile) {
                    assert!(plain.tiles()[i].props().blocks_ground);
                    assert_eq!(carved.tiles()[i], Terrain::Empty);
                } else {
                    assert_eq!(
                        plain.tiles()[i],
                        carved.tiles()[i],
                        "seed {seed} tile {tile}"
                    );
                }
            }
        }
    }
}

#[test]
fn cells_per_tile_expansion_is_exact() {
    let reference = level(5, &LevelConfig::default().with_size(11, 7));
    for cpt in 1..=5 {
        for cell_size in [1.0, 0.5, 3.0] {
            let config = LevelConfig::default()
                .with_size(11, 7)
                .with_cells_per_tile(cpt)
                .with_cell_size(cell_size);
            let l = level(5, &config);
            // The tile level does not depend on the expansion.
            assert_eq!(l.tiles(), reference.tiles());
            assert_eq!(l.cells_per_tile(), cpt);
            let map = l.map();
            assert_eq!((map.width(), map.height()), (11 * cpt, 7 * cpt));
            assert_eq!(map.grid().cell_size(), cell_size);
            for i in 0..map.grid().len() {
                let cell = map.grid().cell(i);
                let tile = l.tile_of_cell(cell);
                assert_eq!(map.terrain_at(cell), l.tile(tile));
                assert_eq!(tile, Cell::new(cell.x / cpt, cell.y / cpt));
            }
            for i in 0..l.tiles().len() {
                let tile = l.tile_grid().cell(i);
                let cells: Vec<Cell> = l.tile_cells(tile).collect();
                assert_eq!(cells.len(), (cpt * cpt) as usize);
                assert!(cells.iter().all(|&c| l.tile_of_cell(c) == tile));
                let mean = cells
                    .iter()
                    .map(|&c| map.grid().cell_centre(c))
                    .fold(Vec2::ZERO, |a, b| a + b)
                    / cells.len() as f32;
                assert!((mean - l.tile_centre(tile)).length() < 1e-4);
            }
            assert_eq!(
                l.lair_cells(),
                l.tile_cells(l.lair_tile()).collect::<Vec<_>>()
            );
            assert!(
                l.lair_cells()
                    .iter()
                    .all(|&c| map.terrain_at(c) == Terrain::Lair)
            );
            assert_eq!(l.lair_centre(), l.tile_centre(l.lair_tile()));
            assert_eq!(
                l.player_spawn_centres(),
                l.player_spawn_tiles()
                    .iter()
                    .map(|&t| l.tile_centre(t))
                    .collect::<Vec<_>>()
            );
            let expected_centre = (Vec2::new(0.0, 0.0) + 0.5) * cpt as f32 * cell_size;
            assert_eq!(l.enemy_spawn_centres()[0], expected_centre);
            let approach = l.lair_approach_cells();
            assert!(approach.iter().all(|&c| map.terrain_at(c) != Terrain::Lair));
            assert!(
                approach
                    .iter()
                    .all(|&c| !map.terrain_at(c).props().blocks_ground)
            );
        }
    }
}

#[test]
fn ascii_has_one_line_per_tile_row() {
    let l = level(3, &LevelConfig::default().with_size(9, 6));
    let text = l.to_ascii();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 6);
    assert!(text.ends_with('\n'));
    for (y, line) in lines.iter().enumerate() {
        let parsed: Vec<Terrain> = line
            .chars()
            .map(|c| Terrain::from_char(c).unwrap())
            .collect();
        assert_eq!(parsed, l.tiles()[y * 9..(y + 1) * 9]);
    }
}

#[test]
fn zero_weight_kinds_never_appear() {
    let config = LevelConfig::default().with_weights(
        LevelWeights::default()
            .with_water(0)
            .with_snow(0)
            .with_steel_plate(0),
    );
    for seed in 0..50 {
        let l = level(seed, &config);
        assert_eq!(l.count(Terrain::Water), 0);
        assert_eq!(l.count(Terrain::Snow), 0);
        assert_eq!(l.count(Terrain::SteelPlate), 0);
        assert_eq!(l.target_count(Terrain::Water), 0);
    }
    let only_forest = LevelConfig::default().with_weights(
        LevelWeights::default()
            .with_brick_wall(0)
            .with_steel_plate(0)
            .with_water(0)
            .with_snow(0)
            .with_forest(1),
    );
    let l = level(1, &only_forest);
    assert_eq!(l.count(Terrain::BrickWall), 5);
    assert!(l.count(Terrain::Forest) >= 1);
}

#[test]
fn layouts_fit_every_size() {
    for w in LevelConfig::MIN_SIDE..40 {
        for h in LevelConfig::MIN_SIDE..12 {
            let l = level(
                u64::from(w * 100 + h),
                &LevelConfig::default().with_size(w, h),
            );
            let zones = l.exclusion_zone_tiles();
            let distinct: BTreeSet<Cell> = zones.iter().copied().collect();
            assert_eq!(distinct.len(), 11, "{w}x{h}");
            assert!(zones.iter().all(|c| c.x < w && c.y < h));
            assert_eq!(l.lair_approach_tiles().len(), 7, "{w}x{h}");
            // Player spawns are at least two columns from the lair, on the bottom row.
            for p in l.player_spawn_tiles() {
                assert_eq!(p.y, h - 1);
                assert!(p.x.abs_diff(l.lair_tile().x) >= 2);
            }
            assert_zones_clear(&l);
        }
    }
    // Proportional placement on a wide map: thirds of the width.
    let l = level(0, &LevelConfig::default().with_size(61, 20));
    assert_eq!(l.lair_tile(), Cell::new(30, 19));
    assert_eq!(
        l.player_spawn_tiles(),
        [Cell::new(20, 19), Cell::new(40, 19)]
    );
    assert_eq!(l.enemy_spawn_tiles()[2], Cell::new(60, 0));
}

#[test]
fn bad_configs_are_errors() {
    let d = LevelConfig::default();
    let cases = [
        (d.with_size(4, 13), "small width"),
        (d.with_size(13, 0), "zero height"),
        (d.with_cells_per_tile(0), "zero cells per tile"),
        (
            d.with_size(MAX_SIDE_TILES, 13).with_cells_per_tile(2),
            "too large",
        ),
        (d.with_fill(f64::NAN), "NaN fill"),
        (d.with_fill(-0.1), "negative fill"),
        (d.with_fill(1.5), "fill above 1"),
        (d.with_fill(f64::INFINITY), "infinite fill"),
        (
            d.with_weights(LevelWeights {
                brick_wall: 0,
                steel_plate: 0,
                forest: 0,
                water: 0,
                snow: 0,
            }),
            "all weights zero",
        ),
        (d.with_cluster_percent(101), "cluster percent"),
        (d.with_border_clear_percent(255), "border percent"),
        (d.with_cell_size(0.0), "zero cell size"),
        (d.with_cell_size(f32::NAN), "NaN cell size"),
        (
            d.with_cell_size(f32::MAX),
            "cell size overflowing the tile size",
        ),
    ];
    for (config, why) in cases {
        let err = generate_level(1, &config).expect_err(why);
        assert!(!err.to_string().is_empty());
        let from_validate = config.validate().expect_err(why);
        assert_eq!(from_validate.to_string(), err.to_string(), "{why}");
    }
    assert!(matches!(
        generate_level(0, &d.with_size(4, 4)),
        Err(LevelError::TooSmall {
            width: 4,
            height: 4,
            min: 5
        })
    ));
    assert!(matches!(
        generate_level(0, &d.with_fill(-1.0)),
        Err(LevelError::BadFill(_))
    ));
    assert_eq!(
        generate_level(
            0,
            &d.with_weights(
                LevelWeights::default()
                    .with_brick_wall(0)
                    .with_steel_plate(0)
                    .with_forest(0)
                    .with_water(0)
                    .with_snow(0)
            )
        ),
        Err(LevelError::NoWeights)
    );
    // Extremes that are valid still generate.
    for config in [
        d.with_fill(0.0),
        d.with_cluster_percent(0),
        d.with_cluster_percent(100).with_border_clear_percent(100),
        d.with_seed_attempts(0),
        d.with_max_growth_rounds(0),
        d.with_reserved_empty(u32::MAX),
        d.with_weights(LevelWeights::default().with_brick_wall(u32::MAX)),
    ] {
        let l = level(9, &config);
        assert_zones_clear(&l);
    }
}

const MAX_SIDE_TILES: u32 = crate::grid::MAX_GRID_SIDE;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn generation_never_fails_and_keeps_its_promises(
        seed in any::<u64>(),
        w in LevelConfig::MIN_SIDE..28,
        h in LevelConfig::MIN_SIDE..28,
        cpt in 1u32..4,
        cluster in 0u8..=100,
        fill in 0.0f64..=1.0,
        guarantee in any::<bool>(),
    ) {
        let config = LevelConfig::default()
            .with_size(w, h)
            .with_cells_per_tile(cpt)
            .with_cluster_percent(cluster)
            .with_fill(fill)
            .with_guarantee_reachable(guarantee);
        let l = generate_level(seed, &config).unwrap();
        prop_assert_eq!(l.map().width(), w * cpt);
        prop_assert_eq!(l.to_ascii().len(), ((w + 1) * h) as usize);
        assert_zones_clear(&l);
        if guarantee {
            for spawn in all_spawns(&l) {
                prop_assert!(spawn_reaches_lair(&l, spawn));
            }
        }
        prop_assert_eq!(&generate_level(seed, &config).unwrap(), &l);
    }
}
