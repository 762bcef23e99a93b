//! Units reach their goal with `Navigation::Hierarchical` on Moving AI maps: 1,000 units
//! spawned in open cells with a path come within 2 cells of the goal, no unit centre is ever
//! in a wall, and the directions and distances really came from the sector fields (the flat
//! field is never built).

mod common;

use horde::hierarchy::DEFAULT_SECTOR_SIZE;
use horde::{
    Cell, Layer, Navigation, SimConfig, Terrain, formats::load_map, hierarchy::PortalGraph,
};

use common::*;

#[test]
fn units_reach_the_goal_with_hierarchical_navigation() {
    let Some(dir) = movingai_dir() else {
        eprintln!("SKIP: ../shared/data/movingai not found; hierarchical arrival test not run");
        return;
    };
    for (name, centre) in [
        ("den520d.map", Cell::new(130, 130)),
        ("random512-10-0.map", Cell::new(256, 256)),
    ] {
        let map = load_map(dir.join(name)).unwrap();
        let units = 1000;
        let goal = area_goal(&map, centre, 2 * units);
        let cells = spawn_cells(&map, &goal, units, 11);
        let field = goal_field(&map, &goal);
        let config = SimConfig::default()
            .with_threads(2)
            .with_navigation(Navigation::Hierarchical);
        let mut sim = crowd(map, goal, &cells, config);
        let mut reached = vec![false; units];
        for frame in 0..4000 {
            sim.step(1.0 / 30.0).unwrap();
            assert_eq!(
                wall_violations(&sim),
                0,
                "{name}: unit in a wall at frame {frame}"
            );
            for (r, d) in reached.iter_mut().zip(distances(&sim, &field)) {
                *r |= d <= 2.0;
            }
            if frame % 30 == 0 && reached.iter().all(|&r| r) {
                break;
            }
        }
        let fraction = reached.iter().filter(|&&r| r).count() as f64 / units as f64;
        let horde = sim.horde();
        let nav = horde.hierarchy();
        let stats = nav
            .field(0, Layer::Ground)
            .expect("a hierarchical request")
            .stats();
        println!(
            "{name}: {:.1}% of {units} units reached the goal; {} sector fields built, {:.1} KiB held",
            fraction * 100.0,
            stats.fields_built,
            nav.bytes_in_use() as f64 / 1024.0
        );
        assert!(stats.fields_built > 0);
        // Arrival and slowing down took their distance from the sector fields: the
        // full-map flat field was never built.
        let id = horde
            .groups()
            .field(0, Layer::Ground)
            .expect("a field slot");
        assert_eq!(horde.fields().get(id).built_from(), None);
        // ... and its slot holds no full-map arrays (5 bytes a cell otherwise).
        assert_eq!(horde.fields().get(id).bytes(), 0);
        assert!(
            fraction >= 0.98,
            "{name}: only {:.1}% arrived",
            fraction * 100.0
        );
    }
}

#[test]
fn terrain_edits_update_the_portal_graph_in_the_frame() {
    let Some(dir) = movingai_dir() else {
        eprintln!("SKIP: ../shared/data/movingai not found; hierarchical edit test not run");
        return;
    };
    let map = load_map(dir.join("den520d.map")).unwrap();
    let goal = area_goal(&map, Cell::new(130, 130), 200);
    let cells = spawn_cells(&map, &goal, 100, 3);
    let config = SimConfig::default().with_navigation(Navigation::Hierarchical);
    let mut sim = crowd(map, goal, &cells, config);
    sim.step(1.0 / 30.0).unwrap();
    // Walls placed on open cells across several sectors (some on sector borders), and one
    // removed again, between frames.
    let open: Vec<Cell> = {
        let map = sim.map();
        let cost = map.cost_field(Layer::Ground);
        (0..map.grid().len())
            .map(|i| map.grid().cell(i))
            .filter(|&c| cost.is_passable(c) && (c.x % 32 == 31 || c.y % 97 == 0))
            .step_by(37)
            .take(40)
            .collect()
    };
    assert!(open.len() >= 20);
    for &c in &open {
        sim.set_terrain(c, Terrain::BrickWall).unwrap();
    }
    sim.set_terrain(open[0], Terrain::Empty).unwrap();
    sim.step(1.0 / 30.0).unwrap();
    let map = sim.map();
    let cost = map.cost_field(Layer::Ground);
    let horde = sim.horde();
    let nav = horde.hierarchy();
    let graph = nav.graph(Layer::Ground).expect("a ground graph");
    assert!(graph.is_current(cost));
    assert!(graph == &PortalGraph::build(cost, DEFAULT_SECTOR_SIZE).unwrap());
    let field = nav.field(0, Layer::Ground).unwrap();
    assert_eq!(field.route().version(), cost.version());
}

#[test]
fn a_goal_walled_over_does_not_stop_the_frame() {
    // Found by the snapshot fuzz run: with every goal cell walled (allowed after the goal was
    // set) the path request failed and every frame returned an error. Now the group follows
    // the flat field, as in flat mode.
    let map = horde::Map::new(horde::Grid::new(70, 40).unwrap());
    let goal = horde::GoalSet::single(Cell::new(60, 20));
    let cells: Vec<Cell> = (0..20).map(|i| Cell::new(2 + i, 5)).collect();
    let config = SimConfig::default().with_navigation(Navigation::Hierarchical);
    let mut sim = crowd(map, goal, &cells, config);
    sim.step(0.05).unwrap();
    sim.set_terrain(Cell::new(60, 20), Terrain::SteelPlate)
        .unwrap();
    for _ in 0..10 {
        sim.step(0.05).unwrap();
    }
    assert_eq!(wall_violations(&sim), 0);
}
