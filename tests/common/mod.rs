//! Scen helpers shared by the integration tests.
#![allow(dead_code)]

pub mod mutate;

use std::path::PathBuf;

use glam::Vec2;
use horde::{
    Cell, GoalSet, GroupId, Layer, Map, SimConfig, Simulation, UnitSpec,
    fields::{IntegrationField, UNREACHABLE, WALL},
};
use rand_core::{RngCore, SeedableRng};
use rand_pcg::Pcg64;

/// The Moving AI folder next to the repository, if present.
pub fn movingai_dir() -> Option<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/data/movingai");
    dir.is_dir().then_some(dir)
}

/// Every `.map` file of the Moving AI folder with its map and checked scenario file, in name
/// order; `None` when the folder is absent.
pub fn movingai_maps() -> Option<Vec<(PathBuf, Map, horde::formats::Scen)>> {
    let dir = movingai_dir()?;
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "map"))
        .collect();
    paths.sort();
    assert!(!paths.is_empty(), "no .map files in {}", dir.display());
    let maps = paths
        .into_iter()
        .map(|path| {
            let map = horde::formats::load_map(&path).unwrap();
            let scen = horde::formats::load_scen(path.with_extension("map.scen")).unwrap();
            scen.check_against(&map).unwrap();
            (path, map, scen)
        })
        .collect();
    Some(maps)
}

/// `per_map` lines spread evenly through a scenario file (files are sorted by length
/// bucket, so the sample covers short and long paths alike), always including the last,
/// longest line.
pub fn spread(
    lines: &[horde::formats::ScenLine],
    per_map: usize,
) -> Vec<&horde::formats::ScenLine> {
    let n = lines.len();
    let mut picked: Vec<usize> = (0..per_map).map(|i| i * n / per_map).collect();
    picked.push(n - 1);
    picked.dedup();
    picked.into_iter().map(|i| &lines[i]).collect()
}

/// A goal area: the `cells` open cells nearest to `centre` by path distance (ties broken by
/// cell order), so the area has room for a crowd whatever the walls around `centre`.
pub fn area_goal(map: &Map, centre: Cell, cells: usize) -> GoalSet {
    let cost = map.cost_field(Layer::Ground);
    let centre = nearest_open(map, centre);
    let field = IntegrationField::build(cost, &[centre]).unwrap();
    let mut open: Vec<(u32, usize)> = (0..map.grid().len())
        .map(|i| (field.get(map.grid().cell(i)), i))
        .filter(|&(d, _)| d != UNREACHABLE)
        .collect();
    open.sort_unstable();
    GoalSet::new(open.iter().take(cells).map(|&(_, i)| map.grid().cell(i))).expect("an open cell")
}

/// The open ground cell nearest `cell` (Chebyshev rings, then row order).
pub fn nearest_open(map: &Map, cell: Cell) -> Cell {
    let cost = map.cost_field(Layer::Ground);
    (0..map.grid().len())
        .map(|i| map.grid().cell(i))
        .filter(|&c| cost.get(c) != WALL)
        .min_by_key(|c| (c.x.abs_diff(cell.x).max(c.y.abs_diff(cell.y)), c.y, c.x))
        .expect("the map has an open cell")
}

/// `count` distinct random open cells from which `goal` can be reached on the ground layer.
pub fn spawn_cells(map: &Map, goal: &GoalSet, count: usize, seed: u64) -> Vec<Cell> {
    let cost = map.cost_field(Layer::Ground);
    let field = IntegrationField::build(cost, goal.cells()).unwrap();
    let mut open: Vec<Cell> = (0..map.grid().len())
        .map(|i| map.grid().cell(i))
        .filter(|&c| field.get(c) != UNREACHABLE && field.get(c) > 0)
        .collect();
    assert!(open.len() >= count, "only {} reachable cells", open.len());
    let mut rng = Pcg64::seed_from_u64(seed);
    // Partial Fisher-Yates: the first `count` cells become a uniform random sample.
    for i in 0..count {
        let j = i + (rng.next_u64() % (open.len() - i) as u64) as usize;
        open.swap(i, j);
    }
    open.truncate(count);
    open
}

/// A simulation of `cells.len()` ground units (radius 0.4) in group 0 heading for `goal`.
pub fn crowd(map: Map, goal: GoalSet, cells: &[Cell], config: SimConfig) -> Simulation {
    let mut sim = Simulation::new(map, config).unwrap();
    let group = sim.add_group(goal).unwrap();
    assert_eq!(group, GroupId(0));
    for &c in cells {
        let pos = sim.map().grid().cell_centre(c);
        sim.spawn(UnitSpec::at(pos).with_radius(0.4).with_group(group))
            .unwrap();
    }
    sim
}

/// Number of units whose centre lies in a cell their layer cannot enter.
pub fn wall_violations(sim: &Simulation) -> usize {
    let map = sim.map();
    sim.units()
        .iter()
        .filter(|u| match map.grid().cell_at(u.position) {
            Some(c) => map.cost_field(u.layer).get(c) == WALL,
            None => true,
        })
        .count()
}

/// The ground integration field toward `goal`, to measure how far units are from it.
pub fn goal_field(map: &Map, goal: &GoalSet) -> IntegrationField {
    IntegrationField::build(map.cost_field(Layer::Ground), goal.cells()).unwrap()
}

/// Path distance (cells) from each unit (in id order) to the goal of `field`.
pub fn distances(sim: &Simulation, field: &IntegrationField) -> Vec<f64> {
    let map = sim.map();
    sim.units()
        .iter()
        .map(|u| {
            map.grid()
                .cell_at(u.position)
                .and_then(|c| field.distance(c))
                .unwrap_or(f64::INFINITY)
        })
        .collect()
}

/// Centre of a cell as a world position.
pub fn centre(map: &Map, c: Cell) -> Vec2 {
    map.grid().cell_centre(c)
}
